"""Pilot tests of the explorer on the demo checkout (keys only) and on a tiny hostile checkout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from apxtui.demo import DEMO_CHECKPOINT
from apxtui.tui.app import ApxApp
from apxtui.tui.config import ExplorerConfig
from apxtui.tui.drive import DEMO_TO_RMS_NORM_KERNEL, seek, settle
from apxtui.tui.rows import ArmRow, StageRow

# Rows from the Python entry down to the BF16 RMSNorm kernel; stage rows on the way are expanded with `l`.
TO_RMS_NORM_KERNEL = DEMO_TO_RMS_NORM_KERNEL


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


ready = settle


async def to_kernel(app, pilot, steps: list[str] = TO_RMS_NORM_KERNEL):
    tree = app.screen.query_one("#tree")
    for pat in steps:
        await seek(pilot, tree, pat)
    await ready(app, pilot)
    return tree


@pytest.mark.slow
async def test_python_entry_to_kernel_by_keys_alone(demo_app):
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        screen = app.screen
        tree = screen.query_one("#tree")
        assert tree.root.label.plain == "Py infer"
        assert "● apxinf.policy.Pi05Policy.infer" in [o.prompt.plain for o in screen.query_one("#entries").options]
        await to_kernel(app, pilot)
        assert tree.cursor_node.label.plain.startswith("kernel rms_norm_kernel<__nv_bfloat16, float>")
        crumb = screen.query_one("#crumb").plain()
        assert crumb.startswith("Py infer → PyO3 infer → Rust infer_py")
        assert crumb.endswith("FFI apxinf_rms_norm_bf16 → ABI apxinf_rms_norm_bf16 → kernel rms_norm_kernel")
        src = screen.query_one("#source")
        assert src.border_title == "crates/apxinf-cuda/adapters/norm.cu:12"
        assert "rms_norm_kernel<__nv_bfloat16, float><<<rows, 256, 0, stream>>>" in src.selected_text
        details = screen.query_one("#details").text()
        assert re.search(r"kind\s+__global__ kernel", details)
        assert re.search(r"launch\s+<<<rows, 256, 0, stream>>>", details)
        assert re.search(r"accumulator\s+f32", details) and re.search(r"storage\s+bf16", details)
        await pilot.press("enter")  # follow into the definition
        await pilot.pause()
        assert src.border_title == "crates/apxinf-cuda/kernels/rms_norm.cuh:18"
        assert src.selected_text.startswith("__global__ void rms_norm_kernel(")
        await pilot.press("k", "k", "backspace")  # back to the row we followed from
        await pilot.pause()
        assert tree.cursor_node.label.plain.startswith("kernel rms_norm_kernel")


@pytest.mark.slow
async def test_arm_change_at_a_dtype_match(tmp_path: Path, demo_app):
    app = demo_app(export_dir=str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        tree = await to_kernel(app, pilot, TO_RMS_NORM_KERNEL[:12])  # down to the BF16 arm
        row = tree.cursor_node
        assert isinstance(row.data, ArmRow) and row.label.plain == "◦ DType::BF16"
        await pilot.press("right_square_bracket")  # no choice yet: ] chooses the first arm
        await ready(app, pilot)
        assert tree.cursor_node.label.plain == "● DType::BF16"
        await pilot.press("right_square_bracket")
        await ready(app, pilot)
        row = tree.cursor_node
        assert isinstance(row.data, ArmRow) and row.label.plain == "● DType::F16"
        labels = [c.label.plain for c in row.parent.children]
        assert labels[:3] == ["○ DType::BF16", "● DType::F16", "○ DType::F32"]
        assert [c.label.plain for c in row.children][0].startswith("FFI apxinf_rms_norm_f16")
        assert app.session.choices and list(app.session.choices.values()) == [1]
        await pilot.press("left_square_bracket")
        await ready(app, pilot)
        assert tree.cursor_node.label.plain == "● DType::BF16"
        await pilot.press("right_square_bracket", "e")
        await ready(app, pilot)
        reports = list(tmp_path.glob("*.md"))
        assert len(reports) == 1
        text = reports[0].read_text()
        assert re.search(r"  - `x.dtype\(\)` at \S+norm.rs:\d+ → `DType::F16` \(choice\)", text)  # every choice listed
        assert "apxinf_rms_norm_f16" in text and "apxinf_rms_norm_bf16" not in text  # the arm applies everywhere


async def check_export_writes_the_report_and_copy_fills_the_clipboard(app, pilot, out: Path) -> None:
    await ready(app, pilot)
    await pilot.press("e")
    await ready(app, pilot)
    files = list(out.glob("*.md"))
    assert len(files) == 1
    text = files[0].read_text()
    assert text.startswith("# apxtui execution map: `apxinf.policy.Pi05Policy.infer`")
    for row in ("- **Checkout:**", "- **Revision:**", "- **Working tree:**", "- **apxtui:**", "- **Choices:**",
                "- **Checkpoint:** " + str(DEMO_CHECKPOINT), "not runtime validation", "**Path:** Python:",
                "## Summary", "## Steady state", "## Captured", "## Preparation", "## Ambiguous and unresolved",
                "## Dtype boundaries", "## CUDA Graph capture", "## Cuts", "## Call-tree cuts",
                "## Checkpoint weight join", "- **Profile:** no profile: all configurations"):
        assert row in text, row
    assert "| # | operation | call site | adapter | device work (kernels, library calls) |" in text
    table = [line for line in text.splitlines() if line.startswith("| ") and "rms_norm_kernel" in line]
    assert table, "the device table lists the RMSNorm kernel"
    assert any("cublasLtMatmul" in line for line in text.splitlines() if line.startswith("| "))
    notes = [n.message for n in app._notifications]
    assert str(files[0].resolve()) in notes
    await pilot.press("y")
    await ready(app, pilot)
    assert app.clipboard.startswith("# apxtui execution map: `apxinf.policy.Pi05Policy.infer`")
    assert "## Steady state" in app.clipboard


async def check_palette_jumps_to_a_symbol_and_screens_switch(app, pilot) -> None:
    await ready(app, pilot)
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*"attention_combine_kernel")
    await pilot.pause(0.3)
    await pilot.press("enter")
    await ready(app, pilot)
    tree = app.screen.query_one("#tree")
    assert tree.root.label.plain.startswith("kernel attention_combine_kernel")
    await pilot.press("2")
    await ready(app, pilot)
    table = app.screen.query_one("DataTable")
    rows = {str(r[0]): [str(c) for c in r] for r in (table.get_row_at(i) for i in range(table.row_count))}
    assert rows["rms_norm_kernel"][2] == "apxinf_rms_norm_bf16 +2"  # launched by three adapters
    assert rows["rms_norm_kernel"][4] == "reached" and int(rows["rms_norm_kernel"][3]) >= 1
    await pilot.press("1", "o")  # back to the explorer, entries pane: open Pi05Policy.infer again
    await pilot.press("g", "j", "j", "j", "enter")  # AutoPolicy, from_pretrained, Pi05Policy, .infer
    await ready(app, pilot)
    assert app.screen.query_one("#tree").root.label.plain == "Py infer"
    await pilot.press("3")
    await ready(app, pilot)
    table = app.screen.query_one("DataTable")
    cells = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
    assert cells[0][0] == "region 1" and cells[0][1].startswith("apxinf_model::pi05::model_runner::Pi05")
    assert any(r[0].strip() == "body" and r[1] == "decode_step" for r in cells)
    assert any(r[0].strip() == "HAZARD" and r[1].startswith("cudaStreamSynchronize") for r in cells)
    await pilot.press("4")
    await ready(app, pilot)
    table = app.screen.query_one("DataTable")
    assert table.row_count > 5
    assert any("layers.0" in str(table.get_row_at(i)[0]) for i in range(table.row_count))
    await pilot.press("1", "i")
    await pilot.pause()
    assert type(app.screen).__name__ == "ProblemsScreen"
    await pilot.press("escape", "question_mark")
    await pilot.pause()
    assert type(app.screen).__name__ == "HelpScreen"


@pytest.mark.slow
async def test_export_and_copy_then_palette_and_screens(tmp_path: Path, demo_app):
    """One app on the demo (an app start is the costly part of a Pilot test); the checks run in turn, each from
    where the one before left the app, and a failure names its check."""
    app = demo_app(export_dir=str(tmp_path / "out"))
    async with app.run_test(size=(120, 40)) as pilot:
        await check_export_writes_the_report_and_copy_fills_the_clipboard(app, pilot, tmp_path / "out")
        await check_palette_jumps_to_a_symbol_and_screens_switch(app, pilot)


HOSTILE_PY = '''\
class Policy:
    def infer(self, x):
        if x == "[bold]red[/] [link=https://e.x]y[/link]":
            return self.helper("\x1b[31mRED\x1b[0m \x1b]0;pwned\x07")
        return self.other()

    def helper(self, s):
        return s

    def other(self):
        return 1
'''


def hostile_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "hostile"
    (root / "python" / "pkg").mkdir(parents=True)
    (root / "python" / "pkg" / "__init__.py").write_text("")
    (root / "python" / "pkg" / "policy.py").write_text(HOSTILE_PY)
    return root


async def check_markup_and_escape_sequences_are_shown_literally(app, pilot, out: Path) -> None:
    await ready(app, pilot)
    tree = app.screen.query_one("#tree")
    assert tree.root.label.plain == "Py infer"
    rows = [tree.get_node_at_line(i).label.plain for i in range(tree.last_line + 1)]
    arm = next(r for r in rows if "[bold]" in r)
    assert '[bold]red[/] [link=https://e.x]y[/link]' in arm
    await seek(pilot, tree, r"^Py helper")
    src = app.screen.query_one("#source")
    assert "\x1b" not in src.text and "\x07" not in src.text
    assert '"␛[31mRED␛[0m ␛]0;pwned␇"' in src.text
    assert src.border_title == "python/pkg/policy.py:4"
    svg = app.export_screenshot()
    assert "[bold]red[/]" in svg.replace("&#160;", " ")
    assert "\x1b" not in svg
    await pilot.press("e")
    await ready(app, pilot)
    reports = list(out.glob("*.md"))
    assert len(reports) == 1, [f"{n.title}: {n.message}" for n in app._notifications]  # a failure says the toasts
    (report,) = reports
    text = report.read_text()
    assert "[bold]red[/]" in text
    assert "## Checkpoint weight join\n\nNo checkpoint given" in text


def add_large_source_file(root: Path) -> None:
    big = root / "python" / "pkg" / "big.py"
    big.write_text("".join(f"x_{i} = {i}  # [bold]{i}[/]\n" for i in range(40_000)))
    assert big.stat().st_size > 1_000_000


async def check_large_source_file_is_plain_and_fast(app, pilot) -> None:
    await ready(app, pilot)
    src = app.screen.query_one("#source")
    src.show("python/pkg/big.py", 30_000, "test")  # speed: benchmarks/tui_latency.py (no timing asserts)
    src.focus()
    await pilot.press("j", "j", "k")
    await pilot.pause()
    assert src.plain and src.language is None
    assert src.cursor_location[0] == 30_000  # marked line 30,000 (row 29,999), then j j k
    assert src.document.get_line(29_999) == "x_29999 = 29999  # [bold]29999[/]"
    assert "plain text (large file)" in src.border_subtitle


async def test_hostile_strings_literal_then_a_large_source_file_plain(tmp_path: Path):
    """One app on the tiny hostile checkout, with a 1 MB Python file beside (an app start is the costly part of a
    Pilot test); the checks run in turn and a failure names its check."""
    root = hostile_checkout(tmp_path)
    add_large_source_file(root)
    app = ApxApp(ExplorerConfig(root, export_dir=str(tmp_path / "out")))
    async with app.run_test(size=(120, 40)) as pilot:
        await check_markup_and_escape_sequences_are_shown_literally(app, pilot, tmp_path / "out")
        await check_large_source_file_is_plain_and_fast(app, pilot)


@pytest.mark.slow
async def test_n_jumps_to_the_next_kernel_or_library_call_and_N_back(demo_app):
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        tree = app.screen.query_one("#tree")
        seen = []
        for _ in range(4):
            await pilot.press("n")
            await ready(app, pilot)
            row = tree.cursor_node
            assert isinstance(row.data, StageRow) and row.data.stage.kind in ("kernel", "vendor_api"), row.label.plain
            seen.append((tree.cursor_line, row.label.plain))
        more = []
        for _ in range(8):  # on into the GEMMs: cuBLASLt setup calls (…Create, …SetAttribute) are not stops
            await pilot.press("n")
            await ready(app, pilot)
            more.append(tree.cursor_node.label.plain)
        assert any(x.startswith("lib cublasLtMatmul") for x in more), more
        assert not any(w in x for x in more for w in ("Create", "SetAttribute", "Destroy")), more
        await pilot.press(*["N"] * 8)  # quick presses queue: each search starts where the one before stopped
        await ready(app, pilot)
        assert (tree.cursor_line, tree.cursor_node.label.plain) == seen[-1]
        lines = [ln for ln, _ in seen]
        assert lines == sorted(lines) and len(set(lines)) == 4  # forward in execution order, one stop each
        assert seen[0][1].startswith("kernel embedding_kernel")
        crumb = app.screen.query_one("#crumb").plain()
        assert crumb.startswith("Py infer → PyO3 infer") and crumb.endswith(seen[-1][1].split("<")[0].strip())
        assert "adapters/" in app.screen.query_one("#source").border_title  # the launch site
        await pilot.press("N")
        await ready(app, pilot)
        assert (tree.cursor_line, tree.cursor_node.label.plain) == seen[-2]
        # an arm that is not chosen is skipped: choose F16 at the dtype match, then n never stops in BF16/F32
        for _ in range(10):
            if tree.cursor_node.label.plain.startswith("kernel rms_norm_kernel"):
                break
            await pilot.press("n")
            await ready(app, pilot)
        await pilot.press("K")  # the dtype match just above the first RMSNorm kernel
        await pilot.pause()
        assert tree.cursor_node.label.plain.startswith("◆ match x.dtype()")
        await pilot.press("right_square_bracket", "right_square_bracket")
        await ready(app, pilot)
        labels = []
        for _ in range(3):
            await pilot.press("n")
            await ready(app, pilot)
            labels.append(tree.cursor_node.label.plain)
        assert labels[0] == "kernel rms_norm_kernel<__half, float>", labels


@pytest.mark.slow
async def test_map_view_moves_by_device_work_into_the_tree_and_back(demo_app):
    from apxtui.tui.positions import stage_keys
    from apxtui.tui.widgets.map_view import first_choice, has_work

    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        screen = app.screen
        await pilot.press("m")
        await ready(app, pilot)
        view, tree = screen.query_one("#map"), screen.query_one("#tree")
        assert screen.map_shown and view.display and not tree.display and app.focused is view
        footer = {b.binding.description for b in screen.active_bindings.values() if b.binding.show and b.enabled}
        assert {"To tree", "Next", "Arm", "Map"} <= footer and "Back" not in footer, footer
        numbers = [view.cursor_node.data.number]
        for _ in range(4):  # n: only rows with device work, in execution order (setup-only rows skipped)
            await pilot.press("n")
            assert has_work(view.cursor_row), view.cursor_node.label.plain
            numbers.append(view.cursor_node.data.number)
        assert numbers == sorted(numbers) and len(set(numbers)) == 5
        assert numbers[-1] - numbers[0] > 4  # rows without device work lay between
        row = view.cursor_row
        assert screen.query_one("#source").border_title == str(row.site)
        await pilot.press("enter")  # to the row's call site in the call tree
        await ready(app, pilot)
        assert not screen.map_shown and app.focused is tree
        assert stage_keys(tree.cursor_pos) == row.key
        await pilot.press("backspace")  # back to the map row left with enter
        await ready(app, pilot)
        assert screen.map_shown and view.cursor_row.key == row.key
        while first_choice(view.cursor_row) is None:
            await pilot.press("n")
        row = view.cursor_row
        choice = first_choice(row)
        await pilot.press("right_square_bracket")  # the first alternative of the row's choice, everywhere
        await ready(app, pilot)
        assert app.session.choices[choice.dispatch] == choice.alternatives[0].arm
        assert view.cursor_row.key == row.key and " ● " in view.cursor_node.label.plain  # rebuilt, cursor kept
        await pilot.press("y")  # the copied report's Path: leads to this row's operation
        await ready(app, pilot)
        path = next(ln for ln in app.clipboard.splitlines() if ln.startswith("**Path:**"))
        assert path.rstrip("` ").endswith(row.target.rsplit("::", 1)[-1]), (path, row.target)
        # a pane that grows scrolls again as little as its new height allows (it kept an offset scrolled for a
        # few rows while being laid out: test_map_view[120x40] showed the map 5 rows down, now and then)
        await pilot.resize_terminal(120, 14)
        await ready(app, pilot)
        while view.cursor_line < view.scrollable_content_region.height + 2:
            await pilot.press("j")
        await ready(app, pilot)
        assert view.scroll_y > 0
        await pilot.resize_terminal(120, 40)
        await ready(app, pilot)
        assert view.cursor_line < view.scrollable_content_region.height and view.scroll_y == 0, view.scroll_y


class VirtualTerminal:
    """What a terminal would show: every screen update the app sends (wraps ``App._display``) is applied to
    a grid of (character, style) cells, as the escape sequences it becomes would be."""

    def __init__(self, app, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells = [[(" ", "")] * width for _ in range(height)]
        self.updates = 0
        display = app._display

        def capture(screen, renderable) -> None:
            display(screen, renderable)
            if renderable is not None and not app._batch_count:
                self.apply(renderable)

        app._display = capture

    def apply(self, update) -> None:
        from rich.cells import cell_len
        from textual._compositor import CompositorUpdate

        if not isinstance(update, CompositorUpdate):
            return
        self.updates += 1
        x = y = 0
        for seg in update.__rich_console__(None, None):  # type: ignore[arg-type]  # neither uses the console
            if seg.control:
                for code in seg.control:
                    if code[0].name == "CURSOR_MOVE_TO":
                        x, y = code[1], code[2]
                continue
            if seg.text == "\n" and not seg.style:
                x, y = 0, y + 1
                continue
            for ch in seg.text:
                if 0 <= y < self.height and 0 <= x < self.width:
                    self.cells[y][x] = (ch, str(seg.style))
                x += max(1, cell_len(ch))


def fresh_screen(screen, width: int) -> list[list[tuple[str, str]]]:
    """The screen rendered from scratch: every widget's line and style caches dropped first."""
    for widget in screen.walk_children(with_self=True):
        widget._styles_cache.clear()
        if hasattr(widget, "_line_cache"):
            widget._line_cache.clear()
    rows = []
    for strip in screen._compositor.render_strips():
        rows.append([(ch, str(seg.style)) for seg in strip for ch in seg.text][:width])
    return rows


