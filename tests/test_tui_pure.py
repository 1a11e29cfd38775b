"""The explorer's Textual-free helpers: text neutralising, entry grouping, report paths, arm cycling."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import networkx as nx
import pytest

from apxtui.report.paths import default_report_path, entry_slug, unique_path
from apxtui.textsafe import neutralise, one_line
from apxtui.trace import Arm, Dispatch
from apxtui.tui.entries import default_entry, entry_points, filter_entries, group_of


def test_neutralise_replaces_escape_sequences_one_for_one():
    raw = "a\x1b[31mred\x1b[0m\tb\r\nc\x9bd\x07"
    out = neutralise(raw)
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert out == "a␛[31mred␛[0m\tb\nc\ufffdd␇"
    assert one_line("x\ny\x1b") == "x␊y␛"  # a newline in a name is shown, never obeyed


@pytest.mark.parametrize(("attrs", "group"), [
    ({"kind": "python_fn", "qualname": "pkg.mod.Policy.infer", "file": "python/pkg/mod.py", "name": "infer",
      "lang": "python"}, "Python"),
    ({"kind": "python_fn", "qualname": "pkg.mod.Policy._prep", "file": "python/pkg/mod.py", "name": "_prep",
      "lang": "python"}, None),
    ({"kind": "python_fn", "qualname": "test_x.test_a", "file": "tests/test_x.py", "name": "test_a",
      "lang": "python"}, None),
    ({"kind": "pyo3_binding", "qualname": "m.Runner.infer", "file": "crates/py/src/lib.rs", "lang": "rust"},
     "PyO3 bindings"),
    ({"kind": "rust_fn", "qualname": "m::runner::Runner::infer", "file": "crates/app-model/src/runner.rs",
      "visibility": "pub", "name": "infer", "lang": "rust"}, "Rust"),
    ({"kind": "rust_fn", "qualname": "c::kernels::norm", "file": "crates/app-cuda/src/kernels.rs",
      "visibility": "pub", "name": "norm", "lang": "rust"}, None),
    ({"kind": "rust_fn", "qualname": "m::runner::helper", "file": "crates/app-model/src/runner.rs",
      "visibility": "", "name": "helper", "lang": "rust"}, None),
    ({"kind": "rust_fn", "qualname": "bench::main", "file": "crates/app-model/examples/bench.rs", "name": "main",
      "lang": "rust"}, "Examples & binaries"),
    ({"kind": "python_fn", "qualname": "run.<module>", "file": "scripts/run.py", "name": "<module>",
      "lang": "python"}, "Examples & binaries"),
    ({"kind": "python_fn", "qualname": "pkg.mod.<module>", "file": "python/pkg/mod.py", "name": "<module>",
      "lang": "python"}, None),
])
def test_group_of(attrs, group):
    assert group_of(attrs) == group


def test_entry_points_sorted_by_group_and_default_prefers_busy_policy_infer():
    g = nx.MultiDiGraph()
    g.add_node("a", kind="python_fn", qualname="p.base.Policy.infer", file="p/base.py", name="infer", lang="python")
    g.add_node("b", kind="python_fn", qualname="p.impl.Pi05Policy.infer", file="p/impl.py", name="infer",
               lang="python")
    g.add_node("c", kind="pyo3_binding", qualname="m.R.infer", file="crates/py/src/lib.rs", lang="rust")
    g.add_node("x", kind="rust_fn", qualname="x", file="crates/py/src/lib.rs", lang="rust")
    g.add_edge("b", "c", kind="binding")
    g.add_edge("b", "x", kind="call")
    es = entry_points(g)
    assert [e.node for e in es] == ["a", "b", "c"]
    assert default_entry(es, g).node == "b"
    assert [e.node for e in filter_entries(es, "impl INFER")] == ["b"]


def test_report_paths(tmp_path: Path):
    now = datetime(2026, 1, 2, 3, 4, 5)
    p = default_report_path(tmp_path, "apxinf.policy.Pi05Policy.infer", now=now)
    assert p == tmp_path / "devlocal" / "apxinf.policy.Pi05Policy.infer" / "reports" / "20260102-030405.md"
    assert default_report_path(tmp_path, "a::b", export_dir=tmp_path / "out", now=now) == \
        tmp_path / "out" / "20260102-030405.md"
    assert entry_slug("apxinf_model::runner::ModelRunner::infer") == "apxinf_model.runner.ModelRunner.infer"
    assert entry_slug("../../etc/passwd") == "etc_passwd"
    p.parent.mkdir(parents=True)
    p.write_text("x")
    assert unique_path(p).name == "20260102-030405-2.md"


def test_session_choose_cycles_wraps_and_changes_every_built_occurrence_in_place(demo_index):
    from apxtui.tui.session import Session

    s = Session(demo_index)
    d = Dispatch("k", "match", "x", "f.rs", 1, [Arm("A", "match_arm", 0), Arm("B", "match_arm", 1),
                                               Arm("C", "implicit", 2, implicit=True)])
    twin = Dispatch("k", "match", "x", "f.rs", 1, [Arm("A", "match_arm", 0), Arm("B", "match_arm", 1),
                                                  Arm("C", "implicit", 2, implicit=True)])
    s._register([d, twin])  # as if both occurrences had been expanded
    gen = s.generation
    assert s.choose(d, 1) == [d, twin] and s.choices == {"k": 0}  # no choice yet: ] picks the first arm
    assert [a.selected for a in twin.arms] == [True, False, False]  # the other occurrence follows
    s.choose(d, 1)
    assert s.choices["k"] == 1 and [a.selected for a in d.arms] == [False, True, False]
    s.choose(d, -1)
    assert s.choices["k"] == 0
    s.choose(d, -1)
    assert s.choices["k"] == 2  # wraps
    assert s.generation == gen + 4  # every change is a new path: older analyses are dropped
    s.choices = {}
    s.choose(Dispatch("j", "if", "y", "f.rs", 2, [Arm("a", "if", 0), Arm("b", "else", 1)]), -1)
    assert s.choices == {"j": 1}  # [ with no choice picks the last arm


def test_session_report_names_an_unreadable_checkpoint(demo_index, tmp_path):
    """The report of a session whose checkpoint cannot be read is still written, and says why."""
    from apxtui.trace import find_symbol
    from apxtui.tui.session import Session

    broken = tmp_path / "no-such-checkpoint"
    s = Session(demo_index, checkpoint=broken)
    s.entry = find_symbol(demo_index.graph, "Block::forward")
    rep = s.map_report()
    assert rep.trace is None and rep.checkpoint_error  # no document is made up for the error
    md = s.report()
    assert f"checkpoint `{broken}` could not be read: " in md and rep.checkpoint_error in md
