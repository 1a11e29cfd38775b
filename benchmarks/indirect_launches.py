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
  no kernel has is an unresolved launch and counts as not linked).  Sites loading a parameter
  are counted apart, with how many are linked through their callers' arguments.
* **kernels** — from ``apxtui kernels``: total, not reached (by this revision's definition:
  after issue 13 no edge of any kind; before it, no entry reaches), reached only by name
  patterns, launched but no entry reaches.
* **per idiom** — kernels with an incoming call/launch edge (not unresolved), split by the idiom
  that made the edge (direct, macro expansion, function pointer, by name, framework model):
  kernels reached through it, reached only through it, and its edge count; ``--samples N``
  prints N random kernel edges per idiom to check by hand against the source.
* **times** — whole-process cold ``apxtui index`` (imports and exit included), min / median of
  ``--repeat`` runs, beside the process floor (``python -c 'import apxtui.index.build'``) measured
  in the same run; and the in-process phases of the fastest run.

Not a test: nothing asserts.  The checkout is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
g = idx.full_graph() if hasattr(idx, "full_graph") else idx.graph  # a networkx graph
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
byname = {"sites": 0, "linked": 0, "exact": 0, "heuristic": 0, "parameter_named": 0, "parameter_linked": 0,
          "unlinked": [], "parameter_unlinked": []}
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
            if site_launches.get((rel, c.line)):
                byname["parameter_linked"] += 1
            else:
                byname["parameter_unlinked"].append(f"{rel}:{c.line} {c.callee}({arg}) in {d.name}")
            continue
        byname["sites"] += 1
        edges = site_launches.get((rel, c.line))
        if edges:
            byname["linked"] += 1
            byname["exact" if all(e.get("resolution") == "exact" for e in edges) else "heuristic"] += 1
        else:
            byname["unlinked"].append(f"{rel}:{c.line} {c.callee}({arg})")
def idiom(e):
    """Which issue-13 idiom made an edge (``direct`` for the rest)."""
    a, how = e.get("attrs") or {}, e.get("how", "")
    if "loaded by name" in how:
        return "by_name"
    if "fn_pointer" in a or str(a.get("site_tag", "")).startswith("arg") or how.startswith("returned by"):
        return "fn_pointer"
    if "macro_at" in a:
        return "macro"
    if " runs " in how or how.startswith(("m.impl", "m.def")) or "pybind11" in how or "torch.ops" in how:
        return "framework"
    return "direct"
kernel_in = {}
for n, d in g.nodes(data=True):
    if d.get("kind") == "kernel" and not d.get("vendored"):
        kernel_in[n] = {idiom(e) for _, _, e in g.in_edges(n, data=True)
                        if e.get("kind") in CALLS and e.get("resolution") != "unresolved"}
IDIOMS = ("direct", "macro", "fn_pointer", "by_name", "framework")
per_idiom = {i: {"kernels": sum(i in s for s in kernel_in.values()),
                 "only_this": sum(s == {i} for s in kernel_in.values()),
                 "edges": sum(1 for _, _, e in g.edges(data=True) if e.get("kind") in CALLS and idiom(e) == i)}
             for i in IDIOMS}
samples = {i: [] for i in IDIOMS if i != "direct"}
for u, v, e in g.edges(data=True):
    i = idiom(e)
    if i in samples and g.nodes[v].get("kind") == "kernel" and len(samples[i]) < 400:
        samples[i].append(f"{e.get('file')}:{e.get('line')} {g.nodes[u].get('qualname')} -> "
                          f"{g.nodes[v].get('qualname')} [{e.get('resolution')}] {e.get('how', '')[:160]}")
rep = kernels_report(idx)
kern = {"with_incoming_edge": sum(bool(s) for s in kernel_in.values()),
    "total": sum(1 for k in rep["kernels"] if not k["vendored"]), "not_reached": len(
    [u for u in rep["unreached"] if u["kind"] == "kernel"]),
    "pattern_only": len(rep.get("reached_by_name_pattern_only", [])), "no_entry": len(rep.get("no_entry", []))}
json.dump({"ffi": ffi, "by_name": byname, "kernels": kern, "per_idiom": per_idiom, "samples": samples,
           "phases": idx.timings,
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
    p.add_argument("--samples", type=int, default=0, help="print N random kernel edges per idiom to check by hand")
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
              f"{b['parameter_named']} sites load a name that is a parameter "
              f"({b.get('parameter_linked', 0)} linked through their callers)")
        print(f"  kernels               {k['total']}: not reached {k['not_reached']}, only by name patterns "
              f"{k['pattern_only']}, launched but no entry {k['no_entry']}")
        print(f"  kernels with an edge  {k['with_incoming_edge']} of {k['total']}; per idiom (kernels reached / "
              "only through it / edges): " + ", ".join(f"{i} {v['kernels']}/{v['only_this']}/{v['edges']}"
                                                        for i, v in s["per_idiom"].items()))
        print(f"  cold index (process)  min {s['cold_index_s']['min']} s, median {s['cold_index_s']['median']} s; "
              f"process floor min {s['process_floor_s']['min']} s")
        print("  phases                " + ", ".join(f"{k2} {v:.2f}" for k2, v in s["phases"].items()))
        if args.list:
            for x in f["unlinked"]:
                print("    ffi:", x)
            for x in b["unlinked"]:
                print("    by name:", x)
            for x in b.get("parameter_unlinked", []):
                print("    by name, parameter:", x)
        if args.samples:
            rng = random.Random(13)
            for i, xs in s["samples"].items():
                for x in rng.sample(xs, min(args.samples, len(xs))):
                    print(f"    sample {i}: {x}")


if __name__ == "__main__":
    main()
