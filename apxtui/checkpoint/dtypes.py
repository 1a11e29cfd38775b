"""Element widths of the dtypes the safetensors format defines.

Names and widths follow the ``Dtype`` enum of the safetensors crate (0.8): sub-byte
types (``F4`` = FP4 E2M1, ``F6_*`` = FP6) are counted in bits, and a tensor of a
sub-byte type must fill a whole number of bytes (``numel * bits % 8 == 0``), as the
safetensors validator requires.  ``F8_E8M0`` is the MX scale type (exponent only).
"""

from __future__ import annotations

#: Bits per element, by safetensors dtype name.
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8,
    "F8_E5M2FNUZ": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
}

#: Integer storage types that quantisers use to pack narrower values.
PACKING_DTYPES = frozenset({"U8", "I32", "U32", "I16", "U16"})


def tensor_bytes(dtype: str, numel: int) -> int | None:
    """Bytes of ``numel`` elements of ``dtype``; None if the bits do not fill whole bytes."""
    bits = numel * DTYPE_BITS[dtype]
    return None if bits % 8 else bits // 8
