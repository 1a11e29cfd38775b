"""CUDA/C++ extractor: one small source per rule (apxtui/parse/cuda.py + queries/cuda.scm)."""

from __future__ import annotations

from apxtui.facts import CallSite, Definition, FileFacts
from apxtui.parse import extract_file


def run(src: str) -> FileFacts:
    return extract_file("adapters/x.cu", src.encode(), "cuda")


def defn(ff: FileFacts, qualname: str) -> Definition:
    found = [d for d in ff.defs if d.qualname == qualname]
    assert len(found) == 1, [d.qualname for d in ff.defs]
    return found[0]


def calls(ff: FileFacts, callee: str) -> list[CallSite]:
    return [c for c in ff.calls if c.callee == callee]


def call(ff: FileFacts, callee: str) -> CallSite:
    found = calls(ff, callee)
    assert len(found) == 1, [(c.kind, c.callee) for c in ff.calls]
    return found[0]


# ----------------------------------------------------------------------------- definitions


def test_kernel_template_params_and_launch_bounds():
    ff = run(
        """
template <typename T, int BLOCK_SIZE>
__global__ void __launch_bounds__(256, 2)
rms_norm_kernel(const T* __restrict__ x, __nv_bfloat16* y, int n) {
  float acc = 0.f;
}
"""
    )
    d = defn(ff, "rms_norm_kernel")
    assert d.kind == "kernel"
    assert d.template_params == ["T", "BLOCK_SIZE"]
    assert d.attrs["template_param_decls"] == ["typename T", "int BLOCK_SIZE"]
    assert d.attrs["launch_bounds"] == ["256", "2"]
    assert [(p.name, p.type) for p in d.params] == [("x", "const T*"), ("y", "__nv_bfloat16*"), ("n", "int")]
    assert d.return_type == "void"
    assert (d.line, d.end_line) == (3, 6)
    assert not ff.issues


def test_execution_space_and_linkage_classification():
    ff = run(
        """
__device__ __forceinline__ float dev(float a) { return a; }
__host__ __device__ inline float both(float a) { return a; }
static int helper(int n) { return n; }
extern "C" {
void launch_a(const void* x, int n) { helper(n); }
__global__ void exported_kernel(float* y) {}
}
extern "C" void launch_b(const __nv_bfloat16* x, int n) {}
extern "C" void launch_proto(const void*, int);
__global__ void kernel_proto(float*);
"""
    )
    assert defn(ff, "dev").kind == "device_fn" and "host" not in defn(ff, "dev").attrs
    assert defn(ff, "both").kind == "device_fn" and defn(ff, "both").attrs["host"] is True
    h = defn(ff, "helper")
    assert (h.kind, h.visibility, h.symbol) == ("host_fn", "static", "")
    a = defn(ff, "launch_a")
    assert (a.kind, a.symbol) == ("abi_fn", "launch_a")
    assert [p.type for p in a.params] == ["const void*", "int"]
    assert defn(ff, "exported_kernel").kind == "kernel"
    assert defn(ff, "exported_kernel").symbol == "exported_kernel"
    b = defn(ff, "launch_b")
    assert (b.kind, b.symbol, b.attrs.get("decl_only")) == ("abi_fn", "launch_b", None)
    p = defn(ff, "launch_proto")
    assert (p.kind, p.symbol, p.attrs["decl_only"]) == ("abi_fn", "launch_proto", True)
    assert [q.type for q in p.params] == ["const void*", "int"]
    k = defn(ff, "kernel_proto")
    assert (k.kind, k.attrs["decl_only"]) == ("kernel", True)


def test_cplusplus_guarded_extern_c_block_is_c_linkage():
    ff = run(
        """
#ifdef __cplusplus
extern "C" {
#endif
void ffi_add(const float* a, int n) {}
#ifdef __cplusplus
}
#endif
void after(int n) {}
"""
    )
    assert defn(ff, "ffi_add").kind == "abi_fn"
    assert defn(ff, "after").kind == "host_fn"
    assert any(i.kind == "syntax" for i in ff.issues)


