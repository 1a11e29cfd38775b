"""Work sized by input grows linearly: checked by comparing two sizes (operation counts), never a time."""

from __future__ import annotations

from test_analysis_dtypes import MiniIndex

import apxtui.analysis.annotate as annotate_mod
from apxtui.trace import Tracer, find_symbol


def _long_rust_fn(n: int) -> str:
    body = "\n".join(f"    let a{i} = {i};\n    for _ in 0..a{i} {{ g{i % 7}(a{i}); }}" for i in range(n))
    return "\n".join(f"fn g{i}(x: u32) {{}}" for i in range(7)) + f"\npub fn f() {{\n{body}\n}}\n"


def _annotate_work(monkeypatch, n: int) -> int:
    """Assignments scanned by ``consts_of`` while annotating the trace of a function with ``n`` calls."""
    idx = MiniIndex({"src/lib.rs": ("c", _long_rust_fn(n))})
    root = Tracer(idx.graph).trace(find_symbol(idx.graph, "f"))
    assert len(root.children) >= n  # every call is a child of the one long function
    work = 0
    real = annotate_mod.consts_of

    def counting(defn):
        nonlocal work
        work += len(defn.attrs.get("assigns", [])) if defn is not None else 0
        return real(defn)

    monkeypatch.setattr(annotate_mod, "consts_of", counting)
    ann = annotate_mod.annotate(idx, root)
    last = ann.stage(root.children[-1]).launches.loops[0]
    assert last.value == n - 1 and last.status == "exact"  # the bound came from the function's constants
    return work


def test_annotating_a_long_function_is_linear(monkeypatch):
    small, large = _annotate_work(monkeypatch, 150), _annotate_work(monkeypatch, 600)
    assert small >= 150
    # 4× the calls: linear work is ~4× (quadratic was ~16×)
    assert large / small < 6, (small, large)
