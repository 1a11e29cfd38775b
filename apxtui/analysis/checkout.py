"""Checkout-wide views: every capture region (``apxtui capture``) and every kernel (``apxtui kernels``)."""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Any

from apxtui.analysis.capture import CaptureAnalysis
from apxtui.analysis.capturefacts import BufferWrite, CaptureAudit, CaptureRegion, PrimitiveSite, ReplaySite
from apxtui.analysis.dtypes import DtypeAnalysis
from apxtui.analysis.evidence import loc
from apxtui.analysis.graphkeys import graph_keys
from apxtui.analysis.hostops import ROLE_EDGES, api_name, copy_direction
from apxtui.analysis.kernelfacts import EntryPath, KernelInfo, KernelsReport, LaunchSite, UnreachedItem
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
    replay_sites: list[ReplaySite] = []
    for site, (u, e, targets) in sorted(replays.items()):
        conds = [(c.group, c.arm) for c in e.conditions]
        writes: list[BufferWrite] = []
        for _, w, d2 in g.out_edges(u, data=True):
            if d2.get("kind") != EdgeKind.CALL or d2.get("line", 0) >= e.line:
                continue
            e2 = Via.of(d2)
            if [(c.group, c.arm) for c in e2.conditions][: len(conds)] == conds and _h2d_reach(g, w, memo):
                writes.append(BufferWrite(e2.callee, e2.receiver, tuple(e2.args), loc(e2.file, e2.line), "H2D"))
        launches: dict[str, PrimitiveSite] = {}
        for v in targets:
            for p in primitive_sites(g, v, "replay"):
                launches.setdefault(p.at, p)
        replay_sites.append(ReplaySite(g.nodes[u].get("qualname", ""), e.callee, e.receiver, site,
                                       tuple(sorted(g.nodes[v].get("qualname", "") for v in targets)),
                                       tuple(launches.values()), tuple(c.text for c in e.conditions), tuple(e.loops),
                                       tuple({w.at: w for w in writes}.values())))
    return CaptureAudit(tuple(regions), tuple(replay_sites), tuple(gk.caches()))


def _replay_wrapper(g: Any, node: str, roles: Any, memo: dict[str, bool]) -> bool:
    """A thin replay wrapper (``CapturedGraph::replay``, ``replay_and_synchronize``): it replays and makes
    at most a few calls, so its callers are the replay sites, not its own call."""
    if node not in memo:
        sites = {e.get("site") for _, _, e in g.out_edges(node, data=True) if e.get("kind") in CALL_EDGE_KINDS}
        memo[node] = roles.role(node) == "replay" and len(sites) <= WRAPPER_CALLS
    return memo[node]


def kernels_report(index: Any, max_entries: int = 8) -> KernelsReport:
    """Every kernel: definition, template parameters, launch sites with dtypes, entries and a path from each."""
    g = index.graph
    dt = DtypeAnalysis(index)
    rev = _reverse_call_graph(g)
    out: list[KernelInfo] = []
    unreached: list[UnreachedItem] = []
    by_pattern: list[UnreachedItem] = []
    no_entry: list[UnreachedItem] = []
    for n, d in sorted(g.nodes(data=True), key=lambda x: (x[1].get("file", ""), x[1].get("line", 0))):
        if d.get("kind") != "kernel":
            continue
        sites = []
        for u, _, e in g.in_edges(n, data=True):
            if e.get("kind") != "launch":
                continue
            via = Via.of(e)
            sites.append(LaunchSite(g.nodes[u].get("qualname", ""), loc(via.file, via.line), tuple(via.template_args),
                                    bool(g.nodes[u].get("vendored")), tuple(c.text for c in via.conditions),
                                    tuple(via.loops), dt.kernel(n, via)))
        name, definition = d.get("qualname", ""), loc(d.get("file", ""), d.get("line", 0))
        entries = tuple(_entries(g, rev, n, max_entries))
        pattern_only = False
        item = UnreachedItem("kernel", name, definition, bool(sites))
        if not d.get("vendored"):
            into = [e for _, _, e in g.in_edges(n, data=True) if e.get("kind") in CALL_EDGE_KINDS]
            if not into:
                unreached.append(item)
            elif all((e.get("attrs") or {}).get("by_name") for e in into):
                pattern_only = True
                by_pattern.append(replace(item, patterns=tuple(sorted({e["attrs"]["by_name"] for e in into})),
                                          at=tuple(sorted({loc(e.get("file", ""), e.get("line", 0)) for e in into}))))
            elif not entries:
                no_entry.append(item)
        out.append(KernelInfo(name, n, definition, tuple(d.get("template_params", [])), tuple(d.get("params", [])),
                              bool(d.get("vendored")), tuple(sites), entries, pattern_only))
    for n, d in g.nodes(data=True):
        if d.get("kind") == "abi_fn" and not d.get("vendored") and not any(
                e in ("ffi", "call") for _, _, e in g.in_edges(n, data="kind")):
            unreached.append(UnreachedItem("adapter", d.get("qualname", ""), loc(d.get("file", ""), d.get("line", 0)),
                                           False))
    return KernelsReport(tuple(out), tuple(unreached), tuple(by_pattern), tuple(no_entry))


def _reverse_call_graph(g: Any) -> dict[str, list[str]]:
    rev: dict[str, list[str]] = {}
    for u, v, k in g.edges(data="kind"):
        if k in CALL_EDGE_KINDS:
            rev.setdefault(v, []).append(u)
    return rev


def _entries(g: Any, rev: dict[str, list[str]], node: str, limit: int) -> list[EntryPath]:
    """Callers with no callers themselves, each with the shortest call path down to ``node``."""
    parent: dict[str, str | None] = {node: None}
    q = deque([(node, 0)])
    found: list[EntryPath] = []
    while q and len(found) < limit:
        n, depth = q.popleft()
        ups = [u for u in rev.get(n, []) if g.nodes[u].get("kind") not in ("file",)]
        if not ups and n != node and g.nodes[n].get("kind") in ENTRY_KINDS and not g.nodes[n].get("vendored"):
            path: list[str] = []
            cur: str | None = n
            while cur is not None:
                path.append(g.nodes[cur].get("qualname", cur))
                cur = parent[cur]
            found.append(EntryPath(g.nodes[n].get("qualname", ""), tuple(path)))
            continue
        if depth >= PATH_DEPTH:
            continue
        for u in ups:
            if u not in parent:
                parent[u] = n
                q.append((u, depth + 1))
    return found
