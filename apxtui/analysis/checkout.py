"""Checkout-wide views: every capture region (``apxtui capture``) and every kernel (``apxtui kernels``)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from apxtui.analysis.capture import CaptureAnalysis
from apxtui.analysis.capturefacts import CaptureRegion, GraphCache, PrimitiveSite
from apxtui.analysis.dtypes import DtypeAnalysis
from apxtui.analysis.evidence import loc
from apxtui.analysis.graphkeys import graph_keys
from apxtui.analysis.graphkeys import public as gk_public
from apxtui.analysis.hostops import ROLE_EDGES, api_name, copy_direction
from apxtui.analysis.lifecycle import primitive_sites
from apxtui.trace import Tracer, Via
from apxtui.vocab import CALL_EDGE_KINDS, FN_KINDS, EdgeKind

ENTRY_KINDS = ("python_fn", "pyo3_binding", "cpp_binding", "rust_fn", "host_fn", "abi_fn")
CAPTURE_DEPTH = 25
CAPTURE_BUDGET = 150000
PATH_DEPTH = 40
WRAPPER_CALLS = 3


def _h2d_reach(g: Any, node: str, memo: dict[str, bool], depth: int = 3) -> bool:
    """Does ``node`` (through wrappers) issue a host→device copy?"""
    if node in memo:
        return memo[node]
    memo[node] = False
    found = False
    for _, v, e in g.out_edges(node, data=True):
        if e.get("kind") not in ROLE_EDGES:
            continue
        nd = g.nodes[v]
        if nd.get("kind") == "external" and api_name(nd.get("qualname", "")).startswith(("cudaMemcpy", "cuMemcpy")):
            found = found or copy_direction(api_name(nd.get("qualname", "")), e.get("args", [])) == "H2D"
        elif depth > 0:
            found = found or _h2d_reach(g, v, memo, depth - 1)
    memo[node] = found
    return found


def capture_report(index: Any) -> CaptureAudit:
    """Regions (with bodies, constants, hazards), replay sites (one per call site) and graph caches."""
    g = index.graph
    cap = CaptureAnalysis(index)
    roles = cap.roles
    regions: list[CaptureRegion] = []
    replays: dict[str, tuple[str, Via, list[str]]] = {}
    gk = graph_keys(index, roles)
    thin: dict[str, bool] = {}
    for u, v, e in g.edges(data=True):
        if e.get("kind") in CALL_EDGE_KINDS and g.nodes[u].get("kind") in FN_KINDS and roles.role(v) == "replay" \
                and not _replay_wrapper(g, u, roles, thin):
            via = Via.of(e)
            site = loc(via.file, via.line)
            replays.setdefault(site, (u, via, []))[2].append(v)  # an ambiguous call: one edge per candidate
    for u in sorted(gk.capturing):
        root = Tracer(g, depth=CAPTURE_DEPTH, budget=CAPTURE_BUDGET).trace(u)
        for r in cap.regions_in(root):
            regions.append(cap.body(root, r).public())
    memo: dict[str, bool] = {}
    replay_sites = []
    for site, (u, e, targets) in sorted(replays.items()):
        conds = [(c.group, c.arm) for c in e.conditions]
        writes = []
        for _, w, d2 in g.out_edges(u, data=True):
            if d2.get("kind") != EdgeKind.CALL or d2.get("line", 0) >= e.line:
                continue
            e2 = Via.of(d2)
            if [(c.group, c.arm) for c in e2.conditions][: len(conds)] == conds and _h2d_reach(g, w, memo):
                writes.append({"call": e2.callee, "receiver": e2.receiver, "args": list(e2.args),
                               "at": loc(e2.file, e2.line), "direction": "H2D"})
        launches: dict[str, PrimitiveSite] = {}
        for v in targets:
            for p in primitive_sites(g, v, "replay"):
                launches.setdefault(p.at, p)
        replay_sites.append({"function": g.nodes[u].get("qualname", ""), "call": e.callee,
                             "receiver": e.receiver, "at": site,
                             "targets": sorted(g.nodes[v].get("qualname", "") for v in targets),
                             "graph_launches": [p.to_dict() for p in launches.values()],
                             "conditions": [c.text for c in e.conditions],
                             "loops": list(e.loops), "stable_buffer_writes_before": _dedupe_writes(writes)})
    return CaptureAudit(tuple(regions), replay_sites, tuple(gk_public(c) for c in gk.caches()))


@dataclass(frozen=True)
class CaptureAudit:
    """``apxtui capture``: every region (bodies analysed), the replay sites and the graph caches."""

    regions: tuple[CaptureRegion, ...]
    replay_sites: list[dict[str, Any]]
    graph_caches: tuple[GraphCache, ...]
    static_analysis: str = "static analysis of the source: not runtime validation"

    def to_dict(self) -> dict[str, Any]:
        return {"static_analysis": self.static_analysis, "regions": [r.to_dict(audit=True) for r in self.regions],
                "replay_sites": self.replay_sites, "graph_caches": [c.to_dict() for c in self.graph_caches]}


def _replay_wrapper(g: Any, node: str, roles: Any, memo: dict[str, bool]) -> bool:
    """A thin replay wrapper (``CapturedGraph::replay``, ``replay_and_synchronize``): it replays and makes
    at most a few calls, so its callers are the replay sites, not its own call."""
    if node not in memo:
        sites = {e.get("site") for _, _, e in g.out_edges(node, data=True) if e.get("kind") in CALL_EDGE_KINDS}
        memo[node] = roles.role(node) == "replay" and len(sites) <= WRAPPER_CALLS
    return memo[node]


def _dedupe_writes(writes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list({w["at"]: w for w in writes}.values())


def kernels_report(index: Any, max_entries: int = 8) -> dict[str, Any]:
    """Every kernel: definition, template parameters, launch sites with dtypes, entries and a path from each."""
    g = index.graph
    dt = DtypeAnalysis(index)
    rev = _reverse_call_graph(g)
    out, unreached, by_pattern, no_entry = [], [], [], []
    for n, d in sorted(g.nodes(data=True), key=lambda x: (x[1].get("file", ""), x[1].get("line", 0))):
        if d.get("kind") != "kernel":
            continue
        sites = []
        for u, _, e in g.in_edges(n, data=True):
            if e.get("kind") != "launch":
                continue
            via = Via.of(e)
            k = dt.kernel(n, via)
            sites.append(
                {
                    "caller": g.nodes[u].get("qualname", ""),
                    "at": loc(via.file, via.line),
                    "template_args": list(via.template_args),
                    "vendored": bool(g.nodes[u].get("vendored")),
                    "conditions": [c.text for c in via.conditions],
                    "loops": list(via.loops),
                    "dtypes": {"storage": k.storage.to_dict(), "input": k.input.to_dict(),
                               "output": k.output.to_dict(), "accumulator": k.accumulator.to_dict()},
                    "conversions": [c.to_dict() for c in k.conversions],
                }
            )
        entries = _entries(g, rev, n, max_entries)
        rec = {"kernel": d.get("qualname", ""), "node": n, "definition": loc(d.get("file", ""), d.get("line", 0)),
               "template_params": list(d.get("template_params", [])), "params": list(d.get("params", [])),
               "vendored": bool(d.get("vendored")), "launch_sites": sites, "entries": entries}
        out.append(rec)
        if d.get("vendored"):
            continue
        into = [e for _, _, e in g.in_edges(n, data=True) if e.get("kind") in CALL_EDGE_KINDS]
        item = {"kind": "kernel", "name": rec["kernel"], "definition": rec["definition"], "launched": bool(sites)}
        if not into:
            unreached.append(item)
        elif all((e.get("attrs") or {}).get("by_name") for e in into):
            rec["by_name_pattern_only"] = True
            by_pattern.append({**item, "patterns": sorted({e["attrs"]["by_name"] for e in into}),
                               "at": sorted({loc(e.get("file", ""), e.get("line", 0)) for e in into})})
        elif not entries:
            no_entry.append(item)
    for n, d in g.nodes(data=True):
        if d.get("kind") == "abi_fn" and not d.get("vendored") and not any(
                e in ("ffi", "call") for _, _, e in g.in_edges(n, data="kind")):
            unreached.append({"kind": "adapter", "name": d.get("qualname", ""),
                              "definition": loc(d.get("file", ""), d.get("line", 0)), "launched": False})
    return {"static_analysis": "static analysis of the source: not runtime validation", "kernels": out,
            "unreached": unreached, "reached_by_name_pattern_only": by_pattern, "no_entry": no_entry,
            "note": "entries: functions with no caller in the index (public APIs, bindings, scripts) from which a "
                    "call path reaches the kernel; alternatives (cfg, ambiguous calls) are not filtered. "
                    "unreached: kernels no edge of any kind reaches (and adapters nothing calls); "
                    "reached_by_name_pattern_only: kernels only a name pattern links (kernel_name::<T>, format!): "
                    "heuristic; no_entry: launched or called, but from code no entry point reaches"}


def _reverse_call_graph(g: Any) -> dict[str, list[str]]:
    rev: dict[str, list[str]] = {}
    for u, v, k in g.edges(data="kind"):
        if k in CALL_EDGE_KINDS:
            rev.setdefault(v, []).append(u)
    return rev


def _entries(g: Any, rev: dict[str, list[str]], node: str, limit: int) -> list[dict[str, Any]]:
    """Callers with no callers themselves, each with the shortest call path down to ``node``."""
    parent: dict[str, str | None] = {node: None}
    q = deque([(node, 0)])
    found: list[dict[str, Any]] = []
    while q and len(found) < limit:
        n, depth = q.popleft()
        ups = [u for u in rev.get(n, []) if g.nodes[u].get("kind") not in ("file",)]
        if not ups and n != node and g.nodes[n].get("kind") in ENTRY_KINDS and not g.nodes[n].get("vendored"):
            path: list[str] = []
            cur: str | None = n
            while cur is not None:
                path.append(g.nodes[cur].get("qualname", cur))
                cur = parent[cur]
            found.append({"entry": g.nodes[n].get("qualname", ""), "path": path})
            continue
        if depth >= PATH_DEPTH:
            continue
        for u in ups:
            if u not in parent:
                parent[u] = n
                q.append((u, depth + 1))
    return found
