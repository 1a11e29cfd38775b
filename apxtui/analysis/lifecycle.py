"""Where the CUDA Graph lifecycle primitives of a capture region are called, through helper functions.

A region's ``end`` call may itself instantiate (``CudaBackend::end_capture`` → ``graph::end`` →
``cudaGraphInstantiate``), and the graph it returns is replayed by methods of the type that
holds it (``Pi05Bf16CapturedGraph::replay`` → … → ``cudaGraphLaunch``).  These functions
find the primitive call sites below a node (with the chain of functions that leads there),
and the replaying methods of a type.  Pure over the graph.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from apxtui.analysis.capturefacts import PrimitiveSite, ReplayMethod
from apxtui.analysis.evidence import loc
from apxtui.analysis.hostops import ROLE_EDGES, api_name, capture_prims

DEPTH = 6
#: Condition text of an arm that handles a failure (the error path of a capture).
ERROR_ARM = re.compile(r"\bErr\b|\berr(or)?\b|\bfail|\bexcept\b|is_err\(\)|!=\s*\w*(cudaSuccess|CUDA_SUCCESS|"
                       r"_STATUS_SUCCESS)\b|\bstatus\s*!=\s*0\b|!\s*ok\b", re.I)
_WRAPPERS = re.compile(r"^(Result|Option|Box|Arc|Rc|RefCell|Mutex|std::\w+::\w+|anyhow::Result)\s*<(.*)>$")


def primitive_sites(g: Any, node: str, role: str, depth: int = DEPTH) -> list[PrimitiveSite]:
    """Calls of a ``role`` primitive (``instantiate``, ``replay``, …) reachable from ``node``.

    Each: a :class:`PrimitiveSite`; ``at`` is the project call site (the Rust
    call of an ``extern`` declaration, not the declaration), ``through`` the functions from
    ``node`` down to the one that calls it.  Breadth-first, so the shortest chains come first.
    """
    names = capture_prims()[role]
    out: dict[str, PrimitiveSite] = {}
    parent: dict[str, tuple[str, dict[str, Any]] | None] = {node: None}
    q = deque([(node, 0)])
    while q:
        n, d = q.popleft()
        for _, v, e in g.out_edges(n, data=True):
            if e.get("kind") not in ROLE_EDGES:
                continue
            nd = g.nodes[v]
            if nd.get("kind") in ("external", "vendor_api") and api_name(nd.get("qualname", "")) in names:
                site_edge, caller = e, n
                if g.nodes[n].get("kind") == "ffi_decl" and parent.get(n):  # Rust call of the extern decl
                    caller, site_edge = parent[n]  # type: ignore[misc]
                at = loc(site_edge.get("file", ""), site_edge.get("line", 0))
                if at not in out:
                    out[at] = PrimitiveSite(api_name(nd.get("qualname", "")), at, g.nodes[caller].get("qualname", ""),
                                            tuple(_chain(g, parent, caller)))
                continue
            if v not in parent and d < depth and nd.get("kind") not in ("external", "vendor_api", "kernel"):
                parent[v] = (n, e)
                q.append((v, d + 1))
    return list(out.values())


def _chain(g: Any, parent: dict[str, Any], node: str) -> list[str]:
    out = []
    cur: str | None = node
    while cur is not None:
        if g.nodes[cur].get("kind") != "ffi_decl":
            out.append(g.nodes[cur].get("qualname", cur))
        p = parent.get(cur)
        cur = p[0] if p else None
    return out[::-1]


def holder_type(return_type: str) -> str:
    """The type a function's result holds: ``Result<Pi05Bf16CapturedGraph>`` → ``Pi05Bf16CapturedGraph``."""
    t = (return_type or "").strip().lstrip("&").strip()
    for _ in range(4):
        m = _WRAPPERS.match(t)
        if not m:
            break
        t = m.group(2).split(",")[0].strip()
    t = re.sub(r"^(dyn|impl|mut)\s+", "", t)
    return t.split("<")[0].split("::")[-1].strip()


def _module(qualname: str) -> str:
    return qualname.rsplit("::", 2)[0] if qualname.count("::") >= 2 else ""


_METHOD_KINDS = ("rust_fn", "host_fn", "python_fn")


def methods_by_container(g: Any) -> dict[str, list[str]]:
    """Container (type) name → its methods (Rust, C++ and Python functions), in graph order.  Every node is
    asked; a stored graph (one generation, read-only) keeps the table beside its generation, keyed on this
    module's code, and in memory."""
    if not hasattr(g, "derived"):
        return _methods_by_container(g)
    from apxtui.index.store import code_stamp  # lazy: only for a stored graph

    got: dict[str, list[str]] = g.derived("methods-by-container", code_stamp(__file__),
                                          lambda: _methods_by_container(g))
    return got


def _methods_by_container(g: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for n, d in g.nodes(data=True):
        if d.get("container") and d.get("kind") in _METHOD_KINDS:
            out.setdefault(d["container"], []).append(n)
    return out


def replay_methods(g: Any, type_name: str, roles: Any, near: str = "") -> list[ReplayMethod]:
    """Methods of ``type_name`` that reach a graph launch, with the launch sites below them.

    Several types may share the short name: those of ``near``'s module (the capturing
    function's) are preferred when there are any.
    """
    if not type_name:
        return []
    methods = methods_by_container(g).get(type_name, [])
    here = near.rsplit("::", 1)[0] if "::" in near else ""
    local = [n for n in methods if here and (_module(g.nodes[n].get("qualname", "")) == _module(near)
                                              or g.nodes[n].get("qualname", "").startswith(here + "::"))]
    out = []
    for n in local or methods:
        d = g.nodes[n]
        if "replay" not in roles.reach(n):
            continue
        prims = primitive_sites(g, n, "replay")
        if prims:
            out.append(ReplayMethod(d.get("qualname", ""), loc(d.get("file", ""), d.get("line", 0)), tuple(prims)))
    return sorted(out, key=lambda r: r.at)


def is_error_path(labels: list[str]) -> str:
    """The arm label that puts a call on a failure path ('' when none does)."""
    return next((lb for lb in labels if ERROR_ARM.search(lb)), "")
