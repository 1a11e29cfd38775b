"""Python calls through a ``typing.Protocol``-typed field and native-module ``.pyi`` stubs reach the PyO3 binding.

The shape of ApxInf's ``Pi05Policy.infer``: ``self.model: BareModel`` (a Protocol whose ``infer_rgb`` is a
stub), the real object an ``apxinf_py.Model`` (PyO3, with a ``.pyi`` stub), test mocks with the same method.
"""

from __future__ import annotations

from helpers import edges_from, graph_of

NATIVE_RS = """
use pyo3::prelude::*;
#[pyclass(name = "Model")]
pub struct Model;
#[pymethods]
impl Model {
    #[staticmethod]
    fn load(name: &str) -> Self { Model }
    fn infer_rgb(&self) { run(); }
}
fn run() {}
#[pymodule]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> { m.add_class::<Model>()?; Ok(()) }
"""
NATIVE_PYI = """
class Model:
    @staticmethod
    def load(name: str) -> "Model": ...
    def infer_rgb(self) -> None: ...
"""
BASE_PY = """
from typing import Protocol

class BareModel(Protocol):
    action_dim: int
    def infer_rgb(self) -> None: ...

class Plain:
    def step(self) -> None:
        return None
"""
POLICY_PY = """
from .base import BareModel, Plain
import native

class Policy:
    def __init__(self, model: BareModel, plain: Plain):
        self.model = model
        self.plain = plain

    @classmethod
    def from_pretrained(cls, name):
        return cls(native.Model.load(name), Plain())

    def infer(self):
        self.plain.step()
        return self.model.infer_rgb()
"""
MOCK_PY = """
class MockModel:
    def infer_rgb(self):
        return 0
"""


def files(with_pyi: bool = True) -> dict:
    out = {"crates/native/src/lib.rs": ("native", NATIVE_RS), "python/pkg/base.py": ("pkg.base", BASE_PY),
           "python/pkg/policy.py": ("pkg.policy", POLICY_PY), "python/tests/test_policy.py": ("test_policy", MOCK_PY)}
    if with_pyi:
        out["crates/native/native.pyi"] = ("native", NATIVE_PYI)
    return out


def test_protocol_typed_field_reaches_the_pyo3_implementation_not_the_stub_or_test_mocks():
    g, _ = graph_of(files())
    got = {t["qualname"]: (t["kind"], e) for t, e in edges_from(g, "pkg.policy.Policy.infer")}
    kind, e = got["native.Model.infer_rgb"]
    assert kind == "pyo3_binding" and e["resolution"] == "heuristic" and "Protocol" in e["how"]
    assert "pkg.base.BareModel.infer_rgb" not in got  # the interface stub is not a stage
    assert "test_policy.MockModel.infer_rgb" not in got  # test doubles are not production implementations
    kind, e = got["pkg.base.Plain.step"]  # a plain class-typed field is untouched: exact
    assert kind == "python_fn" and e["resolution"] == "exact"
    exposed = [g.nodes[v]["qualname"] for _, v, k in g.out_edges("pyo3:native.Model.infer_rgb", data="kind")
               if k == "exposes"]
    assert exposed == ["native::Model::infer_rgb"]


def test_pyi_stub_of_the_native_module_defers_to_the_binding():
    g, _ = graph_of(files())
    targets = {t["qualname"]: t["kind"] for t, _ in edges_from(g, "pkg.policy.Policy.from_pretrained")}
    assert targets.get("native.Model.load") == "pyo3_binding"


def test_protocol_without_implementations_keeps_the_stub():
    f = files()
    del f["crates/native/src/lib.rs"], f["crates/native/native.pyi"]
    g, _ = graph_of(f)
    got = {t["qualname"]: e for t, e in edges_from(g, "pkg.policy.Policy.infer")}
    assert got["pkg.base.BareModel.infer_rgb"]["resolution"] == "exact"


def test_a_production_class_with_the_method_is_another_candidate():
    f = files()
    f["python/pkg/other.py"] = ("pkg.other", "class Local:\n    def infer_rgb(self):\n        return 1\n")
    g, _ = graph_of(f)
    got = {t["qualname"]: e for t, e in edges_from(g, "pkg.policy.Policy.infer")}
    assert got["native.Model.infer_rgb"]["resolution"] == "ambiguous"
    assert got["pkg.other.Local.infer_rgb"]["resolution"] == "ambiguous"
