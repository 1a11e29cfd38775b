"""Receiver typing rules of the Rust resolver (issue 10, second round): trait default methods,
tuple `let`s typed by their branches, block-scoped `let` bindings.  Tiny in-memory sources."""

from __future__ import annotations

from helpers import edges_from, graph_of, rust_calls

calls = rust_calls


TRAIT_DEFAULT = """
pub struct Out;
impl Out { pub fn go(&self) {} }
pub trait Layer {
    fn forward(&self) -> Out { Out }
    fn name(&self) -> u32;
}
pub struct A;
pub struct B;
impl Layer for A { fn forward(&self) -> Out { Out } fn name(&self) -> u32 { 1 } }
impl Layer for B { fn name(&self) -> u32 { 2 } }
pub fn run(l: &dyn Layer) {
    l.forward();
    let o = l.forward();
    o.go();
}
"""


def test_a_trait_object_call_keeps_the_default_method_of_impls_that_do_not_override_it():
    got = calls(TRAIT_DEFAULT, "m::run", "forward")
    # B runs the trait's default: two candidates, never "only impl" A
    assert {(q, r) for _, q, r, _ in got} == {("m::A::forward", "ambiguous"), ("m::Layer::forward", "ambiguous")}


def test_a_trait_method_types_its_result_by_the_declared_return_type():
    got = calls(TRAIT_DEFAULT, "m::run", "go")
    assert [(q, r) for _, q, r, _ in got] == [("m::Out::go", "exact")]


BRANCHES = """
pub struct T;
impl T { pub fn reshape(&self) -> T { T } pub fn dims(&self) {} }
pub struct U;
impl U { pub fn dims(&self) {} }
pub fn make() -> T { T }
pub fn attn(n: u32) {
    let q = make();
    let (q, k) = if n != 1 {
        let q = q.reshape();
        let k = q.reshape();
        (q, k)
    } else {
        let q = q.reshape();
        (q, U)
    };
    q.dims();
    k.dims();
}
pub fn other(n: u32) {
    let x = make();
    if n > 1 {
        let x = U;
        x.dims();
    } else {
        x.dims();
    }
}
"""


def test_a_tuple_let_is_typed_slot_by_slot_from_its_branches_tails():
    got = [(ln, q, r) for ln, q, r, _ in calls(BRANCHES, "m::attn", "dims")]
    # `q` is T in both branches: exact; `k` is T in one, U in the other: never one picked
    assert (17, "m::T::dims", "exact") in got
    assert not any(ln == 18 and r == "exact" for ln, _, r in got)


def test_a_let_in_another_block_is_out_of_scope():
    got = [(ln, q, r) for ln, q, r, _ in calls(BRANCHES, "m::other", "dims")]
    # line 26 is in the `else` block: the `let x = U` of the `if` block is gone, `x` is the outer T
    assert got == [(24, "m::U::dims", "exact"), (26, "m::T::dims", "exact")]


PATTERNS = """
pub mod meta { pub struct Inner { pub input: super::T, pub n: u32 } }
pub struct Outer { pub inner: meta::Inner, pub dev: U }
pub struct T;
impl T { pub fn dims(&self) {} }
pub struct U;
impl U { pub fn dims(&self) {} }
pub fn find() -> Option<U> { None }
pub fn split(o: Outer) {
    let Outer { inner: meta::Inner { input, .. }, dev: d } = o;
    input.dims();
    d.dims();
    let Some(u) = find() else { return; };
    u.dims();
}
"""


def test_struct_patterns_and_let_else_bind_typed_variables():
    got = [(ln, q, r) for ln, q, r, _ in calls(PATTERNS, "m::split", "dims")]
    assert got == [(11, "m::T::dims", "exact"), (12, "m::U::dims", "exact"), (14, "m::U::dims", "exact")]


CLOSURES = """
pub struct T;
impl T { pub fn dims(&self) {} }
pub struct U;
impl U { pub fn dims(&self) {} }
pub fn many() -> Option<Vec<T>> { None }
pub fn one() -> Result<U, String> { Err(String::new()) }
pub fn go(xs: Vec<T>) {
    many().and_then(|v| v.first().map(|t| t.dims()));
    one().and_then(|u| { u.dims(); Ok(1) });
    xs.iter().fold(0, |acc, x| { acc.dims(); x.dims(); 0 });
}
"""


def test_closures_of_option_and_result_combinators_receive_the_content():
    got = [(ln, q, r) for ln, q, r, _ in calls(CLOSURES, "m::go", "dims")]
    # `v` is the Vec (never its element) and `t` its element; `u` the Ok value;
    # a fold's accumulator is not an element: `acc.dims()` stays a name-only guess
    assert (9, "m::T::dims", "exact") in got
    assert (10, "m::U::dims", "exact") in got
    assert {r for ln, _, r in got if ln == 11} == {"ambiguous"}  # (was: `acc` typed as an element, exact)


