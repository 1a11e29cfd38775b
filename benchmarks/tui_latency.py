"""Explorer keypress latency: key → screen repainted, idle and while the background analysis runs.

    python benchmarks/tui_latency.py [--size 120x40] [--presses 100]            # synthetic 7,000+-row tree
    python benchmarks/tui_latency.py --checkout /work/real/ApxInf [--rows 7000]  # a real checkout

Runs the app headless (Textual's test driver).  For each key it posts the key event and
waits until every widget has handled what the key queued (twice over, for follow-up
messages), the workers the key started (details, ``n``) are done and the screen has
nothing left to repaint; the latency is key → the last repaint before that (each screen
update is also encoded to terminal output, as a real terminal would get it).  "busy" rows
press while the background analysis of the path is running (it is re-started whenever it
finishes); "idle" rows after it is done.  Also: the command
palette's first results, an arm change, ``n``, export of the whole path, ``q`` while the analysis runs
(key → app exited), and with ``--map`` the execution map view (key → map built, ``j``/``n`` in it,
``enter`` into the tree, ``]`` → map rebuilt, three quick ``]`` → map rebuilt once for the last arm).  Prints
min / median / p95 / max in milliseconds and the main process's CPU per key.  Not a
test: nothing asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUIET = 0.08  # seconds without a repaint before a key is pressed
FRAME = 1 / 30  # longer than Textual's frame interval (60 fps)


class Repaints:
    """Timestamps of screen updates (wraps ``App._display``; encodes each update as a terminal would)."""

    def __init__(self, app) -> None:
        from rich.console import Console

        self.last = 0.0
        self.count = 0
        self.console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor", width=400)
        orig = app._display

        def display(screen, renderable) -> None:
            orig(screen, renderable)
            if renderable is not None:
                if hasattr(renderable, "render_segments"):
                    renderable.render_segments(self.console)
                self.last = time.perf_counter()
                self.count += 1

        app._display = display


async def quiet(rep: Repaints, limit: float = 5.0) -> None:
    start = time.perf_counter()
    while time.perf_counter() - max(rep.last, start) < QUIET and time.perf_counter() - start < limit:
        await asyncio.sleep(0.005)


KEY_WORKERS = {"details", "find-device"}


def settled(app) -> bool:
    from textual.worker import WorkerState

    screen = app.screen
    if screen._dirty_widgets or screen._layout_required or screen._repaint_required:
        return False
    return not any(w.group in KEY_WORKERS and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in app.workers)


def queues_empty(app) -> bool:
    """No message waits in the app's, the screen's or any widget's queue.  Polled: Pilot's
    ``_wait_for_screen`` posts a callback to every widget instead, whose handling delays the repaint
    being measured (it inflated the figures)."""
    try:
        screen = app.screen
    except Exception:  # noqa: BLE001 - no screen (exiting)
        return True
    return app._message_queue.empty() and all(w._message_queue.empty()
                                              for w in screen.walk_children(with_self=True))


#: Set by ``--profile``: a cProfile.Profile enabled while the measured keys are handled.
PROFILER = None
PROFILING = False  # the section being measured is profiled (only the sections ``--profile`` names)
#: Minor page faults of the main process per measured key (a forked child makes the parent's writes fault).
FAULTS: list[int] = []


def minor_faults() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


async def press(app, rep: Repaints, key: str, pilot=None) -> tuple[float, float]:
    """(ms from the key to its last repaint, ms of main-process CPU) for one key."""
    from textual import events

    await quiet(rep)
    f0 = minor_faults()
    if PROFILING and PROFILER is not None:
        PROFILER.start() if hasattr(PROFILER, "start") else PROFILER.enable()
    t0, c0 = time.perf_counter(), time.process_time()
    char = key if len(key) == 1 else None
    app.post_message(events.Key(key, char))
    while time.perf_counter() - t0 < 30:
        if not (queues_empty(app) and settled(app)):
            await asyncio.sleep(0.001)
            continue
        n = rep.count
        await asyncio.sleep(FRAME)  # a repaint still scheduled would land within a frame
        if rep.count == n and queues_empty(app) and settled(app):
            break
    cpu = (time.process_time() - c0) * 1000
    if PROFILING and PROFILER is not None:
        PROFILER.stop() if hasattr(PROFILER, "start") else PROFILER.disable()
    FAULTS.append(minor_faults() - f0)
    return (max(rep.last, t0) - t0) * 1000, cpu


def analysing(app) -> bool:
    a = app.analysis
    return a is not None and a.status == "running"


async def keep_busy(app) -> None:
    """Re-start the path analysis when it has finished (the 'busy' measurements need it running)."""
    if not analysing(app):
        app.path_changed()
        app._start_analysis()
    while app.analysis is not None and app.analysis.job is None:
        await asyncio.sleep(0.01)


async def wait_ready(app, pilot, limit: float = 600) -> None:
    from apxtui.tui.drive import settle

    await settle(app, pilot, limit)


async def grow(tree, pilot, rows: int) -> int:
    """Open stage rows breadth-first until the tree has ``rows`` rows (as ``l`` would, row by row)."""
    from apxtui.tui.rows import StageRow

    queue = [tree.root]
    opened = 0
    while queue:
        node = queue.pop(0)
        if isinstance(node.data, StageRow) and node.allow_expand and not node.is_expanded:
            tree.ensure_populated(node)
            node.expand()
            opened += 1
            if opened % 50 == 0:
                tree.lines_now()
                if tree.last_line + 1 >= rows:
                    break
        queue.extend(node.children)
    tree.lines_now()
    await pilot.pause()
    return tree.last_line + 1


async def until(cond, limit: float = 120.0) -> float:
    """Seconds until ``cond()`` holds (polled every 5 ms; gives up after ``limit``)."""
    t0 = time.perf_counter()
    while not cond() and time.perf_counter() - t0 < limit:
        await asyncio.sleep(0.005)
    return time.perf_counter() - t0


async def measure_map(app, rep: Repaints, pilot, out, timed) -> None:
    """The execution map (``m``): key → map shown (built in a background job), keys in it, ``enter`` into
    the tree, and ``]`` on a row with alternatives → the map rebuilt for the new arm."""
    from textual import events

    from apxtui.tui.widgets.map_view import first_choice

    screen = app.screen
    view = screen.query_one("#map")

    def fresh() -> bool:
        return screen._map is not None and screen._map[0] == app.session.generation and not view.loading

    await wait_ready(app, pilot)
    app.post_message(events.Key("m", "m"))
    built = await until(fresh)
    await quiet(rep)
    rows = sum(len(t.rows) for t in screen._map[1].phases)
    out.append((f"m → map built and shown ({rows:,} rows)", [built * 1000], [0.0]))
    print(f"  map built in {built:.2f} s, {rows:,} rows, {view.last_line + 1:,} lines", flush=True)
    await timed("j in the map", ["j"] * 50)
    await timed("n next device-work row in the map", ["n"] * 10)
    await timed("enter map row → call tree (⌫ back)", ["enter"] * 5, reset="backspace")
    await press(app, rep, "g")
    for _ in range(200):  # a row with alternatives
        if view.cursor_row is not None and first_choice(view.cursor_row) is not None:
            break
        await press(app, rep, "n")
    if view.cursor_row is None or first_choice(view.cursor_row) is None:
        print("  no map row with alternatives reached by n", flush=True)
    else:
        lat = []
        for _ in range(4):
            t0 = time.perf_counter()
            await press(app, rep, "right_square_bracket")
            await until(fresh)
            lat.append((time.perf_counter() - t0) * 1000)
        out.append(("] on a map row → map rebuilt", lat, [0.0] * len(lat)))
        lat, ok = [], 0
        for _ in range(3):  # three presses 40 ms apart (a held key): coalesced, the last arm applied
            t0 = time.perf_counter()
            for _ in range(3):
                app.post_message(events.Key("right_square_bracket", None))
                await asyncio.sleep(0.04)
            await until(fresh)
            lat.append((time.perf_counter() - t0) * 1000)
            ok += screen._chosen_rows().get(view.cursor_row.key if view.cursor_row else (), "") != ""
        out.append((f"]]] 3 quick presses → map rebuilt ({ok}/3 marked)", lat, [0.0] * len(lat)))
    await press(app, rep, "m")  # back to the tree


def all_cpu(app) -> float:
    """CPU seconds of this process, its reaped children and the app's running background jobs."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = time.process_time() + r.ru_utime + r.ru_stime
    tick = os.sysconf("SC_CLK_TCK")
    for job in list(app.background._by_group.values()):
        proc = getattr(job, "_proc", None)
        if proc is None or not proc.pid:
            continue
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


