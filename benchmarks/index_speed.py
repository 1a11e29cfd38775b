"""Index speed, whole processes: cold, warm, one-file re-index and a warm trace, against the parse floor.

    python benchmarks/index_speed.py [CHECKOUT ...] [--repeat N] [--from SYMBOL] [--edit REL ...]

Each checkout's indexable files (and the manifests and __init__.py files that shape module
paths and package boundaries) are copied to a temporary directory first, so nothing is written inside the
checkout measured (the copy is a plain walk, no git).  Every figure is a fresh
``python -m apxtui`` process (imports, cache, exit included), measured by ``wait4``:
wall seconds, CPU seconds (user + system, worker processes included) and peak RSS (the
largest process of the tree).  Repeated ``--repeat`` times: min and median.

* parse floor: a process that only parses (tree-sitter, no extraction) the files the
  cold index parses, over the same number of worker processes — measured in the same run;
* cold: ``index --no-cache``; the in-process phases of its fastest run are shown beside;
* warm: ``index`` with the cache valid;
* re-index: after a body edit (a comment appended) to a leaf file, to the project file
  with the most imports and to each ``--edit REL``, then ``index``;
* trace: ``trace --from SYMBOL --format md`` with the cache valid (``--from``, else the
  entry the explorer opens first).

Not a test: nothing is asserted.  The machine's load moves wall times; CPU seconds and
the ratio to the floor of the same run move less.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from apxtui.packages import is_manifest  # noqa: E402
from apxtui.scan import EXTENSIONS, scan  # noqa: E402

SHAPE_FILES = {"Cargo.toml", "__init__.py"}
_USE = re.compile(rb"^\s*(?:pub\s+)?use\s|^\s*(?:from\s+\S+\s+)?import\s|^\s*#\s*include\s", re.M)


def copy_checkout(src: Path, dst: Path) -> int:
    sr = scan(src)
    rels = [f.rel for f in sr.files]
    for dirpath, _, files in os.walk(src):
        if "/.git" in dirpath:
            continue
        for fn in files:
            if fn in SHAPE_FILES or is_manifest(fn):
                rels.append(os.path.relpath(os.path.join(dirpath, fn), src))
    for rel in set(rels):
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)
    return len(set(rels))


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, bytes]:
    """(wall s, CPU s incl. children, peak RSS KB, stdout) of one whole process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = p.stdout.read() if p.stdout else b""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, out


