"""Classification of CUDA runtime/driver calls: capture lifecycle, copies, syncs, allocations.

Roles propagate up through wrappers: a function whose reachable calls (through
call/ffi edges, a few levels) include exactly one lifecycle primitive takes that
role (``graph::begin_capture`` → ``apxinf_graph_begin`` → ``cudaStreamBeginCapture``).
"""

from __future__ import annotations

import re
from typing import Any

CAPTURE_PRIMS = {
    "begin": {"cudaStreamBeginCapture", "cuStreamBeginCapture", "cudaStreamBeginCaptureToGraph"},
    "end": {"cudaStreamEndCapture", "cuStreamEndCapture"},
    "instantiate": {"cudaGraphInstantiate", "cudaGraphInstantiateWithFlags", "cuGraphInstantiate",
                    "cuGraphInstantiateWithFlags", "cudaGraphInstantiateWithParams"},
    "replay": {"cudaGraphLaunch", "cuGraphLaunch"},
    "update": {"cudaGraphExecUpdate", "cuGraphExecUpdate", "cudaGraphExecKernelNodeSetParams"},
}
SYNC = {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
        "cuCtxSynchronize", "cudaStreamWaitEvent", "cudaStreamQuery", "cudaThreadSynchronize"}
ALLOC = {"cudaMalloc", "cudaMallocHost", "cudaHostAlloc", "cudaMallocManaged", "cudaMallocPitch", "cudaMallocAsync",
         "cuMemAlloc", "cuMemAllocAsync", "cudaMallocFromPoolAsync"}
FREE = {"cudaFree", "cudaFreeHost", "cudaFreeAsync", "cuMemFree"}
COPY = {"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpy2DAsync", "cudaMemcpyToSymbol",
        "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbolAsync", "cuMemcpyHtoD",
        "cuMemcpyDtoH", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cudaMemcpyPeerAsync"}
MEMSET = {"cudaMemset", "cudaMemsetAsync", "cuMemsetD8", "cuMemsetD8Async", "cuMemsetD32Async"}
ROLE_EDGES = ("call", "ffi", "exposes", "binding")
DEPTH = 5


def api_name(qualname: str) -> str:
    """``cudarc::driver::sys::cuStreamBeginCapture_v2`` → ``cuStreamBeginCapture``."""
    name = re.split(r"::|\.", qualname or "")[-1]
    return re.sub(r"_v\d+$", "", name)


def copy_direction(name: str, args: list[str]) -> str:
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


def host_op(name: str, args: list[str]) -> dict[str, Any] | None:
    """Category of one runtime call: copy/sync/alloc/free/memset (None when none applies)."""
    n = api_name(name)
    if n in COPY:
        d = copy_direction(n, args)
        blocking = not n.endswith("Async")
        size = args[2] if len(args) > 2 and "Symbol" not in n else (args[2] if len(args) > 2 else "")
        return {"kind": "copy", "api": n, "direction": d, "size": size, "blocking": blocking}
    if n in SYNC:
        return {"kind": "sync", "api": n}
    if n in ALLOC:
        return {"kind": "alloc", "api": n, "size": args[1] if len(args) > 1 else ""}
    if n in FREE:
        return {"kind": "free", "api": n}
    if n in MEMSET:
        return {"kind": "memset", "api": n, "blocking": not n.endswith("Async")}
    return None


class Roles:
    """Capture-lifecycle roles of graph nodes (memoized, wrappers followed)."""

    def __init__(self, g: Any):
        self.g = g
        self._memo: dict[tuple[str, int], frozenset[str]] = {}

    def prim(self, node: str) -> str | None:
        d = self.g.nodes[node]
        if d.get("kind") not in ("external", "vendor_api"):
            return None
        n = api_name(d.get("qualname", ""))
        return next((r for r, names in CAPTURE_PRIMS.items() if n in names), None)

    def reach(self, node: str, depth: int = DEPTH) -> frozenset[str]:
        """Lifecycle primitives reachable from ``node`` within ``depth`` call/ffi hops.

        Memoised per (node, depth) — the depth falls at every hop, so cycles end by themselves — and
        so the answer does not depend on the order nodes are asked in (a memo of the full-depth
        answer reused at a smaller depth made roles, regions and replay sites change from run to
        run with string hashing).
        """
        p = self.prim(node)
        if p:
            return frozenset([p])
        if depth == 0:
            return frozenset()
        key = (node, depth)
        if key in self._memo:
            return self._memo[key]
        out: set[str] = set()
        for _, v, k in self.g.out_edges(node, data="kind"):
            if k in ROLE_EDGES:
                out |= self.reach(v, depth - 1)
        res = frozenset(out)
        self._memo[key] = res
        return res

    def role(self, node: str) -> str | None:
        """The lifecycle role of a primitive or wrapper; None for drivers (begin and end both reached).

        A wrapper that ends capture and instantiates (``graph::end`` → EndCapture + Instantiate)
        is an ``end``; one that instantiates and launches is a driver.
        """
        r = set(self.reach(node)) - {"update"}
        if {"begin", "end"} <= r or {"instantiate", "replay"} <= r and "end" not in r:
            return None
        if "end" in r:
            return "end" if r <= {"end", "instantiate"} else None
        return next(iter(r)) if len(r) == 1 else None
