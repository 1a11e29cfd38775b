"""Resolution precision of an index: boundary crossings, ambiguity, vendor names defined locally.

    python benchmarks/resolution_stats.py CHECKOUT [--graph GRAPH.json] [--sample N] [--seed S] [--json]

Builds the index of CHECKOUT (or reads a node-link graph written by
``apxtui graph CHECKOUT --format json``, e.g. by another apxtui version, to compare)
and prints:

* **crossing**: linked Rust call edges whose target lies in a crate the caller's crate
  cannot depend on by its Cargo.toml (``apxtui.packages``; candidates listed on an
  ``ambiguous:`` node count one each) — the goal is 0;
* **ambiguous share**: call sites with an ambiguous link among all linked call sites
  (exact, heuristic or ambiguous), overall and per language;
* **vendor defined locally**: names labelled as a vendor library call that the project
  defines (a non-vendored function, kernel or ABI definition of that name);
* **ambiguous buckets**: ambiguous sites per cause (language and rule: name-only, an external
  receiver of unknown exact type among checkout impls for external types, trait
  object, generic bound, several C/C++ definitions …), and the share without the trait-object
  and generic-bound fan-outs (genuine runtime dispatch);
* with ``--sample N``: N random exact and N random heuristic edges (caller path:line, the
  call text, the target path:line, the rule), for checking by hand against the source, and
  N random ambiguous sites per bucket (with their candidates).

Not a test: nothing asserts.  The package boundaries always come from this apxtui.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import networkx as nx  # noqa: E402

from apxtui.scan import scan  # noqa: E402

LINKED = ("exact", "heuristic", "ambiguous")
FN_KINDS = {"rust_fn", "ffi_decl", "abi_fn", "host_fn", "device_fn", "kernel", "python_fn", "python_class"}


def load_graph(checkout: str, graph_json: str | None) -> nx.MultiDiGraph:
    if graph_json:
        data = json.loads(Path(graph_json).read_text())
        return nx.node_link_graph(data, edges="edges", multigraph=True, directed=True)
    from apxtui.index.build import build_index

    return build_index(checkout).graph


def _targets(g: nx.MultiDiGraph, v: str) -> list[str]:
    d = g.nodes[v]
    if d.get("external_kind") == "ambiguous":
        return [c for c in d.get("candidates", []) if c in g]
    return [v] if d.get("file") else []


#: Ambiguity causes, by the rule text (``how``) of the edge: (bucket, substring), first match wins.
BUCKETS = (("name-only", "by method name only"), ("external-receiver", "checkout impls for external types"),
           ("trait-object", "(trait object)"), ("generic-bound", "generic "),
           ("c-if-arms", "alternatives by `#if` arm"), ("c-include", "several definitions visible through #include"),
           ("c-by-name", "several definitions by name"), ("path-alternatives", "path "),
           ("type-alternatives", "method of "), ("ffi-symbol", "C symbol"), ("local-trait-impl", "local trait impl"))
#: Buckets that are genuine runtime dispatch (reported beside the share without them).
DISPATCH = ("trait-object", "generic-bound")


def bucket(lang: str, how: str) -> str:
    for name, needle in BUCKETS:
        if needle in how:
            return f"{lang}:{name}"
    return f"{lang}:other:{' '.join(how.split()[:4])}"


def stats(g: nx.MultiDiGraph, checkout: str, sample: int = 0, seed: int = 1) -> dict:
    pk = scan(checkout).packages
    rust_edges = crossing = 0
    crossing_examples: list[str] = []
    crossing_pairs: Counter[tuple[str, str]] = Counter()
    sites: dict[tuple[str, str], tuple[str, str]] = {}  # (source, site) → (resolution, lang)
    amb: dict[tuple[str, str], tuple[str, dict, list[str]]] = {}  # (source, site) → (bucket, edge, candidates)
    by_res: dict[str, list[tuple[str, str, dict]]] = {"exact": [], "heuristic": []}
    for u, v, d in g.edges(data=True):
        if d.get("kind") not in ("call", "launch", "binding", "exposes", "ffi", "vendor"):
            continue
        res = d.get("resolution", "")
        if res not in LINKED:
            continue
        ud = g.nodes[u]
        lang = ud.get("lang", "")
        key = (u, d.get("site", ""))
        prev = sites.get(key)
        if prev is None or prev[0] != "ambiguous":
            sites[key] = (res, lang)
        if res == "ambiguous":
            got = amb.setdefault(key, (bucket(lang, d.get("how", "")), d, []))
            got[2].extend(_targets(g, v))
        if res in by_res and g.nodes[v].get("file"):
            by_res[res].append((u, v, d))
        if d.get("kind") != "call" or lang != "rust":
            continue
        for t in _targets(g, v):
            td = g.nodes[t]
            if td.get("lang") != "rust" or td.get("kind") not in FN_KINDS:
                continue
            rust_edges += 1
            if not pk.visible(ud.get("file", ""), td.get("file", "")):
                crossing += 1
                cu, tu = pk.unit_of(ud.get("file", "")), pk.unit_of(td.get("file", ""))
                pair = (f"{cu.package}:{cu.kind}" if cu else "-", f"{tu.package}:{tu.kind}" if tu else "-")
                crossing_pairs[pair] += 1
                if len(crossing_examples) < 10:
                    crossing_examples.append(f"{ud.get('file')}:{d.get('line')} {d.get('text', '')[:60]!r} → "
                                             f"{td.get('qualname')} @ {td.get('file')}:{td.get('line')}")
    per_lang: dict[str, Counter[str]] = {}
    for res, lang in sites.values():
        per_lang.setdefault(lang, Counter())[res] += 1
    total = Counter()
    for c in per_lang.values():
        total.update(c)
    defined = {d.get("name") for _, d in g.nodes(data=True)
               if d.get("kind") in FN_KINDS - {"ffi_decl"} and not d.get("vendored")
               and not d.get("decl_only")}
    vendor_local = sorted({d.get("name", "") for _, d in g.nodes(data=True)  # by the name table, not a vendor type
                           if d.get("kind") == "vendor_api" and d.get("name") in defined
                           and not d.get("operator_type")})
    buckets = Counter(b for b, _, _ in amb.values())
    linked = sum(total.values())
    dispatch = sum(n for b, n in buckets.items() if b.split(":")[1] in DISPATCH)
    out = {
        "checkout": checkout,
        "nodes": g.number_of_nodes(), "edges": g.number_of_edges(),
        "rust_call_edges_linked": rust_edges, "crossing": crossing,
        "crossing_top": [f"{a} → {b}: {n}" for (a, b), n in crossing_pairs.most_common(8)],
        "crossing_examples": crossing_examples,
        "linked_sites": sum(total.values()), "ambiguous_sites": total["ambiguous"],
        "ambiguous_share": round(total["ambiguous"] / max(1, sum(total.values())), 4),
        "per_lang": {lang: dict(c) for lang, c in sorted(per_lang.items())},
        "ambiguous_buckets": dict(buckets.most_common()),
        "ambiguous_share_without_dispatch": round((total["ambiguous"] - dispatch) / max(1, linked - dispatch), 4),
        "vendor_defined_locally": vendor_local,
    }
    if sample:
        rnd = random.Random(seed)
        for res, edges in by_res.items():
            picked = rnd.sample(edges, min(sample, len(edges)))
            out[f"sample_{res}"] = [
                f"{g.nodes[u].get('file')}:{d.get('line')} [{d.get('text', '')[:70]}] → "
                f"{g.nodes[v].get('qualname')} @ {g.nodes[v].get('file')}:{g.nodes[v].get('line')} ({d.get('how')})"
                for u, v, d in picked]
        by_bucket: dict[str, list[tuple[str, dict, list[str]]]] = {}
        for (u, _), (b, d, cands) in sorted(amb.items()):
            by_bucket.setdefault(b, []).append((u, d, cands))
        for b, rows in sorted(by_bucket.items()):
            out[f"sample_ambiguous {b}"] = [
                f"{g.nodes[u].get('file')}:{d.get('line')} [{d.get('text', '')[:70]}] recv={d.get('receiver', '')!r} "
                f"→ {len(cands)}: " + ", ".join(f"{g.nodes[c].get('qualname')}" for c in cands[:4])
                for u, d, cands in rnd.sample(rows, min(sample, len(rows)))]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout")
    ap.add_argument("--graph", help="node-link JSON from `apxtui graph --format json` instead of indexing")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    out = stats(load_graph(a.checkout, a.graph), a.checkout, a.sample, a.seed)
    if a.json:
        print(json.dumps(out, indent=1))
        return
    for k, v in out.items():
        if isinstance(v, list):
            print(f"{k}: ({len(v)})")
            for x in v:
                print(f"    {x}")
        else:
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
