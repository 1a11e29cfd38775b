"""Execution-map report: whole-process time and size of ``apxtui trace --format md`` (warm cache).

    python benchmarks/map_report.py CHECKOUT [--repeat N] [--case "ENTRY | FLAGS"] ...

Each case is an entry and its trace flags (default: the PI0.5 cases of issue 9 on ApxInf).  For each
case: whole-process wall time (imports, warm index load, map, render, exit; min / median of N runs),
(and CPU time: the machine may be shared), the report's lines and bytes, and in-process phases
(index load, profile resolution, map, render) of one run.  The
floor, measured in the same run, is a whole process that only loads the warm index
(``apxtui symbols CHECKOUT --kind kernel``): the map's own cost is the difference.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_CASES = [
    "crates/apxinf-model/src/pi05/bf16_executor.rs::language_layer_bf16 | --select BF16 --arch sm_90",
    "crates/apxinf-model/src/pi05/bf16_executor.rs::language_layer_bf16 | --select BF16 --arch sm_80",
    "Pi05Policy.infer | --arch sm_90 --select Bf16 --select BF16",
    "Pi05Policy.infer | --arch sm_90",
]


def _run(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU user+system) seconds of one whole process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def _stats(runs: list[tuple[float, float]]) -> str:
    wall, cpu = [w for w, _ in runs], [c for _, c in runs]
    return (f"wall min {min(wall):.2f} s, median {statistics.median(wall):.2f} s; "
            f"CPU min {min(cpu):.2f} s, median {statistics.median(cpu):.2f} s")


def in_process(checkout: Path, entry: str, flags: list[str]) -> dict[str, float]:
    """Phases of one in-process run (index load, map, render)."""
    from apxtui.cli import build_parser
    from apxtui.commands.profile_flags import resolve_from_args
    from apxtui.index.build import build_index
    from apxtui.report.markdown import render_map_markdown
    from apxtui.report.model import map_report
    from apxtui.trace import find_symbol

    args = build_parser().parse_args(["trace", str(checkout), "--from", entry, *flags])
    t0 = time.perf_counter()
    idx = build_index(checkout)
    t1 = time.perf_counter()
    profile = resolve_from_args(args, idx)
    tp = time.perf_counter()
    rep = map_report(idx, find_symbol(idx.graph, entry), select=args.select, profile=profile)
    t2 = time.perf_counter()
    md = render_map_markdown(rep)
    t3 = time.perf_counter()
    return {"index": t1 - t0, "profile": tp - t1, "map": t2 - tp, "render": t3 - t2,
            "rows": sum(len(t.rows) for t in rep.map.phases),
            "steady_rows": len(rep.map.phases[0].rows) if rep.map.phases else 0, "lines": md.count("\n")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--case", action="append", default=[], metavar="ENTRY | FLAGS")
    a = ap.parse_args()
    py = [sys.executable, "-m", "apxtui"]
    env_note = os.environ.get("APXTUI_CACHE_DIR", "(default cache)")
    subprocess.run([*py, "index", str(a.checkout)], check=True, stdout=subprocess.DEVNULL)  # warm the cache
    floor = [_run([*py, "symbols", str(a.checkout), "--kind", "kernel"]) for _ in range(a.repeat)]
    print(f"checkout {a.checkout} · cache {env_note} · {a.repeat} runs each")
    print(f"floor (whole process, warm index load only): {_stats(floor)}")
    for case in a.case or DEFAULT_CASES:
        entry, _, flags = (x.strip() for x in case.partition("|"))
        fl = shlex.split(flags)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.md"
            cmd = [*py, "trace", str(a.checkout), "--from", entry, *fl, "--format", "md", "-o", str(out)]
            times = [_run(cmd) for _ in range(a.repeat)]
            text = out.read_text("utf-8")
        ph = in_process(a.checkout, entry, fl)
        print(f"\n{entry} {flags}")
        print(f"  whole process: {_stats(times)} (above the floor: wall "
              f"{min(w for w, _ in times) - min(w for w, _ in floor):.2f} s, CPU "
              f"{min(c for _, c in times) - min(c for _, c in floor):.2f} s)")
        print(f"  report: {text.count(chr(10))} lines, {len(text.encode()) / 1024:.0f} KB; map rows {ph['rows']} "
              f"(steady state {ph['steady_rows']})")
        print(f"  in-process: index {ph['index']:.2f} s, profile {ph['profile']:.2f} s, map {ph['map']:.2f} s, "
              f"render {ph['render']:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
