"""Classification of CUDA runtime/driver calls: capture lifecycle, copies, syncs, allocations.

The names live in ``queries/calls.toml`` (``[families]``, :mod:`apxtui.analysis.calls`), user-extensible.

Roles propagate up through wrappers: a function whose reachable calls (through
call/ffi edges, a few levels) include exactly one lifecycle primitive takes that
role (``graph::begin_capture`` → ``apxinf_graph_begin`` → ``cudaStreamBeginCapture``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from apxtui.analysis.calls import bare_name, call_rules

#: capture-lifecycle role → the calls.toml family of its primitives
_ROLE_FAMILIES = {"begin": "capture_begin", "end": "capture_end", "instantiate": "instantiate", "replay": "replay",
                  "update": "graph_update"}


@cache
def capture_prims() -> dict[str, frozenset[str]]:
    """Role → the names of its primitives (from calls.toml ``[families]``; read on first use, so
    importing this module reads no file)."""
    return {r: call_rules().families.get(f, frozenset()) for r, f in _ROLE_FAMILIES.items()}


ROLE_EDGES = ("call", "ffi", "exposes", "binding")
DEPTH = 5


#: ``cudarc::driver::sys::cuStreamBeginCapture_v2`` → ``cuStreamBeginCapture`` (the call classes' rule).
api_name = bare_name


def copy_direction(name: str, args: Sequence[str]) -> str:
    joined = " ".join(args)
    for key, d in (("HostToDevice", "H2D"), ("DeviceToHost", "D2H"), ("DeviceToDevice", "D2D"),
                   ("HostToHost", "H2H"), ("Default", "default (inferred from pointers)")):
        if key in joined:
            return d
    if "HtoD" in name or "ToSymbol" in name:
        return "H2D"
    if "DtoH" in name or "FromSymbol" in name:
        return "D2H"
    return "unknown"


@dataclass(frozen=True)
class HostOp:
    """A host-side runtime call: its kind (copy, sync, alloc, free, memset) and what the kind has — a copy's
    direction, a copy's or allocation's size expression, whether a copy or memset blocks."""

    kind: str
    api: str
    direction: str | None = None
    size: str | None = None
    blocking: bool | None = None


def host_op(name: str, args: Sequence[str]) -> HostOp | None:
    """Category of one runtime call: copy/sync/alloc/free/memset (None when none applies)."""
    n = api_name(name)
    fam = call_rules().family(n)
    if fam == "copy":
        return HostOp("copy", n, copy_direction(n, args), args[2] if len(args) > 2 else "", not n.endswith("Async"))
    if fam == "sync":
        return HostOp("sync", n)
    if fam == "alloc":
        return HostOp("alloc", n, size=args[1] if len(args) > 1 else "")
    if fam == "free":
        return HostOp("free", n)
    if fam == "memset":
        return HostOp("memset", n, blocking=not n.endswith("Async"))
    return None


class Roles:
    """Capture-lifecycle roles of graph nodes (memoized, wrappers followed)."""

    def __init__(self, g: Any):
        self.g = g
        self._memo: dict[tuple[str, int], tuple[frozenset[str], bool]] = {}
        self._prim: dict[str, str | None] = {}
        self._table: dict[str, tuple[str | None, list[str]]] | None = None  # a stored graph: see role_table

    def prim(self, node: str) -> str | None:
        if node in self._prim:  # asked once per edge into the node: remembered
            return self._prim[node]
        d = self.g.nodes[node]
        p = None
        if d.get("kind") in ("external", "vendor_api"):
            fam = call_rules().family(api_name(d.get("qualname", "")))
            p = next((r for r, f in _ROLE_FAMILIES.items() if f == fam), None)
        self._prim[node] = p
        return p

    def reach(self, node: str, depth: int = DEPTH) -> frozenset[str]:
        """Lifecycle primitives reachable from ``node`` within ``depth`` call/ffi hops.

        Memoised per (node, depth) — the depth falls at every hop, so cycles end by themselves — and
        so the answer does not depend on the order nodes are asked in (a memo of the full-depth
        answer reused at a smaller depth made roles, regions and replay sites change from run to
        run with string hashing).  A stored graph answers the full depth from :func:`role_table`.
        """
        table = self._stored() if depth == DEPTH else None
        if table is not None:
            got = table.get(node)
            return frozenset(got[1]) if got else frozenset()
        return self._reach(node, depth)[0]

    def _stored(self) -> dict[str, tuple[str | None, list[str]]] | None:
        if self._table is None and hasattr(self.g, "derived"):
            self._table = role_table(self)
        return self._table

    def _reach(self, node: str, depth: int) -> tuple[frozenset[str], bool]:
        """(primitives reached, thin): ``thin`` when, at every call site, one candidate's paths all ended
        within the depth without a kernel launch or library call (a wrapper, not a driver of work)."""
        p = self.prim(node)
        if p:
            return frozenset([p]), True
        key = (node, depth)
        if key in self._memo:
            return self._memo[key]
        out: set[str] = set()
        sites: dict[str, bool] = {}  # call site → one of its candidates is thin (candidates are alternatives)
        for _, v, d in self.g.out_edges(node, data=True):
            k, site = d.get("kind"), d.get("site") or v
            if k in ("launch", "vendor"):
                sites[site] = False
            elif k in ROLE_EDGES:
                if depth == 0:
                    sites[site] = sites.get(site, False)
                    continue
                r, t = self._reach(v, depth - 1)
                out |= r
                sites[site] = sites.get(site, False) or t
        res = (frozenset(out), all(sites.values()))
        self._memo[key] = res
        return res

    def role(self, node: str) -> str | None:
        """The lifecycle role of a primitive or wrapper; None for drivers (begin and end both reached).

        A wrapper that ends capture and instantiates (``graph::end`` → EndCapture + Instantiate)
        is an ``end``; one that instantiates and launches is a driver.  A stored graph answers from
        :func:`role_table` (stored beside its generation).
        """
        table = self._stored()
        if table is not None:
            got = table.get(node)
            return got[0] if got else None
        return self.own_role(node)

    def own_role(self, node: str) -> str | None:
        """:meth:`role` worked out from the graph."""
        roles, thin = self._reach(node, DEPTH)
        if not thin and not self.prim(node):
            return None  # reaches work, or calls beyond the depth: a driver, not a lifecycle wrapper
        r = set(roles) - {"update"}
        if {"begin", "end"} <= r or {"instantiate", "replay"} <= r and "end" not in r:
            return None
        if "end" in r:
            return "end" if r <= {"end", "instantiate"} else None
        return next(iter(r)) if len(r) == 1 else None


def role_table(roles: Roles) -> dict[str, tuple[str | None, list[str]]]:
    """Every node of a stored graph that reaches a lifecycle primitive within :data:`DEPTH` call hops →
    (its role, the primitives' roles it reaches), stored beside the graph's generation (keyed on this code
    and the calls.toml in use) and kept in memory by the graph; every other node reaches none and has no role.

    Only nodes within :data:`DEPTH` hops above a primitive can reach one, so those are found by a reverse
    walk from the primitives (their families: calls.toml) and asked."""
    g = roles.g
    from apxtui import vocab  # lazy: its file is part of the stamp
    from apxtui.analysis import calls  # lazy: as above
    from apxtui.index.store import code_stamp  # lazy: only for a stored graph

    def make() -> dict[str, tuple[str | None, list[str]]]:
        fams = set(_ROLE_FAMILIES.values())
        near = {n for n, d in g.nodes(data=True) if d.get("kind") in ("external", "vendor_api")
                and call_rules().family(api_name(d.get("qualname", ""))) in fams}
        frontier = set(near)
        for _ in range(DEPTH):
            frontier = {u for n in frontier for u, _, k in g.in_edges(n, data="kind")
                        if k in ROLE_EDGES and u not in near}
            near |= frontier
        out = {}
        for n in sorted(near):
            reached = roles._reach(n, DEPTH)[0]
            if reached:
                out[n] = (roles.own_role(n), sorted(reached))
        return out

    stamp = code_stamp(__file__, calls.__file__, vocab.__file__, call_rules().path)
    got: dict[str, tuple[str | None, list[str]]] = g.derived("roles", stamp, make)
    return got