async def painted(app, pilot) -> None:
    """Wait until the app is done and every repaint asked for has reached the terminal: no worker busy, no
    message queued, no widget or screen waiting to be repainted."""
    await settle(app, pilot)
    for _ in range(2000):
        screen = app.screen
        widgets = list(screen.walk_children(with_self=True))
        if (app._message_queue.empty() and all(w._message_queue.empty() for w in widgets)
                and not (screen._dirty_widgets or screen._layout_required or screen._repaint_required)
                and not any(w._repaint_required or w._layout_required for w in widgets) and not app.busy()):
            return
        await pilot.pause()
    raise TimeoutError("the screen is still being repainted")


async def test_partial_repaints_leave_the_screen_as_a_full_repaint_would(demo_app):
    """After each key the terminal (every update applied in turn) shows what rendering the screen from scratch
    shows: the partial repaints (``QuietSize._repainting``, one repaint per key, scrolls keeping rendered rows)
    leave no stale row.  They rest on Textual internals; an upgrade that changes them fails here."""
    width, height = 100, 24
    app = demo_app()
    term = VirtualTerminal(app, width, height)
    keys = ["j", "j", "j", "l", "j", "h", "k", "pagedown", "ctrl+d", "G", "ctrl+u", "g", "n", "n",
            "s", "j", "k", "G", "g", "t", "d", "j", "G", "k", "t", "pagedown", "k", "n", "s", "pagedown", "t", "g"]
    async with app.run_test(size=(width, height)) as pilot:
        await painted(app, pilot)
        panes = {"t": "#tree", "s": "#source", "d": "#details"}  # the keys that move the focus
        await pilot.press("t")
        await painted(app, pilot)
        assert app.focused is app.screen.query_one("#tree")
        stale = []
        for i, key in enumerate(keys):
            before = term.updates
            await pilot.press(key)
            await painted(app, pilot)
            if key in panes:
                assert app.focused is app.screen.query_one(panes[key]), key
            fresh = fresh_screen(app.screen, width)
            rows = [y for y in range(height) if term.cells[y] != fresh[y]]
            if rows:
                y = rows[0]
                shown, want = ("".join(c for c, _ in row[y]) for row in (term.cells, fresh))
                what = "styles differ" if shown == want else f"shown {shown!r}, fresh {want!r}"
                stale.append(f"key {i} {key!r} ({term.updates - before} updates): rows {rows[:8]} differ; "
                             f"row {y}: {what}")
                term.cells = [list(row) for row in fresh]  # go on from the right screen: one failure per key
        assert not stale, "\n".join(stale)
        assert term.updates > len(keys) // 2  # the keys did repaint (the terminal was not compared with itself)
