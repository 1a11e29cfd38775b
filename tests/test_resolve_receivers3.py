"""Receiver typing rules of the Rust resolver (issue 10, third round): operator results, empty trait
impls, lock-guard macros, sliced loops, the binding rule named in ``how``.  Tiny in-memory sources."""

from __future__ import annotations

from helpers import edges_from, graph_of, rust_calls

calls = rust_calls


OPERATORS = """
pub struct T;
pub struct U;
impl T { pub fn abs(&self) -> Result<T, ()> { Ok(T) } }
impl U { pub fn abs(&self) -> Result<U, ()> { Ok(U) } }
impl<B> std::ops::Mul<B> for T {
    type Output = Result<T, ()>;
    fn mul(self, rhs: B) -> Self::Output { Ok(T) }
}
impl std::ops::Sub<T> for f64 {
    type Output = Result<U, ()>;
    fn sub(self, rhs: T) -> Self::Output { Ok(U) }
}
pub fn run(a: T, b: T, s: f64, n: usize) -> Result<(), ()> {
    (a * b)?.abs()?;
    let c = (s - T)?;
    c.abs()?;
    let d = (1.0 - T)?;
    d.abs()?;
    Ok(())
}
"""


def test_an_operator_result_is_typed_by_the_output_of_the_left_operands_impl():
    got = calls(OPERATORS, "m::run", "abs")
    # `a * b` on T: `type Output = Result<T>`; `s - T` on f64: the local impl's Output U; a literal's
    # type is not known (no edge rather than a guess)
    assert [(q, r) for _, q, r, _ in got] == [("m::T::abs", "exact"), ("m::U::abs", "exact")]
    assert "operator" in got[0][3]


EMPTY_IMPL = """
pub trait Marker { fn hello(&self) -> u32 { 0 } }
pub struct A;
pub struct B;
impl Marker for A { fn hello(&self) -> u32 { 1 } }
impl Marker for B {}
pub fn one(b: &B) { b.hello(); }
pub fn any(m: &dyn Marker) { m.hello(); }
"""


def test_an_empty_trait_impl_makes_its_type_run_the_trait_defaults():
    assert [(q, r) for _, q, r, _ in calls(EMPTY_IMPL, "m::one")] == [("m::Marker::hello", "exact")]
    assert {(q, r) for _, q, r, _ in calls(EMPTY_IMPL, "m::any")} == {("m::A::hello", "ambiguous"),
                                                                     ("m::Marker::hello", "ambiguous")}


GUARDS = """
use std::sync::{Arc, Mutex};
macro_rules! get_mut {
    ($thing:expr) => {
        loop {
            if let Ok(inner) = $thing.try_lock() {
                break inner;
            }
        }
    };
}
macro_rules! other {
    ($thing:expr) => { make_other($thing) };
}
pub struct Engine;
impl Engine { pub fn step(&self) {} }
pub struct Other;
impl Other { pub fn step(&self) {} }
pub struct Holder { pub engine: Arc<Mutex<Engine>> }
impl Holder {
    pub fn run(&self) {
        get_mut!(self.engine).step();
        let e = get_mut!(self.engine);
        e.step();
        other!(self.engine).step();
    }
}
"""


def test_a_lock_guard_macro_hands_out_its_arguments_content():
    got = calls(GUARDS, "m::Holder::run", "step")
    assert [(q, r) for _, q, r, _ in got if r == "exact"] == [("m::Engine::step", "exact")] * 2
    assert "lock guard of `self.engine` (macro get_mut!, lib.rs:3)" in got[0][3]
    assert "let `e = get_mut!(self.engine)`" in got[1][3]
    # a macro whose body is not a lock guard types nothing: name only
    assert {r for _, _, r, _ in got[2:]} == {"ambiguous"}


LOOPS = """
pub struct Layer;
impl Layer { pub fn forward(&self) {} }
pub struct Norm;
impl Norm { pub fn forward(&self) {} }
pub struct Model { pub layers: Vec<Layer> }
impl Model {
    pub fn run(&self, rest: &[Layer], a: Layer, b: Layer, n: Norm) {
        for layer in self.layers.iter() {
            layer.forward();
        }
        for l in &rest[1..] {
            l.forward();
        }
        for x in [a, b] {
            x.forward();
        }
        for y in [&self.layers[0], &n] {
            y.forward();
        }
    }
}
"""


