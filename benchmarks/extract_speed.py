"""Extraction speed: per language, tree-sitter parsing alone vs parse + extract, and the pool.

    python benchmarks/extract_speed.py CHECKOUT [--workers N]

Project (non-vendored) files only, read into memory first.  Per language it prints the
CPU seconds of parsing alone and of ``extract_file`` (parse + query + Python, with the
cyclic GC paused as in the index workers), both in this one process; then the wall and
CPU seconds of ``apxtui.index.build._parse_all`` over ``N`` worker processes (the cold
index's extraction phase, without reading, hashing and caching).  CPU seconds are less
disturbed than wall-clock by other load on the machine.  Not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apxtui.index.build import _parse_all  # noqa: E402
from apxtui.parse import extract_file, languages  # noqa: E402
from apxtui.scan import scan  # noqa: E402


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()
    root = Path(args.checkout).resolve()
    sr = scan(root)
    jobs = [(f.rel, (sr.root / f.rel).read_bytes(), f.lang, f.module) for f in sr.files if not f.vendored]
    print(f"{root}: {len(jobs)} project files, {sum(len(j[1]) for j in jobs) / 1e6:.2f} MB")
    try:  # compile the queries first: a one-off cost, not per file
        from apxtui.parse import prepare
    except ImportError:  # an older apxtui
        for lang in ("rust", "cuda", "python"):
            languages.query(lang)
    else:
        prepare()
    for lang in ("rust", "cuda", "python"):
        mine = [j for j in jobs if j[2] == lang]
        if not mine:
            continue
        parser = languages.parser(lang)
        t = _cpu()
        for _, data, _, _ in mine:
            parser.parse(data)
        parse_s = _cpu() - t
        gc.disable()
        t = _cpu()
        for rel, data, lg, module in mine:
            extract_file(rel, data, lg, module)
        extract_s = _cpu() - t
        gc.enable()
        mb = sum(len(j[1]) for j in mine) / 1e6
        print(f"  {lang:6s} {len(mine):5d} files {mb:6.2f} MB  parse {parse_s:5.2f} s CPU  "
              f"parse+extract {extract_s:5.2f} s CPU  ({extract_s / parse_s:.1f}× parsing)")  # fmt: skip
    t, cpu, kids = time.perf_counter(), _cpu(), _children_cpu()
    _parse_all(jobs, args.workers, None)
    print(f"  pool of {args.workers}: {time.perf_counter() - t:.2f} s wall, main {_cpu() - cpu:.2f} s CPU, "
          f"workers {_children_cpu() - kids:.2f} s CPU")  # fmt: skip


if __name__ == "__main__":
    main()