async def measure_export(app, rep: Repaints, pilot, out, n: int, reports: Path) -> None:
    """``e`` (export of the whole path): key → "Report written", wall and CPU of every process (the UI and its
    background jobs); with no map job running (each time a new one), then again with the one kept."""
    for label, fresh in (("e export, no map job running", True), ("e export again (map job kept)", False)):
        times, cpu = [], []
        for _ in range(n):
            await wait_ready(app, pilot)
            if fresh:
                app.background.cancel("map")
                await asyncio.sleep(0.3)  # the cancelled job is reaped (its CPU counted before the key)
            app.clear_notifications()
            c0, t0 = all_cpu(app), time.perf_counter()
            app.post_message(events_key("e"))
            while not any("Report written" in (x.title or "") for x in app._notifications):
                await asyncio.sleep(0.005)
                if time.perf_counter() - t0 > 600:
                    break
            times.append((time.perf_counter() - t0) * 1000)
            cpu.append((all_cpu(app) - c0) * 1000)
        got = sorted(reports.glob("*.md"))
        size_note = f", {got[-1].stat().st_size / 1e6:.2f} MB" if got else ""
        out.append((label + size_note, times, cpu))
        print(f"  measured {label}", flush=True)


def events_key(key: str):
    from textual import events

    return events.Key(key, key if len(key) == 1 else None)


