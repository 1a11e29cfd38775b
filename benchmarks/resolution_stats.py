"""Resolution precision of an index: boundary crossings, ambiguity, vendor names defined locally.

    python benchmarks/resolution_stats.py CHECKOUT [--graph GRAPH.json] [--sample N] [--seed S]
        [--sample-lang rust] [--causes] [--json]

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
* with ``--causes``: the Rust name-only sites by why the receiver's type is unknown (its
  shape, and for a variable the binding that gave it: a parameter, a closure's, a loop's, an
  arm pattern, a ``let`` and the shape of its value), with ``--sample N`` examples each;
* with ``--sample N``: N random exact and N random heuristic edges (caller path:line, the
  call text, the target path:line, the rule; ``--sample-lang rust``: Rust call edges only), for
  checking by hand against the source, and
  N random ambiguous sites per bucket (with their candidates).

Not a test: nothing asserts.  The package boundaries always come from this apxtui.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import networkx as nx  # noqa: E402

from apxtui.scan import scan  # noqa: E402

LINKED = ("exact", "heuristic", "ambiguous")
FN_KINDS = {"rust_fn", "ffi_decl", "abi_fn", "host_fn", "device_fn", "kernel", "python_fn", "python_class"}


def load_graph(checkout: str, graph_json: str | None) -> tuple[nx.MultiDiGraph, Any]:
    """(graph, the index's per-file facts or None when read from JSON)."""
    if graph_json:
        data = json.loads(Path(graph_json).read_text())
        return nx.node_link_graph(data, edges="edges", multigraph=True, directed=True), None
    from apxtui.index.build import build_index

    idx = build_index(checkout)
    return idx.graph, idx.facts


_WORD = re.compile(r"\w+")


def _value_shape(value: str) -> str:
    """A `let` value's shape, for the name-only causes."""
    v = " ".join(value.split())
    if "\0" in value:
        return "branches"
    if v.startswith(("if ", "match ")):
        return "if/match"
    if re.match(r"^\w+!", v):
        return "macro " + v.split("!")[0] + "!"
    if v.startswith(("|", "move |")):
        return "closure"
    if re.match(r"^[\w:]+(::<[^>]*>)?\s*\(", v):
        head = v.split("(")[0]
        return "path call " + ("Type::" if re.search(r"(^|::)[A-Z]\w*::\w+$", head) else "") + head.rsplit("::", 1)[-1]
    m = re.search(r"\.(\w+)\s*(::<[^>]*>)?\s*\([^()]*\)\s*[?]?\s*(\.await)?\s*$", v)
    if m:
        return "method ." + m.group(1)
    if _WORD.fullmatch(v):
        return "variable"
    return "other"


def name_only_cause(call: Any, caller: Any) -> str:
    """Why a Rust method call's receiver has no type: its shape and, for a variable, what bound it."""
    r = call.receiver.strip().lstrip("&*").removeprefix("mut ").strip()
    if r.startswith(("self.", "self[")):
        return "self field chain"
    if not _WORD.fullmatch(r):
        if r.endswith((")", ")?", ".await", ".await?")):
            m = re.search(r"\.(\w+)\s*(::<[^>]*>)?\s*\([^()]*\)\s*[?]?\s*(\.await)?\s*[?]?$", r)
            return "call result ." + m.group(1) if m else "call result " + r.split("(")[0].rsplit("::", 1)[-1]
        return "field/index of " + ("variable" if _WORD.match(r) else "expr")
    if caller is None:
        return "no caller"
    if any(p.name == r for p in caller.params):
        ty = next(p.type for p in caller.params if p.name == r)
        return "parameter " + ("generic/impl" if ty.startswith(("impl ", "&impl ")) or ty.strip("&mut ") in
                               caller.generic_bounds else "typed")
    for ctx in reversed(call.contexts):
        if ctx.kind == "closure" and re.search(rf"\b{r}\b", ctx.text.split("|")[1] if "|" in ctx.text else ""):
            return "closure parameter"
        if ctx.kind == "loop" and re.match(rf"^for\s+.*\b{r}\b.*\s+in\s", ctx.text):
            return "for-loop variable"
        if ctx.kind in ("match_arm", "if") and re.search(rf"\b{r}\b", ctx.text):
            pat = ctx.text
            if re.match(r"^(let\s+)?(Some|Ok|Err)\s*\(", pat.strip()):
                return "arm pattern Some/Ok"
            if re.search(r"[\w:]+::\w+\s*\(", pat):
                return "arm pattern Enum::Variant(..)"
            if "{" in pat:
                return "arm pattern { .. }"
            return "arm pattern other"
    attrs = caller.attrs
    best: tuple[int, str] = (-1, "")
    for a in attrs.get("assigns", ()):
        if a.get("var") == r and a.get("line", 0) <= call.line:
            best = max(best, (a.get("line", 0), "let = " + _value_shape("\0".join(a["tails"]) if a.get("tails")
                                                                          else a.get("value", ""))))
    for a in attrs.get("tuple_assigns", ()):
        if r in a.get("vars", ()) and a.get("line", 0) <= call.line:
            best = max(best, (a.get("line", 0), "let (tuple) = " + _value_shape(
                "\0".join(a["tails"]) if a.get("tails") else a.get("value", ""))))
    for a in attrs.get("pattern_assigns", ()):
        if r in a.get("vars", ()) and a.get("line", 0) <= call.line:
            best = max(best, (a.get("line", 0), "let pattern"))
    if best[1]:
        return best[1]
    return "unbound (static, const, capture?)"


def causes(g: nx.MultiDiGraph, facts: Any, sample: int, seed: int) -> dict[str, Any]:
    """Rust name-only sites by :func:`name_only_cause`, with ``sample`` examples each (file:line, text)."""
    rows: dict[str, list[str]] = {}
    seen: set[tuple[str, str]] = set()
    calls_at: dict[str, dict[tuple[int, int, str], Any]] = {}
    defs_at: dict[str, dict[str, Any]] = {}
    for u, _, d in g.edges(data=True):
        if d.get("resolution") != "ambiguous" or not d.get("name_only") or g.nodes[u].get("lang") != "rust" \
                or d.get("call_kind") != "method" or "by method name only" not in d.get("how", ""):
            continue
        key = (u, d.get("site", ""))
        if key in seen:
            continue
        seen.add(key)
        f = d.get("file", "")
        if f not in calls_at:
            ff = facts.get(f)
            calls_at[f] = {(c.line, c.col, c.callee): c for c in ff.calls} if ff else {}
            defs_at[f] = {x.qualname: x for x in ff.defs} if ff else {}
        call = calls_at[f].get((d.get("line"), d.get("col"), d.get("callee")))
        if call is None:
            cause = "call not in facts (macro expansion?)"
        else:
            cause = name_only_cause(call, defs_at[f].get(call.caller))
        rows.setdefault(cause, []).append(f"{f}:{d.get('line')} [{d.get('text', '')[:80]}]")
    rnd = random.Random(seed)
    return {f"{k}: {len(v)}": rnd.sample(v, min(sample, len(v)))
            for k, v in sorted(rows.items(), key=lambda kv: -len(kv[1]))}


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


def stats(g: nx.MultiDiGraph, checkout: str, sample: int = 0, seed: int = 1, sample_lang: str = "") -> dict:
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
        if res in by_res and g.nodes[v].get("file") and (
                not sample_lang or (lang == sample_lang and d.get("kind") == "call")):
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
    ap.add_argument("--sample-lang", default="", help="sample only call edges whose caller is of this language (rust)")
    ap.add_argument("--causes", action="store_true", help="Rust name-only sites by cause (needs the index)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    g, facts = load_graph(a.checkout, a.graph)
    out = stats(g, a.checkout, a.sample, a.seed, a.sample_lang)
    if a.causes and facts is not None:
        out["name_only_causes"] = causes(g, facts, a.sample, a.seed)
    if a.json:
        print(json.dumps(out, indent=1))
        return
    for k, v in out.items():
        if isinstance(v, dict) and k == "name_only_causes":
            print(f"{k}:")
            for cause, xs in v.items():
                print(f"  {cause}")
                for x in xs:
                    print(f"      {x}")
        elif isinstance(v, list):
            print(f"{k}: ({len(v)})")
            for x in v:
                print(f"    {x}")
        else:
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
