"""Screen 4 (checkpoint) and the speed-of-light panel, driven by keys; stored weights in the details pane."""

from __future__ import annotations

import re

import pytest

from apxtui.checkpoint.solfacts import IE
from apxtui.checkpoint.synth import write_safetensors
from apxtui.tui.app import ApxApp
from apxtui.tui.config import ExplorerConfig
from apxtui.tui.drive import seek, settle

TO_Q_PROJ = [r"^PyO3 infer$", r"^Rust infer_py$", r"^Rust infer$", r"^Rust infer",
             r"^Rust forward$", r"^Rust forward ×for layer", r"ambiguous B::linear", r"CudaBackend::linear @",
             r"^Rust linear"]

LOADER = r'''
fn load(st: &St, i: usize) {
    let a = take(st, &format!("model.layers.{}.mlp.up_proj.weight", i));
    let b = take(st, &format!("model.layers.{}.mlp.{}.weight", i, kind));
    let c = take(st, "model.rotary_emb.inv_freq");
}
'''


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def cell(table, row: int, col: int) -> str:
    return str(table.get_row_at(row)[col])


async def check_demo_tensors_join_patterns_config_checks(app, pilot) -> None:
    await settle(app, pilot)
    await pilot.press("4")
    await settle(app, pilot)
    s = app.screen
    summary = str(s.query_one("#ckpt-summary").render())
    assert "demo checkpoint: 21 tensors, 1 shard(s)" in summary
    assert "join clean: 21 claimed · 0 unclaimed · 0 claimed twice · 0 of 12 patterns match nothing" in summary
    table = s.query_one("#tensor-table")
    assert table.row_count == 21 and table.border_title == "Tensors 21 of 21"
    assert {cell(table, i, 1) for i in range(table.row_count)} == {"matched"}
    # the detail names the claiming pattern and where the loader asks for it
    detail = str(s.query_one("#tensor-detail").render())
    assert cell(table, 0, 0) == "lm_head.weight"
    assert "matched by lm_head.weight  at crates/apxinf-model/src/pi05/load.rs:12" in detail
    await pilot.press("slash", *"q_proj", "enter")
    await pilot.pause()
    assert table.row_count == 2 and table.border_title == "Tensors 2 of 21"
    assert app.focused is table
    await pilot.press("j")
    await pilot.pause()
    assert "model.layers.{*}.self_attn.q_proj.weight  at crates/apxinf-model/src/pi05/load.rs:42" in str(
        s.query_one("#tensor-detail").render())
    await pilot.press("p")
    await pilot.pause()
    pt = s.query_one("#pattern-table")
    assert app.focused is pt and pt.row_count == 12
    assert {cell(pt, i, 0) for i in range(12)} == {"matched"}
    await pilot.press("c")
    await pilot.pause()
    ct = s.query_one("#config-table")
    rows = [[str(c) for c in ct.get_row_at(i)] for i in range(ct.row_count)]
    assert ["dim [top]", "64", "hidden_size", "hidden_size"] in rows
    assert ["dim [top]", "2", "num_hidden_layers", "num_hidden_layers"] in rows
    assert any(r[0] == "total dtype" and r[2] == "BF16" and r[1].startswith("21 tensors") for r in rows)
    assert any(r[0] == "repeated" and r[1] == "×2 (0-1)" for r in rows)
    await pilot.press("f")
    await pilot.pause()
    ft = s.query_one("#checks-table")
    assert ft.row_count > 0 and ft.border_title.startswith("Shape checks: 0 finding(s) first")
    assert {cell(ft, i, 0) for i in range(ft.row_count)} == {"ok"}


