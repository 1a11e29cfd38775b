"""Receiver typing rules of the Rust resolver (issue 10, fourth round): values of other crates (constructors,
variants, `unsafe` blocks, branches that agree), generic calls that may hand out a checkout type, checkout trait
impls for external types (only those whose trait is in scope).  Tiny in-memory sources."""

from __future__ import annotations

from helpers import rust_calls

from apxtui.index.resolve_rust import _local_turbofish, join_branches

MANIFEST = ('[package]\nname = "m"\n[dependencies]\ncandle-core = "0.8"\ncandle-nn = "0.8"\naxum = "0.7"\n'
            'serde_json = "1"\ntokio = "1"\n')


def calls(src: str, caller: str, callee: str | None = None) -> list[tuple[int, str, str, str]]:
    return rust_calls(src, caller, callee, MANIFEST)


def test_branches_agree_on_one_type_and_unknown_external_values_take_the_known_one():
    assert join_branches(["T:m::A", "T:m::A"]) == "T:m::A"
    assert join_branches(["X:c::Tensor", "X:c::?"]) == "X:c::Tensor"  # Rust gives both branches one type
    assert join_branches(["X:c::?", "X:d::T…"]) == "X:?"  # external, which one not known
    assert join_branches(["T:m::A", "X:c::?"]) == ""  # (not valid Rust): no guess
    assert join_branches(["X:c::Tensor", ""]) == ""  # an untyped branch may be a trait object the other coerces to
    assert join_branches(["T:m::A", "T:m::B"]) == ""


def test_a_turbofish_naming_a_type_may_hand_out_a_checkout_type():
    assert _local_turbofish("serde_json::from_str::<Config>(&s)")
    assert _local_turbofish("v.extract::<Vec<Layer>>()")
    assert not _local_turbofish("t.to_scalar::<f32>()")
    assert not _local_turbofish("v.collect::<_>()")
    assert not _local_turbofish("t.reshape((a, b))")


EXTERNAL = """
use candle_core::{DType, Tensor};
use axum::Json;
pub struct Local;
impl Local { pub fn device(&self) {} pub fn into_response(self) {} pub fn leftshift(&self) {} }
pub fn run(x: &Tensor, s: &str) {
    let kind = DType::F16;
    kind.device();
    Json(Local).into_response();
    let buf = unsafe { candle_core::alloc(4)? };
    buf.device();
    let y = if s.is_empty() { Tensor::cat(&[x], 0)? } else { x.clone() };
    y.device();
    let c = serde_json::from_str::<Local>(s)?;
    c.device();
}
"""


def test_values_of_another_crate_are_external_never_a_checkout_types_method():
    got = calls(EXTERNAL, "m::run")
    by_line = {}
    for line, _, res, _ in got:
        by_line.setdefault(line, set()).add(res)
    # a variant of an external enum, an external tuple struct, an `unsafe { .. }` value, agreeing branches
    assert by_line[8] == by_line[9] == by_line[11] == by_line[13] == {"unresolved"}
    # `from_str::<Local>` hands out the checkout type named in the turbofish: not claimed external
    assert by_line[15] == {"ambiguous"}


EXT_IMPLS = """
pub mod ops {
    use candle_core::Tensor;
    pub trait ShiftOp { fn leftshift(&self) -> u32; }
    impl ShiftOp for Tensor { fn leftshift(&self) -> u32 { 0 } }
}
pub struct Local;
impl Local { pub fn leftshift(&self) -> u32 { 1 } }
pub fn with_trait(x: &candle_core::Tensor) {
    use crate::ops::ShiftOp;
    x.narrow(0, 0, 1)?.leftshift();
}
pub fn without_trait(x: &candle_core::Tensor) {
    x.narrow(0, 0, 1)?.leftshift();
}
"""


def test_an_external_value_of_unknown_type_links_only_checkout_impls_for_external_types_in_scope():
    got = calls(EXT_IMPLS, "m::with_trait", "leftshift")
    assert [(q, r) for _, q, r, _ in got] == [("m::ops::Tensor::leftshift", "ambiguous")]  # never `Local`'s
    assert "checkout impls for external types whose trait is in scope" in got[0][3]
    assert [r for _, _, r, _ in calls(EXT_IMPLS, "m::without_trait", "leftshift")] == ["unresolved"]


