"""Macro invocations expanded at link time (apxtui/parse/cpp_macros.py + apxtui/index/macros.py)."""

from __future__ import annotations

from helpers import edges_from, graph_of

from apxtui.facts import CallSite, Definition, FileFacts
from apxtui.index.macros import expand_macros
from apxtui.parse import extract_file
from apxtui.parse.cpp_macros import Expander, MacroDef, clean_body


def expanded(src: str, rel: str = "adapters/x.cu", others: dict[str, str] | None = None) -> FileFacts:
    facts = {rel: extract_file(rel, src.encode(), "cuda")}
    for r, s in (others or {}).items():
        facts[r] = extract_file(r, s.encode(), "cuda")
    return expand_macros(facts, set(facts), set())[rel]


def defn(ff: FileFacts, qualname: str) -> Definition:
    found = [d for d in ff.defs if d.qualname == qualname]
    assert len(found) == 1, [d.qualname for d in ff.defs]
    return found[0]


def call(ff: FileFacts, callee: str) -> CallSite:
    found = [c for c in ff.calls if c.callee == callee]
    assert len(found) == 1, [(c.kind, c.callee) for c in ff.calls]
    return found[0]


# ----------------------------------------------------------------------------- the preprocessor model


def _defs(*texts: str) -> dict[str, MacroDef]:
    out = {}
    for t in texts:
        name, rest = t.split("(", 1)
        params, body = rest.split(")", 1)
        out[name] = MacroDef(name, f"({params})", body.strip(), "h.cuh", 1)
    return out


def test_pasting_stringising_variadic_and_nesting():
    d = _defs("CAT(a, b) k_##a##_##b", "STR(x) #x", "VA(fmt, ...) printf(fmt, __VA_ARGS__)",
              "OUTER(T) switch (n) { case 1: INNER(T, 1); }", "INNER(T, N) run<T, N>(x)")
    e = Expander(d.get).expand("CAT(q4, f32)<<<g, b>>>(STR(hi)); VA(\"%d\", 1, 2); OUTER(float)")
    assert " ".join(e.text.split()) == ('k_q4_f32<<<g, b>>>("hi"); printf("%d", 1, 2); '
                                        "switch (n) { case 1: run<float, 1>(x); }")
    assert [m.name for m in e.used][0] == "CAT"
    # tokens from the invocation's own text keep their offset there; macro bodies have none
    assert e.origin_at(e.text.index("float")) == "CAT(q4, f32)<<<g, b>>>(STR(hi)); VA(\"%d\", 1, 2); OUTER(".__len__()
    assert e.origin_at(e.text.index("switch")) == -1


def test_runaway_expansion_stops_with_an_error(monkeypatch):
    import pytest

    from apxtui.parse import cpp_macros
    from apxtui.parse.cpp_macros import ExpansionError

    monkeypatch.setattr(cpp_macros, "MAX_EXPANSION_TOKENS", 5000)
    texts = ["A0(x) x x"] + [f"A{i}(x) A{i - 1}(x) A{i - 1}(x)" for i in range(1, 24)]
    with pytest.raises(ExpansionError):
        Expander(_defs(*texts).get).expand("A23(y)")


def test_clean_body_drops_comments_and_continuations_but_not_strings():
    assert clean_body('(a) f(a); /* c */ \\\n g("//x") // end') == '(a) f(a); g("//x")'


# ----------------------------------------------------------------------------- file-level macros


