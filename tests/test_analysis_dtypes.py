"""Dtype analysis: kernel storage/accumulator/output types, rounding conversions, library GEMM types."""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from apxtui.analysis.dtypes import DtypeAnalysis
from apxtui.analysis.types import canonical, enum_dtype, narrows
from apxtui.index.link import link
from apxtui.parse import extract_file
from apxtui.scan import EXTENSIONS
from apxtui.trace import Via


class MiniIndex:
    """The parts of :class:`apxtui.index.build.Index` the analyses read, built from source strings."""

    def __init__(self, files: dict[str, tuple[str, str]]):
        self.facts = {}
        for rel, (module, src) in files.items():
            self.facts[rel] = extract_file(rel, src.encode(), EXTENSIONS[Path(rel).suffix], module)
        self.graph, self.linker = link(self.facts, set(files), set())

    def definition(self, node: str):
        d = self.graph.nodes.get(node)
        if not d or d.get("file") not in self.facts:
            return None
        return next((x for x in self.facts[d["file"]].defs
                     if x.qualname == d.get("qualname") and x.line == d.get("line")), None)


def launch_edge(g: nx.MultiDiGraph, kernel: str, caller: str | None = None):
    for u, v, e in g.edges(data=True):
        if e["kind"] == "launch" and g.nodes[v]["qualname"] == kernel and (
                caller is None or g.nodes[u]["qualname"] == caller):
            return v, Via.of(e)
    raise AssertionError(f"no launch of {kernel}")


NORM_CU = """
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) { v += __shfl_xor_sync(0xffffffffu, v, o); }
    return v;
}
template <typename T, typename AccT>
__global__ void norm_kernel(const T* __restrict__ x, T* __restrict__ out, int n) {
    AccT sum = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const AccT v = static_cast<AccT>(x[i]);
        sum += v * v;
    }
    sum = warp_sum(sum);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[i] = static_cast<T>(static_cast<AccT>(x[i]) * sum);
    }
}
extern "C" int norm_bf16(const void* x, void* out, int rows, int n, cudaStream_t s) {
    norm_kernel<__nv_bfloat16, float><<<rows, 256, 0, s>>>(
        static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(out), n);
    return 0;
}
extern "C" int norm_f16(const void* x, void* out, int rows, int n, cudaStream_t s) {
    norm_kernel<__half, __half><<<rows, 256, 0, s>>>(static_cast<const __half*>(x), static_cast<__half*>(out), n);
    return 0;
}
"""


def test_float_accumulator_in_bf16_kernel_with_t_acct_template():
    idx = MiniIndex({"k/norm.cu": ("", NORM_CU)})
    a = DtypeAnalysis(idx)
    node, edge = launch_edge(idx.graph, "norm_kernel", "norm_bf16")
    r = a.kernel(node, edge)
    assert r.template_bindings == {"T": "__nv_bfloat16", "AccT": "float"}
    assert r.storage.value == ["bf16"] and r.storage.status == "exact"
    assert r.input.value == ["bf16"] and r.output.value == ["bf16"]
    assert r.accumulator.value == ["f32"]
    sites = r.accumulator.sites
    assert {s.var for s in sites} >= {"sum", "v"}  # kernel `sum +=` and helper `v += __shfl_xor_sync`
    assert any(s.reduction and s.function == "warp_sum" for s in sites)
    assert all(s.dtype == "f32" for s in sites)  # int loop counters are not accumulators
    rounds = [c for c in r.conversions if c.kind == "round"]
    assert [(c.source, c.to, c.where) for c in rounds] == [("f32", "bf16", "k/norm.cu:15")]
    doc = r.to_dict()  # the report's form
    assert doc["kind"] == "kernel" and doc["accumulator"]["sites"][0]["var"] == sites[0].var
    assert [c["from"] for c in doc["conversions"] if c["kind"] == "round"] == ["f32"]


def test_same_kernel_other_binding_accumulates_in_its_own_acct():
    idx = MiniIndex({"k/norm.cu": ("", NORM_CU)})
    node, edge = launch_edge(idx.graph, "norm_kernel", "norm_f16")
    r = DtypeAnalysis(idx).kernel(node, edge)
    by_fn = {(s.function, s.dtype) for s in r.accumulator.sites}
    # AccT = __half: the kernel accumulates in f16; the float helper still reduces in f32
    assert ("norm_kernel", "f16") in by_fn and ("warp_sum", "f32") in by_fn
    assert ("norm_kernel", "f32") not in by_fn