def test_loops_over_slices_and_arrays_type_their_element_and_how_names_the_binding():
    got = calls(LOOPS, "m::Model::run", "forward")
    exact = [(line, q, how) for line, q, r, how in got if r == "exact"]
    assert [(line, q) for line, q, _ in exact] == [(10, "m::Layer::forward"), (13, "m::Layer::forward"),
                                                   (16, "m::Layer::forward")]
    assert "element of `self.layers.iter()` (for loop, lib.rs:9)" in exact[0][2]
    assert "element of `&rest[1..]`" in exact[1][2]
    # an array of two types: no guess
    assert {r for line, _, r, _ in got if line == 19} == {"ambiguous"}


CLOSURES = """
pub struct Tensor;
impl Tensor { pub fn relu(&self) {} }
pub struct Other;
impl Other { pub fn relu(&self) {} }
pub struct Func;
impl Func {
    pub fn new<F>(f: F) -> Func where F: Fn(&Tensor, usize) -> Tensor { Func }
}
pub fn boxed(f: Box<dyn Fn(&Other)>) {}
pub fn generic<T, F: Fn(&T)>(f: F) {}
pub fn run() {
    Func::new(|xs, n| { xs.relu(); Tensor });
    boxed(Box::new(|o| o.relu()));
    generic(|g| g.relu());
}
"""


def test_a_closure_argument_takes_its_parameter_types_from_the_callees_fn_bound():
    got = calls(CLOSURES, "m::run", "relu")
    assert [(line, q, r) for line, q, r, _ in got if r == "exact"] == [(13, "m::Tensor::relu", "exact")]
    assert "closure parameter of new's `Fn(&Tensor, usize) -> Tensor`" in got[0][3]
    # a generic parameter of the callee types nothing
    assert {r for line, _, r, _ in got if line == 15} == {"ambiguous"}


STD_PATHS = """
pub struct Out;
impl Out { pub fn flush(&self) {} }
pub struct Holder { pub out: Out }
pub fn run(h: &mut Holder) {
    std::io::stdout().flush();
    std::mem::take(&mut h.out).flush();
}
"""


def test_a_std_io_function_result_is_std_but_mem_take_keeps_its_argument_open():
    got = calls(STD_PATHS, "m::run", "flush")
    assert [line for line, _, _, _ in got] == [7]  # stdout's flush is std: not linked to Out::flush


ZIPS = """
use std::collections::HashMap;
pub struct Seq;
impl Seq { pub fn step(&self) {} }
pub struct Tok;
impl Tok { pub fn step(&self) {} }
pub struct Reg { pub seqs: Vec<Seq> }
impl Reg { pub fn all(&self) -> Vec<Tok> { vec![] } }
pub fn run(seqs: &mut [Seq], toks: Vec<Tok>, by: HashMap<u32, Tok>, reg: &Reg) {
    for (i, (seq, tok)) in seqs.iter_mut().zip(toks.iter()).enumerate() {
        seq.step();
        tok.step();
    }
    for (k, t) in by.iter() {
        t.step();
    }
    for t in reg.all() {
        t.step();
    }
}
"""


def test_loop_patterns_destructure_zip_enumerate_and_map_items():
    got = calls(ZIPS, "m::run", "step")
    assert [(line, q, r) for line, q, r, _ in got] == [
        (11, "m::Seq::step", "exact"), (12, "m::Tok::step", "exact"), (15, "m::Tok::step", "exact"),
        (18, "m::Tok::step", "exact")]


def test_the_interface_keeps_an_impls_associated_output_type():
    from apxtui.index.interface import interface_facts
    from apxtui.parse import extract_file

    f = interface_facts(extract_file("m/src/lib.rs", OPERATORS.encode(), "rust", "m"))
    assert {d.qualname: d.attrs.get("return_assoc") for d in f.defs if d.name in ("mul", "sub")} == {
        "m::T::mul": "Result<T, ()>", "m::f64::sub": "Result<U, ()>"}


