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