def test_namespaces_classes_and_out_of_class_methods():
    ff = run(
        """
namespace apx { namespace ops {
struct Runner {
  int n;
  const float* w;
  void run(int x);
  int size() const { return n; }
};
void Runner::run(int x) { size(); }
template <typename T> T Box<T>::get() { return v; }
void detail::free_helper() {}
}}
namespace { void hidden() {} }
"""
    )
    t = defn(ff, "apx::ops::Runner")
    assert t.kind == "cpp_type"
    assert t.fields == {"n": "int", "w": "const float*"}
    assert sorted(t.attrs["methods"]) == ["run", "size"]
    assert defn(ff, "apx::ops::Runner::size").container == "Runner"
    run_ = defn(ff, "apx::ops::Runner::run")
    assert (run_.name, run_.container) == ("run", "Runner")
    assert call(ff, "size").caller == "apx::ops::Runner::run"
    get = defn(ff, "apx::ops::Box::get")
    assert (get.container, get.return_type, get.template_params) == ("Box", "T", ["T"])
    assert defn(ff, "apx::ops::detail::free_helper").container == "detail"
    assert defn(ff, "hidden").visibility == "static"


def test_typedefs_defines_and_includes():
    ff = run(
        """
#include "common.cuh"
#include <cuda_bf16.h>
#define BLOCK 256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
using Gemm = cutlass::gemm::device::Gemm<
    cutlass::bfloat16_t, cutlass::layout::RowMajor>;
typedef float acc_t;
void f() { using Local = int; }
"""
    )
    by = {(i.kind, i.alias or i.path): i for i in ff.imports}
    assert by[("include", "common.cuh")].system is False
    assert by[("include", "cuda_bf16.h")].system is True
    assert by[("define", "BLOCK")].path == "256"
    assert "((a) + (b) - 1) / (b)" in by[("macro", "CEIL_DIV")].path
    g = by[("typedef", "Gemm")]
    assert g.path == "cutlass::gemm::device::Gemm< cutlass::bfloat16_t, cutlass::layout::RowMajor>"
    assert g.scope == ""
    assert by[("typedef", "acc_t")].path == "float"
    assert (by[("typedef", "Local")].path, by[("typedef", "Local")].scope) == ("int", "f")


def test_locals_and_assigns():
    ff = run(
        """
void setup(int m) {
  float acc = 0.f;
  Gemm gemm_op;
  cublasLtMatmulDesc_t desc;
  const char* name = "x";
  int tile[4], *p = nullptr;
  cudaDataType_t a_type = CUDA_R_16BF;
  auto compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t c_type;
  c_type = m > 0 ? CUDA_R_16BF : CUDA_R_32F;
  acc = acc + 1.f;
}
"""
    )
    d = defn(ff, "setup")
    assert d.locals == {
        "acc": "float",
        "gemm_op": "Gemm",
        "desc": "cublasLtMatmulDesc_t",
        "name": "const char*",
        "tile": "int[4]",
        "p": "int*",
        "a_type": "cudaDataType_t",
        "compute": "auto",
        "c_type": "cudaDataType_t",
    }
    assigns = {(a["var"], a["value"]) for a in d.attrs["assigns"]}
    assert ("a_type", "CUDA_R_16BF") in assigns
    assert ("compute", "CUBLAS_COMPUTE_32F") in assigns
    assert ("c_type", "m > 0 ? CUDA_R_16BF : CUDA_R_32F") in assigns
    assert ("acc", "0.f") in assigns
    assert ("acc", "acc + 1.f") not in assigns
    assert next(a["line"] for a in d.attrs["assigns"] if a["var"] == "a_type") == 8


# ----------------------------------------------------------------------------- calls and launches


def test_plain_qualified_template_and_method_calls():
    ff = run(
        """
void host(Runner& r, Runner* p) {
  ns::inner::helper(1, 2);
  convert<float, 4>(x);
  r.run(3);
  p->init();
  cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream);
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
}
"""
    )
    q = call(ff, "ns::inner::helper")
    assert (q.kind, q.path, q.args, q.caller) == ("call", ["ns", "inner", "helper"], ["1", "2"], "host")
    t = call(ff, "convert")
    assert t.template_args == ["float", "4"]
    m = call(ff, "run")
    assert (m.kind, m.receiver, m.args) == ("method", "r", ["3"])
    assert call(ff, "init").receiver == "p"
    rt = call(ff, "cudaMemcpyAsync")
    assert rt.kind == "call" and len(rt.args) == 5
    assert call(ff, "cudaStreamBeginCapture").kind == "call"
    assert rt.line == 7 and rt.text.startswith("cudaMemcpyAsync(dst")