async def run(args, size: tuple[int, int]) -> list[tuple[str, list[float], list[float]]]:
    from apxtui.tui.app import ApxApp
    from apxtui.tui.config import ExplorerConfig, Settings

    out: list[tuple[str, list[float], list[float]]] = []
    tmp = tempfile.TemporaryDirectory()
    if args.checkout:
        root = Path(args.checkout)
    else:
        from tests.test_tui_large import make_wide_deep_checkout

        root = make_wide_deep_checkout(Path(tmp.name) / "synth")
    app = ApxApp(ExplorerConfig(root, export_dir=str(Path(tmp.name) / "reports")), settings=Settings())
    app.quiet_gc = not args.default_gc  # as run_app does
    rep = Repaints(app)
    t_start = time.perf_counter()
    async with app.run_test(size=size) as pilot:
        app._pilot = pilot
        await wait_ready(app, pilot)
        print(f"ready (index + first analysis) in {time.perf_counter() - t_start:.1f} s", flush=True)
        screen = app.screen
        tree = screen.query_one("#tree")
        if not args.checkout:
            node = next(n for n, d in app.session.index.graph.nodes(data=True) if d.get("qualname") == "synth::entry")
            screen.set_entry(node)
            await wait_ready(app, pilot)
        rows = await grow(tree, pilot, args.rows)
        await wait_ready(app, pilot)
        tree.focus()
        print(f"call tree rows built: {rows:,}   terminal {size[0]}x{size[1]}", flush=True)

        async def timed(label: str, keys: list[str], reset: str | None = None, busy: bool = False,
                        start: str = "g") -> None:
            global PROFILING
            lat, cpu, during = [], [], 0
            faults: list[int] = []
            await press(app, rep, start)  # the top (j at the last row would do nothing), the last row for k
            for k in keys:
                if reset:
                    await press(app, rep, reset)
                if busy:
                    await keep_busy(app)
                    during += analysing(app)
                PROFILING = label in args.profile_keys
                FAULTS.clear()
                ms, c = await press(app, rep, k)
                PROFILING = False
                lat.append(ms)
                cpu.append(c)
                faults.extend(FAULTS)
            tag = f" (busy {during}/{len(keys)})" if busy else ""
            out.append((label + tag, lat, cpu))
            if faults:
                print(f"  {label}{tag}: minor page faults per key median {statistics.median(faults):.0f}, "
                      f"max {max(faults)}", flush=True)
            print(f"  measured {label}{tag}", flush=True)

        if "keys" in args.only or "j" in args.only:
            for busy in (False, True):
                mode = "busy" if busy else "idle"
                await timed(f"j ({mode})", ["j"] * args.presses, busy=busy)
                if "keys" in args.only:
                    await timed(f"k ({mode})", ["k"] * (args.presses // 2), busy=busy, start="G")
                    await timed(f"pagedown ({mode})", ["pagedown"] * 20, busy=busy)
                    await timed(f"G last row ({mode})", ["G"] * 8, reset="g", busy=busy)
                    await timed(f"h/l collapse/expand ({mode})", ["h", "l"] * 10, busy=busy)
                    await timed(f"n next kernel from top ({mode})", ["n"] * 5, reset="g", busy=busy)
                if not busy:
                    await wait_ready(app, pilot)

        if "arm" in args.only:  # an arm change: the first dispatch point from the top (J), then ] several times
            await wait_ready(app, pilot)
            await press(app, rep, "g")
            await press(app, rep, "J")
            if type(tree.cursor_node.data).__name__ == "DispatchRow":
                await timed("] arm change at a dispatch point", ["right_square_bracket"] * 6)
            await wait_ready(app, pilot)

        if args.map:
            await measure_map(app, rep, pilot, out, timed)

        from textual import events
        from textual.command import CommandPalette

        if "palette" in args.only:  # the command palette: first results after typing a query
            lat = []
            for query in ("rms", "forward", "kernel", "infer", "norm"):
                await press(app, rep, "ctrl+p")
                palette = app.screen
                t0 = time.perf_counter()
                for ch in query:
                    app.post_message(events.Key(ch, ch))
                first = None
                while time.perf_counter() - t0 < 10:
                    await asyncio.sleep(0.002)
                    if isinstance(palette, CommandPalette) and palette._list_visible and palette.query_one(
                            "CommandList").option_count:
                        first = time.perf_counter()
                        break
                lat.append(((first or time.perf_counter()) - t0) * 1000)
                await press(app, rep, "escape")
            out.append(("ctrl+p + query → first results", lat, [0.0] * len(lat)))

        if "export" in args.only:
            await measure_export(app, rep, pilot, out, args.exports, Path(tmp.name) / "reports")
        # q while the background analysis runs: key → the app has exited (in-process; children killed)
        await wait_ready(app, pilot)
        await keep_busy(app)
        busy = analysing(app)
        t0 = time.perf_counter()
        app.post_message(events.Key("q", "q"))
        await until(lambda: not app.is_running, 10)
        out.append((f"q → app exited (analysis running: {busy})", [(time.perf_counter() - t0) * 1000], [0.0]))
    tmp.cleanup()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="120x40")
    p.add_argument("--presses", type=int, default=100)
    p.add_argument("--rows", type=int, default=7000, help="open rows until the tree has this many (default 7000)")
    p.add_argument("--exports", type=int, default=2)
    p.add_argument("--checkout", help="a real checkout (default: the synthetic one of tests/test_tui_large.py)")
    p.add_argument("--map", action="store_true", help="also the execution map view (m): build, j, n, enter, ]")
    p.add_argument("--default-gc", action="store_true",
                   help="leave the collector as Python sets it (the explorer tunes it: apxtui.tui.gcpolicy)")
    p.add_argument("--only", default="keys,arm,palette,export",
                   help="comma-separated sections to measure (default all: keys,arm,palette,export; j: only j of "
                        "the keys; q is always measured, last)")
    p.add_argument("--profile", metavar="FILE",
                   help="profile the main process while the keys of --profile-keys are handled: cProfile stats to "
                        "FILE, or pyinstrument's sampled call tree when FILE ends in .txt")
    p.add_argument("--profile-keys", default="j (busy)",
                   help="comma-separated section labels to profile (default 'j (busy)')")
    args = p.parse_args()
    args.only = set(args.only.split(","))
    args.profile_keys = set(args.profile_keys.split(",")) if args.profile else set()
    global PROFILER
    if args.profile and args.profile.endswith(".txt"):  # a sampling profile (less overhead than cProfile)
        from pyinstrument import Profiler

        PROFILER = Profiler(interval=0.0005, async_mode="disabled")
    elif args.profile:
        import cProfile

        PROFILER = cProfile.Profile()
    w, h = (int(x) for x in args.size.lower().split("x"))
    if not args.checkout:
        os.environ["APXTUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="apxtui-bench-")
    results = asyncio.run(run(args, (w, h)))
    if hasattr(PROFILER, "output_text"):
        Path(args.profile).write_text(PROFILER.output_text(show_all=True, short_mode=False))
    elif PROFILER is not None:
        PROFILER.dump_stats(args.profile)
        print(f"profile of {', '.join(sorted(args.profile_keys))} written to {args.profile}")
    print(f"\n{'ms, key → last repaint':44} {'n':>4} {'min':>7} {'median':>7} {'p95':>7} {'max':>7}  {'cpu med':>7}"
          f" {'cpu p95':>7}")
    for label, t, cpu in results:
        s, c = sorted(t), sorted(cpu)
        p95 = s[min(len(s) - 1, int(len(s) * 0.95))]
        print(f"{label:44} {len(s):>4} {s[0]:7.1f} {statistics.median(s):7.1f} {p95:7.1f} {s[-1]:7.1f}  "
              f"{statistics.median(c):7.1f} {c[min(len(c) - 1, int(len(c) * 0.95))]:7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