def test_macro_generated_kernels_and_macro_calls():
    ff = expanded(
        """
#define CHECK(x) do { if ((x) != 0) abort(); } while (0)
#define AFFINE_OP(TYPENAME, FN_NAME) \\
extern "C" __global__ void FN_NAME(const TYPENAME* inp, TYPENAME* out) { \\
    out[0] = inp[0]; \\
}
#if __CUDA_ARCH__ >= 800
AFFINE_OP(__nv_bfloat16, affine_bf16)
#endif
AFFINE_OP(float, affine_f32)
void host() { CHECK(cudaMalloc(&p, 4)); }
"""
    )
    bf16 = defn(ff, "affine_bf16")
    assert (bf16.kind, bf16.symbol, bf16.line) == ("kernel", "affine_bf16", 8)
    assert bf16.attrs["macro"] == "AFFINE_OP"
    assert bf16.attrs["macro_args"] == ["__nv_bfloat16", "affine_bf16"]
    assert bf16.attrs["macro_defs"] == ["adapters/x.cu:3"]
    assert [p.text for p in bf16.pp] == ["__CUDA_ARCH__ >= 800"]
    assert defn(ff, "affine_f32").pp == []
    assert [p.type for p in defn(ff, "affine_f32").params] == ["const float*", "float*"]
    assert not [d for d in ff.defs if d.name in ("FN_NAME", "TYPENAME")]
    # an error check adds only library calls: kept as a macro call, its argument's call as extracted
    assert call(ff, "CHECK").kind == "macro"
    assert call(ff, "CHECK").attrs["macro_expanded"] == "library calls only"
    assert call(ff, "cudaMalloc").kind == "call"


def test_macro_generated_abi_launchers_with_token_pasting():
    src = r'''
template <typename T> __global__ void gemm_q4_0(const T* w) {}
template <typename T> __global__ void gemm_q8_1(const T* w) {}
#define LAUNCH(sfx, T)                                   \
  extern "C" void launch_gemm_##sfx(const void* w, void* s) { \
    gemm_##sfx<T><<<grid, block, 0, (cudaStream_t)s>>>((const T*)w); \
  }
LAUNCH(q4_0, float)
LAUNCH(q8_1, half)
'''
    f = expanded(src, "k/moe.cu")
    abi = {d.name: d for d in f.defs if d.kind == "abi_fn"}
    assert set(abi) == {"launch_gemm_q4_0", "launch_gemm_q8_1"}
    assert abi["launch_gemm_q8_1"].symbol == "launch_gemm_q8_1" and abi["launch_gemm_q8_1"].attrs["macro"] == "LAUNCH"
    launches = sorted((c.caller, c.callee, tuple(c.template_args), c.line, c.attrs.get("macro"))
                      for c in f.calls if c.kind == "launch")
    assert launches == [("launch_gemm_q4_0", "gemm_q4_0", ("float",), 8, "LAUNCH"),
                        ("launch_gemm_q8_1", "gemm_q8_1", ("half",), 9, "LAUNCH")]


def test_nested_macro_kernels_with_launch_bounds_and_pasting():
    src = r'''
#define ENTRY(tag, T, ncols)                                             \
  extern "C" __global__ void __launch_bounds__(nw(ncols) * 32, 1)        \
      mmvq_##tag##_cuda##ncols(const T* x) { core<T, ncols>(x); }
#define BATCH(tag, T) ENTRY(tag, T, 1) ENTRY(tag, T, 2)
BATCH(q4_0, float)
'''
    f = expanded(src, "k/mmvq.cu")
    kernels = sorted((d.name, d.symbol) for d in f.defs if d.kind == "kernel")
    assert kernels == [("mmvq_q4_0_cuda1", "mmvq_q4_0_cuda1"), ("mmvq_q4_0_cuda2", "mmvq_q4_0_cuda2")]


def test_file_level_macro_from_an_included_header_in_a_namespace():
    header = "#define BINARY_OP(T, NAME, OP) \\\n extern \"C\" __global__ void NAME(const T* x, T* y) { y[0] = OP; }\n"
    src = '#include "ops.cuh"\nnamespace k {\nBINARY_OP(float, badd_f32, x[0] + x[1])\n}\n'
    f = expanded(src, "k/binary.cu", {"k/ops.cuh": header})
    d = defn(f, "k::badd_f32")
    assert (d.kind, d.line, d.symbol, d.attrs["macro_defs"]) == ("kernel", 3, "badd_f32", ["k/ops.cuh:1"])


# ----------------------------------------------------------------------------- statement macros


