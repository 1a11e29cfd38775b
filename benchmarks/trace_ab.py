"""Warm ``apxtui trace`` (Markdown map) of one or two apxtui source trees, whole processes, runs alternating.

    python benchmarks/trace_ab.py CHECKOUT --from ENTRY [--a SRC_A] [--b SRC_B] [--runs N] [--cache DIR]

``SRC_A``/``SRC_B``: directories holding an ``apxtui`` package (``git archive main`` unpacked, this
worktree); default: this worktree alone.  Each tree gets its own cache under ``DIR`` (a tree whose
indexer differs would otherwise rebuild the other's index), is warmed by one run first and has its
``.pyc`` compiled (``PYTHONDONTWRITEBYTECODE`` is unset: a stale ``.pyc`` recompiled on every run
would be timed).  Per round: ``python -c pass``, ``apxtui --version`` (the floors, same run), then
each tree's trace, A and B in turn (B, A the next round, so the machine's drift falls on both).
Printed: wall, CPU (user + system) and peak RSS min / median per tree and floor, the outputs' hashes (equal:
the same report), and the in-process phases of one run per tree (imports, index load, profile,
map, render; ``time.process_time``).

Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _env(src: Path, cache: Path) -> dict[str, str]:
    # PYTHONSAFEPATH: `python -m apxtui` would otherwise import the current directory's apxtui first
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONSAFEPATH": "1", "APXTUI_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


_Run = tuple[float, float, bytes, float]


def _run(cmd: list[str], env: dict[str, str]) -> _Run:
    """(wall, CPU user + system, stdout, peak RSS in MB) of one whole process (its own rusage, ``wait4``)."""
    t = time.perf_counter()
    with tempfile.TemporaryFile() as buf:
        p = subprocess.Popen(cmd, env=env, stdout=buf, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode:
            raise subprocess.CalledProcessError(p.returncode, cmd)
        buf.seek(0)
        out = buf.read()
    return wall, ru.ru_utime + ru.ru_stime, out, ru.ru_maxrss / 1024


def _fmt(runs: list[_Run]) -> str:
    wall, cpu, rss = [r[0] for r in runs], [r[1] for r in runs], [r[3] for r in runs]
    return (f"wall {min(wall):.3f} / {statistics.median(wall):.3f} s, "
            f"CPU {min(cpu):.3f} / {statistics.median(cpu):.3f} s, "
            f"peak RSS {min(rss):.0f} / {statistics.median(rss):.0f} MB (min / median)")


def phases(checkout: str, entry: str) -> None:
    """In-process phases of one warm trace (run in a child with the tree on ``PYTHONPATH``; no cyclic GC,
    as the command runs)."""
    import gc

    gc.disable()
    t0 = time.process_time()
    from apxtui.commands.profile_flags import resolve_from_args
    from apxtui.commands.trace import add_parser
    from apxtui.index.build import build_index
    from apxtui.report.markdown import render_map_markdown
    from apxtui.report.model import map_report
    from apxtui.trace import find_symbol
    t1 = time.process_time()
    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers())
    args = p.parse_args(["trace", checkout, "--from", entry, "--format", "md"])
    idx = build_index(Path(checkout))
    t2 = time.process_time()
    profile = resolve_from_args(args, idx)
    t3 = time.process_time()
    rep = map_report(idx, find_symbol(idx.graph, entry), profile=profile)
    t4 = time.process_time()
    md = render_map_markdown(rep)
    t5 = time.process_time()
    print(f"imports {t1 - t0:.3f} s, index load {t2 - t1:.3f} s, profile {t3 - t2:.3f} s, map {t4 - t3:.3f} s, "
          f"render {t5 - t4:.3f} s ({md.count(chr(10))} lines, {sum(len(t.rows) for t in rep.map.phases)} rows)")
    sys.stdout.flush()
    os._exit(0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout")
    ap.add_argument("--from", dest="entry", required=True)
    ap.add_argument("--a", type=Path, default=ROOT, help="source tree A (holds apxtui/; default: this worktree)")
    ap.add_argument("--b", type=Path, help="source tree B")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("APXTUI_CACHE_DIR", "/tmp/apxcache-bench")))
    ap.add_argument("--phases", action="store_true", help=argparse.SUPPRESS)  # the child of phases()
    a = ap.parse_args()
    if a.phases:
        phases(a.checkout, a.entry)
    trees = {"A": a.a.resolve()} | ({"B": a.b.resolve()} if a.b else {})
    envs = {name: _env(src, a.cache / f"trace-ab-{name}") for name, src in trees.items()}
    py = [sys.executable, "-m", "apxtui"]
    cmd = [*py, "trace", a.checkout, "--from", a.entry, "--format", "md"]
    for name, src in trees.items():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "apxtui")], check=True)
        _run(cmd, envs[name])  # warm: the index and what is stored beside it
    floors: dict[str, list[_Run]] = {"python -c pass": [], "apxtui --version": []}
    got: dict[str, list[_Run]] = {name: [] for name in trees}
    for i in range(a.runs):
        floors["python -c pass"].append(_run([sys.executable, "-c", "pass"], envs["A"]))
        floors["apxtui --version"].append(_run([*py, "--version"], envs["A"]))
        for name in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
            got[name].append(_run(cmd, envs[name]))
    print(f"{a.checkout} --from {a.entry} · {a.runs} runs each, alternating · load {os.getloadavg()[0]:.1f}")
    for label, runs in floors.items():
        print(f"  floor {label:18} {_fmt(runs)}")
    for name, runs in got.items():
        digest = {hashlib.blake2b(r[2], digest_size=6).hexdigest() for r in runs}
        print(f"  {name} {str(trees[name]):24} {_fmt(runs)} · {len(runs[0][2]):,} bytes, "
              f"hash {', '.join(sorted(digest))}")
    for name in trees:
        ph = subprocess.run([sys.executable, str(Path(__file__).resolve()), a.checkout, "--from", a.entry,
                             "--phases"], env=envs[name], check=True, capture_output=True, text=True).stdout
        print(f"  {name} in-process: {ph.strip()}")


if __name__ == "__main__":
    main()
