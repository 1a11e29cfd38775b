"""The explorer's map view as pure functions on the demo's execution map: row labels, which row stands for a
call-tree position, which dispatch point ``[``/``]`` changes, a map row back to its call-tree position, details."""

from __future__ import annotations

import pytest

from apxtui.map import build_map
from apxtui.map.model import Alternative, Call, Choice, Row, Site
from apxtui.trace import Stage, find_symbol, stage_key
from apxtui.tui.details import map_row_details
from apxtui.tui.positions import find_keys, stage_keys
from apxtui.tui.widgets.map_view import arm_cycle, first_choice, has_work, nearest_row, row_label
from apxtui.vocab import CallClass, Phase

ENTRY = "Pi05Policy.infer"


@pytest.fixture(scope="module")
def demo_map(demo_index):
    return build_map(demo_index, find_symbol(demo_index.graph, ENTRY))


def steady(m) -> list[Row]:
    assert m.phases[0].phase == Phase.EAGER
    return m.phases[0].rows


def test_row_label_puts_the_operation_and_its_alternatives_before_the_work(demo_map):
    rows = steady(demo_map)
    rms = next(r for r in rows if r.op == "kernels::norm::rms_norm")
    text = row_label(rms, 5).plain
    assert text.startswith("  5 kernels::norm::rms_norm ◆4  → (rms_norm_kernel | no device work)"), text
    assert " ● " not in text  # nothing chosen yet
    chosen = row_label(rms, 5, chosen="DType::F16").plain
    assert chosen.startswith("  5 kernels::norm::rms_norm ◆4 ●  → ") and "work)  ● DType::F16  if " in chosen
    assert chosen.endswith("if LoadedModel::Text(m) (of &mut self.model)")  # the model-level condition
    assert "if " not in row_label(rms, 5, inherited=len(rms.condition)).plain  # … unless its block shows it
    setup = next(r for r in rows if r.op == "Tensor::empty")
    assert not has_work(setup)
    assert row_label(setup, 2, inherited=len(setup.condition)).plain == "  2 Tensor::empty  → no device work"


def test_row_label_shows_markup_literally():
    row = Row("[red]op[/] [@click=app.quit]", "t", Site("a.rs", 1), ("k",), Phase.EAGER, "per call",
              work=[Call(CallClass.DEVICE, "k_[b]<\x1b[2J>", Site("a.cu", 2), Site("a.cu", 1), ("k", "c"))])
    text = row_label(row, 1).plain
    assert "[red]op[/] [@click=app.quit]" in text and "k_[b]<␛[2J>" in text and "\x1b" not in text


def test_nearest_row_stands_for_a_call_tree_position(demo_map):
    rows = steady(demo_map)
    work = [i for i, r in enumerate(rows) if has_work(r)]
    i = work[2]
    key = rows[i].key
    assert nearest_row(rows, key) == i  # the row itself
    assert nearest_row(rows, (*key, "kernel@somewhere")) == i  # a kernel below the operation call: its row
    assert nearest_row(rows, key[:1]) == work[0]  # the entry: the first row with device work
    above = key[:-1]  # a model-level function holding the row: the first row under it with device work
    assert nearest_row(rows, above) == next(j for j in work if rows[j].key[:len(above)] == above)
    assert nearest_row(rows, ("elsewhere@x",)) is None and nearest_row(rows, ()) is None


def _alt(dispatch: str, arm: int, cond: str) -> Alternative:
    return Alternative(cond, Site("f.rs", 1), dispatch, arm,
                       [Call(CallClass.DEVICE, f"k{arm}", Site("f.cu", 1), Site("f.cu", 1), ())])


def test_arm_cycle_never_mixes_two_dispatch_points(demo_map):
    rows = steady(demo_map)
    cand = next(first_choice(r) for r in rows if r.op == "B::rms_norm")
    assert cand is not None and cand.construct == "candidates"
    key, alts = arm_cycle(cand)
    assert key == cand.dispatch and [a.arm for a in alts] == [0, 1]
    # a flattened nested choice: the outer dispatch point's arms each held one inner choice
    flat = Choice("match", "x", Site("f.rs", 1), "outer", [_alt("inner", 0, "A; BF16"), _alt("inner", 1, "A; F16"),
                                                          _alt("inner2", 0, "B; BF16")])
    key, alts = arm_cycle(flat)
    assert key == "inner" and [a.condition for a in alts] == ["A; BF16", "A; F16"]


def test_every_map_row_with_work_is_found_in_the_call_tree(demo_index, demo_map):
    """``enter`` on a map row: its stage-key chain leads, through dispatch points and arms, to a tree row."""
    from apxtui.tui.session import Session

    s = Session(demo_index)
    root = s.set_entry(find_symbol(demo_index.graph, ENTRY))
    rows = [r for t in demo_map.phases for r in t.rows if has_work(r)]
    assert len(rows) >= 10
    for r in rows:
        pos = find_keys(root, r.key, s.expand)
        assert pos is not None, r.op
        assert stage_keys(pos) == r.key
    assert find_keys(root, (*rows[0].key[:-1], "nowhere@x"), s.expand) is None
    assert find_keys(root, ("other@x",), s.expand) is None
    assert isinstance(root, Stage) and rows[0].key[0] == stage_key(root)


def test_map_row_details_name_the_work_its_alternatives_and_conditions(demo_map):
    rows = steady(demo_map)
    rms = next(r for r in rows if r.op == "kernels::norm::rms_norm")
    sections = dict(map_row_details(rms))
    op = dict(sections["Map row  (enter: call tree · [ ]: arm)"])
    assert op["call site"] == str(rms.site) and op["function"] == rms.target
    assert "a range" in op["counts"]  # alternatives: never summed
    work = [f"{k.strip()} {v}" for k, v in sections["Device work"]]
    assert any(w.startswith("◆ match") for w in work), work
    assert sum(1 for w in work if "when DType::" in w) == 3, work
    assert op["linked"] == rms.resolution != ""  # how the call into the operator was established
    assert any(w.startswith("linked exact") for w in work), work  # and each launch below it
    setup = next(r for r in rows if r.op == "Tensor::empty")
    assert dict(map_row_details(setup))["Device work"][0][1].startswith("none:")
