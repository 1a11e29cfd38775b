"""How far the index reaches kernels launched indirectly (issue 13): linked shares, `kernels` counts, times.

    python benchmarks/indirect_launches.py CHECKOUT [CHECKOUT ...] [--code DIR] [--repeat N]

For each checkout, in a fresh process importing apxtui from ``--code`` (default: this
repository; point it at an unpacked copy of another revision, e.g. ``git archive main | tar -x
-C /tmp/main``, for a before/after comparison), with an empty cache:

* **FFI chains** — every project ``extern "C"`` declaration in Rust (``ffi_decl``): called from
  Rust (an incoming call edge), linked to its C definition (``ffi`` edge, not unresolved), and
  the definition reaching device work (a kernel or a library call) within 8 steps of call /
  launch / vendor edges.  "linked" = all three; also how many of its edges are ``exact``.
* **launches by name** — every call site of a name-loading method (``get_or_load_func``,
  ``load_function``, ``get_func``, ``cuModuleGetFunction``) whose name is not a parameter of the
  enclosing function: linked to at least one kernel of the checkout; exact / heuristic (a name
  no kernel has is an unresolved launch and counts as not linked).
* **kernels** — from ``apxtui kernels``: total, not reached (by this revision's definition:
  after issue 13 no edge of any kind; before it, no entry reaches), reached only by name
  patterns, launched but no entry reaches.
* **times** — whole-process cold ``apxtui index`` (imports and exit included), min / median of
  ``--repeat`` runs, beside the process floor (``python -c 'import apxtui.index.build'``) measured
  in the same run; and the in-process phases of the fastest run.

Not a test: nothing asserts.  The checkout is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_CHILD = r'''
import json, re, sys, time
from collections import deque
root, out = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
from apxtui.index.build import build_index
from apxtui.analysis.checkout import kernels_report
idx = build_index(root)
g = idx.graph
CALLS = ("call", "launch", "vendor", "ffi")
def reaches_device(n, depth=8):
    seen, q = {n}, deque([(n, 0)])
    while q:
        u, d = q.popleft()
        for _, v, e in g.out_edges(u, data=True):
            if e.get("kind") not in CALLS or v in seen:
                continue
            k = g.nodes[v].get("kind")
            if k in ("kernel", "vendor_api"):
                return True
            if d < depth and k in ("abi_fn", "host_fn", "device_fn", "rust_fn"):
                seen.add(v); q.append((v, d + 1))
    return False
ffi = {"total": 0, "called": 0, "defined": 0, "device": 0, "linked": 0, "exact_chain": 0, "unlinked": []}
for n, d in g.nodes(data=True):
    if d.get("kind") != "ffi_decl" or d.get("vendored"):
        continue
    ffi["total"] += 1
    ins = [e for _, _, e in g.in_edges(n, data=True) if e.get("kind") == "call"]
    outs = [(v, e) for _, v, e in g.out_edges(n, data=True) if e.get("kind") == "ffi"
            and e.get("resolution") != "unresolved"]
    dev = any(reaches_device(v) for v, _ in outs)
    ffi["called"] += bool(ins); ffi["defined"] += bool(outs); ffi["device"] += dev
    ok = bool(ins) and bool(outs) and dev
    ffi["linked"] += ok
    ffi["exact_chain"] += ok and all(e.get("resolution") == "exact" for _, e in outs) \
        and any(e.get("resolution") == "exact" for e in ins)
    if not ok:
        ffi["unlinked"].append(f"{d.get('qualname')} ({d.get('file')}:{d.get('line')}): "
                               + ", ".join(x for x, y in (("no caller", ins), ("no definition", outs)) if not y)
                               + ("" if dev else ", no device work reached"))
NAME_METHODS = ("get_or_load_func", "get_or_load_custom_func", "load_function", "get_func", "cuModuleGetFunction")
site_launches = {}
for u, v, e in g.edges(data=True):
    if e.get("kind") == "launch" and "loaded by name" in e.get("how", "") and e.get("resolution") != "unresolved":
        site_launches.setdefault((e.get("file"), e.get("line")), []).append(e)
byname = {"sites": 0, "linked": 0, "exact": 0, "heuristic": 0, "parameter_named": 0, "unlinked": []}
defs = {}
for rel, f in idx.facts.items():
    if f.lang != "rust" or "/vendor/" in rel:
        continue
    for d in f.defs:
        defs[(rel, d.qualname)] = d
    for c in f.calls:
        if c.callee.split("::")[-1] not in NAME_METHODS or not c.args:
            continue
        i = 1 if c.callee == "get_func" else (2 if c.callee.endswith("cuModuleGetFunction") else 0)
        arg = c.args[i] if i < len(c.args) else ""
        d = defs.get((rel, c.caller))
        if d is not None and arg.strip().lstrip("&") in {p.name for p in d.params}:
            byname["parameter_named"] += 1
            continue
        byname["sites"] += 1
        edges = site_launches.get((rel, c.line))
        if edges:
            byname["linked"] += 1
            byname["exact" if all(e.get("resolution") == "exact" for e in edges) else "heuristic"] += 1
        else:
            byname["unlinked"].append(f"{rel}:{c.line} {c.callee}({arg})")
rep = kernels_report(idx)
kern = {"total": sum(1 for k in rep["kernels"] if not k["vendored"]), "not_reached": len(
    [u for u in rep["unreached"] if u["kind"] == "kernel"]),
    "pattern_only": len(rep.get("reached_by_name_pattern_only", [])), "no_entry": len(rep.get("no_entry", []))}
json.dump({"ffi": ffi, "by_name": byname, "kernels": kern, "phases": idx.timings,
           "seconds_in_child": time.perf_counter() - t0}, open(out, "w"))
'''


def _run(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, cwd=cwd)
    return time.perf_counter() - t


def measure(checkout: Path, code: Path, repeat: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        env["APXTUI_CACHE_DIR"] = str(cache)
        floor, colds = [], []
        for _ in range(repeat):
            floor.append(_run([sys.executable, "-c", "import apxtui.index.build"], env, tmp))
            shutil.rmtree(cache, ignore_errors=True)
            colds.append(_run([sys.executable, "-m", "apxtui", "index", str(checkout), "--json"], env, tmp))
        shutil.rmtree(cache, ignore_errors=True)
        out = Path(tmp) / "stats.json"
        # run from the temporary directory: the current directory comes first on sys.path
        subprocess.run([sys.executable, "-c", _CHILD, str(checkout), str(out)], env=env, check=True, cwd=tmp)
        stats = json.loads(out.read_text())
    stats["cold_index_s"] = {"min": round(min(colds), 2), "median": round(statistics.median(colds), 2)}
    stats["process_floor_s"] = {"min": round(min(floor), 2), "median": round(statistics.median(floor), 2)}
    return stats


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.1f}%)" if b else f"{a}/0"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkouts", nargs="+")
    p.add_argument("--code", default=str(REPO), help="the apxtui source tree to measure (default: this one)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", action="store_true")
    p.add_argument("--list", action="store_true", help="list what is not linked")
    args = p.parse_args()
    for c in args.checkouts:
        s = measure(Path(c).resolve(), Path(args.code).resolve(), args.repeat)
        if args.json:
            print(json.dumps({"checkout": c, "code": args.code, **s}, indent=2))
            continue
        f, b, k = s["ffi"], s["by_name"], s["kernels"]
        print(f"\n{c}  (code: {args.code})")
        print(f"  FFI chains linked     {_pct(f['linked'], f['total'])} (of those with a C definition in the "
              f"checkout: {_pct(f['linked'], f['defined'])}); exact all the way {f['exact_chain']}; "
              f"called {f['called']}, defined {f['defined']}, reach device work {f['device']}")
        print(f"  launches by name      {_pct(b['linked'], b['sites'])} (exact {b['exact']}, "
              f"heuristic {b['heuristic']}); "
              f"{b['parameter_named']} sites pass a parameter (linked at their callers)")
        print(f"  kernels               {k['total']}: not reached {k['not_reached']}, only by name patterns "
              f"{k['pattern_only']}, launched but no entry {k['no_entry']}")
        print(f"  cold index (process)  min {s['cold_index_s']['min']} s, median {s['cold_index_s']['median']} s; "
              f"process floor min {s['process_floor_s']['min']} s")
        print("  phases                " + ", ".join(f"{k2} {v:.2f}" for k2, v in s["phases"].items()))
        if args.list:
            for x in f["unlinked"]:
                print("    ffi:", x)
            for x in b["unlinked"]:
                print("    by name:", x)


if __name__ == "__main__":
    main()
