"""Whole-process time of the analyses commands on a checkout, against a floor measured in the same run.

Run: ``python benchmarks/analyses_speed.py CHECKOUT [--from SYMBOL] [--select TEXT] [--repeat N]``
(warm cache: run ``apxtui index CHECKOUT`` once before).  Prints min/median of N runs of

* ``apxtui index CHECKOUT`` (warm: the floor — loading the snapshot is part of every command),
* ``apxtui capture CHECKOUT`` (every capture region, hazards, graph caches),
* ``apxtui trace CHECKOUT --from SYMBOL --select … --format md`` (the annotated report), when ``--from`` is given.

Each command runs in a fresh process (imports, snapshot load and exit included).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd: list[str], repeat: int) -> tuple[float, float]:
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
    return min(ts), statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("--from", dest="entry")
    ap.add_argument("--select", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    py = [sys.executable, "-m", "apxtui"]
    runs = {"index (floor)": [*py, "index", a.checkout], "capture": [*py, "capture", a.checkout]}
    with tempfile.NamedTemporaryFile(suffix=".md") as out:
        if a.entry:
            sel = [x for s in a.select for x in ("--select", s)]
            runs["trace md"] = [*py, "trace", a.checkout, "--from", a.entry, *sel, "--format", "md", "-o", out.name]
        for name, cmd in runs.items():
            lo, med = timed(cmd, a.repeat)
            print(f"{name:<14} min {lo:6.2f} s  median {med:6.2f} s")


if __name__ == "__main__":
    main()