PAGED = r'''
template <typename T, typename C, int BS> __global__ void attn_kernel(T* o, const C* k) {}
template <typename T, typename C, int BS> void launcher(void* o, void* k, cudaStream_t s) {
  attn_kernel<T, C, BS><<<1, 128, 0, s>>>((T*)o, (const C*)k);
}
#define CALL_LAUNCHER(T, C, BS) launcher<T, C, BS>(out, key_cache, stream);
#define CALL_LAUNCHER_BLOCK_SIZE(T, C) \
  switch (block_size) {               \
  case 8: CALL_LAUNCHER(T, C, 8); break; \
  case 16: CALL_LAUNCHER(T, C, 16); break; \
  default: break; }
'''

CALLER = r'''#include "paged.cuh"
extern "C" void paged_attention_bf16(void* out, void* key_cache, int block_size, int cache_dtype,
                                     cudaStream_t stream) {
  if (cache_dtype == 3) {
    CALL_LAUNCHER_BLOCK_SIZE(__nv_bfloat16, uint8_t);
  } else {
    CALL_LAUNCHER_BLOCK_SIZE(__nv_bfloat16, __nv_bfloat16);
  }
  CHECK_LAST(cudaGetLastError());
}
'''


def test_statement_macro_from_a_header_becomes_calls_under_its_switch():
    f = expanded(CALLER, "k/paged_bf16.cu", {"k/paged.cuh": PAGED})
    got = [(c.callee, tuple(c.template_args), c.line, [(x.kind, x.text) for x in c.contexts])
           for c in f.calls if c.callee == "launcher"]
    assert got == [
        ("launcher", ("__nv_bfloat16", "uint8_t", "8"), 5, [("if", "cache_dtype == 3"), ("switch_case", "case 8")]),
        ("launcher", ("__nv_bfloat16", "uint8_t", "16"), 5, [("if", "cache_dtype == 3"), ("switch_case", "case 16")]),
        ("launcher", ("__nv_bfloat16", "__nv_bfloat16", "8"), 7, [("else", "else"), ("switch_case", "case 8")]),
        ("launcher", ("__nv_bfloat16", "__nv_bfloat16", "16"), 7, [("else", "else"), ("switch_case", "case 16")]),
    ]
    first = next(c for c in f.calls if c.callee == "launcher")
    assert first.caller == "paged_attention_bf16"
    assert first.attrs["macro"] == "CALL_LAUNCHER_BLOCK_SIZE" and first.attrs["macro_at"] == "k/paged_bf16.cu:5"
    assert first.attrs["macro_defs"] == ["k/paged.cuh:7", "k/paged.cuh:6"]
    assert not [c for c in f.calls if c.callee == "CALL_LAUNCHER_BLOCK_SIZE"]
    # the switch of each invocation is its own dispatch point
    groups = {c.contexts[-1].group for c in f.calls if c.callee == "launcher"}
    assert len(groups) == 2
    # an unknown ALL_CAPS call stays a call (no definition visible)
    assert call(f, "CHECK_LAST").kind == "call"


def test_statement_macro_links_through_to_the_kernel_as_a_dispatch():
    from apxtui.trace import Tracer

    g, _ = graph_of({"k/paged.cuh": ("", PAGED), "k/paged_bf16.cu": ("", CALLER)})
    out = edges_from(g, "paged_attention_bf16", "call")
    targets = sorted((d["line"], d["template_args"][-1], t["qualname"]) for t, d in out if t["qualname"] == "launcher")
    assert targets == [(5, "16", "launcher"), (5, "8", "launcher"), (7, "16", "launcher"), (7, "8", "launcher")]
    assert all(d["resolution"] == "exact" for t, d in out if t["qualname"] == "launcher")
    root = [n for n, d in g.nodes(data=True) if d.get("qualname") == "paged_attention_bf16"][0]
    tree = Tracer(g).trace(root)
    # if/else → switch → launcher → kernel
    disp = tree.children[0]
    assert disp.construct == "if"
    inner = disp.arms[0].children[0]
    assert inner.construct == "switch"
    assert [a.label for a in inner.arms] == ["case 8", "case 16", "other cases (no call)"]
    kern = inner.arms[0].children[0].children[0]
    assert (kern.kind, kern.name) == ("kernel", "attn_kernel")


