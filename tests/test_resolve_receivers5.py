"""Receiver typing rules of the Rust resolver (issue 10, fifth round): candidates by arity, payloads of other
crates' enums, tuple lets over branches, strum's `EnumIter`.  Tiny in-memory sources."""

from __future__ import annotations

from helpers import rust_calls

MANIFEST = ('[package]\nname = "m"\n[dependencies]\ncandle-core = "0.8"\nstrum = "0.26"\n')


def calls(src: str, caller: str, callee: str | None = None) -> list[tuple[int, str, str, str]]:
    return rust_calls(src, caller, callee, MANIFEST)


ARITY = """
pub struct Cache;
impl Cache { pub fn dim(&self) -> usize { 0 } pub fn new() -> Self { Cache } }
pub struct Other;
impl Other { pub fn dim(&self) -> usize { 1 } }
pub fn run(xs: Vec<u8>) {
    for x in make() {
        x.dim(0);
        x.dim();
        x.new();
    }
}
"""


def test_a_name_only_candidate_must_take_self_and_as_many_arguments_as_the_call_passes():
    got = calls(ARITY, "m::run")
    by_line: dict[int, list[str]] = {}
    for line, q, _, _ in got:
        by_line.setdefault(line, []).append(q)
    assert 8 not in by_line  # `x.dim(0)`: neither `dim(&self)` takes an argument (std's / another crate's)
    assert sorted(by_line[9]) == ["m::Cache::dim", "m::Other::dim"]  # still a choice
    assert 10 not in by_line  # `Cache::new` takes no `self`: no method


EXT_ARITY = """
pub mod vision {
    use candle_core::{Device, Tensor};
    pub trait Transforms { fn apply(&self, t: u32, d: &Device) -> Tensor; }
    impl Transforms for Tensor { fn apply(&self, t: u32, d: &Device) -> Tensor { self.clone() } }
}
use crate::vision::Transforms;
pub fn run(x: &candle_core::Tensor, m: &M, d: &candle_core::Device) {
    x.apply(m);
    x.apply(1, d);
}
"""


def test_a_local_trait_impl_for_an_external_type_of_another_arity_is_not_the_method():
    got = calls(EXT_ARITY, "m::run", "apply")
    assert [(line, q, r) for line, q, r, _ in got] == [
        (9, "Tensor::apply", "unresolved"),  # candle's inherent `Tensor::apply(&self, m)`: outside the checkout
        (10, "m::vision::Tensor::apply", "heuristic"),  # by name: a Tensor method of its own would win
    ]


PAYLOADS = """
use candle_core::{Storage, Tensor};
use either::Either;
pub struct Local;
impl Local { pub fn device(&self) {} }
pub struct Other;
impl Other { pub fn run(&self) {} }
pub fn run(t: &Tensor, e: Either<Local, u8>, v: Vec<Other>) {
    let (s, _l) = t.storage_and_layout();
    match &*s {
        Storage::Cuda(c) => { c.device(); }
        _ => {}
    }
    let Storage::Cuda(d) = &*s else { return };
    d.device();
    if let Storage::Cuda(f) = &*s { f.device(); }
    let g = match &*s { Storage::Cuda(g) => g, _ => panic!() };
    g.device();
    match (&*s, &*s) { (Storage::Cpu(a), Storage::Cuda(b)) => { b.device(); } _ => {} }
    match e { Either::Left(x) => { x.device(); } _ => {} }
    match (v.first(), 1) { (Some(y), _) => { y.run(); } _ => {} }
}
"""


def test_a_payload_of_another_crates_enum_matched_on_that_crates_value_is_external():
    manifest = MANIFEST + 'either = "1"\n'
    got = {line: (q, r) for line, q, r, _ in rust_calls(PAYLOADS, "m::run", None, manifest)
           if q in ("m::Local::device", "m::Other::run") or r == "unresolved" and q.endswith(("device", "run"))}
    # arm, `let .. else`, `if let`, a match's value, a tuple of values: cudarc's, never `Local::device`
    for line in (11, 15, 16, 18, 19):
        assert got[line] == ("(external)::device", "unresolved"), line
    assert got[20] == ("m::Local::device", "ambiguous")  # `Either<Local, u8>` may hold a checkout type
    assert got[21] == ("m::Other::run", "exact")  # `(Some(y), _)` against `(v.first(), 1)`: slot by slot


INHERENT = """
pub trait QuantMethod { fn new(cfg: u32) -> Self; }
pub struct Layer;
impl Layer { pub fn new(a: usize, b: usize) -> Self { Layer } }
impl QuantMethod for Layer { fn new(cfg: u32) -> Self { Layer } }
pub struct Pick;
impl Pick { pub fn make(a: usize) -> Self { Pick } }
#[cfg(feature = "x")]
impl Pick { pub fn make(a: usize, b: usize) -> Self { Pick } }
pub fn run() {
    Layer::new(1, 2);
    <Layer as QuantMethod>::new(1);
    Pick::make(1, 2);
}
"""


