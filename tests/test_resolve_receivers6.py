"""Receiver typing rules of the Rust resolver (issue 10, hand checks of stop 22): a checkout trait impl for
an external type is a name rule, never ``exact``; an impl method passing its own arguments to its own name
delegates to the type's own method.  Tiny in-memory sources."""

from __future__ import annotations

from helpers import rust_calls

MANIFEST = '[package]\nname = "m"\n[dependencies]\nhalf = "2"\ncandle-nn = "0.8"\n'


def calls(src: str, caller: str, callee: str | None = None) -> list[tuple[int, str, str, str]]:
    return rust_calls(src, caller, callee, MANIFEST)


LOCAL_IMPL = """
use half::f16;
pub trait Elem { fn to_f32(self) -> f32; fn from_f64(v: f64) -> Self; }
impl Elem for f16 {
    fn to_f32(self) -> f32 { self.to_f32() }
    fn from_f64(v: f64) -> Self { f16::from_f64(v) }
}
pub fn run(xs: &[f16], x: f16) -> f32 {
    let a = x.to_f32();
    let b = f16::from_f64(1.0);
    a
}
"""


def test_a_checkout_trait_impl_for_an_external_type_is_heuristic():
    # half's `f16` has its own `to_f32` / `from_f64`, which Rust takes before a trait's: the checkout impl is
    # only the method by its name (mistral.rs elem.rs:243, candle cpu_backend/mod.rs:3193 were wrong `exact`)
    got = {(line, r) for line, _, r, _ in calls(LOCAL_IMPL, "m::run")}
    assert got == {(9, "heuristic"), (10, "heuristic")}
    assert all("(outside the checkout) would be taken first" in how for _, _, _, how in calls(LOCAL_IMPL, "m::run"))


def test_an_impl_method_passing_its_own_arguments_to_its_name_calls_the_types_own_method():
    # `fn to_f32(self) { self.to_f32() }` would recurse forever were it itself: f16's own method (external)
    for fn in ("m::f16::to_f32", "m::f16::from_f64"):
        assert [r for _, _, r, _ in calls(LOCAL_IMPL, fn) if r != "unresolved"] == []


BY_NAME = """
pub mod cpu {
    struct View;
    impl View { pub fn new(a: u8) -> Self { View } }
    pub struct Open;
    impl Open { pub fn new(a: u8) -> Self { Open } }
}
pub mod user {
    use safetensors::*;
    pub fn run() {
        let v = View::new(1);
        let w = Open::new(1, 2);
        let x = Open::new(1);
    }
}
"""


def test_a_type_found_by_name_only_must_be_nameable_there_and_its_method_take_the_arguments():
    # mistral.rs mistralrs-pyo3/src/lib.rs:3251 `TensorView::new(SafeDtype::BF16, vec![1], &data)` (safetensors')
    # was linked to mistralrs-core's private `TensorView::new(data, tensor)` (cpu/mod.rs:49)
    man = '[package]\nname = "m"\n[dependencies]\nsafetensors = "0.4"\n'
    got = [(line, q, r) for line, q, r, _ in rust_calls(BY_NAME, "m::user::run", None, man) if r != "unresolved"]
    assert got == [(13, "m::cpu::Open::new", "heuristic")]


INDEX_OP = """
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo};
pub struct Tensor;
pub enum Indexer { Select(usize), Narrow(usize) }
impl From<usize> for Indexer { fn from(i: usize) -> Self { Indexer::Select(i) } }
trait RB {}
impl RB for Range<usize> {}
impl RB for RangeFrom<usize> {}
impl RB for RangeFull {}
impl RB for RangeInclusive<usize> {}
impl RB for RangeTo<usize> {}
impl<T: RB> From<T> for Indexer { fn from(r: T) -> Self { Indexer::Narrow(0) } }
pub trait IndexOp<T> { fn i(&self, index: T) -> Tensor; }
impl<T> IndexOp<T> for Tensor where T: Into<Indexer> { fn i(&self, index: T) -> Tensor { Tensor } }
impl<A> IndexOp<(A,)> for Tensor where A: Into<Indexer> { fn i(&self, (a,): (A,)) -> Tensor { Tensor } }
impl<A, B> IndexOp<(A, B)> for Tensor where A: Into<Indexer>, B: Into<Indexer> {
    fn i(&self, (a, b): (A, B)) -> Tensor { Tensor }
}
pub fn run(t: &Tensor, k: usize, idx: Idx) {
    t.i(0);
    t.i(..2);
    t.i((k,));
    t.i((.., 0));
    t.i((0, 1, 2));
    t.i(idx);
    t.i(k as usize);
    t.i(k);
}
"""