ARM_TAILS = """
pub struct Cuda;
impl Cuda { pub fn stream(&self) {} }
pub struct Cpu;
impl Cpu { pub fn stream(&self) {} }
pub enum Storage { Cuda(Cuda), Cpu(Cpu) }
pub fn run(st: &Storage, maybe: Option<Cuda>) {
    let s = match st {
        Storage::Cuda(c) => c,
        _ => panic!("cuda only"),
    };
    s.stream();
    let t = if let Some(x) = maybe { x } else { panic!("none") };
    t.stream();
}
"""


def test_a_let_from_match_arms_types_each_tail_with_its_arms_bindings():
    got = calls(ARM_TAILS, "m::run", "stream")
    assert [(line, q, r) for line, q, r, _ in got] == [(12, "m::Cuda::stream", "exact"),
                                                     (14, "m::Cuda::stream", "exact")]


def test_a_closure_over_zipped_items_destructures_its_tuple_parameter():
    src = ZIPS.replace("pub fn run(", "pub fn unused(") + """
pub fn mapped(seqs: &[Seq], toks: Vec<Tok>) {
    seqs.iter().zip(toks.iter()).enumerate().map(|(i, (s, t))| { s.step(); t.step(); });
}
"""
    got = calls(src, "m::mapped", "step")
    assert [(q, r) for _, q, r, _ in got] == [("m::Seq::step", "exact"), ("m::Tok::step", "exact")]
    assert "closure parameter of `.map`" in got[0][3]


def test_a_struct_like_variant_literal_is_of_its_enum():
    src = """
pub enum Error { Shape { got: u32 }, Other }
impl Error { pub fn bt(self) -> Error { self } }
pub struct Shape;
impl Shape { pub fn bt(self) -> Shape { self } }
pub fn run() {
    Error::Shape { got: 1 }.bt();
    let e = Error::Shape { got: 2 };
    e.bt();
}
"""
    assert [(q, r) for _, q, r, _ in calls(src, "m::run", "bt")] == [("m::Error::bt", "exact")] * 2


def test_a_dereferenced_let_and_a_chain_with_a_comment_are_not_operators():
    src = """
pub struct Seq;
impl Seq { pub fn go(&mut self) -> &mut Seq { self } }
pub fn run(seqs: &mut [Box<Seq>]) {
    let seq = &mut *seqs[0];
    seq.go();
    seq.go() // a comment (with parentheses)
        .go()
        .go();
}
"""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)})
    got = {(e["receiver"], t["qualname"], e["resolution"]) for t, e in edges_from(g, "m::run", "call")}
    assert ("seq.go().go()", "m::Seq::go", "exact") in got  # (the chain is written without its comment)
    assert {r for _, _, r in got} == {"exact"}


def test_a_call_of_a_local_closure_is_typed_by_its_match_arms():
    src = """
use std::collections::HashMap;
pub struct Value;
impl Value { pub fn rank(&self) -> usize { 0 } }
pub struct Other;
impl Other { pub fn rank(&self) -> usize { 1 } }
pub fn eval(values: &HashMap<String, Value>, name: &str) -> Result<(), String> {
    let get = |n: &str| match values.get(n) {
        Some(value) => Ok(value),
        None => panic!("missing"),
    };
    let xs = get(name)?;
    xs.rank();
    get("b")?.rank();
    Ok(())
}
"""
    got = calls(src, "m::eval", "rank")
    assert [(line, q, r) for line, q, r, _ in got] == [(13, "m::Value::rank", "exact"), (14, "m::Value::rank", "exact")]


def test_fields_and_methods_are_found_through_a_deref_target():
    src = """
use std::sync::Arc;
pub struct Layout;
impl Layout { pub fn offset(&self) -> usize { 0 } }
pub struct Inner { pub layout: Layout }
impl Inner { pub fn storage(&self) -> Layout { Layout } }
pub struct Tensor(Arc<Inner>);
impl std::ops::Deref for Tensor {
    type Target = Inner;
    fn deref(&self) -> &Self::Target { &self.0 }
}
impl Tensor {
    pub fn run(&self) {
        self.layout.offset();
        self.storage().offset();
    }
}
"""
    got = calls(src, "m::Tensor::run")
    assert [(line, q, r) for line, q, r, _ in got] == [(14, "m::Layout::offset", "exact"),
                                                     (15, "m::Inner::storage", "exact"),
                                                     (15, "m::Layout::offset", "exact")]
