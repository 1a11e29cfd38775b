"""A 5,000+-row call tree on a synthetic checkout: keys keep working, nothing is built eagerly.

Latency is measured by ``benchmarks/tui_latency.py`` (same checkout); tests assert behaviour only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apxtui.tui.app import ApxApp
from apxtui.tui.config import ExplorerConfig
from apxtui.tui.drive import settle
from apxtui.tui.rows import StageRow

WIDE, FAN, LEAVES, DEEP, HUGE = 60, 40, 2, 30, 600  # DEEP under the trace depth limit (40)


def make_wide_deep_checkout(root: Path, wide: int = WIDE, fan: int = FAN, leaves: int = LEAVES, deep: int = DEEP,
                            huge: int = HUGE) -> Path:
    """A Rust crate whose ``entry`` calls ``wide`` functions of ``fan`` callees with ``leaves`` leaf calls each,
    one function with ``huge`` direct callees, and a ``deep`` call chain ending in a CUDA kernel launch."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "Cargo.toml").write_text('[package]\nname = "synth"\nversion = "0.1.0"\n')
    src = root / "src"
    src.mkdir(exist_ok=True)
    out = ['extern "C" {\n    fn synth_launch(n: i32);\n}\n', "pub fn entry() {"]
    out += [f"    a_{i}();" for i in range(wide)] + ["    huge();", "    d_0();", "}\n"]
    for i in range(wide):
        out += [f"fn a_{i}() {{"] + [f"    b_{i}_{j}();" for j in range(fan)] + ["}\n"]
        for j in range(fan):
            out += [f"fn b_{i}_{j}() {{"] + [f"    c_{(i + j + k) % 50}();" for k in range(leaves)] + ["}\n"]
    out += [f"fn c_{k}() {{}}\n" for k in range(50)]
    out += ["fn huge() {"] + [f"    h_{k}();" for k in range(huge)] + ["}\n"]
    out += [f"fn h_{k}() {{}}\n" for k in range(huge)]
    for k in range(deep):
        out.append(f"fn d_{k}() {{ d_{k + 1}(); }}\n")
    out.append(f"fn d_{deep}() {{ unsafe {{ synth_launch(1) }} }}\n")
    (src / "lib.rs").write_text("\n".join(out))
    (root / "kernels").mkdir(exist_ok=True)
    (root / "kernels" / "synth.cu").write_text(
        "__global__ void synth_kernel(int n) {}\n\n"
        'extern "C" void synth_launch(int n) {\n    synth_kernel<<<1, 32>>>(n);\n}\n')
    return root


def rows(tree) -> int:
    return tree.last_line + 1


ready = settle


async def open_entry(app, pilot):
    screen = app.screen
    node = next(n for n, d in app.session.index.graph.nodes(data=True) if d.get("qualname") == "synth::entry")
    screen.set_entry(node)
    await ready(app, pilot)
    return screen.query_one("#tree")


async def expand_two_levels(tree, pilot) -> None:
    """Open every a_i and every b_i_j (by the tree's own expand path, as `l` does)."""
    for a in list(tree.root.children):
        if isinstance(a.data, StageRow) and a.data.stage.name.startswith("a_"):
            tree.ensure_populated(a)
            a.expand()
            for b in a.children:
                tree.ensure_populated(b)
                b.expand()
    await pilot.pause()


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.mark.slow
async def test_five_thousand_rows_stay_navigable(tmp_path: Path):
    app = ApxApp(ExplorerConfig(make_wide_deep_checkout(tmp_path / "synth")))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app, pilot)
        tree = await open_entry(app, pilot)
        assert rows(tree) == 1 + WIDE + 2  # lazy: the entry's own calls only
        await expand_two_levels(tree, pilot)
        n = rows(tree)
        assert n == 1 + WIDE * (1 + FAN * (1 + LEAVES)) + 2 >= 5000
        await pilot.press("G")
        await pilot.pause()
        assert tree.cursor_line == n - 1
        await pilot.press("g", *"jjjjj", "k")
        await pilot.pause()
        assert tree.cursor_line == 4
        crumb = app.screen.query_one("#crumb").plain()
        assert crumb.endswith(tree.cursor_node.label.plain.split(" ", 1)[1])
        # the wide function: capped children with a "+N more" row that adds the rest on enter
        huge = next(c for c in tree.root.children if isinstance(c.data, StageRow) and c.data.stage.name == "huge")
        tree.move_cursor(huge)
        await pilot.press("l")
        await pilot.pause()
        assert len(huge.children) == 251 and huge.children[-1].label.plain.startswith(f"+{HUGE - 250} more")
        for shown in (501, HUGE):  # 250 more per enter
            tree.move_cursor(huge.children[-1])
            await pilot.press("enter")
            await pilot.pause()
            assert len(huge.children) == shown
        # n finds the kernel at the end of the deep chain, building only that chain
        tree.move_cursor(tree.root)
        await pilot.pause()
        before = rows(tree)
        await pilot.press("n")
        await ready(app, pilot)  # the search runs in a worker, in slices: one pause is not enough on a busy machine
        assert tree.cursor_node.label.plain.startswith("kernel synth_kernel")
        assert len(app.screen.query_one("#crumb").stages) == DEEP + 5  # entry, d_0…d_DEEP, FFI, ABI, kernel
        assert rows(tree) - before == DEEP + 3  # the chain, opened