def test_triple_chevron_launches():
    ff = run(
        """
template <typename T>
void launch(const T* x, float* y, int n, cudaStream_t stream) {
  dim3 grid((n + 255) / 256), block(256);
  rms_kernel<T, float><<<grid, block, 0, stream>>>((const T*)x, y, n);
  ns::plain_kernel<<<grid, block>>>(y);
}
"""
    )
    k = call(ff, "rms_kernel")
    assert k.kind == "launch"
    assert k.template_args == ["T", "float"]
    assert k.launch_config == ["grid", "block", "0", "stream"]
    assert k.args == ["(const T*)x", "y", "n"]
    assert k.caller == "launch"
    p = call(ff, "ns::plain_kernel")
    assert (p.kind, p.launch_config, p.template_args) == ("launch", ["grid", "block"], [])
    assert defn(ff, "launch").locals == {"grid": "dim3", "block": "dim3"}


def test_launch_through_kernel_pointer_variable():
    ff = run(
        """
void pick(bool big) {
  auto kernel = big ? big_kernel<float, 8> : small_kernel<float>;
  kernel<<<1, 32>>>(0);
  auto only = &only_kernel<half>;
  only<<<1, 32>>>(0);
}
"""
    )
    launches = [c for c in ff.calls if c.kind == "launch"]
    assert len(launches) == 2
    first, second = launches
    assert first.callee == "" and first.attrs["kernel_var"] == "kernel"
    assert first.attrs["kernel_candidates"] == [
        {"callee": "big_kernel", "template_args": ["float", "8"]},
        {"callee": "small_kernel", "template_args": ["float"]},
    ]
    assert (second.callee, second.template_args) == ("only_kernel", ["half"])


def test_launch_apis():
    ff = run(
        """
void go(cudaStream_t s, CUfunction func, void** args) {
  cudaLaunchKernel((void*)add_kernel<float>, grid, block, args, 128, s);
  cudaLaunchKernelEx(&cfg, ns::fused_kernel<T, 4>, a, b);
  cuLaunchKernel(func, 1, 2, 3, 32, 1, 1, 0, s, args, nullptr);
}
"""
    )
    a = next(c for c in ff.calls if c.attrs.get("api") == "cudaLaunchKernel")
    assert (a.kind, a.callee, a.template_args) == ("launch", "add_kernel", ["float"])
    assert a.launch_config == ["grid", "block", "128", "s"]
    ex = next(c for c in ff.calls if c.attrs.get("api") == "cudaLaunchKernelEx")
    assert (ex.kind, ex.callee, ex.template_args, ex.path) == (
        "launch",
        "ns::fused_kernel",
        ["T", "4"],
        ["ns", "fused_kernel"],
    )
    cu = next(c for c in ff.calls if c.attrs.get("api") == "cuLaunchKernel")
    assert (cu.kind, cu.callee, cu.attrs["kernel_expr"]) == ("launch", "", "func")
    assert cu.launch_config == ["1", "2", "3", "32", "1", "1", "0", "s"]


def test_vendor_calls_per_library():
    ff = run(
        """
void vendors(cublasHandle_t h, cublasLtHandle_t lt) {
  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k);
  CHECK(cublasLtMatmul(lt, desc, a, b));
  cudnnConvolutionForward(handle, x);
  ncclAllReduce(buf, buf, n, ncclBfloat16, ncclSum, comm, s);
  flash::run_mha_fwd_hdim128<cutlass::half_t>(params, s);
  mha_varlen_fwd(q, k, v);
  my_cublas_wrapper(1);
}
"""
    )
    libs = {c.callee: c.attrs.get("library") for c in ff.calls if c.kind == "vendor"}
    assert libs == {
        "cublasGemmEx": "cublas",
        "cublasLtMatmul": "cublasLt",
        "cudnnConvolutionForward": "cudnn",
        "ncclAllReduce": "nccl",
        "flash::run_mha_fwd_hdim128": "flash_attn",
        "mha_varlen_fwd": "flash_attn",
    }
    assert call(ff, "CHECK").kind == "call"
    assert call(ff, "my_cublas_wrapper").kind == "call"
    assert call(ff, "flash::run_mha_fwd_hdim128").template_args == ["cutlass::half_t"]


