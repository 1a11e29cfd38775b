"""Resolution precision (issue 10): package boundaries, receiver types, external types, C/C++
overloads and casts, the vendor table, entry syntax.  Each test is a tiny in-memory checkout."""

from __future__ import annotations

import pytest
from helpers import build_isolated, edges_from, graph_of

from apxtui.packages import Packages, Unit
from apxtui.trace import NAME_ONLY_OTHER, Dispatch, SymbolError, Tracer, find_symbol, walk


def targets(g, caller: str, callee: str | None = None, kind: str = "call") -> list[tuple[str, str]]:
    return sorted((t["qualname"], e["resolution"]) for t, e in edges_from(g, caller, kind)
                  if callee is None or e["callee"] == callee)


# -- package boundaries ------------------------------------------------------------------

WORKSPACE = {
    "Cargo.toml": '[workspace]\nmembers = ["core", "nn", "py", "app"]\n'
                  '[workspace.dependencies]\nnn = { path = "nn" }\n',
    "core/Cargo.toml": '[package]\nname = "core-x"\n',
    # `candle` is core-x renamed; the python binding's own lib is also called `candle`
    "nn/Cargo.toml": '[package]\nname = "nn"\n[dependencies]\ncandle = { path = "../core", package = "core-x" }\n'
                     'tokio = "1"\n[dev-dependencies]\nrand = "0.8"\n',
    "py/Cargo.toml": '[package]\nname = "candle-py"\n[lib]\nname = "candle"\n'
                     '[dependencies]\nnn = { workspace = true }\n',
    "app/Cargo.toml": '[package]\nname = "app"\n[features]\nml = ["dep:nn"]\n'
                      '[dependencies]\nnn = { workspace = true, optional = true }\n',
}
CORE = "pub struct Tensor;\nimpl Tensor { pub fn reshape(&self) {} pub fn infer(&self) {} }\n"
PY = ("pub struct Tensor;\nimpl Tensor { pub fn reshape(&self) {} }\n"
      "pub struct Bench;\nimpl Bench { pub fn infer(&self) {} }\n")
NN = """
pub mod thing;
pub use thing::Thing;
use candle::Tensor;
pub fn f(t: &Tensor) { t.reshape(); candle::Tensor::reshape(t); let u = make(); u.infer(); }
#[cfg(test)]
mod tests { pub struct Helper; impl Helper { pub fn only_in_tests(&self) {} } }
pub fn g() { let x = make(); x.only_in_tests(); }
"""
EXAMPLE = "pub struct Example;\nimpl Example { pub fn infer(&self) {} }\nfn main() {}\n"
APP = "pub fn run(t: &nn::Thing) { nn::f(); t.go(); }\n"


def workspace_graph():
    files = {"core/src/lib.rs": ("core_x", CORE), "py/src/lib.rs": ("candle", PY), "nn/src/lib.rs": ("nn", NN),
             "nn/examples/bench.rs": ("bench", EXAMPLE), "app/src/lib.rs": ("app", APP),
             "nn/src/thing.rs": ("nn::thing", "pub struct Thing;\nimpl Thing { pub fn go(&self) {} }\n")}
    return graph_of(files, WORKSPACE)


def test_manifests_read_renames_workspace_and_optional_deps():
    pk = Packages.from_texts(WORKSPACE, {"core/src/lib.rs", "nn/src/lib.rs", "py/src/lib.rs", "app/src/lib.rs"})
    assert pk.crate_aliases("nn/src/lib.rs") == {"candle": "core_x", "tokio": ""}  # renamed; external
    assert pk.crate_aliases("app/src/lib.rs") == {"nn": "nn"}  # workspace = true, optional
    assert pk.crate_aliases("nn/tests/t.rs")["rand"] == ""  # dev-dependencies: tests only
    assert "rand" not in pk.crate_aliases("nn/src/lib.rs")
    assert pk.visible("app/src/lib.rs", "core/src/lib.rs")  # transitively, through nn
    assert not pk.visible("nn/src/lib.rs", "py/src/lib.rs")  # py depends on nn, not the reverse
    assert not pk.visible("nn/src/lib.rs", "nn/examples/bench.rs")  # an example is its own crate
    assert pk.unit_of("nn/examples/bench.rs") == Unit("nn", "example", "bench")


def test_candidates_outside_the_dependency_closure_are_never_candidates():
    g, _ = workspace_graph()
    got = targets(g, "nn::f")
    # `candle` is core-x here: never the binding crate's `candle::Tensor`, never the example's `infer`
    assert ("core_x::Tensor::reshape", "exact") in got
    assert not any(q.startswith(("candle::", "bench::")) for q, _ in got)
    infer = [(q, r) for q, r in got if q.endswith("::infer")]
    assert infer == [("core_x::Tensor::infer", "ambiguous")]  # by name only: at most ambiguous
    assert targets(g, "nn::g", "only_in_tests") == []  # `#[cfg(test)]` code is a candidate for test code only
    # an optional dependency is one (with its feature on); re-exported type
    assert targets(g, "app::run") == [("nn::f", "exact"), ("nn::thing::Thing::go", "exact")]


# -- receiver types ----------------------------------------------------------------------