def test_token_pasting_in_a_statement_macro_names_the_kernel():
    src = r'''
template <typename T> __global__ void rms_f32(T* x) {}
template <typename T> __global__ void rms_bf16(T* x) {}
#define LAUNCH_RMS(sfx, T) rms_##sfx<T><<<grid, 256, 0, stream>>>((T*)x)
void host(void* x, int dt, cudaStream_t stream) {
  if (dt == 0) LAUNCH_RMS(f32, float); else LAUNCH_RMS(bf16, __nv_bfloat16);
}
'''
    f = expanded(src)
    got = sorted((c.kind, c.callee, tuple(c.template_args), c.contexts[-1].kind) for c in f.calls if c.kind == "launch")
    assert got == [("launch", "rms_bf16", ("__nv_bfloat16",), "else"), ("launch", "rms_f32", ("float",), "if")]


def test_macro_defined_under_if_alternatives_expands_per_definition():
    header = r'''
#ifdef USE_ROCM
#define LAUNCH_K(T) k_rocm<T><<<1, 64>>>(x)
#else
#define LAUNCH_K(T) k_cuda<T><<<1, 32>>>(x)
#endif
'''
    src = '#include "k.cuh"\nvoid host(float* x) { LAUNCH_K(float); }\n'
    f = expanded(src, "k/a.cu", {"k/k.cuh": header})
    got = sorted((c.callee, c.contexts[0].kind, c.contexts[0].text) for c in f.calls if c.kind == "launch")
    assert got == [("k_cuda", "pp_if", "!(defined(USE_ROCM))"), ("k_rocm", "pp_if", "defined(USE_ROCM)")]


def test_an_argument_call_keeps_its_real_line():
    src = r'''
#define RUN_TWICE(expr) do { prep(); expr; expr; } while (0)
void host() {
  RUN_TWICE(
      work(1));
}
'''
    f = expanded(src)
    works = [c for c in f.calls if c.callee == "work"]
    assert [(c.line, c.attrs["macro_origin"]) for c in works] == [(5, "argument"), (5, "argument")]
    assert [(c.line, c.attrs["macro_origin"]) for c in f.calls if c.callee == "prep"] == [(4, "body")]


def test_switch_constants_are_bound_into_template_arguments():
    d = _defs("BOOL_SWITCH(COND, NAME, ...) [&] { if (COND) { constexpr static bool NAME = true; "
              "return __VA_ARGS__(); } else { constexpr static bool NAME = false; return __VA_ARGS__(); } }()",
              "HDIM(D, ...) [&] { if (D <= 32) { constexpr static int kHeadDim = 32; return __VA_ARGS__(); } }()")
    text = Expander(d.get).expand(
        "BOOL_SWITCH(p.c, Is_causal, [&] { HDIM(p.d, [&] { run<T, kHeadDim, Is_causal>(p, p.Is_causal); }); })").text
    assert text.count("run<T, 32, true>(p, p.Is_causal)") == 1  # a member of that name stays a member
    assert text.count("run<T, 32, false>") == 1 and "kHeadDim>" not in text
    assert "constexpr static bool Is_causal = true;" in text  # the declaration itself is kept


def test_calls_in_an_expanded_file_level_invocation_are_not_the_file_s():
    src = ("__device__ float floorg(float a) { return a; }\n__device__ double floorg(double a) { return a; }\n"
           "#define UNARY(T, NAME, F) extern \"C\" __global__ void NAME(const T* in) { T x = in[0]; F; }\n"
           "UNARY(__half, f16, floorg(x))\nUNARY(double, f64, floorg(x))\n")
    ff = expanded(src)  # (the parser reads the first line as a call at file level)
    assert sorted((c.caller, c.line) for c in ff.calls if c.callee == "floorg") == [("f16", 4), ("f64", 5)]