def test_cutlass_operator_through_using_alias():
    ff = run(
        """
using GemmBf16 = cutlass::gemm::device::Gemm<cutlass::bfloat16_t, cutlass::layout::RowMajor, float>;
typedef GemmBf16 Op;
void run_gemm(cudaStream_t s) {
  Op gemm_op;
  typename GemmBf16::Arguments args{};
  GemmBf16::can_implement(args);
  gemm_op.initialize(args, nullptr);
  gemm_op(s);
  Other other;
  other.run(s);
}
"""
    )
    full = "cutlass::gemm::device::Gemm<cutlass::bfloat16_t, cutlass::layout::RowMajor, float>"
    vend = [c for c in ff.calls if c.kind == "vendor"]
    assert {(c.attrs["method"], c.attrs["library"], c.attrs["operator_type"]) for c in vend} == {
        ("can_implement", "cutlass", full),
        ("initialize", "cutlass", full),
        ("operator()", "cutlass", full),
    }
    assert call(ff, "gemm_op").receiver == "gemm_op"
    assert call(ff, "run").kind == "method"


# ----------------------------------------------------------------------------- contexts


def test_if_else_if_else_contexts():
    ff = run(
        """
void dispatch(int d, bool fast) {
  if (d == 64) {
    a();
  } else if (fast && d <= 128) {
    b();
  } else {
    c();
  }
}
"""
    )
    a, b, c = (call(ff, n).contexts for n in "abc")
    assert [(x.kind, x.text, x.arm, x.negated) for x in a] == [("if", "d == 64", 0, [])]
    assert [(x.kind, x.text, x.arm, x.negated) for x in b] == [("if", "fast && d <= 128", 1, ["d == 64"])]
    assert [(x.kind, x.text, x.arm, x.negated) for x in c] == [
        ("else", "else", 2, ["d == 64", "fast && d <= 128"])
    ]
    assert a[0].group == b[0].group == c[0].group == "3:2"


def test_switch_cases():
    ff = run(
        """
void by_dtype(DType dt) {
  switch (dt) {
    case DType::BF16: bf16_path(); break;
    case DType::F16: { f16_path(); }
    default: generic();
  }
}
"""
    )
    got = {n: call(ff, n).contexts for n in ("bf16_path", "f16_path", "generic")}
    assert [(x.kind, x.text, x.subject, x.arm) for x in got["bf16_path"]] == [
        ("switch_case", "case DType::BF16", "dt", 0)
    ]
    assert [(x.text, x.arm) for x in got["f16_path"]] == [("case DType::F16", 1)]
    assert [(x.text, x.arm) for x in got["generic"]] == [("default", 2)]
    assert len({x[0].group for x in got.values()}) == 1


def test_loops_and_lambdas():
    ff = run(
        """
void layers(int n) {
  for (int i = 0; i < 4; ++i) { step(i); }
  while (n--) spin();
  auto body = [&](int q) { inner(q); };
}
"""
    )
    (loop,) = call(ff, "step").contexts
    assert (loop.kind, loop.text, loop.arm) == ("loop", "for (int i = 0; i < 4; ++i)", -1)
    assert call(ff, "spin").contexts[0].text == "while (n--)"
    (clo,) = call(ff, "inner").contexts
    assert (clo.kind, clo.text) == ("closure", "[&](int q)")
    assert call(ff, "inner").caller == "layers"