async def test_unclaimed_twice_claimed_and_unmatched(tmp_path):
    root = tmp_path / "checkout"
    (root / "src").mkdir(parents=True)
    (root / "src" / "w.rs").write_text(LOADER)
    ck = tmp_path / "ckpt"
    ck.mkdir()
    spec = {f"model.layers.{i}.mlp.{p}.weight": ("BF16", (2, 2)) for i in range(2) for p in ("up_proj", "down_proj")}
    spec["extra.bias"] = ("F32", (4,))
    write_safetensors(ck / "model.safetensors", spec)
    app = ApxApp(ExplorerConfig(root, checkpoint=ck))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        s = app.screen
        table = s.query_one("#tensor-table")
        status = {cell(table, i, 0): cell(table, i, 1) for i in range(table.row_count)}
        assert status == {"extra.bias": "unclaimed", "model.layers.0.mlp.up_proj.weight": "claimed ×2",
                          "model.layers.1.mlp.up_proj.weight": "claimed ×2",
                          "model.layers.0.mlp.down_proj.weight": "matched",
                          "model.layers.1.mlp.down_proj.weight": "matched"}
        assert "2 claimed twice" in str(s.query_one("#ckpt-summary").render())
        await pilot.press("slash", *"claimed ×2", "enter")
        await pilot.pause()
        assert table.row_count == 2
        detail = str(s.query_one("#tensor-detail").render())
        assert "claimed by 2 patterns" in detail
        assert "model.layers.{**}.mlp.up_proj.weight  at src/w.rs:3" in detail
        assert "model.layers.{**}.mlp.{**}.weight  at src/w.rs:4" in detail
        await pilot.press("p")
        await pilot.pause()
        pt = s.query_one("#pattern-table")
        assert cell(pt, 0, 0) == "matches nothing" and cell(pt, 0, 1) == "model.rotary_emb.inv_freq"
        assert cell(pt, 0, 3) == "src/w.rs:5"
        assert "1 match nothing" in pt.border_title


@pytest.mark.parametrize("name", ["bad.safetensors", "pt-only"])
async def test_malformed_checkpoint_is_reported_and_the_app_keeps_working(tmp_path, name, demo_app):
    bad = tmp_path / name
    if name == "pt-only":  # a directory without safetensors: the reader raises
        bad.mkdir()
        (bad / "pytorch_model.bin").write_bytes(b"PK\x03\x04")
    else:  # a header length far beyond the file
        bad.write_bytes(b"\xff" * 8 + b"not json at all")
    app = demo_app(checkpoint=bad)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        s = app.screen
        summary = str(s.query_one("#ckpt-summary").render())
        assert summary.startswith("Checkpoint could not be read: ") and name in summary
        assert s.query_one("#tensor-table").border_title == "Tensors: checkpoint unreadable"
        await pilot.press("s")
        await pilot.pause()
        assert "INSUFFICIENT_EVIDENCE: the checkpoint could not be read" in s.query_one("#sol-panel").text()
        await pilot.press("escape", "1")  # the explorer still works, and says why there are no weights
        await settle(app, pilot)
        tree = app.screen.query_one("#tree")
        assert tree.root.label.plain == "Py infer"
        await pilot.press("j")
        await settle(app, pilot)
        details = app.screen.query_one("#details").text()
        assert "checkpoint not joined: " in details and name in details
        doc = app.session.document()  # the report is still built, naming the problem
        assert name in (doc.get("checkpoint_error") or " ".join(doc["checkpoint_join"]["problems"]))


