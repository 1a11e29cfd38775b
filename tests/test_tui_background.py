"""The explorer never blocks (issue 11 item 5): q during analysis, queued arm presses, progress of long jobs,
n/N from the analysis; and the user keymap (issue 14 item 5)."""

from __future__ import annotations

import os
import time

import pytest

from apxtui.demo import DEMO_CHECKOUT
from apxtui.tui import app as app_module
from apxtui.tui import background
from apxtui.tui.app import ApxApp
from apxtui.tui.background import Progress
from apxtui.tui.config import ExplorerConfig, load_settings
from apxtui.tui.drive import DEMO_TO_BF16_ARM, follow, settle
from apxtui.tui.jobs import Serve
from apxtui.tui.rows import DispatchRow, StageRow


def endless_analysis(session):
    """An analysis that never finishes (what a huge path looks like to the UI)."""
    yield Progress(f"analysis: pid {os.getpid()}")
    while True:
        time.sleep(0.05)


def slow_map_server(session):
    """The map job, slow to build its first map (what a big path looks like to the export)."""
    yield Progress("map: tracing slowly…")
    time.sleep(0.5)
    yield from background.map_server(session)


def broken_reports(session):
    """The map job, whose report requests fail."""
    for msg in background.map_server(session):
        if isinstance(msg, Serve):
            def serve(req, inner=msg.handler):
                if isinstance(req, background.ReportRequest):
                    raise RuntimeError("renderer [bold]broke[/]")
                return inner(req)

            msg = Serve(serve)
        yield msg


async def test_q_during_analysis_kills_it_and_quits(demo_app, monkeypatch):
    monkeypatch.setattr(app_module, "analyse_path", endless_analysis)
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        while not (app.analysis and app.analysis.progress.startswith("analysis: pid ")):
            await pilot.pause(0.05)
        pid = int(app.analysis.progress.rsplit(" ", 1)[1])
        os.kill(pid, 0)  # the analysis runs in its own process …
        assert pid != os.getpid()
        keys_answered = app.screen.query_one("#tree").cursor_line
        await pilot.press("j")  # … and keys are answered meanwhile
        assert app.screen.query_one("#tree").cursor_line == keys_answered + 1
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 or app.return_code is None
    for _ in range(500):  # killed at quit (reaped by a thread): nothing waits for it
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.01)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.slow
async def test_queued_arm_presses_apply_in_order_to_the_right_arms(demo_app):
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one("#tree")
        await follow(pilot, tree, DEMO_TO_BF16_ARM)
        first = tree.cursor_node.parent
        assert isinstance(first.data, DispatchRow)
        # queued in one go, no waiting between: ] ] at the dtype match, then J to the next dispatch point and ]
        await pilot.press("right_square_bracket", "right_square_bracket", "J", "right_square_bracket")
        second = tree.cursor_node
        assert isinstance(second.data, DispatchRow) and second is not first
        choices = app.session.choices
        a, b = first.data.dispatch, second.data.dispatch
        assert choices[a.key] == a.arms[1].index  # two presses: the second arm (F16) …
        assert choices[b.key] == b.arms[0].index  # … and one at the next point: its first arm
        labels = [c.label.plain for c in first.children]
        assert labels[1].startswith("● ") and all(not x.startswith("● ") for i, x in enumerate(labels) if i != 1)
        await settle(app, pilot)
        assert app.analysis.generation == app.session.generation and app.analysis.ready
        assert app.background.running() == ["analysis"]  # the earlier analyses were cancelled, one serves


