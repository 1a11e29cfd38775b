"""Extraction speed against the tree-sitter parse floor, in one process and as whole processes.

    python benchmarks/extract_speed.py CHECKOUT [--repeat 3] [--workers N] [--no-index]

Project (non-vendored) files only.  Every figure is CPU seconds, min / median over
``--repeat`` runs, all measured in this one run so they share the machine's load:

* per language, in this process: tree-sitter parsing alone (the floor), parse + query
  (one run of the language's query), and ``extract_file`` (parse + query + Python; the
  cyclic GC paused as in the index workers);
* whole processes (interpreter start, imports and exit included): the parse floor (a
  process that reads and parses every project file), ``apxtui index CHECKOUT --no-cache
  --jobs 1`` (the cold index, one worker so its CPU is comparable), and the ratio;
* unless ``--workers 1``: the extraction phase over ``N`` worker processes
  (``apxtui.index.build._parse_all``), wall and CPU.

Not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tree_sitter as ts  # noqa: E402

from apxtui.index.build import _parse_all  # noqa: E402
from apxtui.parse import extract_file, languages, prepare  # noqa: E402
from apxtui.parse.cuda import queries as cuda_queries  # noqa: E402
from apxtui.scan import scan  # noqa: E402

_FLOOR = """
import sys
from pathlib import Path
from apxtui.parse import languages
from apxtui.scan import scan
sr = scan(sys.argv[1])
for f in sr.files:
    if not f.vendored:
        languages.parser(f.lang).parse((sr.root / f.rel).read_bytes())
"""


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _stats(xs: list[float]) -> str:
    return f"{min(xs):6.2f} / {statistics.median(xs):6.2f}"


def _process(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU s, wall s) of one child process."""
    c, w = _children_cpu(), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return _children_cpu() - c, time.perf_counter() - w


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--no-index", action="store_true", help="skip the whole-process cold index")
    args = p.parse_args()
    root = Path(args.checkout).resolve()
    sr = scan(root)
    jobs = [(f.rel, (sr.root / f.rel).read_bytes(), f.lang, f.module) for f in sr.files if not f.vendored]
    print(f"{root}: {len(jobs)} project files, {sum(len(j[1]) for j in jobs) / 1e6:.2f} MB; "
          f"CPU s min / median of {args.repeat}")  # fmt: skip
    prepare()  # compile the queries first: a one-off cost, not per file
    print(f"  {'':6s} {'files':>5s} {'MB':>6s}   {'parse':>15s}   {'parse+query':>15s}   {'extract_file':>15s}  ratio")
    for lang in ("rust", "cuda", "python"):
        mine = [j for j in jobs if j[2] == lang]
        if not mine:
            continue
        parser = languages.parser(lang)
        query = cuda_queries()[0] if lang == "cuda" else languages.query(lang)  # CUDA: callee names apart
        parse_s, query_s, extract_s = [], [], []
        gc.disable()
        for _ in range(args.repeat):
            t = _cpu()
            trees = [parser.parse(d) for _, d, _, _ in mine]
            parse_s.append(_cpu() - t)
            t = _cpu()
            for d in mine:
                ts.QueryCursor(query).matches(parser.parse(d[1]).root_node)
            query_s.append(_cpu() - t)
            del trees
            t = _cpu()
            for rel, data, lg, module in mine:
                extract_file(rel, data, lg, module)
            extract_s.append(_cpu() - t)
        gc.enable()
        mb = sum(len(j[1]) for j in mine) / 1e6
        print(f"  {lang:6s} {len(mine):5d} {mb:6.2f}   {_stats(parse_s)}   {_stats(query_s)}   {_stats(extract_s)}  "
              f"{min(extract_s) / min(parse_s):.1f}×")  # fmt: skip
    repo = str(Path(__file__).resolve().parent.parent)  # this checkout's apxtui, also in the child processes
    env = {**os.environ, "APXTUI_CACHE_DIR": os.environ.get("APXTUI_CACHE_DIR", "/tmp/apxtui-bench-cache"),
           "PYTHONPATH": repo + os.pathsep + os.environ.get("PYTHONPATH", "")}
    floor, index, index_wall = [], [], []
    for _ in range(args.repeat):
        floor.append(_process([sys.executable, "-c", _FLOOR, str(root)], env)[0])
        if not args.no_index:
            c, w = _process([sys.executable, "-m", "apxtui", "index", str(root), "--no-cache", "--jobs", "1"], env)
            index.append(c)
            index_wall.append(w)
    print(f"  whole process: parse floor {_stats(floor)}", end="")
    if index:
        print(f"; cold index --jobs 1 {_stats(index)} CPU ({_stats(index_wall)} wall); "
              f"{min(index) / min(floor):.1f}× the floor")
    else:
        print()
    if args.workers > 1:
        t, cpu, kids = time.perf_counter(), _cpu(), _children_cpu()
        _parse_all(jobs, args.workers, None)
        print(f"  extraction over {args.workers} workers: {time.perf_counter() - t:.2f} s wall, "
              f"main {_cpu() - cpu:.2f} s CPU, workers {_children_cpu() - kids:.2f} s CPU")  # fmt: skip


if __name__ == "__main__":
    main()
