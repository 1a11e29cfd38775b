"""One-file re-index, whole processes, alternating with a warm run and the start-up floors.

    python benchmarks/reindex_speed.py CHECKOUT --edit REL [--edit REL ...] [--repeat N] [--src DIR] [--check]

The checkout's indexable files are copied to a temporary directory (``index_speed.py``'s
copy: nothing is written inside the checkout) and indexed once to fill a cache there.  Then,
``--repeat`` times, in this order (so drift in the machine's load falls on all of them):

* ``python -c pass`` (the interpreter's start-up floor) and ``python -m apxtui --version``
  (the CLI's start-up: its imports);
* a warm ``index --json`` (nothing changed);
* for each ``--edit REL`` and each edit kind, a changed REL then ``index --json`` (whole process:
  imports, scan, re-extraction of REL, re-link, store, output, exit).  Kinds: ``tail``, a comment
  appended (the facts stay as stored: nothing is re-linked); ``shift``, a comment line inserted
  after the first line past the middle ending in ``{`` or ``;`` (every definition and call below
  it moves: the file is re-linked and its definitions' ids are carried over).  ``--kind`` picks one.

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
KINDS = ("tail", "shift")


def edit(path: Path, kind: str, i: int) -> None:
    """Change ``path`` in place: a ``kind`` edit (see the module docstring), numbered ``i``."""
    text = path.read_text("utf-8")
    note = f"{'#' if path.suffix in ('.py', '.pyi') else '//'} touched {kind} {i}"
    if kind == "tail":
        path.write_text(f"{text}\n{note}\n", "utf-8")
        return
    lines = text.split("\n")
    at = next((j + 1 for j in range(len(lines) // 2, len(lines)) if lines[j].rstrip().endswith(("{", ";"))),
              len(lines))
    path.write_text("\n".join([*lines[:at], note, *lines[at:]]), "utf-8")


def _fmt(rows: list[Run]) -> str:
    w, c = [r[0] for r in rows], [r[1] for r in rows]
    return (f"wall {min(w):.3f} / {statistics.median(w):.3f} s   cpu {min(c):.3f} / {statistics.median(c):.3f} s   "
            f"peak {max(r[2] for r in rows) / 1024:.0f} MB")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout")
    p.add_argument("--edit", action="append", required=True, metavar="REL", help="file to edit (relative)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--kind", choices=KINDS, action="append", help="edit kind (default: both)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--src", default=str(ROOT), help="apxtui source tree to run (holds apxtui/)")
    p.add_argument("--check", action="store_true", help="compare the re-indexed output with a cold index")
    args = p.parse_args()
    checkout = Path(args.checkout).resolve()
    py = sys.executable
    kinds = args.kind or list(KINDS)
    jobs = ["--jobs", str(args.jobs)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / checkout.name
        copy_checkout(checkout, root)
        env = {**os.environ, "PYTHONPATH": str(Path(args.src).resolve()), "APXTUI_CACHE_DIR": str(Path(tmp) / "c"),
               "PYTHONSAFEPATH": "1"}  # `-m apxtui` imports --src's apxtui, not the current directory's
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
                for kind in kinds:
                    edit(root / rel, kind, i)
                    r = run([*apx, "index", str(root), "--json", *jobs], env)
                    got = json.loads(r[3])
                    what = f"re-index {rel} ({kind})"
                    rows.setdefault(what, []).append(r)
                    phases.setdefault(what, []).append(got["seconds"])
                    modes.setdefault(what, set()).add("incremental" if "incremental" in got["seconds"] else "full link")
        print(f"{checkout}: min / median of {args.repeat}, runs alternating, jobs {args.jobs}, src {args.src}")
        for what, rs in rows.items():
            print(f"  {what:<64} {_fmt(rs)}")
        for what, ph in phases.items():
            fastest = min(range(args.repeat), key=lambda j: rows[what][j][1])
            print(f"  {what}: {'/'.join(sorted(modes[what]))}; in-process seconds of the fastest: {ph[fastest]}")
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