async def test_export_shows_progress_and_n_uses_the_analysis(demo_app, monkeypatch, tmp_path):
    from apxtui.tui.screens import explorer as explorer_screen

    monkeypatch.setattr(explorer_screen, "map_server", slow_map_server)
    app = demo_app(export_dir=str(tmp_path))
    seen: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.watch(app, "activity", lambda a: seen.extend(a.values()))
        await pilot.press("e")
        await settle(app, pilot)
        assert "export: waiting for the execution map of the path…" in seen and "map: tracing slowly…" in seen
        assert "export: rendering the report and writing it…" in seen
        assert app.screen.query_one("#profile-bar").busy == ""  # done: the status bar is clear again
        assert len(list(tmp_path.glob("*.md"))) == 1
        job = app.screen._map_job  # the export's map job serves the map view next: not built again
        assert job is not None and job.serving
        await pilot.press("m")
        await settle(app, pilot)
        assert app.screen._map_job is job and app.screen._map is not None
        details = app.screen.query_one("#details")
        assert details.text().startswith("Map row")
        # the tree row's analysis arriving late (fetched before m) does not replace the map row's details
        app.screen._fetch(app.analysis, app.screen.query_one("#tree").cursor_pos)
        await settle(app, pilot)
        assert details.text().startswith("Map row")
        await pilot.press("m")
        # n from the top: answered by the analysis (the whole path), rows opened down to it
        tree = app.screen.query_one("#tree")
        before = tree.last_line
        await pilot.press("n")
        await settle(app, pilot)
        row = tree.cursor_node
        assert isinstance(row.data, StageRow) and row.data.stage.kind in ("kernel", "vendor_api")
        assert tree.last_line > before


async def test_user_keymap_rebinds_by_id(demo_index, tmp_path):
    cfg = tmp_path / "tui.toml"
    cfg.write_text('[keymap]\n"tree.next_device" = "m"\n"no.such.binding" = "x"\n"app.help" = 3\n[other]\n')
    from apxtui.tui.app import binding_ids

    loaded = load_settings(cfg, binding_ids())
    assert loaded.keymap == {"tree.next_device": "m"}
    assert any("'no.such.binding': no such binding id" in p for p in loaded.problems)
    assert any("'app.help': expected a string of keys" in p for p in loaded.problems)
    assert any("unknown section or key 'other'" in p for p in loaded.problems)
    broken = tmp_path / "bad.toml"
    broken.write_text("[keymap\n")
    problem = load_settings(broken).problems[0]
    assert "TOMLDecodeError" in problem and str(broken) in problem
    app = ApxApp(ExplorerConfig(DEMO_CHECKOUT, demo=True), index=demo_index, settings=loaded)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()  # on mount: before a slow settle lets the toast time out
        assert any("no such binding id" in n.message for n in app._notifications)  # said, not ignored
        await settle(app, pilot)
        tree = app.screen.query_one("#tree")
        await pilot.press("m")  # n's action under its new key
        await settle(app, pilot)
        row = tree.cursor_node.data
        assert isinstance(row, StageRow) and row.stage.kind in ("kernel", "vendor_api")


async def test_a_failing_worker_is_a_notification_not_silence(demo_app, monkeypatch):
    from apxtui.tui.screens import explorer as explorer_screen

    monkeypatch.setattr(explorer_screen, "map_server", broken_reports)
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        notes = [(n.title, n.message) for n in app._notifications]
        assert any(t == "copy failed" and "RuntimeError: renderer [bold]broke[/]" in m for t, m in notes), notes


def test_arm_rows_keep_their_position_key_across_a_retrace(demo_index):
    """One key scheme: a row's position survives re-tracing (the tree re-opens rows and the cursor by it)."""
    from apxtui.trace import Dispatch
    from apxtui.tui.positions import resolve, walk_positions
    from apxtui.tui.session import Session

    s = Session(demo_index)
    entry = next(n for n, d in demo_index.graph.nodes(data=True)
                 if d.get("qualname") == "apxinf.policy.Pi05Policy.infer")
    full = s.tracer().trace(entry)
    positions = [(p, it) for p, it, _ in walk_positions(full)]
    disp = [(p, it) for p, it in positions if isinstance(it, Dispatch)]
    assert disp, "the demo path has dispatch points"
    s.set_entry(entry)
    for p, it in disp[:5]:  # the lazily built tree finds the same items at the same positions
        chain = resolve(s.root, p, s.expand)
        assert chain is not None and chain[-1][0].key == it.key


