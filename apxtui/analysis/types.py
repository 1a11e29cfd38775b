"""Element-type vocabulary: C++/CUDA/Rust type spellings and library enums → canonical dtypes.

Canonical names: ``bf16``, ``f16``, ``f32``, ``f64``, ``e4m3``, ``e5m2``, ``i8``, ``u8``,
``i16``, ``i32``, ``u32``, ``i64``, ``u64``, ``bool``; bf16x2/f16x2 vector types map to
their element.  Everything here is a pure lookup; no source is read.
"""

from __future__ import annotations

import re

from apxtui.vocab import DTYPE_BITS, FLOAT_DTYPES

_C_TYPES = {
    "__nv_bfloat16": "bf16", "nv_bfloat16": "bf16", "__nv_bfloat162": "bf16", "nv_bfloat162": "bf16",
    "cutlass::bfloat16_t": "bf16", "bfloat16_t": "bf16", "bfloat16": "bf16", "bf16": "bf16", "at::BFloat16": "bf16",
    "__half": "f16", "half": "f16", "__half2": "f16", "half2": "f16", "cutlass::half_t": "f16", "half_t": "f16",
    "f16": "f16",
    "float": "f32", "float2": "f32", "float4": "f32", "f32": "f32", "cutlass::tfloat32_t": "tf32",
    "double": "f64", "f64": "f64",
    "__nv_fp8_e4m3": "e4m3", "__nv_fp8x2_e4m3": "e4m3", "__nv_fp8x4_e4m3": "e4m3", "cutlass::float_e4m3_t": "e4m3",
    "float_e4m3_t": "e4m3", "__nv_fp8_e5m2": "e5m2", "cutlass::float_e5m2_t": "e5m2", "float_e5m2_t": "e5m2",
    "__nv_fp8_storage_t": "fp8 (storage)",
    "int8_t": "i8", "char": "i8", "signed char": "i8", "i8": "i8",
    "uint8_t": "u8", "unsigned char": "u8", "u8": "u8",
    "int16_t": "i16", "short": "i16", "uint16_t": "u16",
    "int": "i32", "int32_t": "i32", "i32": "i32", "unsigned": "u32", "unsigned int": "u32", "uint32_t": "u32",
    "u32": "u32", "int64_t": "i64", "long": "i64", "long long": "i64", "i64": "i64", "size_t": "u64",
    "uint64_t": "u64", "u64": "u64", "usize": "u64", "bool": "bool",
}  # fmt: skip

WIDTH = DTYPE_BITS  # width in bits, for deciding whether a conversion narrows
FLOATS = FLOAT_DTYPES

#: cudaDataType_t / cublasComputeType_t / cudnn / Rust DType enum spellings.
_ENUMS = {
    "CUDA_R_16BF": "bf16", "CUDA_R_16F": "f16", "CUDA_R_32F": "f32", "CUDA_R_64F": "f64",
    "CUDA_R_8F_E4M3": "e4m3", "CUDA_R_8F_E5M2": "e5m2", "CUDA_R_8I": "i8", "CUDA_R_8U": "u8",
    "CUDA_R_32I": "i32", "CUDA_R_4I": "i4", "CUDA_C_32F": "c64",
    "CUBLAS_COMPUTE_32F": "f32", "CUBLAS_COMPUTE_32F_FAST_TF32": "tf32", "CUBLAS_COMPUTE_32F_FAST_16BF": "bf16",
    "CUBLAS_COMPUTE_32F_FAST_16F": "f16", "CUBLAS_COMPUTE_16F": "f16", "CUBLAS_COMPUTE_64F": "f64",
    "CUBLAS_COMPUTE_32I": "i32", "CUBLAS_COMPUTE_32F_PEDANTIC": "f32", "CUBLAS_COMPUTE_16F_PEDANTIC": "f16",
    "CUDNN_DATA_FLOAT": "f32", "CUDNN_DATA_HALF": "f16", "CUDNN_DATA_BFLOAT16": "bf16",
    "CUDNN_DATA_FP8_E4M3": "e4m3", "CUDNN_DATA_FP8_E5M2": "e5m2",
    "ncclBfloat16": "bf16", "ncclFloat16": "f16", "ncclHalf": "f16", "ncclFloat32": "f32", "ncclFloat": "f32",
}  # fmt: skip
_RUST_DTYPE = {
    "BF16": "bf16", "BFLOAT16": "bf16", "F16": "f16", "FP16": "f16", "HALF": "f16", "F32": "f32", "FP32": "f32",
    "F64": "f64", "F8E4M3": "e4m3", "FP8E4M3": "e4m3", "E4M3": "e4m3", "F8E5M2": "e5m2", "E5M2": "e5m2",
    "I8": "i8", "U8": "u8", "I32": "i32", "U32": "u32", "I64": "i64", "U64": "u64", "INT4": "i4", "I4": "i4",
    "Q4": "i4", "BOOL": "bool",
}  # fmt: skip

_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|typename|constexpr)\b")


