"""One-file re-index, whole processes, alternating with a warm run and the start-up floors.

    python benchmarks/reindex_speed.py CHECKOUT --edit REL [--edit REL ...] [--repeat N] [--src DIR] [--check]

The checkout's indexable files are copied to a temporary directory (``index_speed.py``'s
copy: nothing is written inside the checkout) and indexed once to fill a cache there.  Then,
``--repeat`` times, in this order (so drift in the machine's load falls on all of them):

* ``python -c pass`` (the interpreter's start-up floor) and ``python -m apxtui --version``
  (the CLI's start-up: its imports);
* a warm ``index --json`` (nothing changed);
* for each ``--edit REL``: a comment appended to REL, then ``index --json`` (whole process:
  imports, scan, re-extraction of REL, re-link, store, output, exit).

Per figure: wall and CPU seconds (user + system) min / median, and for the re-index its
in-process phases (the ``seconds`` of the fastest run) and whether it was incremental.

``--check``: after the runs, the copy is indexed cold (``--no-cache``) and its ``index --json``
(without ``seconds`` and ``parsed_this_run``) and ``graph --format json`` are hashed beside the
re-indexed cache's: equal hashes, the same index.  ``--src DIR``: the apxtui source tree to
run (``PYTHONPATH``; default this one).  Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from index_speed import copy_checkout, index_digest, run  # noqa: E402

Run = tuple[float, float, int, bytes]


def _fmt(rows: list[Run]) -> str:
    w, c = [r[0] for r in rows], [r[1] for r in rows]
    return (f"wall {min(w):.3f} / {statistics.median(w):.3f} s   cpu {min(c):.3f} / {statistics.median(c):.3f} s   "
            f"peak {max(r[2] for r in rows) / 1024:.0f} MB")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout")
    p.add_argument("--edit", action="append", required=True, metavar="REL", help="file to edit (relative)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--src", default=str(ROOT), help="apxtui source tree to run (holds apxtui/)")
    p.add_argument("--check", action="store_true", help="compare the re-indexed output with a cold index")
    args = p.parse_args()
    checkout = Path(args.checkout).resolve()
    py = sys.executable
    jobs = ["--jobs", str(args.jobs)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / checkout.name
        copy_checkout(checkout, root)
        env = {**os.environ, "PYTHONPATH": str(Path(args.src).resolve()), "APXTUI_CACHE_DIR": str(Path(tmp) / "c")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: imports read compiled bytecode
        apx = [py, "-m", "apxtui"]
        run([*apx, "--version"], env)  # byte-compile once, outside the measurements
        run([*apx, "index", str(root), *jobs], env)  # fill the cache
        rows: dict[str, list[Run]] = {"python -c pass": [], "apxtui --version": [], "warm index": []}
        phases: dict[str, list[dict[str, float]]] = {}
        modes: dict[str, set[str]] = {}
        for i in range(args.repeat):
            rows["python -c pass"].append(run([py, "-c", "pass"], env))
            rows["apxtui --version"].append(run([*apx, "--version"], env))
            rows["warm index"].append(run([*apx, "index", str(root), "--json", *jobs], env))
            for rel in args.edit:
                with open(root / rel, "a") as fh:
                    fh.write(f"\n{'#' if rel.endswith(('.py', '.pyi')) else '//'} touched {i}\n")
                r = run([*apx, "index", str(root), "--json", *jobs], env)
                got = json.loads(r[3])
                rows.setdefault(f"re-index {rel}", []).append(r)
                phases.setdefault(rel, []).append(got["seconds"])
                modes.setdefault(rel, set()).add("incremental" if "incremental" in got["seconds"] else "full link")
        print(f"{checkout}: min / median of {args.repeat}, runs alternating, jobs {args.jobs}, src {args.src}")
        for what, rs in rows.items():
            print(f"  {what:<58} {_fmt(rs)}")
        for rel in args.edit:
            fastest = min(range(args.repeat), key=lambda j: rows[f"re-index {rel}"][j][1])
            print(f"  {rel}: {'/'.join(sorted(modes[rel]))}; in-process seconds of the fastest: {phases[rel][fastest]}")
        if args.check:
            graph = [*apx, "graph", str(root), "--format", "json", *jobs]
            warm = (index_digest(run([*apx, "index", str(root), "--json", *jobs], env)[3]),
                    hashlib.sha1(run(graph, env)[3]).hexdigest()[:12])
            cold_env = {**env, "APXTUI_CACHE_DIR": str(Path(tmp) / "cold")}
            cold = (index_digest(run([*apx, "index", str(root), "--json", *jobs], cold_env)[3]),
                    hashlib.sha1(run(graph, cold_env)[3]).hexdigest()[:12])
            print(f"  after the edits: index --json {warm[0]} (re-indexed) vs {cold[0]} (cold); "
                  f"graph json {warm[1]} vs {cold[1]}: {'identical' if warm == cold else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