def index_digest(out: bytes) -> str:
    """A short hash of ``apxtui index --json`` output without what differs between equal runs (times, files
    parsed by this run)."""
    d = json.loads(out)
    for k in ("seconds", "parsed_this_run"):
        d.pop(k, None)
    return hashlib.sha1(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


def stats(runs: list[tuple[float, float, int, bytes]]) -> dict[str, float]:
    walls, cpus, rss = [r[0] for r in runs], [r[1] for r in runs], [r[2] for r in runs]
    return {"wall_min": min(walls), "wall_med": statistics.median(walls), "cpu_min": min(cpus),
            "cpu_med": statistics.median(cpus), "rss_mb": max(rss) / 1024}


# -- the parse floor, as its own process -------------------------------------------------------

def _parse_chunk(jobs: list[tuple[str, bytes]]) -> int:
    from apxtui.parse import languages

    for lang, data in jobs:
        languages.parser(lang).parse(data)
    return len(jobs)


def floor_main(root: Path, listing: Path, workers: int) -> None:
    rels = [r for r in listing.read_text().split("\n") if r]
    jobs = [(EXTENSIONS[Path(r).suffix.lower()], (root / r).read_bytes()) for r in rels]
    jobs.sort(key=lambda j: -len(j[1]))
    chunks = [jobs[i::workers * 8] for i in range(workers * 8)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as ex:
            list(ex.map(_parse_chunk, [c for c in chunks if c]))
    else:
        _parse_chunk(jobs)


# -- one checkout ---------------------------------------------------------------------------------

def edit_targets(root: Path, given: list[str]) -> list[str]:
    """A leaf file (fewest imports), the file with the most imports, and the ``given`` ones this checkout has."""
    files = [f for f in scan(root).files if not f.vendored and f.lang in ("rust", "cuda", "python")]
    leaf = min(files, key=lambda f: (len(_USE.findall((root / f.rel).read_bytes())), f.size, f.rel))
    most = max(files, key=lambda f: (len(_USE.findall((root / f.rel).read_bytes())), f.rel))
    return list(dict.fromkeys([leaf.rel, most.rel, *(g for g in given if (root / g).is_file())]))  # (another
    # checkout's --edit files are not made here)


def bench(checkout: Path, repeat: int, workers: int, entry: str | None, edits: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / checkout.name
        copied = copy_checkout(checkout, root)
        env = {**os.environ, "APXTUI_CACHE_DIR": str(Path(tmp) / "cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: imports read compiled bytecode
        apx = [sys.executable, "-m", "apxtui"]
        jobs = ["--jobs", str(workers)]
        run([*apx, "--version"], env)  # byte-compile once, outside the measurements
        cold = [run([*apx, "index", str(root), "--no-cache", "--json", *jobs], env) for _ in range(repeat)]
        fastest = json.loads(min(cold, key=lambda r: r[0])[3])
        listing = Path(tmp) / "parsed.txt"
        sr = scan(root)
        parsed = [f.rel for f in sr.files if not f.vendored] + fastest["vendored_files"]["indexed_lazily"]
        listing.write_text("\n".join(parsed))
        floor = [run([sys.executable, __file__, "--floor", str(root), str(listing), str(workers)], env)
                 for _ in range(repeat)]
        run([*apx, "index", str(root), *jobs], env)  # fill the cache
        warm = [run([*apx, "index", str(root), *jobs], env) for _ in range(repeat)]
        reindex = {}
        modes: dict[str, set[str]] = {}
        for rel in edit_targets(root, edits):
            rows = []
            for i in range(repeat):
                with open(root / rel, "a") as fh:
                    fh.write(f"\n{'#' if rel.endswith(('.py', '.pyi')) else '//'} touched {i}\n")
                rows.append(run([*apx, "index", str(root), "--json", *jobs], env))
                got = json.loads(rows[-1][3])
                assert got["parsed_this_run"] == 1
                modes.setdefault(rel, set()).add("incremental" if "incremental" in got["seconds"] else "full link")
            reindex[rel] = rows
        trace = None
        if entry is None:
            entry = _default_entry(root, env)
        if entry:
            cmd = [*apx, "trace", str(root), "--from", entry, "--format", "md", *jobs]
            run(cmd, env)
            trace = [run(cmd, env) for _ in range(repeat)]
        fl = stats(floor)
        return {
            "checkout": str(checkout), "files": copied, "parsed_cold": len(parsed), "workers": workers,
            "floor": fl, "cold": stats(cold), "cold_phases": fastest["seconds"], "warm": stats(warm),
            "reindex": {rel: {**stats(rows), "mode": "/".join(sorted(modes[rel]))} for rel, rows in reindex.items()},
            "trace": (entry, stats(trace)) if trace else None,
            "cold_over_floor": {"wall": min(r[0] for r in cold) / fl["wall_min"],
                                "cpu": min(r[1] for r in cold) / fl["cpu_min"]},
        }


def _default_entry(root: Path, env: dict[str, str]) -> str | None:
    code = ("import sys; from apxtui.index.build import build_index; from apxtui.tui.entries import "
            "entry_points, default_entry; idx = build_index(sys.argv[1]); g = idx.graph; "
            "e = default_entry(entry_points(g), g); print(g.nodes[e.node]['qualname'] if e else '')")
    out = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, env=env, text=True)
    return out.stdout.strip() or None


def _fmt(s: dict[str, float]) -> str:
    return (f"wall {s['wall_min']:.3f} / {s['wall_med']:.3f} s   cpu {s['cpu_min']:.3f} / {s['cpu_med']:.3f} s   "
            f"peak {s['rss_mb']:.0f} MB")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--floor":
        floor_main(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkouts", nargs="*")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--from", dest="entry", help="trace entry (default: the explorer's first entry)")
    p.add_argument("--edit", action="append", default=[], metavar="REL", help="file to re-index after an edit")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args()
    if not args.checkouts:
        from apxtui.demo import DEMO_CHECKOUT

        args.checkouts = [str(DEMO_CHECKOUT)]
    for c in args.checkouts:
        r = bench(Path(c).resolve(), args.repeat, args.workers, args.entry, args.edit)
        if args.json:
            print(json.dumps(r, indent=2))
            continue
        print(f"\n{r['checkout']}: {r['files']} files copied, {r['parsed_cold']} parsed cold, {r['workers']} workers, "
              f"min / median of {args.repeat}")
        print(f"  parse floor     {_fmt(r['floor'])}")
        print(f"  cold --no-cache {_fmt(r['cold'])}  = {r['cold_over_floor']['wall']:.1f}× the floor (wall), "
              f"{r['cold_over_floor']['cpu']:.1f}× (cpu)")
        print(f"                  phases of the fastest: {r['cold_phases']}")
        print(f"  warm index      {_fmt(r['warm'])}")
        for rel, s in r["reindex"].items():
            print(f"  re-index        {_fmt(s)}  after editing {rel} ({s['mode']})")
        if r["trace"]:
            print(f"  warm trace md   {_fmt(r['trace'][1])}  --from {r['trace'][0]}")


if __name__ == "__main__":
    main()
