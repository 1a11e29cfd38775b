"""Index speed: cold index, warm start, one-file re-index, against the tree-sitter parse floor.

    python benchmarks/index_speed.py [CHECKOUT ...]      (default: the embedded demo)

Each checkout's indexable files (and Cargo.toml / __init__.py files that shape module
paths) are copied to a temporary directory first, so the benchmark never writes
inside the checkout it measures; the copy is a plain walk (no git).  Figures:

* parse floor: tree-sitter parsing alone of the same files that the cold index parses
  (project files plus the vendored files it reaches lazily), over the same number of
  worker processes;
* cold: ``build_index`` with an empty cache;
* warm: ``build_index`` again with the cache valid;
* re-index: after appending a comment to one project file.

Timings are wall-clock seconds, best of ``--repeat`` runs.  Not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apxtui.index.build import build_index  # noqa: E402
from apxtui.parse import languages  # noqa: E402
from apxtui.scan import EXTENSIONS, scan  # noqa: E402

SHAPE_FILES = {"Cargo.toml", "__init__.py"}


def copy_checkout(src: Path, dst: Path) -> int:
    sr = scan(src)
    n = 0
    rels = [f.rel for f in sr.files]
    for dirpath, _, files in os.walk(src):
        if "/.git" in dirpath:
            continue
        for fn in files:
            if fn in SHAPE_FILES:
                rels.append(os.path.relpath(os.path.join(dirpath, fn), src))
    for rel in set(rels):
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)
        n += 1
    return n


def _parse_chunk(jobs: list[tuple[str, bytes]]) -> int:
    count = 0
    for lang, data in jobs:
        languages.parser(lang).parse(data)
        count += 1
    return count


def parse_floor(root: Path, rels: list[str], workers: int) -> float:
    jobs = [(EXTENSIONS[Path(r).suffix.lower()], (root / r).read_bytes()) for r in rels]
    jobs.sort(key=lambda j: -len(j[1]))
    chunks = [jobs[i::workers * 8] for i in range(workers * 8)]
    t = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as ex:
            list(ex.map(_parse_chunk, [c for c in chunks if c]))
    else:
        _parse_chunk(jobs)
    return time.perf_counter() - t


def bench(checkout: Path, repeat: int, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / checkout.name
        copied = copy_checkout(checkout, root)
        size = sum((root / f.rel).stat().st_size for f in scan(root).files)
        os.environ["APXTUI_CACHE_DIR"] = str(Path(tmp) / "cache")
        colds = []
        phases: dict[str, float] = {}
        for _ in range(repeat):
            shutil.rmtree(Path(tmp) / "cache", ignore_errors=True)
            t = time.perf_counter()
            idx = build_index(root, workers=workers)
            colds.append(time.perf_counter() - t)
            if colds[-1] == min(colds):  # phases of the fastest cold run
                phases = dict(idx.timings)
        parsed_rels = sorted(idx.parsed)
        floor = min(parse_floor(root, parsed_rels, workers) for _ in range(repeat))
        warms = []
        for _ in range(repeat):
            t = time.perf_counter()
            build_index(root, workers=workers)
            warms.append(time.perf_counter() - t)
        target = next(f.rel for f in scan(root).files if not f.vendored and f.lang in ("rust", "cuda"))
        reidx = []
        for i in range(repeat):
            with open(root / target, "a") as fh:
                fh.write(f"\n// touched {i}\n")
            t = time.perf_counter()
            r = build_index(root, workers=workers)
            reidx.append(time.perf_counter() - t)
            assert r.parsed == [target], r.parsed
        return {
            "checkout": str(checkout), "files": copied, "source_mb": round(size / 1e6, 2),
            "parsed_cold": len(parsed_rels), "workers": workers,
            "parse_floor_s": round(floor, 3), "cold_s": round(min(colds), 3),
            "cold_over_floor": round(min(colds) / floor, 2) if floor else None,
            "warm_s": round(min(warms), 3), "reindex_one_file_s": round(min(reidx), 3),
            "cold_phases": {k: round(v, 3) for k, v in phases.items()},
        }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkouts", nargs="*")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()
    if not args.checkouts:
        from apxtui.demo import DEMO_CHECKOUT

        args.checkouts = [str(DEMO_CHECKOUT)]
    for c in args.checkouts:
        r = bench(Path(c).resolve(), args.repeat, args.workers)
        print(f"\n{r['checkout']}: {r['files']} files, {r['source_mb']} MB indexable, {r['parsed_cold']} parsed cold, "
              f"{r['workers']} workers")
        print(f"  parse floor   {r['parse_floor_s']:.3f} s")
        print(f"  cold index    {r['cold_s']:.3f} s  ({r['cold_over_floor']}× the floor)  phases {r['cold_phases']}")
        print(f"  warm start    {r['warm_s']:.3f} s")
        print(f"  re-index 1    {r['reindex_one_file_s']:.3f} s")


if __name__ == "__main__":
    main()