def test_preprocessor_arms_inside_body():
    ff = run(
        """
__device__ void mma() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  mma_sm80();
#elif defined(__CUDA_ARCH__)
  mma_old();
#else
  host_stub();
#endif
#ifdef USE_FAST
  fast();
#endif
#ifndef NO_SLOW
  slow();
#endif
}
"""
    )
    (c80,) = call(ff, "mma_sm80").contexts
    assert (c80.kind, c80.text, c80.arm) == ("pp_if", "defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", 0)
    (old,) = call(ff, "mma_old").contexts
    assert (old.text, old.arm, old.negated) == ("defined(__CUDA_ARCH__)", 1, [c80.text])
    (stub,) = call(ff, "host_stub").contexts
    assert (stub.text, stub.arm, stub.negated) == ("else", 2, [c80.text, "defined(__CUDA_ARCH__)"])
    assert c80.group == old.group == stub.group == "3:0"
    assert call(ff, "fast").contexts[0].text == "defined(USE_FAST)"
    assert call(ff, "slow").contexts[0].text == "!defined(NO_SLOW)"
    assert defn(ff, "mma").pp == []


def test_file_scope_preprocessor_arms_go_on_definition():
    ff = run(
        """
#if __CUDA_ARCH__ >= 900
__global__ void hopper_kernel(float* x) { work(); }
#else
__global__ void fallback_kernel(float* x) { if (x) work(); }
#endif
"""
    )
    h = defn(ff, "hopper_kernel")
    assert [(p.kind, p.text, p.arm) for p in h.pp] == [("pp_if", "__CUDA_ARCH__ >= 900", 0)]
    f = defn(ff, "fallback_kernel")
    assert [(p.text, p.arm, p.negated) for p in f.pp] == [("else", 1, ["__CUDA_ARCH__ >= 900"])]
    works = calls(ff, "work")
    assert [len(c.contexts) for c in works] == [0, 1]
    assert works[1].contexts[0].kind == "if"


# ----------------------------------------------------------------------------- env and robustness


def test_getenv_reads():
    ff = run(
        """
int tile() {
  const char* e = std::getenv("APX_DEBUG");
  int t = getenv("APX_TILE") ? atoi(getenv("APX_TILE")) : 64;
  if (getenv("APX_FAST")) fast();
  return t;
}
"""
    )
    got = {e.name: e for e in ff.env_reads}
    assert set(got) == {"APX_DEBUG", "APX_TILE", "APX_FAST"}
    assert got["APX_DEBUG"].default == "" and got["APX_DEBUG"].caller == "tile"
    assert got["APX_TILE"].default == "64"
    assert call(ff, "fast").contexts[0].env == ["APX_FAST"]


def test_broken_file_keeps_recovered_facts_and_records_issue():
    ff = run(
        """
__global__ void good_kernel(float* x) { x[0] = 1.f; }
void broken( {
void launcher(float* x) {
  good_kernel<<<1, 1>>>(x);
}
"""
    )
    assert any(i.kind == "syntax" for i in ff.issues)
    assert defn(ff, "good_kernel").kind == "kernel"
    assert any(c.kind == "launch" and c.callee == "good_kernel" for c in ff.calls)


def test_facts_round_trip_through_dict():
    ff = run("#if X\nvoid f() { if (a) g<int><<<1, 2>>>(); }\n#endif\n")
    again = FileFacts.from_dict(ff.to_dict())
    assert again == ff
    assert again.calls[0].contexts[0].kind == "if"


def test_query_can_be_rebuilt_in_one_process():
    """Guards against patterns that crash py-tree-sitter when a Query is freed and rebuilt."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import tree_sitter as ts\n"
        "from apxtui.parse import languages\n"
        "for _ in range(4):\n"
        "    q = ts.Query(languages.language('cuda'), languages.query_source('cuda'))\n"
        "    del q\n"
        "print('ok')\n"
    )
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=root, env=env
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-500:]


def test_macro_invocation_with_body_is_flagged():
    ff = run("DEFINE_FLASH_FORWARD_KERNEL(flash_fwd_kernel, bool Is_causal) {\n  compute(params);\n}\n")
    d = defn(ff, "DEFINE_FLASH_FORWARD_KERNEL")
    assert d.attrs.get("macro_like") is True
    assert call(ff, "compute").caller == "DEFINE_FLASH_FORWARD_KERNEL"
    assert "macro_like" not in defn(run("struct S { S() {} };"), "S::S").attrs