def test_impls_of_one_generic_trait_are_chosen_by_the_arguments_shape():
    # candle `Tensor::i`: `IndexOp<T: Into<TensorIndexer>>`, `IndexOp<(A,)>`, `IndexOp<(A, B)>` (indexer.rs:171/207/233)
    got: dict[int, list[tuple[int, str]]] = {}
    for line, _, r, how in calls(INDEX_OP, "m::run", "i"):
        got.setdefault(line, []).append((int(how.rsplit("line ", 1)[-1].split(")")[0]) if "line " in how else 0, r))
    assert got[20] == [(14, "exact")]  # an integer: only the generic impl, whose bound `From<usize>` meets it
    assert got[21] == [(14, "exact")]  # a range: every range kind implements the bound's trait
    assert got[22] == [(15, "exact")]  # a 1-tuple
    assert got[23] == [(17, "exact")]  # a 2-tuple: not the generic one (no `From` of `Indexer` takes a tuple)
    assert [r for _, r in got[24]] == ["unresolved"]  # a 3-tuple: no impl in the index takes one
    assert [r for _, r in got[25]] == ["ambiguous"] * 3  # `idx`: its shape is unknown
    assert got[26] == got[27] == [(14, "exact")]  # `k as usize`, `k: usize`
    # a checkout `From` taking a tuple: the generic impl may take one too
    tuple_from = INDEX_OP.replace("pub trait IndexOp", "impl From<(u8, u8)> for Indexer { fn from(p: (u8, u8)) -> Self "
                                  "{ Indexer::Narrow(0) } }\npub trait IndexOp")
    assert [r for line, _, r, _ in calls(tuple_from, "m::run", "i") if line == 24] == ["ambiguous"] * 2


EXTRACTORS = """
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
pub struct Engine;
impl Engine { pub fn list_files(&self) -> u8 { 0 } }
pub struct Request;
impl Request { pub fn into_chat(self) -> u8 { 0 } }
pub type Shared = Arc<Engine>;
pub type Extracted = State<Shared>;
pub struct Other;
impl Other { pub fn list_files(&self) -> u8 { 1 } pub fn into_chat(self) -> u8 { 1 } }
pub async fn handler(State(state): Extracted, Json(request): Json<Request>) {
    state.list_files();
    request.into_chat();
}
pub struct Mine<T>(pub Vec<T>);
pub async fn own(Mine(items): Mine<Engine>) {
    items.list_files();
}
"""


def test_a_parameter_pattern_of_an_axum_extractor_binds_its_type_argument():
    # mistral.rs mistralrs-server-core/src/files.rs:196 `State(state): ExtractedMistralRsState` (an alias of
    # `State<SharedMistralRsState>`, types.rs:12): `state.list_files()` was a name-only choice
    man = '[package]\nname = "m"\n[dependencies]\naxum = "0.7"\n'
    got = [(line, q, r) for line, q, r, _ in rust_calls(EXTRACTORS, "m::handler", None, man)]
    assert got == [(14, "m::Engine::list_files", "exact"), (15, "m::Request::into_chat", "exact")]
    # not another crate's or the checkout's tuple struct taken for one (`Mine<T>(pub Vec<T>)`)
    assert [r for _, _, r, _ in rust_calls(EXTRACTORS, "m::own", None, man)] == ["ambiguous"] * 2


SHADOW = """
pub struct Item;
impl Item { pub fn go(&self) -> u8 { 0 } }
pub struct Other;
impl Other { pub fn go(&self) -> u8 { 1 } }
pub fn mk() -> Other { Other }
pub fn mks() -> Vec<Other> { vec![] }
pub fn run(x: Item, xs: Vec<Item>) {
    x.go();
    let x = mk();
    x.go();
    let xs = mks();
    for y in xs.iter() { y.go(); }
    for z in [Item] {
        let z = mk();
        z.go();
    }
}
"""


def test_a_let_shadowing_a_parameter_or_a_loop_variable_types_the_later_calls():
    # the parameter (or loop variable) won over a later `let` of the same name: a wrong `exact`
    got = [(line, q) for line, q, _, _ in calls(SHADOW, "m::run", "go")]
    assert got == [(9, "m::Item::go"), (11, "m::Other::go"), (13, "m::Other::go"), (16, "m::Other::go")]


OPTION_ITER = """
pub struct Item;
impl Item { pub fn go(&self) -> u8 { 0 } }
pub struct Holder { items: Option<Vec<Item>>, one: Option<Item> }
impl Holder {
    pub fn run(&self, p: Option<Vec<Item>>) {
        self.items.iter().map(|v| v.go());
        for v in self.items.iter() { v.go(); }
        for v in p.iter() { v.go(); }
        for v in &self.items { v.go(); }
        self.one.iter().map(|v| v.go());
        for v in self.items.iter().flatten() { v.go(); }
    }
}
"""


