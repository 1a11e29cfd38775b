"""Linking rules: each test builds a tiny cross-language checkout in memory."""

from __future__ import annotations

from helpers import edges_from, graph_of

FFI_RS = """
mod ffi {
    extern "C" {
        #[link_name = "apx_norm_bf16"]
        pub fn norm_bf16(x: *const u16, n: i32) -> i32;
        pub fn apx_missing(n: i32) -> i32;
    }
}
pub fn norm(x: *const u16, n: i32) {
    unsafe { ffi::norm_bf16(x, n); ffi::apx_missing(n); }
}
"""
NORM_CU = """
template <typename T, typename AccT>
__global__ void norm_kernel(const T* x, int n) { AccT s = 0; }
extern "C" int apx_norm_bf16(const void* x, int n) {
    norm_kernel<__nv_bfloat16, float><<<n, 256, 0, 0>>>((const __nv_bfloat16*)x, n);
    return 0;
}
"""


def test_ffi_by_symbol_and_launch_with_template_args():
    g, _ = graph_of({"c/src/lib.rs": ("c", FFI_RS), "c/adapters/norm.cu": ("", NORM_CU)})
    calls = edges_from(g, "c::norm", "call")
    assert {t["qualname"] for t, _ in calls} == {"c::ffi::norm_bf16", "c::ffi::apx_missing"}
    assert all(e["resolution"] == "exact" for _, e in calls)
    ffi = edges_from(g, "c::ffi::norm_bf16", "ffi")
    assert [(t["kind"], t["qualname"], e["resolution"]) for t, e in ffi] == [("abi_fn", "apx_norm_bf16", "exact")]
    missing = edges_from(g, "c::ffi::apx_missing", "ffi")
    assert [(t["kind"], e["resolution"]) for t, e in missing] == [("external", "unresolved")]
    launch = edges_from(g, "apx_norm_bf16", "launch")
    assert len(launch) == 1
    target, edge = launch[0]
    assert target["kind"] == "kernel" and target["qualname"] == "norm_kernel"
    assert edge["template_args"] == ["__nv_bfloat16", "float"]
    assert edge["launch_config"][:2] == ["n", "256"]
    assert edge["file"] == "c/adapters/norm.cu" and edge["line"] == 5


TWO_TYPES_RS = """
pub struct Attn;
pub struct Mlp;
impl Attn { pub fn forward(&self) {} }
impl Mlp { pub fn forward(&self) {} }
pub struct Block { attn: Attn, mlp: Mlp }
impl Block {
    pub fn run(&self, x: &Mlp, y: Unknown) {
        self.attn.forward();
        x.forward();
        y.forward();
    }
}
"""


def test_method_on_two_types_is_ambiguous_unless_the_receiver_decides():
    g, _ = graph_of({"m/src/lib.rs": ("m", TWO_TYPES_RS)})
    by_line: dict[int, list] = {}
    for t, e in edges_from(g, "m::Block::run", "call"):
        by_line.setdefault(e["line"], []).append((t["qualname"], e["resolution"]))
    assert by_line[9] == [("m::Attn::forward", "exact")]  # field type decides
    assert by_line[10] == [("m::Mlp::forward", "exact")]  # parameter type decides
    # `y: Unknown` is a type outside the checkout: never linked to a same-named method
    assert [r for _, r in by_line[11]] == ["unresolved"]