def test_a_path_finds_the_inherent_function_before_a_trait_impls_then_the_one_of_that_arity():
    got = [(line, r, how) for line, _, r, how in calls(INHERENT, "m::run")]
    assert got[0][:2] == (11, "exact") and "inherent before trait impls" in got[0][2]
    assert got[1][:2] == (12, "exact")  # the qualified path names the trait's
    assert got[2][:2] == (13, "exact") and "by the number of arguments" in got[2][2]


FROM = """
pub struct ApiErr;
impl From<&str> for ApiErr { fn from(s: &str) -> Self { ApiErr } }
impl From<String> for ApiErr { fn from(s: String) -> Self { ApiErr } }
impl From<std::io::Error> for ApiErr { fn from(e: std::io::Error) -> Self { ApiErr } }
pub struct Wide;
impl<T: std::fmt::Display> From<T> for Wide { fn from(t: T) -> Self { Wide } }
impl From<ApiErr> for Wide { fn from(e: ApiErr) -> Self { Wide } }
pub fn run(e: std::io::Error, n: u32) {
    ApiErr::from("literal");
    ApiErr::from(format!("{n}"));
    ApiErr::from(e);
    ApiErr::from(n.into());
    Wide::from(ApiErr::from("x"));
}
"""


def test_one_of_several_from_impls_is_chosen_by_the_arguments_known_type():
    got = [(line, r, how) for line, _, r, how in calls(FROM, "m::run", "ApiErr::from")]
    assert sorted({(line, r) for line, r, _ in got}) == [(10, "exact"), (11, "exact"), (12, "exact"),
                                                         (13, "ambiguous"), (14, "exact")]
    assert "by the argument's type `str`" in got[0][2] and "`String`" in got[1][2] and "`Error`" in got[2][2]
    assert {r for _, _, r, _ in calls(FROM, "m::run", "Wide::from")} == {"ambiguous"}  # a generic impl takes any


ARRAY_CLOSURE = """
pub struct Other;
impl Other { pub fn ready(&self) -> bool { true } }
pub struct Local;
impl Local { pub fn ready(&self) -> bool { false } }
pub fn run(a: &Other, b: &Other) -> bool {
    [a, b].into_iter().all(|x| x.ready())
}
"""


def test_a_closure_over_an_iterated_array_of_known_values_receives_their_type():
    got = calls(ARRAY_CLOSURE, "m::run", "ready")
    assert [(q, r) for _, q, r, _ in got] == [("m::Other::ready", "exact")]
    assert "closure parameter of `.all` on `[a, b].into_iter()`" in got[0][3]  # (not `b`'s parameter binding)


CUT = """
pub struct Archive;
impl Archive { pub fn path(&self) -> u32 { 0 } }
pub struct Other;
impl Other { pub fn path(&self) -> u32 { 1 } }
fn write_archive(meta: &[(&str, u32)], n: usize) -> Archive { Archive }
pub fn run() {
    let file = write_archive(&[("general.architecture", 1), ("general.name", 2), ("general.size", 3),
        ("a.b", 4), ("c.d", 5), ("e.f", 6), ("g.h", 7), ("i.j", 8), ("k.l", 9), ("m.n", 10), ("o.p", 11),
        ("q.r", 12), ("s.t", 13), ("u.v", 14), ("w.x", 15)], 3);
    file.path();
}
"""


def test_a_let_whose_value_text_was_cut_is_typed_by_its_callee():
    assert [(q, r) for _, q, r, _ in calls(CUT, "m::run", "path")] == [("m::Archive::path", "exact")]


def test_a_long_call_followed_by_an_index_is_not_typed_as_the_call():
    """The extractor elides the arguments of a value that is the call itself; a long call whose result is then
    indexed, cast or combined stays untyped (its text was cut: what follows the call is unknown)."""
    src = CUT.replace("-> Archive { Archive }", "-> Vec<Archive> { vec![Archive] }").replace("], 3);", "], 3)[0];")
    got = calls(src, "m::run", "path")
    assert {(q, r) for _, q, r, _ in got} == {("m::Archive::path", "ambiguous"), ("m::Other::path", "ambiguous")}


CALL_FIELD = """
use candle_core::{Storage, Tensor};
pub struct Other;
impl Other { pub fn device(&self) {} }
pub struct Local;
impl Local { pub fn device(&self) {} pub fn parts(&self) -> (Other, Local) { (Other, Local) } }
pub fn run(input: &Tensor, l: &Local) {
    let first = l.parts().0;
    first.device();
    let input_s = input.storage_and_layout().0;
    let Storage::Metal(input_s) = &*input_s else { return };
    input_s.device();
}
"""


def test_a_field_of_a_calls_value_is_typed_through_the_calls_return_type():
    got = {line: (q, r) for line, q, r, _ in calls(CALL_FIELD, "m::run", "device")}
    assert got[9] == ("m::Other::device", "exact")  # `(Other, Local).0`
    assert got[12] == ("(external)::device", "unresolved")  # a part of a candle value, then a payload of it
