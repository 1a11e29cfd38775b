"""Explorer keypress latency on a 5,000+-row call tree (the synthetic checkout of tests/test_tui_large.py).

    python benchmarks/tui_latency.py [--size 120x40] [--presses 200]

Runs the app headless (Textual's test driver), opens every row two levels down
(~7,300 rows), then times key → screen settled (``pilot.press`` + ``pilot.pause``)
for movement, expand/collapse, page/end jumps, `n` (next kernel) and an arm-free
re-trace.  Prints median / p95 / max per key in milliseconds.  Not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


async def run(size: tuple[int, int], presses: int) -> list[tuple[str, list[float], int]]:
    from apxtui.tui.app import ApxApp
    from apxtui.tui.config import ExplorerConfig
    from tests.test_tui_large import expand_two_levels, make_wide_deep_checkout, open_entry, ready

    out: list[tuple[str, list[float], int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = make_wide_deep_checkout(Path(tmp) / "synth")
        app = ApxApp(ExplorerConfig(root))
        async with app.run_test(size=size) as pilot:
            await ready(app, pilot)
            tree = await open_entry(app, pilot)
            await expand_two_levels(tree, pilot)
            rows = tree.last_line + 1

            async def timed(label: str, keys: list[str], reset: str | None = None) -> None:
                times = []
                for k in keys:
                    if reset:
                        await pilot.press(reset)
                        await pilot.pause()
                    t0 = time.perf_counter()
                    await pilot.press(k)
                    await pilot.pause()
                    times.append((time.perf_counter() - t0) * 1000)
                out.append((label, times, rows))

            await timed("j (down)", ["j"] * presses)
            await timed("k (up)", ["k"] * (presses // 2))
            await timed("pagedown", ["pagedown"] * 20)
            await timed("G (last row)", ["G"] * 10, reset="g")
            await timed("g (first row)", ["g"] * 10, reset="G")
            await timed("h/l collapse/expand", ["h", "l"] * 20)
            await timed("n (next kernel, from the top)", ["n"] * 5, reset="g")
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="120x40")
    p.add_argument("--presses", type=int, default=200)
    args = p.parse_args()
    w, h = (int(x) for x in args.size.lower().split("x"))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["APXTUI_CACHE_DIR"] = cache
        results = asyncio.run(run((w, h), args.presses))
    print(f"call tree rows built: {results[0][2]:,}   terminal {w}x{h}   (ms, key → screen settled)")
    print(f"{'key':34} {'n':>4} {'median':>8} {'p95':>8} {'max':>8}")
    for label, t, _ in results:
        t = sorted(t)
        p95 = t[min(len(t) - 1, int(len(t) * 0.95))]
        print(f"{label:34} {len(t):>4} {statistics.median(t):8.1f} {p95:8.1f} {t[-1]:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