ARC = """
use std::sync::Arc;
pub struct Layer;
impl Layer { pub fn merge(&mut self) {} }
pub struct Other;
impl Other { pub fn merge(&mut self) {} }
pub struct Model { pub proj: Arc<Layer> }
pub fn run(m: &mut Model) {
    Arc::get_mut(&mut m.proj).unwrap().merge();
}
"""


def test_a_std_generic_function_hands_out_its_arguments_content():
    assert [(q, r) for _, q, r, _ in calls(ARC, "m::run", "merge")] == [("m::Layer::merge", "exact")]


MACRO_BODY = """
pub struct Layer;
impl Layer { pub fn forward(&self) {} }
pub struct Other;
impl Other { pub fn forward(&self) {} }
macro_rules! op {
    ($name:ident) => {
        pub fn $name(&self) {
            let l = Layer;
            l.forward();
        }
    };
}
pub struct M;
impl M {
    op!(run);
}
"""


def test_a_macro_bodys_lets_type_its_calls_where_they_are_written():
    got = calls(MACRO_BODY, "m::M::run", "forward")
    assert [(line, q, r) for line, q, r, _ in got] == [(16, "m::Layer::forward", "exact")]  # at the invocation
    assert "let `l = Layer` (lib.rs:9)" in got[0][3]  # the binding where the macro's body has it


def test_macro_definitions_are_all_kept_alike_ones_expanded_once():
    from apxtui.index.rust_macros import RustMacros, expand_rust_file
    from apxtui.parse import extract_file

    one = "macro_rules! op { ($n:ident) => { pub fn $n(&self) -> u32 { 1 } }; }\n"
    two = "macro_rules! op { ($n:ident) => { pub fn $n(&self) -> u32 { 2 } }; }\n"
    use = "pub struct M;\nimpl M {\n    op!(run);\n}\n"
    for second, runs in ((one, 1), (two, 2)):
        facts = {rel: extract_file(rel, src.encode(), "rust", "m") for rel, src in
                 (("m/src/a.rs", one), ("m/src/b.rs", second), ("m/src/lib.rs", use))}
        out = expand_rust_file(facts["m/src/lib.rs"], RustMacros(facts))
        defs = [d for d in out.defs if d.name == "run"]
        assert len(defs) == runs  # cfg alternatives that differ: each expanded, none picked silently
        assert sorted(w for d in defs for w in d.attrs["macro_defs"]) == (
            ["m/src/a.rs:1", "m/src/b.rs:1"])


def test_a_long_builder_chain_with_comments_is_typed_link_by_link():
    links = "".join(f"\n        .with_value(v{i}) // step {i}" for i in range(30))
    src = f"""
pub struct Builder;
impl Builder {{
    pub fn new() -> Self {{ Builder }}
    pub fn with_value(self, v: u32) -> Self {{ self }}
    pub fn build(self) {{}}
}}
pub struct Other;
impl Other {{ pub fn build(self) {{}} }}
pub fn run() {{
    let b = Builder::new(){links};
    b.build();
    Builder::new(){links}
        .build();
}}
"""
    got = calls(src, "m::run", "build")
    assert [(q, r) for _, q, r, _ in got] == [("m::Builder::build", "exact")] * 2


GUARD_FIELDS = """
use std::sync::{Mutex, MutexGuard};
pub struct Hybrid;
impl Hybrid { pub fn layers(&self) -> usize { 0 } }
pub struct Other;
impl Other { pub fn layers(&self) -> usize { 1 } }
pub struct Meta;
impl Meta { pub fn layers(&self) -> usize { 2 } }
pub struct Cache { pub inner: Mutex<Hybrid> }
impl Cache { pub fn hybrid(&self) -> MutexGuard<'_, Hybrid> { self.inner.lock().unwrap() } }
pub struct Layer { pub cache: Cache }
pub struct Model { pub layers: Vec<Layer>, pub meta: Option<Meta> }
impl Model {
    pub fn run(&self, i: usize) {
        let h = self.layers[i].cache.hybrid();
        h.layers();
        let c = &self.layers[i].cache;
        c.hybrid().layers();
        let m = self.meta.as_ref().cloned();
        m.unwrap().layers();
    }
}
"""