def test_method_with_unknown_receiver_keeps_every_candidate():
    src = TWO_TYPES_RS.replace(
        "pub fn run(&self, x: &Mlp, y: Unknown) {", "pub fn run(&self, v: Vec<u8>) { let z = make();"
    )
    src = src.replace("self.attn.forward();\n        x.forward();\n        y.forward();", "z.forward();")
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    targets = sorted((t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::Block::run", "call")
                     if e["callee"] == "forward")
    assert targets == [("m::Attn::forward", "ambiguous"), ("m::Mlp::forward", "ambiguous")]


def test_use_alias_and_pub_use_reexport():
    files = {
        "k/src/lib.rs": ("k", "pub mod ops;\npub use ops::norm::rms as rms_norm;\n"),
        "k/src/ops/norm.rs": ("k::ops::norm", "pub fn rms() {}\npub fn other() {}\n"),
        "k/src/ops/mod.rs": ("k::ops", "pub mod norm;\n"),
        "app/src/main.rs": ("app", "use k::rms_norm as rn;\nuse k::ops::norm;\nfn rms() {}\n"
                                   "fn main() { rn(); norm::other(); k::rms_norm(); }\n"),
    }
    g, _ = graph_of(files)
    got = sorted((e["callee"], t["qualname"], e["resolution"]) for t, e in edges_from(g, "app::main", "call"))
    assert got == [
        ("k::rms_norm", "k::ops::norm::rms", "exact"),
        ("norm::other", "k::ops::norm::other", "exact"),
        ("rn", "k::ops::norm::rms", "exact"),
    ]  # and never the local `app::rms`


def test_external_cuda_runtime_call_is_unresolved_not_a_same_named_local_function():
    files = {
        "r/src/lib.rs": ("r", "pub fn cudaMemcpyAsync() {}\npub fn cudaStreamSynchronize() {}\n"),
        "r/adapters/mem.cu": ("", "extern \"C\" void apx_copy(void* d, const void* s, size_t n, cudaStream_t st) {\n"
                                  "  cudaMemcpyAsync(d, s, n, cudaMemcpyHostToDevice, st);\n"
                                  "  cudaStreamSynchronize(st);\n}\n"),
    }
    g, _ = graph_of(files)
    got = sorted((t["kind"], t.get("external_kind"), t["qualname"], e["resolution"])
                 for t, e in edges_from(g, "apx_copy", "call"))
    assert got == [
        ("external", "cuda_runtime", "cudaMemcpyAsync", "unresolved"),
        ("external", "cuda_runtime", "cudaStreamSynchronize", "unresolved"),
    ]


BACKEND_RS = """
pub trait Backend { fn op(&self); }
pub struct Cuda;
pub struct Cpu;
impl Backend for Cuda { fn op(&self) {} }
impl Backend for Cpu { fn op(&self) {} }
pub struct Model<B: Backend> { b: B }
impl<B: Backend> Model<B> {
    pub fn forward(&self) { B::op(&self.b); }
}
"""


def test_generic_call_resolves_to_the_trait_impls():
    g, _ = graph_of({"b/src/lib.rs": ("b", BACKEND_RS)})
    got = sorted((t["qualname"], e["resolution"]) for t, e in edges_from(g, "b::Model::forward", "call"))
    assert got == [("b::Cpu::op", "ambiguous"), ("b::Cuda::op", "ambiguous")]
    one = BACKEND_RS.replace("impl Backend for Cpu { fn op(&self) {} }", "")
    g, _ = graph_of({"b/src/lib.rs": ("b", one)})
    got = [(t["qualname"], e["resolution"], e["how"]) for t, e in edges_from(g, "b::Model::forward", "call")]
    assert [x[:2] for x in got] == [("b::Cuda::op", "exact")] and "only impl" in got[0][2]


PYO3_RS = """
use pyo3::prelude::*;
#[pyclass(name = "Runner")]
pub struct PyRunner;
#[pymethods]
impl PyRunner {
    #[new]
    fn new() -> Self { PyRunner }
    #[pyo3(name = "infer")]
    fn infer_py(&self) { step(); }
}
fn step() {}
#[pymodule]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> { m.add_class::<PyRunner>()?; Ok(()) }
"""
POLICY_PY = """
import native

class Policy:
    def __init__(self):
        self.runner = native.Runner()

    def infer(self):
        return self.runner.infer()
"""


def test_python_calls_reach_pyo3_bindings_and_the_rust_methods():
    g, _ = graph_of({"py/src/lib.rs": ("native", PYO3_RS), "pkg/policy.py": ("pkg.policy", POLICY_PY)})
    (binding, e), = edges_from(g, "pkg.policy.Policy.infer", "binding")
    assert binding["kind"] == "pyo3_binding" and binding["qualname"] == "native.Runner.infer"
    assert e["resolution"] == "exact"
    (ctor, _), = edges_from(g, "pkg.policy.Policy.__init__", "binding")
    assert ctor["qualname"] == "native.Runner.__new__"
    exposed = edges_from(g, "native.Runner.infer", "exposes")
    assert [t["qualname"] for t, _ in exposed] == ["native::PyRunner::infer_py"]


def test_call_contexts_are_kept_on_edges():
    src = """
pub fn a() {} pub fn b() {}
pub fn f(n: usize, d: DType) {
    for layer in 0..n {
        match d { DType::BF16 => a(), _ => b() }
    }
}
"""
    g, _ = graph_of({"x/src/lib.rs": ("x", src)})
    got = {t["qualname"]: e for t, e in edges_from(g, "x::f", "call")}
    assert got["x::a"]["loops"] == ["for layer in 0..n"]
    assert [c["text"] for c in got["x::a"]["conditions"]] == ["DType::BF16"]
    assert [c["text"] for c in got["x::b"]["conditions"]] == ["_"]


def test_alias_of_an_alias_and_glob_reexports():
    files = {
        "c/src/lib.rs": ("c", "pub mod kernels;\nmod ffi;\n"),
        "c/src/ffi/mod.rs": ("c::ffi", "mod cuda;\npub(crate) use cuda::*;\n"),
        "c/src/ffi/cuda.rs": ("c::ffi::cuda", 'extern "C" { pub fn cudaMalloc(p: *mut u8) -> i32; }\n'),
        "c/src/kernels/mod.rs": ("c::kernels", "pub mod norm;\n"),
        "c/src/kernels/norm.rs": (
            "c::kernels::norm",
            "use crate::ffi;\npub fn rms() { unsafe { ffi::cudaMalloc(0); } }\n",
        ),
        "m/src/lib.rs": ("m", "pub mod backend;\npub mod exec;\n"),
        "m/src/backend.rs": ("m::backend", "pub use c::kernels;\n"),
        "m/src/exec.rs": (
            "m::exec",
            "use super::backend::kernels;\nuse kernels::norm;\npub fn layer() { norm::rms(); }\n",
        ),
    }
    g, _ = graph_of(files)
    assert [(t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::exec::layer", "call")] == [
        ("c::kernels::norm::rms", "exact")]
    assert [(t["qualname"], e["resolution"]) for t, e in edges_from(g, "c::kernels::norm::rms", "call")] == [
        ("c::ffi::cuda::cudaMalloc", "exact")]


def test_chained_calls_on_one_line_are_separate_call_sites():
    src = (
        "pub struct S; pub struct Sh;\nimpl S { pub fn shape(&self) -> Sh { Sh } }\nimpl Sh { pub fn dims(&self) {} }\n"
        "pub fn f(s: &S) { s.shape().dims(); }\n"
    )
    g, _ = graph_of({"x/src/lib.rs": ("x", src)})
    sites = {e["site"] for _, e in edges_from(g, "x::f", "call")}
    assert len(sites) == 2


def test_let_bound_receivers_are_typed_through_return_types():
    src = """
pub struct Norm; pub struct Attn; pub struct Out;
impl Norm { pub fn forward(&self) -> Result<Attn> { todo!() } }
impl Attn { pub fn forward(&self) -> Out { Out } pub fn make() -> Result<Self> { todo!() } }
impl Out { pub fn forward(&self) {} }
pub struct Block { norm: Norm }
impl Block {
    pub fn run(&self) {
        let a = self.norm.forward()?;
        let o = a.forward();
        o.forward();
        let b = Attn::make()?;
        b.forward();
    }
}
"""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    got = sorted((e["line"], t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::Block::run", "call")
                 if e["callee"] == "forward")
    assert got == [(9, "m::Norm::forward", "exact"), (10, "m::Attn::forward", "exact"),
                   (11, "m::Out::forward", "exact"), (13, "m::Attn::forward", "exact")]


def test_shadowed_let_chains_terminate():
    src = """
pub struct T;
impl T { pub fn f(&self) -> T { T } pub fn g(&self) {} }
pub fn run(xs: &T) { let xs = xs.f(); let xs = xs.f(); let xs = xs.f(); let xs = xs.f(); xs.g(); }
"""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    got = {(t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::run", "call")}
    assert ("m::T::g", "exact") in got or ("m::T::g", "heuristic") in got


def test_chained_receivers_fold_fields_and_return_types():
    src = """
pub struct Vb; pub struct Mlp; pub struct Layer { mlp: Mlp } pub struct Model { layers: Vec<Layer>, vb: Vb }
impl Vb { pub fn pp(&self, s: &str) -> Vb { Vb } pub fn get(&self) {} }
impl Mlp { pub fn merge(&self) {} }
impl Model {
    pub fn run(&self, i: usize) {
        self.vb.pp("a").pp("b").get();
        self.layers[i].mlp.merge();
        Builder::new().with(1).merge();
    }
}
"""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    got = sorted((e["line"], t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::Model::run", "call")
                 if e["callee"] in ("get", "merge"))
    # a chain through a type outside the checkout is never linked to a same-named project method
    assert got == [(7, "m::Vb::get", "exact"), (8, "m::Mlp::merge", "exact"), (9, "Builder…::merge", "unresolved")]


def test_dyn_trait_receiver_resolves_to_the_trait_impls():
    src = """
pub trait Mapper { fn map(&self); }
pub struct A; pub struct B;
impl Mapper for A { fn map(&self) {} }
impl Mapper for B { fn map(&self) {} }
pub struct Other; impl Other { pub fn map(&self) {} }
pub fn run(m: &dyn Mapper) { m.map(); }
"""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    got = sorted((t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::run", "call"))
    assert got == [("m::A::map", "ambiguous"), ("m::B::map", "ambiguous")]  # never Other::map


def test_private_trait_impls_resolve_to_the_trait_in_scope():
    files = {
        "k/src/lib.rs": ("k", "pub mod a;\npub mod b;\npub struct Qkv;\n"),
        "k/src/a.rs": ("k::a", "use crate::Qkv;\ntrait Views { fn key(&self); }\n"
                                "impl Views for Qkv { fn key(&self) {} }\npub fn run(q: &Qkv) { q.key(); }\n"),
        "k/src/b.rs": ("k::b", "use crate::Qkv;\ntrait Views { fn key(&self); }\n"
                                "impl Views for Qkv { fn key(&self) {} }\n"),
    }
    g, _ = graph_of(files)
    assert [(t["qualname"], e["resolution"]) for t, e in edges_from(g, "k::a::run", "call")] == [
        ("k::a::Qkv::key", "exact")]


def test_enum_variant_bindings_are_typed_from_the_variant_payload():
    src = """
pub struct TextModel; pub struct Runner;
impl TextModel { pub fn infer(&self) {} }
impl Runner { pub fn infer(&self) {} }
pub enum Loaded { Text(TextModel), Vla(Box<Runner>) }
pub fn run(m: &Loaded) {
    match m { Loaded::Text(t) => t.infer(), Loaded::Vla(r) => r.infer() }
    if let Loaded::Vla(ref x) = m { x.infer(); }
}
"""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    got = sorted((e["line"], e["receiver"], t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::run", "call"))
    assert got == [(7, "r", "m::Runner::infer", "exact"), (7, "t", "m::TextModel::infer", "exact"),
                   (8, "x", "m::Runner::infer", "exact")]