MODELS = {
    "m/src/lib.rs": ("m", "pub mod with_tracing;\npub mod llama;\npub mod other;\n"),
    "m/src/with_tracing.rs": ("m::with_tracing", "pub struct Linear;\nimpl Linear { pub fn forward(&self) {} }\n"),
    "m/src/other.rs": ("m::other", "pub struct Linear;\nimpl Linear { pub fn forward(&self) {} }\n"
                                   "pub struct CausalSelfAttention;\n"
                                   "impl CausalSelfAttention { fn apply_rotary_emb(&self) {} }\n"),
    "m/src/llama.rs": ("m::llama", """
use super::with_tracing::Linear;
use super::with_tracing as wt;
pub struct Mlp { c_fc1: Linear, c_fc2: wt::Linear }
pub struct CausalSelfAttention { mlp: Mlp }
impl CausalSelfAttention {
    fn apply_rotary_emb(&self) {}
    pub fn forward(&self) { self.apply_rotary_emb(); self.mlp.c_fc1.forward(); self.mlp.c_fc2.forward(); }
}
"""),
}


def test_self_and_fields_are_typed_through_the_module_imports():
    g, _ = graph_of(MODELS)
    got = [(e["line"], t["qualname"], e["resolution"]) for t, e in edges_from(g, "llama::CausalSelfAttention::forward")]
    assert sorted(got) == [(8, "m::llama::CausalSelfAttention::apply_rotary_emb", "exact"),
                           (8, "m::with_tracing::Linear::forward", "exact"),
                           (8, "m::with_tracing::Linear::forward", "exact")]


VARIANTS = """
pub struct BfRt; pub struct FpRt; pub struct Cache;
impl BfRt { pub fn infer(&self) {} }
impl FpRt { pub fn infer(&self) {} }
impl Cache { pub fn infer(&self) {} }
pub enum RuntimeVariant { Bf16 { runtime: BfRt, steps: u32 }, Fp8 { runtime: FpRt }, Plain(Cache) }
impl RuntimeVariant {
    pub fn infer(&self) {
        match self {
            Self::Bf16 { runtime, .. } => runtime.infer(),
            Self::Fp8 { runtime: rt } => rt.infer(),
            Self::Plain(c) => c.infer(),
        }
    }
}
pub struct Holder { cache: Option<Cache> }
impl Holder { pub fn go(&self) { if let Some(c) = &self.cache { c.infer(); } } }
"""