def test_template_bound_by_cast_deduction_is_heuristic_and_unbound_is_unknown():
    src = """
template <typename T> __global__ void k(const T* x, T* y) { y[0] = x[0]; }
extern "C" void a(const void* x, void* y) { k<<<1, 1, 0, 0>>>(static_cast<const float*>(x), static_cast<float*>(y)); }
extern "C" void b(const void* x, void* y) { k<<<1, 1, 0, 0>>>(x, y); }
"""
    idx = MiniIndex({"k.cu": ("", src)})
    a = DtypeAnalysis(idx)
    r = a.kernel(*launch_edge(idx.graph, "k", "a"))
    assert r.storage.value == ["f32"] and r.storage.status == "heuristic"
    r = a.kernel(*launch_edge(idx.graph, "k", "b"))
    assert r.storage.status == "unknown" and "T" in r.storage.reason


GEMM_CU = """
extern "C" int gemm_bf16(const void* x, const void* w, void* out, int m, int n, int k, cudaStream_t stream) {
    cublasLtHandle_t handle = nullptr;
    cudaDataType_t ab_type = CUDA_R_16BF;
    cudaDataType_t c_type = ab_type;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F);
    cublasLtMatrixLayout_t a_l = nullptr, b_l = nullptr, c_l = nullptr;
    cublasLtMatrixLayoutCreate(&a_l, ab_type, k, n, k);
    cublasLtMatrixLayoutCreate(&b_l, ab_type, k, m, k);
    cublasLtMatrixLayoutCreate(&c_l, c_type, n, m, n);
    const float alpha = 1.0f, beta = 0.0f;
    return cublasLtMatmul(handle, desc, &alpha, w, a_l, x, b_l, &beta, out, c_l, out, c_l, nullptr, nullptr, 0, stream);
}
extern "C" int gemm_ex(const void* a, const void* b, void* c, int m, int n, int k) {
    cudaDataType_t t = CUDA_R_16F;
    return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &al, a, t, m, b, t, k, &be, c, CUDA_R_32F, m,
                        CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
}
"""


def _vendor(g, api, caller):
    for u, _v, e in g.edges(data=True):
        if e["kind"] == "vendor" and e["callee"] == api and g.nodes[u]["qualname"] == caller:
            return u, Via.of(e)
    raise AssertionError(api)


def test_cublaslt_types_travel_through_locals_and_layouts():
    idx = MiniIndex({"a/gemm.cu": ("", GEMM_CU)})
    a = DtypeAnalysis(idx)
    r = a.library(*_vendor(idx.graph, "cublasLtMatmul", "gemm_bf16"))
    assert r.operands.value == {"A": "bf16", "B": "bf16", "C": "bf16", "D": "bf16"}
    assert r.operands.status == "exact"
    assert r.compute.value == "f32" and r.scale.value == "f32"
    assert "a/gemm.cu:4" in r.operands.evidence  # ab_type = CUDA_R_16BF, followed through c_type too
    r = a.library(*_vendor(idx.graph, "cublasGemmEx", "gemm_ex"))
    assert r.operands.value == {"A": "f16", "B": "f16", "C": "f32"}
    assert r.compute.value == "tf32"


def test_vocabulary():
    assert canonical("const __nv_bfloat16* __restrict__") == "bf16"
    assert canonical("cutlass::float_e4m3_t") == "e4m3"
    assert enum_dtype("DType::F8E4M3") == "e4m3" and enum_dtype("CUDA_R_8F_E4M3") == "e4m3"
    assert narrows("f32", "bf16") and narrows("bf16", "f16") and not narrows("bf16", "f32")


def test_demo_fp8_quantize_stage(demo_index):
    a = DtypeAnalysis(demo_index)
    r = a.kernel(*launch_edge(demo_index.graph, "quantize_fp8_kernel"))
    assert r.output.value == ["e4m3"]
    conv = [c for c in r.conversions if c.kind == "round"]
    assert [(c.source, c.to, c.call) for c in conv] == [("f32", "e4m3", "__nv_cvt_float_to_fp8")]
    fp8 = [a.library(u, Via.of(e)) for u, _v, e in demo_index.graph.edges(data=True)
           if e["kind"] == "vendor" and e["callee"] == "cublasLtMatmul"
           and demo_index.graph.nodes[u]["qualname"] == "apxinf_cublaslt_gemm_fp8"]
    assert fp8[0].operands.value == {"A": "e4m3", "B": "e4m3", "C": "bf16", "D": "bf16"}
    assert fp8[0].compute.value == "f32"


def test_demo_cutlass_element_and_accumulator(demo_index):
    a = DtypeAnalysis(demo_index)
    u, e = _vendor(demo_index.graph, "run", "apxinf_cutlass_fmha_fwd")
    r = a.library(u, e)
    assert r.operands.value == {"element": "bf16"} and r.compute.value == "f32"
    assert r.operands.status == "heuristic"