@pytest.mark.slow
async def test_a_profile_change_retraces_keeping_open_rows_and_the_cursor(demo_app):
    from apxtui.profile.model import Profile
    from apxtui.tui.drive import DEMO_TO_RMS_NORM_KERNEL

    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one("#tree")
        await follow(pilot, tree, DEMO_TO_RMS_NORM_KERNEL)
        await settle(app, pilot)
        kernel = tree.cursor_pos
        opened = {n.data.pos for n in tree._by_pos.values() if n.is_expanded and isinstance(n.data, StageRow)}
        profile = Profile(env={"UNRELATED_ENV": "1"})
        app.set_profile(profile, app.session.bind(profile))  # what screen 5 does
        await settle(app, pilot)
        assert tree.cursor_pos == kernel  # rebuilt: the cursor is back on the kernel row
        reopened = {n.data.pos for n in tree._by_pos.values() if n.is_expanded and isinstance(n.data, StageRow)}
        assert opened <= reopened
        assert app.analysis.generation == app.session.generation and app.analysis.ready


@pytest.mark.slow
async def test_the_exported_path_follows_the_cursor(demo_app, tmp_path):
    from apxtui.tui.drive import DEMO_TO_RMS_NORM_KERNEL

    app = demo_app(export_dir=str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("e")  # at the entry: the report's default path (its first device work)
        await settle(app, pilot)
        await follow(pilot, app.screen.query_one("#tree"), DEMO_TO_RMS_NORM_KERNEL)
        await pilot.press("e")  # at the BF16 RMSNorm kernel
        await settle(app, pilot)
    first, second = sorted(tmp_path.glob("*.md"))
    path_of = {f: next(ln for ln in f.read_text().splitlines() if ln.startswith("**Path:**")) for f in (first, second)}
    assert "rms_norm_kernel" in path_of[second] and "apxinf_rms_norm_bf16" in path_of[second]
    assert path_of[first] != path_of[second]


def test_the_map_job_answers_reports_from_its_builder_as_a_fresh_build(demo_index, tmp_path):
    """``e`` / ``y`` ask the map job (its kept builder) for the report: the same text as a fresh build,
    also after an arm change, and the file written where ``e`` writes."""
    from apxtui.map import build_map
    from apxtui.trace import find_symbol
    from apxtui.tui.details import map_row_details
    from apxtui.tui.session import Session
    from apxtui.tui.widgets.map_view import first_choice

    s = Session(demo_index, export_dir=str(tmp_path))
    s.entry = find_symbol(demo_index.graph, "Pi05Policy.infer")
    job = background.map_server(s)
    m = next(x for x in job if not isinstance(x, Progress))
    serve = next(job).handler
    assert serve(background.ReportRequest({}, write=False)) == s.report()
    choice = next(c for r in m.rows() if (c := first_choice(r)) is not None)
    arm = choice.alternatives[-1]
    changed = {arm.dispatch: arm.arm}
    assert serve(changed) is serve(changed)  # the map of unchanged choices is not built again
    fresh = build_map(demo_index, s.entry, choices=changed)  # each row's details as from a fresh build
    assert [map_row_details(r) for r in serve(changed).rows()] == [map_row_details(r) for r in fresh.rows()]
    text = serve(background.ReportRequest(changed, write=False))
    s.choices = changed
    assert text == s.report() and text != serve(background.ReportRequest({}, write=False))
    path = serve(background.ReportRequest(changed))
    assert path.parent == tmp_path.resolve() and path.read_text() == text


def test_trace_budget_setting_reaches_the_whole_path_trace(demo_index, tmp_path):
    """``[trace] budget = N`` in tui.toml: the whole-path trace (analysis, export) stops at N stages and
    lists its cuts; bad values are problems, not silently used."""
    from apxtui.trace import cuts, find_symbol
    from apxtui.tui.session import Session

    cfg = tmp_path / "tui.toml"
    cfg.write_text("[trace]\nbudget = 12\n")
    assert load_settings(cfg).budget == 12 and not load_settings(cfg).problems
    for bad in ("budget = 0", 'budget = "12"', "budget = true", "depth = 3"):
        cfg.write_text(f"[trace]\n{bad}\n")
        loaded = load_settings(cfg)
        assert loaded.budget is None and loaded.problems and "[trace]" in loaded.problems[0], bad
    s = Session(demo_index)
    s.set_entry(find_symbol(demo_index.graph, "Pi05Policy.infer"))
    full = s.tracer().trace(s.entry)
    assert not [st for st, _ in cuts(full) if st.cut == "budget"]
    s.budget = 12
    cut = [st for st, _ in cuts(s.tracer().trace(s.entry)) if st.cut == "budget"]
    assert cut, "a 12-stage budget cuts the demo's path, and says where"