def test_a_guard_with_a_lifetime_an_indexed_field_path_and_a_cloned_option_are_typed():
    got = calls(GUARD_FIELDS, "m::Model::run", "layers")
    assert [(line, q, r) for line, q, r, _ in got] == [
        (16, "m::Hybrid::layers", "exact"), (18, "m::Hybrid::layers", "exact"), (20, "m::Meta::layers", "exact")]


DEV_DEP = """
pub struct Local;
impl Local { pub fn path(&self) {} }
#[cfg(test)]
mod tests {
    use tempfile::tempdir;
    #[test]
    fn t() {
        let dir = tempdir().unwrap();
        dir.path();
        let other = tempfile::tempdir().unwrap();
        other.path();
    }
}
"""


def test_a_dev_dependencys_function_result_is_external_in_test_code():
    got = calls(DEV_DEP, "m::tests::t", "path")
    assert [r for _, _, r, _ in got] == ["unresolved", "unresolved"]


GENERIC_EXTERNAL = """
pub struct Msg;
impl Msg { pub fn run(&self) {} }
pub fn run(rx: tokio::sync::Pipe<Msg>, bytes: tokio::sync::Pipe<'_, u8>) {
    rx.try_recv().unwrap().run();
    bytes.try_recv().unwrap().run();
}
"""


def test_another_crates_generic_over_a_checkout_type_may_hand_it_out():
    got = calls(GENERIC_EXTERNAL, "m::run")
    assert {(line, q, r) for line, q, r, _ in got if line == 5} == {
        (5, "Pipe::try_recv", "unresolved"), (5, "m::Msg::run", "ambiguous")}  # not claimed external
    assert {r for line, _, r, _ in got if line == 6} == {"unresolved"}  # over u8 (and a lifetime): external


CLOSURE_OVER_EXTERNAL = """
use candle_nn::Linear;
pub struct Local;
impl Local { pub fn to_dtype(&self) {} }
pub fn run(lin: &Linear, layers: &candle_nn::Layers) {
    lin.bias().map(|x| x.to_dtype());
    for l in layers.iter() {
        l.to_dtype();
    }
}
"""


def test_an_element_of_a_non_generic_external_types_method_result_is_external():
    got = calls(CLOSURE_OVER_EXTERNAL, "m::run", "to_dtype")
    assert [r for _, _, r, _ in got] == ["unresolved", "unresolved"]  # never `Local::to_dtype`


TUPLE_OF_EXTERNAL = """
use candle_core::Tensor;
pub struct Local;
impl Local { pub fn device(&self) {} }
pub fn run(t: &Tensor) {
    let (s, l) = t.storage_and_layout();
    s.device();
    l.device();
}
"""


def test_the_parts_of_a_tuple_a_non_generic_external_types_method_hands_out_are_external():
    assert [r for _, _, r, _ in calls(TUPLE_OF_EXTERNAL, "m::run", "device")] == ["unresolved", "unresolved"]


TRAIT_RETURNS = """
use std::sync::{Arc, Mutex};
pub trait Pipeline { fn metadata(&self) -> u32; }
pub trait Loader {
    fn load(&self) -> Arc<Mutex<dyn Pipeline>>;
    fn metadata(&self) -> u32;
}
pub struct P;
impl Pipeline for P { fn metadata(&self) -> u32 { 0 } }
pub struct L;
impl Loader for L { fn load(&self) -> Arc<Mutex<dyn Pipeline>> { todo!() } fn metadata(&self) -> u32 { 1 } }
pub fn run(loader: Box<dyn Loader>) {
    let pipeline = loader.load();
    pipeline.lock().unwrap().metadata();
}
"""


def test_a_trait_method_returning_another_trait_object_is_not_the_receivers_type():
    assert [(q, r) for _, q, r, _ in calls(TRAIT_RETURNS, "m::run", "metadata")] == [("m::P::metadata", "exact")]


def test_memo_keys_keep_their_objects_alive():
    """A memo keyed by ``id()`` holds its key object: a short-lived call site or context must not hand its id,
    and its memo entries, to a later object (links then depended on the allocator; builds differed)."""
    import gc
    import weakref

    from apxtui.facts import Context
    from apxtui.index.resolve_rust import RustResolver
    from apxtui.index.tables import Tables

    r = RustResolver(Tables({}))
    ctx = Context("match_arm", "Some(x)", 3, "3:4")
    gone = weakref.ref(ctx)
    key = r._pin(ctx)
    del ctx
    gc.collect()
    assert gone() is not None and id(gone()) == key