def test_iterating_an_option_yields_its_content_not_the_contents_elements():
    # `Option<Vec<Item>>::iter()` yields the `&Vec<Item>` (the type reference peels the Option): lines 7-10 were a
    # wrong exact `Item::go`; `Option<Item>::iter()` yields the `Item`, `.flatten()` the Vec's items
    got = [(line, r) for line, _, r, _ in calls(OPTION_ITER, "m::Holder::run", "go")]
    assert got == [(11, "exact"), (12, "exact")]


INTO_BOUND = """
pub struct Shape;
impl Shape { pub fn numel(&self) -> usize { 0 } }
pub struct Tensor;
impl Tensor { pub fn numel(&self) -> usize { 0 } }
pub fn zeros(shape: impl Into<Shape>) -> usize {
    let shape = shape.into();
    shape.numel()
}
pub fn zeros2<S: Into<Shape>>(s: S) -> usize {
    let s = s.into();
    s.numel()
}
"""


def test_into_of_a_parameter_bounded_by_one_into_is_the_bounds_type():
    # ApxInf apxinf-core/src/tensor.rs:47-48 `let shape = shape.into(); shape.numel()` (`shape: impl Into<Shape>`):
    # once the `let` shadows the parameter, its value decides (a where clause is chosen before any impl)
    got = [(line, q, r) for f in ("m::zeros", "m::zeros2") for line, q, r, _ in calls(INTO_BOUND, f, "numel")]
    assert got == [(8, "m::Shape::numel", "exact"), (12, "m::Shape::numel", "exact")]


CHAIN = """
pub struct Tensor;
impl Tensor {
    pub fn get(&self, i: usize) -> Result<Tensor, ()> { Ok(Tensor) }
    pub fn matmul(&self, o: &Tensor) -> Result<Tensor, ()> { Ok(Tensor) }
    pub fn flatten_from(&self, i: usize) -> Result<Tensor, ()> { Ok(Tensor) }
    pub fn transpose(&self, a: usize, b: usize) -> Result<Tensor, ()> { Ok(Tensor) }
    pub fn apply(&self, a: &Tensor) -> Result<Tensor, ()> { Ok(Tensor) }
    pub fn reshape(&self, a: usize) -> Result<Tensor, ()> { Ok(Tensor) }
    pub fn permute(&self, a: usize) -> Result<Tensor, ()> { Ok(Tensor) }
}
impl std::ops::Mul<f64> for Tensor {
    type Output = Result<Tensor, ()>;
    fn mul(self, r: f64) -> Self::Output { Ok(Tensor) }
}
pub struct Func;
impl Func { pub fn new<F: Fn(&Tensor) -> Result<Tensor, ()>>(f: F) -> Func { Func } }
pub fn attention(qkv: Tensor, scale: f64) -> Func {
    Func::new(move |xs| {
        let xs = xs.clone();
        let xs = xs.flatten_from(2)?.transpose(1, 2)?;
        let qkv = xs.apply(&qkv)?.reshape(1)?.permute(2)?;
        let q = qkv.get(0)?;
        let q = (q * scale)?;
        q.matmul(&q)
    })
}
"""


def test_a_chain_of_lets_shadowing_a_closure_parameter_is_followed_to_it():
    # candle fastvit.rs:342-358: once `let xs = xs.clone()` shadows the closure parameter, the chain of lets
    # must not run out of depth before it reaches it
    assert [(line, r) for line, _, r, _ in calls(CHAIN, "m::attention", "matmul")] == [(25, "exact")]


QUALIFIED_EXTERNAL = """
pub mod errors {
    pub struct Error;
    impl Error { pub fn msg(m: &str) -> Self { Error } }
}
pub enum Mode { A(u8) }
impl Mode { pub fn go(&self) -> u8 { 0 } }
pub fn run() {
    let e = candle_core::Error::msg("x");
    let m = Mode::A(1);
    m.go();
}
"""


def test_a_type_path_through_another_crate_is_never_a_checkout_type_of_its_last_name():
    # mistral.rs mistralrs-quant/src/distributed/mod.rs:1075 `candle_core::Error::msg(..)` was taken for the
    # crate's own `Error` (by name: `Error` is also a std type name), which has no `msg`: a dropped call
    man = '[package]\nname = "m"\n[dependencies]\ncandle-core = "0.8"\n'
    got = [(line, q, r) for line, q, r, _ in rust_calls(QUALIFIED_EXTERNAL, "m::run", None, man)]
    assert got == [(9, "candle_core::Error::msg", "unresolved"), (11, "m::Mode::go", "exact")]  # (a variant: local)
