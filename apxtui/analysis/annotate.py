"""All analyses over one trace tree: per-stage annotations and the path-level summaries.

``annotate(index, root)`` → :class:`Annotations` with ``stage(st)`` (the
:class:`~apxtui.analysis.stagefacts.StageFacts` of one stage) and ``path`` (dtype
boundaries, launch totals, host-transfer audit, capture regions).  Pure: reads the
index and the tree, never the source.  The path-level summaries are computed at once;
a stage's own fields when it is first asked for (an export or a pane shows few of
tens of thousands of stages).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from apxtui.analysis.calls import cache_miss_closure, call_rules, first_call_arm
from apxtui.analysis.capture import CaptureAnalysis, subtree
from apxtui.analysis.capturefacts import CapturedLaunch, CaptureRegion, Hazard
from apxtui.analysis.dtypefacts import DtypeFacts, KernelDtypes, LibraryDtypes, OperatorDtypes
from apxtui.analysis.dtypes import DtypeAnalysis, is_library_gemm
from apxtui.analysis.evidence import HEURISTIC
from apxtui.analysis.hostops import HostOp, host_op
from apxtui.analysis.launches import Count, LaunchCounter, own_kind
from apxtui.analysis.loops import LoopCount, consts_of, frequency, multiplier
from apxtui.analysis.pathfacts import DtypeBoundary, HostTransfer, LaunchTotals, PathFacts
from apxtui.analysis.stagefacts import CaptureFacts, Frequency, Launches, StageFacts
from apxtui.trace import Dispatch, Stage, Via, iter_stages
from apxtui.vocab import EdgeKind, Evidence

LOADER = re.compile(r"^(load|load_\w+|\w+_load|from_pretrained|read_checkpoint|upload_\w+|warmup|prepare_weights)$")
HOST_COMPUTE = re.compile(r"(^|::|\.)(cpu|host)(::|\.|$)|Cpu[A-Z]?\w*::", re.I)
GEMM_APIS = re.compile(r"Matmul$|[Gg]emm|^run$|^operator\(\)$|fwd|attention", re.I)


@dataclass
class _Info:
    parent: Stage | None
    mults: list[LoopCount]  # own call-site loops
    path_mults: list[LoopCount]  # from the entry down to here, own included
    phase: str
    arms: tuple[str, ...]
    alternative: bool  # under a dispatch point with no selection
    region: str = ""
    role: str = ""
    graph_key: bool = False  # preparation that builds a CUDA Graph: once per graph key


@dataclass
class Annotations:
    make: Callable[[Stage], StageFacts]  # a stage → its facts (stages of this trace only), made on first request
    per_stage: dict[int, StageFacts] = field(default_factory=dict)
    path: PathFacts = field(default_factory=PathFacts)

    def stage(self, st: Stage) -> StageFacts:
        rec = self.per_stage.get(id(st))
        if rec is None:
            rec = self.per_stage[id(st)] = self.make(st)
        return rec


class _Annotator:
    def __init__(self, index: Any, root: Stage):
        self.index = index
        self.root = root
        self.dt = DtypeAnalysis(index)
        self.cap = CaptureAnalysis(index)
        self.info: dict[int, _Info] = {}
        self.order: list[Stage] = []
        self.regions: list[CaptureRegion] = []
        self.body_of: dict[int, str] = {}
        self.role_of: dict[int, str] = {}
        self.launch_info: dict[int, CapturedLaunch] = {}
        self.hazard_info: dict[int, tuple[Hazard, ...]] = {}
        self._consts: dict[str, dict[str, tuple[str, str]]] = {}  # parent node → its constants, once
        self._dt: dict[int, DtypeFacts | None] = {}

    def consts(self, parent: Stage | None) -> dict[str, tuple[str, str]]:
        """Constants visible in ``parent``'s body, computed once per function (not per call site)."""
        if parent is None:
            return {}
        if parent.node not in self._consts:
            self._consts[parent.node] = consts_of(self.index.definition(parent.node))
        return self._consts[parent.node]

    # -- pass 1: structure ---------------------------------------------------------------

    def walk(self, st: Stage, parent: Stage | None, path_mults: list[LoopCount], phase: str,
             arms: tuple[str, ...], alt: bool) -> None:
        own = [multiplier(h, self.consts(parent)) for h in (st.via.loops if st.via else ())]
        if phase == "eager" and LOADER.match(st.name or ""):
            phase = "load"
        info = _Info(parent, own, [*path_mults, *own], phase, arms, alt)
        self.info[id(st)] = info
        self.order.append(st)
        if st.cut:
            return
        self._items(st.children, st, info.path_mults, phase, arms, alt)

    def _items(self, items: list[Stage | Dispatch], parent: Stage, path_mults: list[LoopCount], phase: str,
               arms: tuple[str, ...], alt: bool) -> None:
        rules = call_rules()
        sibs: list[Via] | None = None
        for it in items:
            if isinstance(it, Stage):
                ph = phase
                if phase == "eager" and it.via is not None and it.via.closures:
                    if sibs is None:
                        sibs = [s.via for s in iter_stages(items, selected_only=False) if s.via is not None]
                    if cache_miss_closure(rules, it.via, sibs):
                        ph = "prepare"  # runs in a closure passed to a cache helper: on a cache miss only
                self.walk(it, parent, path_mults, ph, arms, alt)
                continue
            chosen = [a for a in it.arms if a.selected]
            for a in it.arms:
                if a.selected is False:
                    continue
                ph = phase
                if phase == "eager" and first_call_arm(rules, it.construct, it.subject, a.label, a.kind, a.implicit):
                    ph = "prepare"  # a lazy initialisation under a cache-miss or null check
                self._items(a.children, parent, path_mults, ph, (*arms, a.label), alt or len(chosen) != 1)

    def find_regions(self) -> None:
        for st in self.order:
            if self.cap.roles.role(st.node):  # a wrapper of one lifecycle call is not a region
                continue
            for r in self.cap.regions_in(st):
                self.regions.append(r)
                for c in r.body_stages:
                    for s, _p, _a in subtree(c):
                        self.body_of[id(s)] = r.id
        for st in self.order:
            role = self.cap.roles.role(st.node) if st.kind != "file" else None
            if role:
                self.role_of[id(st)] = role
        # phases: captured bodies, lifecycle wrappers (and below them)
        for st in self.order:
            info = self.info[id(st)]
            if id(st) in self.body_of:
                info.phase, info.region = "captured", self.body_of[id(st)]
        for st in self.order:  # preparation that builds a CUDA Graph runs once per graph key
            info = self.info[id(st)]
            if info.phase == "prepare" and (info.parent is None or self.info[id(info.parent)].phase != "prepare"):
                keyed = any(id(s) in self.body_of or id(s) in self.role_of for s, _p, _a in subtree(st))
                for s, _p, _a in subtree(st):
                    if id(s) in self.info and self.info[id(s)].phase == "prepare":
                        self.info[id(s)].graph_key = keyed
        for st in self.order:
            if id(st) in self.role_of:
                for s, _p, _a in subtree(st):
                    if self.info.get(id(s)) and self.info[id(s)].phase == "eager":
                        self.info[id(s)].phase = "capture"
                        self.info[id(s)].role = self.role_of[id(st)]

    # -- pass 2: per-stage facts ---------------------------------------------------------

    def dtypes(self, st: Stage) -> DtypeFacts | None:
        v = st.via
        parent = self.info[id(st)].parent
        if v is not None and v.kind == EdgeKind.LAUNCH and st.kind == "kernel":
            return self.dt.kernel(st.node, v)
        if v is not None and v.kind == EdgeKind.VENDOR and parent is not None and GEMM_APIS.search(st.name or ""):
            return self.dt.library(parent.node, v)
        lib = self._rust_ffi_gemm(st, parent)
        if lib is not None:
            return lib
        for it in st.children:
            if isinstance(it, Dispatch) and it.construct == "match":
                arm = self.dt.operator_arm(it.subject, [(a.label, a.selected) for a in it.arms if not a.implicit])
                if arm:
                    return OperatorDtypes(arm, f"{it.file}:{it.line}")
        return None

    def _rust_ffi_gemm(self, st: Stage, parent: Stage | None) -> LibraryDtypes | None:
        """A library GEMM called from Rust through its ``extern`` declaration (``ffi::cublasGemmEx``).

        The ``ffi_decl`` stage (and the external stage under it) is read like a C vendor call made
        by the Rust function, with that function's parameters bound by its own caller.
        """
        if parent is None or not is_library_gemm(st.name or ""):
            return None
        call, fn = (st, parent) if st.kind == "ffi_decl" else (parent, self.info[id(parent)].parent)
        if call.kind != "ffi_decl" or fn is None or call.via is None or call.via.kind != EdgeKind.CALL:
            return None
        up = self.info[id(fn)].parent
        env = self.dt.env_for(fn.node, fn.via, up.node if up is not None else None)
        at = fn.via.at if env and fn.via else ""
        return self.dt.library(fn.node, call.via, env, at)

    def bodies(self) -> None:
        for i, r in enumerate(self.regions):
            fn = next(s for s in self.order if s.node == r.function_node)
            r = self.regions[i] = self.cap.body(fn, r)
            sites = {(x.kernel, x.at): x for x in r.launches}
            haz: dict[str, list[Hazard]] = {}
            for h in r.hazards:
                haz.setdefault(h.at, []).append(h)
            for s, _p, _a in (t for c in r.body_stages for t in subtree(c)):
                at = s.call_at
                if (s.qualname, at) in sites:
                    self.launch_info[id(s)] = sites[(s.qualname, at)]
                if at in haz and (s.kind == "external" or (s.via is not None and s.via.kind == EdgeKind.LAUNCH)):
                    self.hazard_info[id(s)] = tuple(haz[at])

    def run(self) -> Annotations:
        self.walk(self.root, None, [], "load" if LOADER.match(self.root.name or "") else "eager", (), False)
        self.find_regions()
        self.bodies()
        counter = LaunchCounter(self.index.graph, lambda s: self.info[id(s)].mults,
                                lambda s: self.info[id(s)].phase)
        root_counts = counter.stage(self.root)
        self.counter = counter
        ann = Annotations(make=self.record)
        entry = self.root.qualname
        ann.path = PathFacts(
            launch_totals=LaunchTotals(
                f"static counts, per call of {entry}; captured work is recorded once per capture and "
                "replayed (not launched) on every replay; a library call is not a device launch",
                {ph: c.kinds() for ph, c in root_counts.items()}, tuple(counter.alternatives)),
            dtype_boundaries=self.boundaries(),
            host_transfers=self.transfers(),
            capture_regions=_distinct(r.public() for r in self.regions),
        )
        return ann

    def record(self, st: Stage) -> StageFacts:
        """One stage's frequency, launches, dtypes and capture facts."""
        entry = self.root.qualname
        info = self.info[id(st)]
        counts = self.counter.stage(st)
        own = own_kind(st, self.index.graph)
        symbolic = any(m.value is None for m in info.path_mults)
        freq = Frequency(frequency(info.path_mults, info.phase, entry, info.graph_key), info.phase,
                         tuple(info.path_mults), info.alternative,
                         Evidence.HEURISTIC if symbolic or info.alternative else Evidence.EXACT)
        total = _summary(counts, own)
        launches = Launches(total["device"], total["library"], own, tuple(info.mults), counts,
                            f"static, per call of {st.qualname} (subtree; own call not included)")
        region, role = (info.region, "body") if info.region else ("", info.role) if info.phase == "capture" \
            else (None, None)
        li = self.launch_info.get(id(st))
        cap = CaptureFacts(region, role, li.constants if li else None, li.buffers if li else None,
                           self.hazard_info.get(id(st)))
        return StageFacts(freq, launches, self.stage_dtypes(st) or None,
                          cap if cap != CaptureFacts() else None)

    def stage_dtypes(self, st: Stage) -> DtypeFacts | None:
        if id(st) not in self._dt:
            self._dt[id(st)] = self.dtypes(st)
        return self._dt[id(st)]

    # -- path level ----------------------------------------------------------------------

    def boundaries(self) -> tuple[DtypeBoundary, ...]:
        out: list[DtypeBoundary] = []
        cur: str | None = None
        for st in self.order:
            d = self.stage_dtypes(st)
            if not isinstance(d, KernelDtypes | LibraryDtypes):
                continue
            info = self.info[id(st)]
            where = st.call_at
            base = (st.qualname, where, tuple(info.arms), info.alternative, info.phase)
            evidence: list[str]
            if isinstance(d, KernelDtypes):
                ins = [x for x in d.input.value if x not in ("u32", "i32", "i64", "u64")]
                acc: list[str] = d.accumulator.value
                outs = d.output.value
                rounds = [c for c in d.conversions if c.kind == "round"]
                status = d.storage.status.value
                evidence = list(d.accumulator.evidence)
            else:
                ops = d.operands.value or {}
                ins = [x for x in (ops.get("A"), ops.get("B"), ops.get("element")) if x]
                acc = [d.compute.value] if d.compute is not None and d.compute.value else []
                outs = [x for x in (ops.get("D") or ops.get("C") or ops.get("element"),) if x]
                rounds = []
                status = d.operands.status.value
                evidence = list(d.compute.evidence) if d.compute is not None else []
            i0 = ins[0] if ins else None
            if cur and i0 and i0 != cur and not info.alternative:
                out.append(DtypeBoundary(*base, cur, i0, "input differs from previous output", HEURISTIC))
            a0 = acc[0] if acc else None
            akind = "accumulate"
            if a0 is None and rounds:  # no accumulator: the math type is what the stores round from
                a0, akind = rounds[0].source, "compute"
            if i0 and a0 and a0 != i0:
                out.append(DtypeBoundary(*base, i0, a0, akind, status, tuple(evidence)))
            o0 = outs[0] if outs else None
            src = a0 or i0
            if src and o0 and o0 != src:
                kind = "quantize" if o0 in ("e4m3", "e5m2", "i8", "i4") else "round"
                out.append(DtypeBoundary(*base, src, o0, kind, status, tuple(c.where for c in rounds[:4])))
            if o0:
                cur = o0
        return tuple(out)

    def transfers(self) -> tuple[HostTransfer, ...]:
        out: list[HostTransfer] = []
        for st in self.order:
            info = self.info[id(st)]
            op: HostOp | None = None
            if st.kind == "external":
                op = host_op(st.qualname, st.via.args if st.via else ())
            elif st.kind in ("rust_fn", "python_fn") and HOST_COMPUTE.search(st.qualname or "") \
                    and info.parent is not None and not HOST_COMPUTE.search(info.parent.qualname or ""):
                op = HostOp("host compute", st.qualname)
            if op is None:
                continue
            compute = op.kind == "host compute"
            chain: list[str] = []
            p = info.parent
            while p is not None and len(chain) < 3:
                if p.kind in ("rust_fn", "python_fn", "abi_fn"):
                    chain.append(p.qualname)
                p = self.info[id(p)].parent
            out.append(HostTransfer(
                kind=op.kind, api=op.api, at=st.call_at, via=tuple(chain), phase=info.phase,
                in_capture=info.region or None,
                frequency=frequency(info.path_mults, info.phase, self.root.qualname, info.graph_key),
                arms=tuple(info.arms), alternative=info.alternative, direction=op.direction, size=op.size,
                blocking=op.blocking, status=HEURISTIC if compute else None,
                reason="CPU/host module or backend by name" if compute else None))
        return tuple(out)


def _summary(counts: dict[str, Count], own: str | None) -> dict[str, str]:
    """``device``/``library`` of one call of the stage, own call included, phases summed (min..max)."""
    total = Count()
    for c in counts.values():
        total.add(c)
    if own:
        total.add(Count.unit(own))
    kinds = total.kinds()
    return {k: kinds[k].range_text for k in ("device", "library")}


def annotate(index: Any, root: Stage) -> Annotations:
    return _Annotator(index, root).run()


__all__ = ["annotate", "Annotations", "Count"]


def _distinct(regions: Iterable[CaptureRegion]) -> tuple[CaptureRegion, ...]:
    """Each region once, in first-seen order. A function reached on two paths of the tree holds one
    static region, analysed once per occurrence (for that occurrence's body stages); the call tree's
    budget may cut the occurrences differently, so the one whose body was cut least is kept."""
    best: dict[str, CaptureRegion] = {}
    for r in regions:
        kept = best.get(r.id)
        if kept is None or _cuts(r) < _cuts(kept):
            best[r.id] = r
    return tuple(best.values())


def _cuts(r: CaptureRegion) -> int:
    return len(r.body.cut) if r.body is not None else 10**9