async def test_no_checkpoint_states(demo_app):
    app = demo_app(checkpoint=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        s = app.screen
        assert str(s.query_one("#ckpt-summary").render()).startswith("No checkpoint given: start with --checkpoint")
        assert s.query_one("#tensor-table").row_count == 0
        await pilot.press("s")
        await pilot.pause()
        assert "INSUFFICIENT_EVIDENCE: no checkpoint given" in s.query_one("#sol-panel").text()


async def test_empty_header(tmp_path, demo_app):
    ck = tmp_path / "empty.safetensors"
    write_safetensors(ck, {})
    app = demo_app(checkpoint=ck)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        s = app.screen
        summary = str(s.query_one("#ckpt-summary").render())
        assert "EMPTY HEADER" in summary and "clean" not in summary
        assert s.query_one("#tensor-table").border_title == "Tensors: EMPTY HEADER (no tensor declared)"


async def fill_sol(pilot, batch: str, seq: str, floor: str = "", bind: str = "") -> None:
    await pilot.press("s", "enter", "down", "enter")  # device: the first of the table (H100 SXM)
    await pilot.pause()
    await pilot.press("tab", *batch, "tab", *seq, "tab", "tab", *floor, "tab", *bind)


@pytest.mark.slow
async def test_sol_panel_bound_and_estimate_kept_apart_and_missing_named(demo_app):
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("4", "s")
        await settle(app, pilot)
        panel = app.screen.query_one("#sol-panel")
        text = panel.text()  # nothing chosen: every missing input named, no default used
        assert text.count(IE) == 2
        for what in ("device: choose one", "batch: sequences per call", "seq: new tokens"):
            assert what in text
        await fill_sol(pilot, "1", "16")
        await settle(app, pilot)
        text = panel.text()
        bound = text.split("Serial estimate")[0]
        estimate = text.split("Serial estimate")[1].split("Inputs")[0]
        assert re.search(r"bound\s+[\d.]+ µs\s+\[partial\]", bound) and "limiter" in bound
        assert re.search(rf"estimate\s+{IE}", estimate)
        assert "launch floor (no datasheet figure" in estimate and "symbolic" in estimate
        assert "H100 SXM" in text and "batch 1 × seq 16 = 16 tokens" in text
        before = re.search(r"bound\s+([\d.]+) µs", bound).group(1)
        # a launch floor and the decode loop bound: those figures are no longer missing; what is left is named
        await pilot.press("shift+tab", "3", "tab", *"max_new_tokens=4,num_steps=10")  # focus was on bind
        await settle(app, pilot)
        text = panel.text()
        estimate = text.split("Serial estimate")[1].split("Inputs")[0]
        assert "launch floor" not in estimate and "unbound loop" not in estimate and "symbolic" not in estimate
        assert re.search(rf"estimate\s+{IE}", estimate) and "KV/activation dtype under" in estimate
        assert "bound loops  max_new_tokens=4, num_steps=10" in text and "launch floor  3 µs" in text
        assert re.search(r"bound\s+([\d.]+) µs", text).group(1) != before  # 4 decode steps read more weights


async def check_sol_follows_the_explorer_path(app, pilot) -> None:
    await settle(app, pilot)
    await pilot.press("4")
    await fill_sol(pilot, "2", "8")
    await settle(app, pilot)
    panel = app.screen.query_one("#sol-panel")
    assert "Path from apxinf.policy.Pi05Policy.infer" in str(panel.query_one("#sol-path").render())
    first = panel.text()
    await pilot.press("escape", "1")
    await settle(app, pilot)
    from apxtui.trace import find_symbol

    app.screen.set_entry(find_symbol(app.session.index.graph, "Pi05Model::forward"))
    await settle(app, pilot)
    await pilot.press("4")
    await settle(app, pilot)
    assert "Path from apxinf_model::pi05::model::Pi05Model::forward" in str(
        panel.query_one("#sol-path").render())
    assert panel.text() != first and "batch 2 × seq 8 = 16 tokens" in panel.text()


async def check_details_show_stored_weight_beside_compute_dtypes(app, pilot) -> None:
    await settle(app, pilot)
    tree = app.screen.query_one("#tree")
    for pat in TO_Q_PROJ:
        await seek(pilot, tree, pat)
    await settle(app, pilot)
    assert "CudaBackend::linear" in app.screen.query_one("#details").text()
    lines = app.screen.query_one("#details").text().split("Checkpoint weights")[1].splitlines()
    rows = {ln.strip().split("  ")[0]: ln for ln in lines if ln.strip()}
    assert "model.layers.{*}.self_attn.q_proj.weight" in rows["weight q_proj"]
    assert "BF16 64×64, 8.00 KiB per tensor, 2 tensor(s)" in rows["stored (ckpt)"]
    assert "cublasLtMatmul: A=bf16" in rows["compute (analysis)"] and "compute f32" in rows["compute (analysis)"]
    assert "crates/apxinf-model/src/pi05/load.rs:42" in rows["loaded at"]



@pytest.mark.slow
async def test_demo_weights_in_the_details_then_screen_4_then_speed_of_light(demo_app):
    """One app on the demo and its checkpoint (an app start is the costly part of a Pilot test); the checks run
    in turn, each from where the one before left the app, and a failure names its check."""
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await check_details_show_stored_weight_beside_compute_dtypes(app, pilot)
        await check_demo_tensors_join_patterns_config_checks(app, pilot)
        await check_sol_follows_the_explorer_path(app, pilot)