def test_match_arm_payloads_type_their_bindings_struct_like_variants_too():
    g, _ = graph_of({"m/src/lib.rs": ("m", VARIANTS)})
    got = sorted((e["line"], t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::RuntimeVariant::infer"))
    assert got == [(10, "m::BfRt::infer", "exact"), (11, "m::FpRt::infer", "exact"), (12, "m::Cache::infer", "exact")]
    assert targets(g, "m::Holder::go") == [("m::Cache::infer", "exact")]
    # the match lists all 3 variants: no 4th "other arms (no call)"
    root = Tracer(g).trace(find_symbol(g, "RuntimeVariant::infer"))
    match = next(it for it in root.children if isinstance(it, Dispatch))
    labels = [a.label for a in match.arms]
    assert labels == ["Self::Bf16 { runtime, .. }", "Self::Fp8 { runtime: rt }", "Self::Plain(c)"]


def test_a_match_with_arms_without_calls_keeps_the_other_arms():
    src = VARIANTS.replace("Self::Plain(c) => c.infer(),", "Self::Plain(_) => {}")
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    root = Tracer(g).trace(find_symbol(g, "RuntimeVariant::infer"))
    match = next(it for it in root.children if isinstance(it, Dispatch))
    assert match.arms[-1].implicit and match.arms[-1].label == "other arms (no call)"


TRAIT = """
pub trait VlaRuntime { fn infer_host(&self); }
pub struct Pi05; impl VlaRuntime for Pi05 { fn infer_host(&self) {} }
pub enum Loaded { Vla(Box<dyn VlaRuntime>) }
impl Loaded {
    pub fn vla(&self) -> Result<&dyn VlaRuntime> { todo!() }
    pub fn infer_host(&self) -> Result<()> { self.vla()?.infer_host(); Ok(()) }
}
"""


def test_a_trait_with_one_impl_in_the_closure_is_exact():
    files = {"m/src/lib.rs": ("m", TRAIT),
             "m/examples/bench.rs": ("bench", "use m::VlaRuntime;\nstruct B;\n"
                                              "impl VlaRuntime for B { fn infer_host(&self) {} }\n")}
    manifest = {"m/Cargo.toml": '[package]\nname = "m"\n'}
    g, _ = graph_of(files, manifest)
    (t, e), = edges_from(g, "m::Loaded::infer_host")[1:]  # after `self.vla()`
    assert (t["qualname"], e["resolution"]) == ("m::Pi05::infer_host", "exact") and "only impl" in e["how"]
    two = TRAIT + "pub struct Other; impl VlaRuntime for Other { fn infer_host(&self) {} }\n"
    g, _ = graph_of({"m/src/lib.rs": ("m", two)}, manifest)
    assert [r for q, r in targets(g, "m::Loaded::infer_host", "infer_host")] == ["ambiguous", "ambiguous"]


def test_a_generic_return_is_bound_by_the_closure_argument():
    src = """
pub struct Prepared; impl Prepared { pub fn run(&self) {} }
pub struct Other; impl Other { pub fn run(&self) {} }
fn cached_or_build<K, V>(key: K, build: impl FnOnce() -> Result<V>) -> Result<Rc<V>> { todo!() }
pub struct Rt;
impl Rt {
    fn build(&self) -> Result<Prepared> { todo!() }
    pub fn infer(&self) { let prepared = { let k = 1; cached_or_build(k, || self.build())? }; prepared.run(); }
}
"""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    assert targets(g, "m::Rt::infer", "run") == [("m::Prepared::run", "exact")]


def test_external_receivers_are_unresolved_never_linked_by_name():
    manifest = {"q/Cargo.toml": '[package]\nname = "q"\n[dependencies]\ncandle-core = "0.9"\n'}
    src = """
use candle_core::Tensor;
use std::collections::HashMap;
pub struct Binding; impl Binding { pub fn concat(&self) {} pub fn reshape(&self) {} }
pub struct AgentStream; impl AgentStream { pub fn next(&mut self) {} }
pub fn f(x: &Tensor, tensors: HashMap<String, Tensor>, parts: Vec<Vec<u8>>) {
    x.reshape();
    let y = x.matmul(x)?;
    y.reshape();
    tensors.values().next();
    parts.concat();
}
"""
    g, _ = graph_of({"q/src/lib.rs": ("q", src)}, manifest)
    got = [(e["line"], e["callee"], t["kind"], e["resolution"]) for t, e in edges_from(g, "q::f")]
    assert all(k == "external" and r == "unresolved" for _, _, k, r in got), got
    assert {c for _, c, _, _ in got} >= {"reshape", "matmul"}


def test_an_annotated_closure_parameter_has_its_written_type():
    manifest = {"q/Cargo.toml": '[package]\nname = "q"\n[dependencies]\ncandle-core = "0.9"\n'}
    src = """
use candle_core::Tensor;
pub struct Local; impl Local { pub fn reshape(&self) {} pub fn run(&self) {} }
pub struct Other; impl Other { pub fn run(&self) {} }
pub fn f() {
    let quant = |w: Tensor| w.reshape();
    let go = |l: &Local, n: usize| l.run();
}
"""
    g, _ = graph_of({"q/src/lib.rs": ("q", src)}, manifest)
    got = {e["callee"]: (t["kind"], e["resolution"], t.get("qualname")) for t, e in edges_from(g, "q::f")}
    assert got["reshape"][:2] == ("external", "unresolved"), got  # candle's Tensor: never Local::reshape
    assert got["run"][1:] == ("exact", "q::Local::run"), got  # not Other::run


def test_cfg_alternatives_of_a_type_are_all_kept():
    files = {
        "c/src/lib.rs": ("c", '#[cfg(feature = "cuda")]\npub use cuda_backend as cuda;\n'
                              '#[cfg(not(feature = "cuda"))]\npub use dummy_backend as cuda;\npub use cuda::Storage;\n'
                              "pub mod cuda_backend;\npub mod dummy_backend;\npub mod user;\n"),
        "c/src/cuda_backend.rs": ("c::cuda_backend", "pub struct Storage;\nimpl Storage { pub fn device(&self) {} }\n"),
        "c/src/dummy_backend.rs": ("c::dummy_backend",
                                   "pub struct Storage;\nimpl Storage { pub fn device(&self) {} }\n"),
        "c/src/user.rs": ("c::user", "use crate::Storage;\npub fn f(s: &Storage) { s.device(); }\n"),
    }
    g, _ = graph_of(files)
    assert targets(g, "c::user::f") == [("c::cuda_backend::Storage::device", "ambiguous"),
                                       ("c::dummy_backend::Storage::device", "ambiguous")]


# -- C / C++ ------------------------------------------------------------------------------

NORM_H = """
__global__ void rms_norm_kernel(const float* x, unsigned int cols, unsigned int rows, float eps);
__global__ void rms_norm_kernel(const float* x, unsigned int cols, unsigned int rows, float eps) {}
__global__ void rms_norm_kernel(const float* x, int rows, int cols, float eps) {}
"""
NORM_CU = """
#include "norm.cuh"
typedef unsigned char u8;
extern "C" void by_int(const void* x, int rows, int cols, float eps) {
  rms_norm_kernel<<<rows, 256>>>(static_cast<const float*>(x), rows, cols, eps);
}
extern "C" void by_uint(const void* x, unsigned int cols, unsigned int rows) {
  rms_norm_kernel<<<rows, 256>>>((const float*)x, cols, rows, 1e-5f);
  u8 a = u8(cols); float b = float(rows); int c = (int)(rows); auto d = (float)(x);
  run_mha_fwd(x);
}
"""
FLASH_CU = "void run_mha_fwd(const void* x) {}\n"


def test_overloads_are_chosen_by_argument_types():
    g, _ = graph_of({"k/norm.cuh": ("", NORM_H), "k/norm.cu": ("", NORM_CU)})
    (t, e), = edges_from(g, "by_int", "launch")
    assert (t["line"], e["resolution"]) == (4, "exact") and "argument types" in e["how"]
    (t, e), = edges_from(g, "by_uint", "launch")
    assert (t["line"], e["resolution"]) == (3, "exact")


GENERIC_H = """
template <typename Acc, typename A, typename B> __device__ Acc mul(A a, B b);
struct Float4_ { float2 x; float2 y; };
template <> __device__ float2 mul(uint32_t a, uint32_t b) { return a; }
template <> __device__ uint32_t mul(uint32_t a, uint32_t b) { return a; }
template <> __device__ Float4_ mul(uint2 a, uint2 b) { return a; }
template <int W> __device__ float warp_sum(float x) { return x; }
__device__ float warp_sum(float v) { return v; }
__device__ float2 fma(uint32_t a, uint32_t b, float2 c) { return c; }
__device__ uint32_t fma(uint32_t a, uint32_t b, uint32_t c) { return c; }
__device__ Float4_ fma(uint2 a, uint2 b, Float4_ c) { Float4_ d; d.x = fma(a.x, b.x, c.x); return d; }
__device__ float fma(float a, float b, float c) { return c; }
__device__ double fma(double a, double b, double c) { return c; }
template <typename T, int D, bool C> void run_(P& p);
template <typename T, int N = 4> __device__ void g(T x) {}
template <> __device__ void g<float, 4>(float x) {}
#ifdef USE_ROCM
typedef __hip_bfloat16 __nv_bfloat16;
#endif
template <> __device__ __nv_bfloat16 mul(__nv_bfloat16 a, __nv_bfloat16 b) { return a; }
"""
SPEC_CU = ("#include \"generic.cuh\"\ntemplate <> void run_<cutlass::half_t, 128, true>(P& p) {}\n"
           "template <> void run_<cutlass::half_t, 128>(P& p) {}\n"  # another template's (no default arguments)
           "template <> void run_<cutlass::half_t, 128, false>(P& p) {}\n"
           "template <> void run_<cutlass::bfloat16_t, 128, true>(P& p) {}\n")
USER_CU = """
#include "generic.cuh"
__device__ void user(uint32_t a, uint32_t b, float* xs, int k, P& p) {
  mul<float2, uint32_t, uint32_t>(a, b);
  warp_sum<32>(1.0f);
  run_<cutlass::half_t, 128, true>(p);
  run_<cutlass::half_t, k, true>(p);
  fma(xs[0], 1.0f, *xs);
  fma(xs[0], k, *xs);
  fma(xs[0] * 2, (xs[1] - 1.0f), -xs[2]);
  g<float>(1.0f);
}
"""


def test_explicit_template_arguments_choose_the_specialisation():
    g, _ = graph_of({"k/generic.cuh": ("", GENERIC_H), "k/spec.cu": ("", SPEC_CU), "k/user.cu": ("", USER_CU)})
    got = {}
    for t, e in edges_from(g, "user"):
        got.setdefault(e["line"], []).append((t["file"], t["line"], e["resolution"], e["how"]))
    (mul,) = got[4]  # deduced from the primary template's signature: float2 mul(uint32_t, uint32_t)
    assert mul[1:3] == (4, "exact") and "explicit specialisation" in mul[3]
    (ws,) = got[5]  # a non-template cannot take template arguments
    assert ws[1:3] == (7, "exact") and "the template" in ws[3]
    (run,) = got[6]  # 128 and `false` are literals; the library type name `cutlass::half_t` is assumed distinct
    assert run[:3] == ("k/spec.cu", 2, "heuristic") and "taken as distinct" in run[3]
    assert sorted(r[1] for r in got[7]) == [2, 5] and {r[2] for r in got[7]} == {"ambiguous"}  # `k`: unknown
    assert sorted((r[1], r[2]) for r in got[11]) == [(15, "ambiguous"), (16, "ambiguous")]  # a default argument


REDUCE_H = """
template <int N> struct Allreduce { template <typename T> static T run(T x) { return x; } };
template <> struct Allreduce<2> { template <typename T> static T run(T x) { return x; } };
template <typename T, int N> struct Tile { static int get(int l) { return l; } };
template <typename T> struct Tile<T, 8> { static int get(int l) { return l; } };
template <int K> __device__ float reduce(float x) {
  Allreduce<4>::run(x); Allreduce<2>::run(x); Allreduce<K>::run(x); Tile<float, 8>::get(1); Tile<float, 4>::get(1);
  return x;
}
"""


def test_class_template_arguments_choose_the_class_specialisation():
    g, _ = graph_of({"k/reduce.cuh": ("", REDUCE_H)})
    got = sorted((e["text"].split("(")[0], t["line"], e["resolution"]) for t, e in edges_from(g, "reduce"))
    hows = [e["how"] for _, e in edges_from(g, "reduce") if e["text"].startswith("Allreduce<4>")]
    assert hows == ["class template arguments <4>: no specialisation matches, the class template"]
    user = "#include \"reduce.cuh\"\nvoid use4(float x) { Allreduce<4>::run(x); }\n"
    g2, _ = graph_of({"k/reduce.cuh": ("", REDUCE_H), "k/other.cuh": ("", REDUCE_H.split("template <int K>")[0]),
                      "k/user.cu": ("", user)})
    ((t, e),) = edges_from(g2, "use4")  # two primaries left, one visible: both rules named
    assert (t["file"], t["line"], e["resolution"]) == ("k/reduce.cuh", 2, "exact")
    assert e["how"] == ("class template arguments <4> rule out 2 specialisation(s); "
                        "the definition visible through #include")
    assert got == [("Allreduce<2>::run", 3, "exact"), ("Allreduce<4>::run", 2, "exact"),
                   ("Allreduce<K>::run", 2, "ambiguous"), ("Allreduce<K>::run", 3, "ambiguous"),
                   ("Tile<float, 4>::get", 4, "exact"), ("Tile<float, 8>::get", 5, "exact")]


def test_an_argument_of_the_caller_s_template_type_is_of_unknown_type():
    src = ("template <typename T> __device__ float to_f(T v) { return 0; }\n"
           "__device__ float to_f(float v) { return v; }\n"
           "template <typename T> __device__ void use(const T* w) { to_f(w[0]); }\n")
    g, _ = graph_of({"k/m.cuh": ("", src)})
    assert sorted((t["line"], e["resolution"]) for t, e in edges_from(g, "use")) == [(1, "ambiguous"),
                                                                                     (2, "ambiguous")]


def test_methods_of_different_classes_are_not_ranked_as_overloads():
    src = ("struct A { __device__ void put(float x) {} };\nstruct B { __device__ void put(int x) {} };\n"
           "template <typename S> __device__ void user(S s, float v, int* p) { s.put(v); s.put(p); }\n")
    g, _ = graph_of({"k/m.cuh": ("", src)})
    got = sorted((e["args"][0], t["line"], e["resolution"]) for t, e in edges_from(g, "user"))
    assert got == [("p", 1, "ambiguous"), ("p", 2, "ambiguous"), ("v", 1, "ambiguous"), ("v", 2, "ambiguous")]
    src = ("template <bool G> struct Traits { int lay(int a, int b, bool p = false) const { return 0; } };\n"
           "using GQA = Traits<true>;\ntemplate <> int GQA::lay(int a, int b, bool p) const { return 1; }\n"
           "template <typename S> void use(S s) { s.lay(1, 2); }\n")
    g, _ = graph_of({"k/t.cuh": ("", src)})  # the specialisation's default argument is the primary's
    assert sorted((t["line"], e["resolution"]) for t, e in edges_from(g, "use")) == [(1, "ambiguous"),
                                                                                     (3, "ambiguous")]


def test_explicit_specialisations_are_matched_in_a_stored_index(tmp_path):
    """The index links from stored interface facts: they keep what the rule reads."""
    for rel, src in {"k/generic.cuh": GENERIC_H, "k/spec.cu": SPEC_CU, "k/user.cu": USER_CU}.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(src)
    g = build_isolated(tmp_path / "src", tmp_path / "cache").graph
    got = sorted((g.nodes[v]["file"], g.nodes[v]["line"], e["resolution"]) for u, v, e in g.edges(data=True)
                 if e.get("callee") == "run_" and e.get("line") == 6)
    assert got == [("k/spec.cu", 2, "heuristic")]  # (template_param_decls stored: no defaults)


def test_overloads_by_fields_elements_and_targets_exact_only_when_every_type_is_known():
    g, _ = graph_of({"k/generic.cuh": ("", GENERIC_H), "k/user.cu": ("", USER_CU)})
    (t, e), = [(g.nodes[v], e) for _, v, e in g.out_edges("fma@k/generic.cuh:11", data=True)]  # fma(uint2, …)
    assert (t["line"], e["resolution"]) == (9, "exact") and "a.x: uint32_t" in e["how"]  # vector and struct fields
    by_line = {e["line"]: (t["line"], e["resolution"]) for t, e in edges_from(g, "user") if e["callee"] == "fma"}
    assert by_line[8] == (12, "exact")  # xs[0], *xs: float
    assert by_line[9] == (12, "heuristic")  # `k` is an int: float's fma needs a conversion, double's too
    assert by_line[10] == (12, "exact")  # arithmetic: float * int is float


def test_casts_are_not_calls_and_prototypes_are_not_definitions():
    g, _ = graph_of({"k/norm.cuh": ("", NORM_H), "k/norm.cu": ("", NORM_CU)})
    callees = {e["callee"] for _, e in edges_from(g, "by_uint")}
    assert not callees & {"u8", "float", "(int)", "(float)", "static_cast"}
    protos = [d for _, d in g.nodes(data=True) if d.get("qualname") == "rms_norm_kernel"]
    assert sorted(d["line"] for d in protos) == [3, 4]  # the prototype on line 2 is no node
    with pytest.raises(SymbolError, match="ambiguous"):
        find_symbol(g, "rms_norm_kernel")  # two real overloads: listed, never picked


def test_a_project_definition_wins_over_the_vendor_name_table():
    g, _ = graph_of({"k/norm.cuh": ("", NORM_H), "k/norm.cu": ("", NORM_CU), "k/flash_api.cu": ("", FLASH_CU)})
    got = [(t["kind"], t["qualname"], e["resolution"]) for t, e in edges_from(g, "by_uint")
           if e["callee"] == "run_mha_fwd"]
    assert got == [("host_fn", "run_mha_fwd", "exact")]
    g, _ = graph_of({"k/norm.cuh": ("", NORM_H), "k/norm.cu": ("", NORM_CU)})  # not defined: a vendor call
    got = [t["kind"] for t, e in edges_from(g, "by_uint") if e["callee"] == "run_mha_fwd"]
    assert got == ["vendor_api"]


# -- trace: name-only choices, entry syntax -----------------------------------------------------

def test_a_by_name_only_link_is_a_choice_not_expanded_until_chosen():
    src = "pub struct A; impl A { pub fn step(&self) { deep(); } }\npub fn deep() {}\n" \
          "pub fn run() { let z = make(); z.step(); }\n"
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    root = Tracer(g).trace(find_symbol(g, "m::run"))
    disp = next(it for it in root.children if isinstance(it, Dispatch))
    assert disp.construct == "candidates" and [a.label.split(" @")[0] for a in disp.arms] == ["m::A::step",
                                                                                            NAME_ONLY_OTHER]
    assert all(a.selected is False for a in disp.arms)
    def reached(r):
        return [st.qualname for _, st, _ in walk(r) if st.kind == "rust_fn"]
    assert reached(root) == ["m::run"]  # nothing expanded
    assert reached(Tracer(g, choices={disp.key: 0}).trace(find_symbol(g, "m::run"))) == ["m::run", "m::A::step",
                                                                                          "m::deep"]


def test_entry_syntax_paths_crate_prefix_and_ranked_ambiguity():
    g, _ = graph_of(MODELS)
    want = find_symbol(g, "m::with_tracing::Linear::forward")
    assert find_symbol(g, "m/src/with_tracing.rs::Linear::forward") == want
    assert find_symbol(g, "crate::with_tracing::Linear::forward") == want
    with pytest.raises(SymbolError) as e:
        find_symbol(g, "Linear::forward")
    assert len(e.value.candidates) == 2
    assert find_symbol(g, "with_tracing::linear::FORWARD") == want  # unique even ignoring case
    with pytest.raises(SymbolError) as e:
        find_symbol(g, "Linear::Forward")  # … and lists every equally inexact match
    assert sorted(g.nodes[c]["qualname"] for c in e.value.candidates) == ["m::other::Linear::forward",
                                                                         "m::with_tracing::Linear::forward"]
    with pytest.raises(SymbolError, match="no symbol"):
        find_symbol(g, "m/src/other.rs::Mlp::forward")


# -- Python ------------------------------------------------------------------------------------

def test_python_candidates_stay_in_the_distribution_closure_and_out_of_tests():
    manifests = {"a/pyproject.toml": '[project]\nname = "a"\ndependencies = ["b"]\n',
                 "b/pyproject.toml": '[project]\nname = "b"\n', "c/pyproject.toml": '[project]\nname = "c"\n'}
    files = {
        "a/pkg/run.py": ("pkg.run", "def go(x):\n    x.launch()\n"),
        "b/lib/eng.py": ("lib.eng", "class Engine:\n    def launch(self):\n        pass\n"),
        "c/other/eng.py": ("other.eng", "class Rocket:\n    def launch(self):\n        pass\n"),
        "a/tests/test_run.py": ("tests.test_run", "class Fake:\n    def launch(self):\n        pass\n"),
    }
    g, _ = graph_of(files, manifests)
    assert [q for q, _ in targets(g, "pkg.run.go")] == ["lib.eng.Engine.launch"]
    manifests["a/pyproject.toml"] = '[build-system]\nrequires = ["setuptools"]\n'  # dependencies not declared
    g, _ = graph_of(files, manifests)
    assert [q for q, _ in targets(g, "pkg.run.go")] == ["lib.eng.Engine.launch", "other.eng.Rocket.launch"]


def test_if_and_match_values_type_a_let_only_when_every_branch_agrees():
    src = """
pub struct A; impl A { pub fn go(&self) {} pub fn make() -> A { A } }
pub struct B; impl B { pub fn go(&self) {} }
pub fn f(c: bool, a: &A) {
    let x = if c { A::make() } else { a.clone() };
    x.go();
    let y = match c { true => A::make(), false => B };
    y.go();
    std::io::stdout().flush();
}
"""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    by_line: dict[int, list] = {}
    for t, e in edges_from(g, "m::f"):
        by_line.setdefault(e["line"], []).append((t["qualname"], e["resolution"]))
    assert by_line[6] == [("m::A::go", "exact")]
    assert sorted(by_line[8]) == [("m::A::go", "ambiguous"), ("m::B::go", "ambiguous")]  # A or B: by name
    assert 9 not in by_line  # a std value's method: outside the checkout, never `AgentStream::flush`-like links


def test_python_name_only_links_are_choices_and_builtin_methods_are_not_linked():
    files = {"p/run.py": ("run", "def go(x, s):\n    x.launch()\n    s.strip().replace('a', 'b')\n"),
             "p/eng.py": ("eng", "class Engine:\n    def launch(self):\n        pass\n"
                                 "    def replace(self, a, b):\n        pass\n")}
    g, _ = graph_of(files)
    got = [(t["qualname"], e["resolution"], e["name_only"]) for t, e in edges_from(g, "run.go")]
    assert got == [("eng.Engine.launch", "ambiguous", True)]  # and never `Engine.replace` for str.replace


def test_same_named_binaries_of_two_packages_keep_their_own_imports():
    manifests = {"a/Cargo.toml": '[package]\nname = "a"\n[dependencies]\n'
                                 'tokenizers = "0.22"\nlib = { path = "../lib" }\n',
                 "b/Cargo.toml": '[package]\nname = "b"\n[dependencies]\nlib = { path = "../lib" }\n',
                 "lib/Cargo.toml": '[package]\nname = "lib"\n'}
    files = {
        "lib/src/lib.rs": ("lib", "pub struct Tokenizer;\nimpl Tokenizer { pub fn encode(&self) {} }\n"),
        # both binaries are module `m`; only b's `Tokenizer` is the project's
        "a/src/bin/m.rs": ("m", "use tokenizers::Tokenizer;\npub struct Model { tokenizer: Tokenizer }\n"
                                "impl Model { pub fn run(&self) { self.tokenizer.encode(); } }\n"),
        "b/src/bin/m.rs": ("m", "use lib::Tokenizer;\npub struct Model { tokenizer: Tokenizer }\n"
                                "impl Model { pub fn go(&self) { self.tokenizer.encode(); } }\n"),
    }
    g, _ = graph_of(files, manifests)
    assert [(t["kind"], e["resolution"]) for t, e in edges_from(g, "m::Model::run")] == [("external", "unresolved")]
    assert targets(g, "m::Model::go") == [("lib::Tokenizer::encode", "exact")]


def test_a_plain_call_never_resolves_to_another_class_member():
    files = {"v/cache.cuh": ("", "struct RuntimeCache { int get(int i) { return i; } };\n"),
             "k/utils.cu": ("", '#include "../v/cache.cuh"\nint f(int x) { return get<0>(x); }\n')}
    g, _ = graph_of(files)
    assert [(t["kind"], e["resolution"]) for t, e in edges_from(g, "f")] == [("external", "unresolved")]


RECEIVERS_CU = """
template <int N> struct Allreduce { template <typename T> static T run(T x) { return x; } };
struct View { View(const int* d, int n) {} int item4(int r) const { return r; } };
struct Other { int item4(int r) const { return r; } };
template <typename Gemm> int run_grouped(int stream) { Gemm gemm; return gemm.run(stream); }
int by_library(int s) { mylib::Engine e; return e.run(s); }
int by_project(const int* q, int n) { View v(q, n); View w{q, n}; View f(); return v.item4(0) + w.item4(1); }
int by_unknown(Unknown u) { return u.item4(2); }
template <class M_> struct Kernel { using M = M_; int go(int s) { M m; return m.item4(s); } };
"""


def test_a_method_on_a_library_or_template_typed_variable_never_links_by_name():
    g, _ = graph_of({"k/r.cu": ("", RECEIVERS_CU)})
    (t, e), = edges_from(g, "run_grouped")  # `Gemm` is the caller's template parameter: a choice at most
    assert (t["qualname"], e["resolution"]) == ("Allreduce::run", "ambiguous") and "template parameter" in e["how"]
    (t, e), = edges_from(g, "by_library")  # a type the checkout does not define: external
    assert (e["resolution"], t.get("qualname", t.get("name"))) == ("unresolved", "mylib::Engine::run")
    got = sorted((e["line"], t["qualname"], e["resolution"], e["how"]) for t, e in edges_from(g, "by_project"))
    assert [r[1:3] for r in got] == [("View::item4", "exact")] * 2  # `View v(q, n);` and `View w{q, n}` typed
    assert all("declared type of" in r[3] for r in got)
    for caller, why in (("by_unknown", "not a type the checkout defines"), ("Kernel::go", "a template parameter")):
        got = sorted((t["qualname"], e["resolution"]) for t, e in edges_from(g, caller))
        assert got == [("Other::item4", "ambiguous"), ("View::item4", "ambiguous")], caller
        assert all(why in e["how"] for _, e in edges_from(g, caller))


def test_constructor_style_locals_are_typed_and_prototypes_are_not_locals():
    from apxtui.parse import extract_file
    ff = extract_file("k/r.cu", RECEIVERS_CU.encode(), "cuda")
    (d,) = [d for d in ff.defs if d.qualname == "by_project"]
    assert d.locals == {"v": "View", "w": "View"}  # `View f();` declares a function


ATOMIC_CU = """
__device__ half atomicAdd(half* a, half b) { return b; }
template <typename T> __device__ void atomicAdd(T* a, T b);
template <> __device__ void atomicAdd<__half2>(__half2* a, __half2 b) {}
__global__ void k(int* int_buf, half* h, half x, int i, __half2* h2, __half2 y) {
  atomicAdd(&int_buf[i], 1);
  atomicAdd(&h[i], x);
  atomicAdd(h + i, x);
  atomicAdd(h2, y);
}
"""


def test_project_overloads_that_cannot_take_the_arguments_leave_the_call_to_the_builtin():
    g, _ = graph_of({"k/a.cu": ("", ATOMIC_CU)})
    got = {e["line"]: (t.get("line"), t.get("external_kind"), e["resolution"], e["how"]) for t, e in edges_from(g, "k")}
    assert got[6][1:3] == ("cuda_runtime", "unresolved") and "int32_t*" in got[6][3]
    assert got[7][::2] == (2, "exact")  # `half*` and `half`, each taken unchanged
    assert got[8][::2] == (2, "heuristic") and "built-in" in got[8][3]  # `h + i`: its type is not read
    assert got[9][::2] == (4, "heuristic")  # a non-template built-in beats a template's specialisation


ARMS_CU = """
#ifdef USE_HALF
typedef half elem_t;
#else
typedef float elem_t;
#endif
typedef float real;
struct Pair { using real = half; };
__device__ float put(float v) { return v; }
__device__ half put(half v) { return v; }
__device__ int put(int v) { return v; }
__device__ void k(elem_t e, real f) { put(e); put(f); }
"""


def test_a_typedef_whose_if_arms_disagree_is_either_type():
    g, _ = graph_of({"k/t.cu": ("", ARMS_CU)})
    by_line = {}
    for t, e in edges_from(g, "k"):
        by_line.setdefault(e["col"], []).append((t["line"], e["resolution"], e["how"]))
    first, second = (by_line[c] for c in sorted(by_line))
    assert sorted(r[:2] for r in first) == [(9, "ambiguous"), (10, "ambiguous"), (11, "ambiguous")]
    assert "`e` is half | float by `#if` arm" in first[0][2]
    assert [r[:2] for r in second] == [(9, "exact")]  # `real` is float: a class's own alias is not the file's


PP_ARMS_CUH = """
#if defined(AMD)
static __device__ int gran(const int x) { return 32; }
__device__ int in_amd_arm(int x) { return gran(x); }
#elif defined(TURING)
static __device__ int gran(const int x) { return 16; }
#else
static __device__ int gran(const int) { return 8; }
#endif
__device__ int anywhere(int x) { return gran(x); }
__device__ int under_ifndef(int x) {
#ifndef AMD
  return gran(x);
#endif
}
"""


def test_definitions_in_other_if_arms_than_the_call_are_not_candidates():
    g, _ = graph_of({"k/g.cuh": ("", PP_ARMS_CUH)})
    ((t, e),) = edges_from(g, "in_amd_arm")  # the same #if: its other arms are never compiled with the call
    assert (t["line"], e["resolution"]) == (3, "exact") and "another arm" in e["how"]
    got = sorted((t["line"], e["resolution"]) for t, e in edges_from(g, "anywhere"))
    assert got == [(3, "ambiguous"), (6, "ambiguous"), (8, "ambiguous")]  # one per build configuration
    assert all("alternatives by `#if` arm" in e["how"] for _, e in edges_from(g, "anywhere"))
    got = sorted((t["line"], e["resolution"]) for t, e in edges_from(g, "under_ifndef"))
    assert got == [(6, "ambiguous"), (8, "ambiguous")]  # `#ifndef AMD` rules out the `defined(AMD)` arm


def test_a_namespace_qualifier_that_names_none_of_the_definitions_is_a_library_call():
    src = ("namespace flash { __device__ void gemm(int a) {} }\n__device__ int max(int a, int b) { return a; }\n"
           "namespace cute { struct PREFETCH { static void copy(int a) {} }; }\n"
           "namespace fi { struct Error { Error(int a) {} }; }\n"
           "struct Tile { static int get(int i) { return i; } };\nusing TileC = Tile;\n"
           "__device__ void use(int a) { cute::gemm(a); flash::gemm(a); std::max(a, a); TileC::get(a); "
           "cute::copy(a); fi::Error(a); }\n")
    g, _ = graph_of({"k/q.cuh": ("", src)})
    got = sorted((e["callee"], t.get("qualname", t.get("name")), e["resolution"]) for t, e in edges_from(g, "use"))
    assert got == [("TileC::get", "Tile::get", "exact"), ("cute::copy", "cute::copy", "unresolved"),  # not a member
                   ("cute::gemm", "cute::gemm", "unresolved"), ("fi::Error", "fi::Error::Error", "exact"),
                   ("flash::gemm", "flash::gemm", "exact")]  # std::max: the standard library's (not drawn)


TILE_CUH = """
namespace mm {
enum data_layout { DATA_LAYOUT_I_MAJOR = 0, DATA_LAYOUT_J_MAJOR = 10, DATA_LAYOUT_I_MAJOR_MIRRORED = 20 };
template <int I_, int J_, typename T, data_layout ds_=DATA_LAYOUT_I_MAJOR> struct tile {};
template <int I_, int J_, typename T> struct tile<I_, J_, T, DATA_LAYOUT_I_MAJOR> {
  static int get_j(int l) { return l; } };
template <int I_, int J_> struct tile<I_, J_, half2, DATA_LAYOUT_I_MAJOR> { static int get_j(int l) { return 2; } };
template <int I_, int J_, typename T> struct tile<I_, J_, T, DATA_LAYOUT_J_MAJOR> {
  static int get_j(int l) { return 3; } };
}
using namespace mm;
template <int X> void use(const tile<16, 8, int>& t, const tile<16, 8, half2>& h, const tile<16, 8, float, X>& u) {
  typedef tile<16, 8, int> tile_C;
  typedef tile<16, 16, int, DATA_LAYOUT_J_MAJOR> tile_D;
  tile_C::get_j(0); tile_D::get_j(1); t.get_j(2); h.get_j(3); u.get_j(4);
}
"""


def test_class_specialisations_by_alias_receiver_default_arguments_and_enumerators():
    g, _ = graph_of({"k/t.cuh": ("", TILE_CUH)})
    got = {}
    for t, e in edges_from(g, "use"):
        got.setdefault(e["text"].split("(")[0], []).append((t["line"], e["resolution"]))
    assert got["tile_C::get_j"] == [(6, "exact")]  # the alias's arguments, the default layout filled in
    assert got["tile_D::get_j"] == [(9, "exact")]  # two enumerators of one enum differ by value
    assert got["t.get_j"] == [(6, "exact")]  # the receiver's declared type
    assert got["h.get_j"] == [(7, "exact")]  # half2: both partial specialisations match, the more specialised wins
    assert sorted(got["u.get_j"]) == [(6, "ambiguous"), (9, "ambiguous")]  # `X` undecides; float is no half2


def test_enumerators_are_extracted_with_their_values():
    from apxtui.parse import extract_file
    ff = extract_file("k/e.cuh", b"namespace g { enum L { A = 0, B = 10, C, D = A }; }", "cuda")
    assert [(i.alias, i.path) for i in ff.imports if i.kind == "enumerator"] == [
        ("A", "g::L=0"), ("B", "g::L=10"), ("C", "g::L=11"), ("D", "g::L=")]


def test_a_standard_conversion_beats_a_conversion_to_the_half_classes():
    src = ("namespace math {\n__device__ float ex2(float x) { return x; }\n"
           "__device__ half2 ex2(half2 x) { return x; }\n__device__ half ex2(half x) { return x; }\n}\n"
           "__device__ void use(int n, float m) { math::ex2((int)n); math::ex2(-8. * float(n) / float(n)); "
           "math::ex2(float(n)); math::ex2(m); }\n")
    g, _ = graph_of({"k/m.cuh": ("", src)})
    got = sorted((e["col"], t["line"], e["resolution"]) for t, e in edges_from(g, "use"))
    assert [r[1:] for r in got] == [(2, "heuristic"), (2, "heuristic"), (2, "exact"), (2, "exact")]
