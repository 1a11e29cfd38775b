"""Execution map: an arm change on a kept builder (what the explorer's map job does) against a fresh build.

    python benchmarks/map_arm_change.py /work/real/ApxInf [--entry QUALNAME] [--keys 8] [--repeat 3]

For the top entry (or ``--entry``): CPU seconds of a fresh ``build_map`` (min / median of
``--repeat``), then for each of the first ``--keys`` dispatch points with alternatives and each of
its arms: ``set_choices`` + build on the kept builder, timed, and its map compared with a fresh
build under the same choices (``to_dict`` JSON, so order counts).  Prints min / median / max per
arm change and how many maps differed (must be 0).  In-process CPU (``time.process_time``), with the
index load as the floor.  Not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout")
    p.add_argument("--entry", help="entry qualname (default: the explorer's default entry)")
    p.add_argument("--keys", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    from apxtui.index.build import build_index
    from apxtui.map.build import build_map, map_builder, map_of
    from apxtui.trace import find_symbol
    from apxtui.tui.entries import default_entry, entry_points

    c0 = time.process_time()
    idx = build_index(args.checkout)
    load = time.process_time() - c0
    entry = find_symbol(idx.graph, args.entry) if args.entry else default_entry(entry_points(idx.graph), idx.graph).node
    full = []
    for _ in range(args.repeat):
        c0 = time.process_time()
        m = build_map(idx, entry)
        full.append(time.process_time() - c0)
    b = map_builder(idx)
    map_of(b, entry)
    keys = [(k, [a.index for a in d.arms]) for k, d in b.dispatches.items() if len(d.arms) > 1][:args.keys]
    changes, differ, choices = [], 0, {}
    for key, arms in keys:
        for arm in arms[::-1]:
            choices[key] = arm
            c0 = time.process_time()
            b.set_choices(dict(choices))
            got = map_of(b, entry)
            changes.append(time.process_time() - c0)
            want = build_map(idx, entry, choices=dict(choices))
            differ += json.dumps(got.to_dict()) != json.dumps(want.to_dict())
    rows = sum(len(t.rows) for t in m.phases)
    print(f"{args.checkout}: entry {m.entry}, {rows:,} rows; index load (warm) {load:.3f} s CPU")
    print(f"fresh build_map        n={len(full):>3}  min {min(full):.3f}  median {statistics.median(full):.3f} s CPU")
    if changes:
        print(f"arm change (kept)      n={len(changes):>3}  min {min(changes):.3f}  median "
              f"{statistics.median(changes):.3f}  max {max(changes):.3f} s CPU  ({len(keys)} dispatch points)")
    print(f"maps differing from a fresh build: {differ} of {len(changes)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
