"""Two source trees of apxtui compared on one checkout, whole processes, runs alternating A/B.

    python benchmarks/index_ab.py CHECKOUT --a SRC_A --b SRC_B [--pairs N] [--edit REL] [--jobs N]

``SRC_A``/``SRC_B``: directories holding an ``apxtui`` package (e.g. ``git archive main``
unpacked, and this worktree); each process runs with ``PYTHONPATH`` set to one of them.
Per pair, in the order A, B (then B, A for the next pair, so drift in the machine's load
falls on both):

* cold: ``index --no-cache --json`` on the checkout itself (nothing is written inside it):
  CPU seconds (user + system, worker processes included), peak RSS, and the output's hash
  without its ``seconds`` (equal hashes: the same index);
* the parse floor (``index_speed.py``'s tree-sitter-only process over the files the cold index
  parses: the project's and the vendored ones it indexed lazily) once per pair, same run;
* with ``--edit REL``: the checkout's indexable files are copied to a temporary directory,
  each tree gets its own cache there, and per pair each tree re-indexes after a comment is
  appended to ``REL`` (``index --json``, whole process), then runs a warm ``index --json``.

Not a test: nothing is asserted; min / median are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from index_speed import copy_checkout, index_digest, run  # noqa: E402

from apxtui.scan import scan  # noqa: E402


def _env(src: Path, cache: Path) -> dict[str, str]:
    # PYTHONSAFEPATH: `python -m apxtui` would otherwise import the apxtui of the current directory
    # (a worktree) before PYTHONPATH's, and both "trees" would run the same code
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONSAFEPATH": "1", "APXTUI_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _fmt(xs: list[float], unit: str = "s") -> str:
    return f"{min(xs):.3f} / {statistics.median(xs):.3f} {unit}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout")
    p.add_argument("--a", required=True, help="source tree A (holds apxtui/)")
    p.add_argument("--b", required=True, help="source tree B")
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--edit", help="file (relative) to re-index after an edit")
    p.add_argument("--no-cold", action="store_true", help="only the re-index and warm runs")
    args = p.parse_args()
    checkout = Path(args.checkout).resolve()
    trees = {"A": Path(args.a).resolve(), "B": Path(args.b).resolve()}
    py = sys.executable
    jobs = ["--jobs", str(args.jobs)]
    cpu: dict[str, dict[str, list[float]]] = {k: {} for k in trees}
    rss: dict[str, list[float]] = {k: [] for k in trees}
    digests: dict[str, set[str]] = {k: set() for k in trees}
    floor: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for k, src in trees.items():  # byte-compile each tree once, outside the measurements
            run([py, "-m", "apxtui", "--version"], _env(src, t / f"cache-{k}"))
        copy = None
        if args.edit:
            copy = t / checkout.name
            copy_checkout(checkout, copy)
            for k, src in trees.items():  # fill each tree's cache
                run([py, "-m", "apxtui", "index", str(copy), *jobs], _env(src, t / f"cache-{k}"))
        listing = t / "parsed.txt"  # what the cold index parses (written after the first cold run)
        for i in range(args.pairs):
            order = ["A", "B"] if i % 2 == 0 else ["B", "A"]
            if not args.no_cold:
                for k in order:
                    env = _env(trees[k], t / f"nocache-{k}")
                    _, c, m, out = run([py, "-m", "apxtui", "index", str(checkout), "--no-cache", "--json", *jobs],
                                       env)
                    cpu[k].setdefault("cold", []).append(c)
                    rss[k].append(m / 1024)
                    digests[k].add(index_digest(out))
                    if not listing.exists():  # the project files and the vendored ones indexed lazily
                        lazy = json.loads(out)["vendored_files"]["indexed_lazily"]
                        listing.write_text("\n".join([f.rel for f in scan(checkout).files if not f.vendored] + lazy))
                _, c, _, _ = run([py, str(ROOT / "benchmarks" / "index_speed.py"), "--floor", str(checkout),
                                  str(listing), str(args.jobs)], _env(trees["B"], t / "floor"))
                floor.append(c)
            if copy is not None and args.edit:
                for k in order:
                    env = _env(trees[k], t / f"cache-{k}")
                    with open(copy / args.edit, "a") as fh:
                        fh.write(f"\n// touched {i} {k}\n")
                    _, c, _, out = run([py, "-m", "apxtui", "index", str(copy), "--json", *jobs], env)
                    got = json.loads(out)
                    mode = "incremental" if "incremental" in got["seconds"] else "full link"
                    cpu[k].setdefault(f"re-index ({mode}, parsed {got['parsed_this_run']})", []).append(c)
                    _, c, _, _ = run([py, "-m", "apxtui", "index", str(copy), "--json", *jobs], env)
                    cpu[k].setdefault("warm", []).append(c)
    print(f"{checkout}: {args.pairs} pairs, jobs {args.jobs}, CPU s (user + sys, whole process tree) min / median")
    if floor:
        print(f"  parse floor          {_fmt(floor)}")
    for k, src in trees.items():
        print(f"  {k} = {src}")
        for what, xs in cpu[k].items():
            extra = f"  = {min(xs) / min(floor):.1f}× the floor" if what == "cold" and floor else ""
            print(f"    {what:<34} {_fmt(xs)}{extra}")
        if rss[k]:
            print(f"    cold peak RSS                      {_fmt(rss[k], 'MB')}")
        if digests[k]:
            print(f"    cold output hash (without seconds) {', '.join(sorted(digests[k]))}")


if __name__ == "__main__":
    main()