def strip_type(t: str) -> str:
    """Type text without qualifiers, pointers, references and array suffixes."""
    t = _QUALIFIERS.sub(" ", t)
    t = re.sub(r"\[[^\]]*\]", "", t).replace("*", " ").replace("&", " ")
    return " ".join(t.split())


def is_pointer(t: str) -> bool:
    return "*" in t or "[" in t


def is_const_pointer(t: str) -> bool:
    """``const T*`` (pointee const): the kernel only reads through it."""
    head = t.split("*", 1)[0]
    return is_pointer(t) and re.search(r"\bconst\b", head) is not None


def canonical(t: str) -> str | None:
    """Canonical dtype of a C/C++/Rust type spelling (qualifiers and pointers ignored)."""
    s = strip_type(t)
    if s in _C_TYPES:
        return _C_TYPES[s]
    tail = s.split("::")[-1]
    return _C_TYPES.get(tail)


def enum_dtype(name: str) -> str | None:
    """``CUDA_R_16BF`` → bf16, ``ffi::cudaDataType_t::CUDA_R_16BF`` → bf16, ``CUBLAS_COMPUTE_32F`` → f32,
    ``DType::BF16`` → bf16.  The whole text must be one name: ``if dtype == DType::F16 {…}`` is not."""
    name = name.strip()
    if not re.fullmatch(r"[\w:]+", name):
        return None
    tail = name.split("::")[-1]
    if tail in _ENUMS:
        return _ENUMS[tail]
    m = re.fullmatch(r"(?:[\w:]*::)?(?:DType|Dtype|DataType|ScalarType)::(\w+)", name)
    if m:
        return _RUST_DTYPE.get(m.group(1).upper())
    return None


_ENUM_TOKEN = re.compile(r"\b(?:CUDA|CUBLAS|CUDNN|nccl)\w+|[A-Za-z_][\w:]*::\w+")


def enum_dtypes(text: str) -> list[str]:
    """Every dtype named by an enum constant in a text (``DType::F16 | DType::BF16`` → f16, bf16)."""
    names = _ENUM_TOKEN.findall(text or "")
    return list(dict.fromkeys(d for n in names if (d := enum_dtype(n))))


def substitute(t: str, bindings: dict[str, str]) -> str:
    """Replace template parameter names in ``t`` with their bound arguments."""
    if not bindings:
        return t
    pat = re.compile(r"(?<![\w:])(" + "|".join(re.escape(k) for k in sorted(bindings, key=len, reverse=True)) + r")\b")
    return pat.sub(lambda m: bindings[m.group(1)], t)


def narrows(src: str | None, dst: str | None) -> bool:
    """True when a conversion ``src → dst`` rounds: to fewer bits, across bf16/f16, or float → int."""
    if not src or not dst or src == dst:
        return False
    if src in FLOATS and dst in FLOATS:
        return WIDTH.get(dst, 0) < WIDTH.get(src, 0) or {src, dst} == {"bf16", "f16"}
    if src in FLOATS:
        return True
    return dst in FLOATS and WIDTH.get(dst, 0) < WIDTH.get(src, 0)


#: Conversion intrinsics: name → (from, to).  ``None`` source = the argument's type.
INTRINSICS = {
    "__float2bfloat16": ("f32", "bf16"), "__float2bfloat16_rn": ("f32", "bf16"), "__float2bfloat16_rz": ("f32", "bf16"),
    "__float22bfloat162_rn": ("f32", "bf16"), "__floats2bfloat162_rn": ("f32", "bf16"),
    "__float2half": ("f32", "f16"), "__float2half_rn": ("f32", "f16"), "__float2half_rz": ("f32", "f16"),
    "__float22half2_rn": ("f32", "f16"), "__floats2half2_rn": ("f32", "f16"),
    "__nv_cvt_float_to_fp8": ("f32", "fp8 (storage)"), "__nv_cvt_float2_to_fp8x2": ("f32", "fp8 (storage)"),
    "__nv_cvt_bfloat16raw_to_fp8": ("bf16", "fp8 (storage)"), "__nv_cvt_halfraw_to_fp8": ("f16", "fp8 (storage)"),
    "__double2float_rn": ("f64", "f32"), "__float2int_rn": ("f32", "i32"), "__float2int_rz": ("f32", "i32"),
    "__bfloat162float": ("bf16", "f32"), "__half2float": ("f16", "f32"), "__bfloat1622float2": ("bf16", "f32"),
    "__half22float2": ("f16", "f32"), "__nv_cvt_fp8_to_halfraw": ("fp8 (storage)", "f16"),
}  # fmt: skip

_FP8_KIND = re.compile(r"__NV_(E4M3|E5M2)")


def intrinsic_target(name: str, args: list[str]) -> tuple[str, str] | None:
    """(from, to) of a conversion intrinsic call; fp8 targets read the ``__NV_E4M3`` argument."""
    conv = INTRINSICS.get(name)
    if conv is None:
        return None
    src, dst = conv
    if dst == "fp8 (storage)":
        m = next((_FP8_KIND.search(a) for a in args if _FP8_KIND.search(a)), None)
        if m:
            dst = m.group(1).lower()
    return src, dst