LET_CHAIN = """
pub struct B;
impl B { pub fn new() -> Self { B } pub fn pp(&self, s: &str) -> Self { B } pub fn done(&self) {} }
pub struct C;
impl C { pub fn done(&self) {} }
pub fn load() {
    let a = B::new();
    let b = a.pp("x");
    let c = b.pp("y").pp("z");
    let d = c.pp("w");
    let e = d.pp("v").pp("u");
    e.done();
}
"""


def test_a_long_chain_of_lets_keeps_its_type():
    assert [(q, r) for _, q, r, _ in calls(LET_CHAIN, "m::load", "done")] == [("m::B::done", "exact")]


TUPLES = """
pub struct Page;
impl Page { pub fn into_response(self) {} pub fn pair(self) {} }
pub trait Pair { fn pair(self); }
impl Pair for (u32, u32) { fn pair(self) {} }
pub fn reply(code: u32, body: String) {
    (code, body).into_response();
    (code, 1).pair();
}
"""


def test_a_tuple_receiver_is_never_name_linked_to_a_struct_method():
    g, _ = graph_of({"m/src/lib.rs": ("m", TUPLES)})
    got = sorted((e["callee"], t.get("qualname"), e["resolution"]) for t, e in edges_from(g, "m::reply", "call"))
    assert ("into_response", "into_response", "unresolved") in [(c, q.rsplit("::", 1)[-1], r) for c, q, r in got]
    assert not any(q == "m::Page::into_response" for _, q, _ in got)
    assert any(c == "pair" and r != "unresolved" for c, _, r in got)  # a tuple impl of the checkout stays a candidate


TUPLE_FIELDS = """
pub struct T;
impl T { pub fn dims(&self) {} }
pub struct U;
impl U { pub fn dims(&self) {} }
pub fn both() -> (T, U) { (T, U) }
pub fn rope(cs: &(U, T)) {
    cs.1.dims();
    both().0.dims();
}
"""


def test_a_tuple_field_takes_its_slot_type():
    assert [(ln, q, r) for ln, q, r, _ in calls(TUPLE_FIELDS, "m::rope", "dims")] == [
        (8, "m::T::dims", "exact"), (9, "m::T::dims", "exact")]


WRITTEN = """
pub struct T;
impl T { pub fn dims(&self) {} }
pub struct U;
impl U { pub fn dims(&self) {} }
pub fn make() -> U { U }
pub fn go(n: u32) {
    let ts: Vec<T> = external::collect(n);
    ts.iter().map(|t| t.dims());
    let (a, b) = {
        let a = make();
        (a, T)
    };
    a.dims();
    b.dims();
}
"""


def test_a_written_let_type_wins_and_a_block_value_is_typed_by_its_tail():
    got = [(ln, q, r) for ln, q, r, _ in calls(WRITTEN, "m::go", "dims")]
    assert got == [(9, "m::T::dims", "exact"), (14, "m::U::dims", "exact"), (15, "m::T::dims", "exact")]


OPTION_OF_VEC = """
pub struct T;
impl T { pub fn len(&self) -> usize { 0 } pub fn dims(&self) {} }
pub struct W;
impl W { pub fn len(&self) -> usize { 0 } }
pub fn many() -> Option<Vec<T>> { None }
pub fn go(xs: Vec<T>, o: Option<Vec<T>>, p: Option<T>) {
    many().map(|v| v.len());
    o.map_or(0, |v| v.len());
    o.filter(|v| v.len() > 0);
    o.inspect(|v| { v.len(); });
    o.is_some_and(|v| v.len() > 0);
    xs.iter().map(|x| x.dims());
    xs.iter().filter(|x| x.len() > 0);
    p.map(|t| t.dims());
}
"""


def test_option_combinators_pass_the_payload_and_iterator_adaptors_the_item():
    got = calls(OPTION_OF_VEC, "m::go")
    # an `Option<Vec<T>>`'s `map` / `map_or` / `filter` / `inspect` / `is_some_and` closure receives the Vec:
    # its `v.len()` is never `T::len` (was: the Option peeled, then its element taken)
    assert not [(ln, q) for ln, q, r, _ in got if ln in range(8, 13) and q == "m::T::len" and r == "exact"]
    # an iterator's adaptor receives the item
    assert (13, "m::T::dims", "exact") in [(ln, q, r) for ln, q, r, _ in got]
    assert (14, "m::T::len", "exact") in [(ln, q, r) for ln, q, r, _ in got]
    assert (15, "m::T::dims", "exact") in [(ln, q, r) for ln, q, r, _ in got]  # an `Option<T>`'s map: the T
