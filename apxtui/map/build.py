"""Build the execution map from the graph: a walk over the traced calls, memoised per function.

The walk uses the tracer's per-function children (:meth:`apxtui.trace.Tracer.children_of`: call
sites in source order, dispatch points with the selection, choices and profile applied), which do
not depend on the path that reached a function; so each operator's work is worked out once and
reused at every call of it, and the map is complete without expanding the whole trace tree (the
trace's stage budget never cuts the map; recursion is the only cut, and it is listed).

Model level (functions outside the operator layer, see :mod:`apxtui.map.operators`): calls become
frames (folded by their loops and conditions) until a call enters the operator layer, which is a
row.  Below a row: kernel launches and library compute calls are its work; mutually exclusive arms
are a :class:`~apxtui.map.model.Choice` (counts take one arm); setup, memory, transfer and graph
calls are listed apart; work under a first-call guard moves to the preparation phase.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from apxtui.analysis.calls import (
    CallRules,
    Classified,
    bare_name,
    cache_miss_closure,
    call_rules,
    closure_receiver,
    first_call_arm,
)
from apxtui.analysis.capture import CaptureAnalysis
from apxtui.analysis.capturefacts import CaptureRegion, RegionError
from apxtui.analysis.dtypes import DtypeAnalysis
from apxtui.analysis.graphkeys import graph_keys
from apxtui.analysis.hostops import copy_direction
from apxtui.analysis.launches import Count, complementary_cfg, render
from apxtui.analysis.loops import consts_of, multiplier, unit
from apxtui.analysis.summary import dtype_short
from apxtui.map.counts import PhaseCounts, add_counts, choice_range, loop_symbol, scale, to_counts
from apxtui.map.lead import lead_lines
from apxtui.map.model import (
    Adapter,
    Alternative,
    Call,
    Choice,
    ChoiceMade,
    Condition,
    Counts,
    Cut,
    ExecutionMap,
    Frame,
    KeyChain,
    OtherCall,
    PhaseTable,
    Repeat,
    Row,
    Site,
    Work,
)
from apxtui.map.operators import OperatorLayer, operator_layer
from apxtui.trace import Arm, Dispatch, Stage, Tracer, Via, iter_stages, stage_key
from apxtui.vocab import CallClass, EdgeKind, Evidence, NodeKind, Phase

#: Model-level functions that run once per model load.
LOADER = re.compile(r"^(load|load_\w+|\w+_load|from_pretrained|read_checkpoint|upload_\w+|warmup|prepare_weights)$")
#: Node kinds the checkout defines (followed, never classified by name).
_DEFINED = {NodeKind.RUST_FN, NodeKind.PYTHON_FN, NodeKind.PYTHON_CLASS, NodeKind.HOST_FN, NodeKind.ABI_FN,
            NodeKind.DEVICE_FN, NodeKind.KERNEL, NodeKind.PYO3_BINDING, NodeKind.CPP_BINDING}
_WORK = (CallClass.DEVICE, CallClass.LIBRARY)
_COUNT_KIND = {CallClass.DEVICE: "device", CallClass.LIBRARY: "library"}
#: A model-level function whose rows were shown once is one reference row at its next calls (same phase)
#: when it has at least this many rows.
MIN_BLOCK_ROWS = 2
#: What a capture-lifecycle row does, by role (:class:`apxtui.analysis.hostops.Roles`).
ROLE_NOTES = {"begin": "begin capture", "end": "end capture", "instantiate": "instantiate the captured graph",
              "replay": "graph replay: replays the captured body (see the captured table)",
              "update": "update the executable graph"}
#: Table order: the steady state first.
PHASE_ORDER = (Phase.EAGER, Phase.CAPTURED, Phase.PREPARE, Phase.CAPTURE, Phase.LOAD)
STATIC_NOTE = ("Static analysis of the source: not runtime validation. Counts are static, per execution of a row "
               "(totals per call of the entry); device launches and library calls are kept apart (a library call is "
               "not one device launch); mutually exclusive arms give a range, never a sum; error returns are not "
               "followed.")

#: ``(loop header, qualified name of the function holding it)`` → (value, source) or None.
LoopBinder = Callable[[str, str], "tuple[int, str] | None"]
#: A function's traced children; the frames around a row (outermost first); the functions being expanded.
_Items = list[Stage | Dispatch]
_Frames = tuple[Frame, ...]
_Stack = tuple[str, ...]


_T = TypeVar("_T")


def _with(obj: _T, **changes: object) -> _T:
    """A shallow copy of a dataclass instance with ``changes`` (much cheaper than dataclasses.replace)."""
    new = object.__new__(obj.__class__)
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


def call_name(st: Stage) -> str:
    """The call as written, short: ``gemm::bf16``, ``layer.forward`` (receiver's last segment), ``forward``."""
    v = st.via
    callee = (v.callee if v else "") or st.name
    recv = v.receiver if v else ""
    if recv and v and v.call_kind == "method" and "::" not in callee:
        last = re.split(r"\.|::", re.sub(r"\(.*\)|\[.*\]", "", recv))[-1].strip("&* ")
        if last and last != "self" and re.fullmatch(r"\w+", last):
            return f"{last}.{callee}"
    return callee


def _resolution(st: Stage) -> str:
    """How the call reaching ``st`` was linked ("" for the entry)."""
    return st.via.resolution if st.via else ""


def _adapter(st: Stage) -> Adapter:
    """The ABI function ``st`` as an adapter of a row: its definition and the edge that reached it."""
    v = st.via
    return Adapter(st.qualname, Site(st.file, st.line or 0) if st.file else Site("", 0), _site(st),
                   str(v.resolution) if v else "", v.how if v else "")


def _add(adapters: list[Adapter], more: list[Adapter]) -> None:
    """Append the adapters of ``more`` not yet in ``adapters`` (the same function reached by another edge is
    listed again: each edge keeps its own site and resolution)."""
    adapters += [a for a in more if a not in adapters]


def _site(st: Stage) -> Site:
    v = st.via
    return Site((v.file if v else "") or st.file, (v.line if v else 0) or st.line or 0)


@dataclass(frozen=True)
class _Ctx:
    """Model-level context of a walk: phase, why, the conditions and loops from the entry."""

    phase: Phase
    freq: str
    conds: tuple[Condition, ...] = ()
    repeat: tuple[Repeat, ...] = ()
    model_phase: str = ""
    guard: int = 0  # id of the first-call guard the walk is under (0: none)


#: What makes two non-work calls of a row one counted entry: class, name, site, first call, detail, guard.
_OtherKey = tuple[CallClass, str, Site, bool, str, str]


def _other_key(o: OtherCall) -> _OtherKey:
    return (o.cls, o.name, o.site, o.first_call, o.detail, o.guard)


def _add_others(into: dict[_OtherKey, OtherCall], more: Iterable[OtherCall], prefix: KeyChain = (),
                first_call: str | None = None) -> None:
    """Merge counted non-work calls ``more`` into ``into``, keys under ``prefix``; with ``first_call`` (the
    reason) they become first calls guarded by it (or by their own guard).  One entry per :func:`_other_key`,
    the first one's key, counts summed: equal to counting the concatenated calls at the row, as these changes map
    equal entries to equal entries.  Entries of ``into`` are its own copies."""
    for o in more:
        if first_call is None:
            k = _other_key(o)
        else:
            k = (o.cls, o.name, o.site, True, o.detail, o.guard or first_call)
        got = into.get(k)
        if got is not None:
            got.count += o.count
        elif first_call is None:
            into[k] = _with(o, key=prefix + o.key) if prefix else _with(o)
        else:
            into[k] = _with(o, key=prefix + o.key, first_call=True, guard=k[5])


@dataclass
class _Seg:
    """A callee's work not copied yet: ``work`` with keys under ``prefix``, loops ``reps`` and ``guard`` added,
    ``phase`` set (:func:`_rekey` applies it where a row or a choice takes the work)."""

    work: list[Work | _Seg]
    prefix: KeyChain
    reps: list[Repeat]
    guard: tuple[Condition, ...]
    phase: Phase | None


@dataclass
class _CutsUnder:
    """A callee's cuts not copied yet: their keys go under ``prefix`` (applied by :func:`_flat_cuts` at the row)."""

    prefix: KeyChain
    cuts: list[Cut | _CutsUnder]


def _flat_cuts(cuts: list[Cut | _CutsUnder], prefix: KeyChain, out: list[Cut]) -> None:
    """Append copies of ``cuts`` to ``out``, keys under ``prefix`` and their segments' prefixes, in order."""
    for c in cuts:
        if isinstance(c, _CutsUnder):
            _flat_cuts(c.cuts, prefix + c.prefix, out)
        else:
            out.append(_with(c, key=prefix + c.key))


@dataclass
class _Op:
    """What one call of an operator-layer function reaches (keys relative to the function)."""

    work: list[Work | _Seg] = field(default_factory=list)
    other: dict[_OtherKey, OtherCall] = field(default_factory=dict)  # counted, in order of first call
    adapters: list[Adapter] = field(default_factory=list)
    cuts: list[Cut | _CutsUnder] = field(default_factory=list)
    counts: PhaseCounts = field(default_factory=dict)  # Phase.EAGER stands for "the row's phase"
    arms: list[str] = field(default_factory=list)  # dispatch sites whose alternatives make a range


class MapBuilder:
    """One execution map (use :func:`apxtui.map.build_map`)."""

    def __init__(self, index: Any, tracer: Tracer, rules: CallRules, ops: OperatorLayer,
                 loop_bind: LoopBinder | None = None):
        self.index = index
        self.g = index.graph
        self.tracer = tracer
        self.rules = rules
        self.ops = ops
        self.loop_bind = loop_bind
        self.dt = DtypeAnalysis(index)
        self.cap = CaptureAnalysis(index)
        self._kids: dict[str, list[Stage | Dispatch]] = {}
        self._opmemo: dict[str, _Op] = {}
        self._regions: dict[str, set[int]] = {}
        self._consts: dict[str, dict[str, tuple[str, str]]] = {}
        self._reps: dict[int, tuple[list[Repeat], str]] = {}
        self._sibs: dict[int, list[Via]] = {}
        self._roles: dict[str, str | None] = {}
        self._phase_of: dict[str, str] = {}
        self._counts: dict[str, Counts] = {}
        self._others_memo: dict[str, list[OtherCall]] = {}
        # what one op() computation did besides its result, in order: graph nodes (str) of the op() calls
        # it made, stages it noted (_note) and dispatch points it recorded (_record); replayed when a
        # memo kept from an earlier walk is first used in a walk (see :meth:`set_choices`)
        self._effects: dict[str, list[str | Stage | Dispatch]] = {}
        self._log: list[str | Stage | Dispatch] | None = None
        self._region_out: dict[str, list[CaptureRegion | RegionError]] = {}  # capture regions found in a node's calls
        self._key_nodes: dict[str, set[str]] = {}  # dispatch key → nodes whose children hold it
        self._retired: list[Any] = []  # children lists replaced: kept alive, memos are keyed by their id()
        self.entry_name = ""
        self._reset_walk()

    def _reset_walk(self) -> None:
        """The state of one walk from the entry (the memos above outlive it)."""
        self._blocks: dict[tuple[str, Phase, bool], tuple[Frame, int, PhaseCounts]] = {}
        self.rows: list[Row] = []
        self.regions: list[CaptureRegion | RegionError] = []
        self.cuts: list[Cut] = []
        self.dispatches: dict[str, Dispatch] = {}
        self.unresolved: dict[str, list[Site]] = {}
        self.ambiguous: dict[str, list[Site]] = {}
        self.range_arms: dict[Phase, list[str]] = {}
        self._guards: dict[int, dict[str, Any]] = {}
        self._walked: set[str] = set()  # op memos used (or computed) in this walk
        self._regions_walked: set[str] = set()

    def set_choices(self, choices: dict[str, int]) -> None:
        """Arm choices for the next :meth:`build`: only what depends on a changed choice is worked out again.

        Per-function children holding a changed dispatch point are traced again, and the operator
        memos reaching them (or cut by recursion, which depends on the walk order) are dropped; the
        next build walks the model level again and replays the kept memos' notes in walk order, so
        its map equals a fresh build's."""
        old = self.tracer.choices
        changed = {k for k in set(old) | set(choices) if old.get(k) != choices.get(k)}
        self.tracer.choices = dict(choices)
        stale: set[str] = set()
        for k in changed:
            stale |= self._key_nodes.pop(k, set())
        for node in stale:
            self._retired.append(self._kids.pop(node, None))
            self._regions.pop(node, None)
            self._region_out.pop(node, None)
        users: dict[str, set[str]] = {}
        for user, log in self._effects.items():
            for e in log:
                if isinstance(e, str):
                    users.setdefault(e, set()).add(user)
        todo = [n for n in self._opmemo if n in stale or self._opmemo[n].cuts]
        while todo:
            n = todo.pop()
            if self._opmemo.pop(n, None) is None:
                continue
            self._effects.pop(n, None)
            self._counts.pop(n, None)
            self._others_memo.pop(n, None)
            todo += users.get(n, ())

    # -- graph access --------------------------------------------------------------------

    def children(self, node: str) -> list[Stage | Dispatch]:
        got = self._kids.get(node)
        if got is None:
            got = self.tracer.children_of(node)
            d = self.index.definition(node) if node in self.g else None
            exits = [e for e in (d.attrs.get("exits", []) if d is not None else [])
                     if not self.rules.is_error_exit(e.get("value", ""))]
            if exits:
                got = _after_exits(got, {(e["group"], e["arm"]) for e in exits})
                got = _synthetic_exits(node, got, exits)
            self._kids[node] = got
            for k in _keys(got):
                self._key_nodes.setdefault(k, set()).add(node)
        return got

    def classify(self, st: Stage) -> Classified:
        kind = st.kind
        defined = kind in _DEFINED or kind == NodeKind.FFI_DECL and any(
            k == EdgeKind.FFI for _, _, k in self.g.out_edges(st.node, data="kind"))
        return self.rules.classify(kind, st.qualname, st.via.kind if st.via else "", defined)

    def _note(self, st: Stage) -> None:
        if self._log is not None:
            self._log.append(st)
        res = st.via.resolution if st.via else ""
        if res == "unresolved" and st.kind == NodeKind.EXTERNAL:
            self.unresolved.setdefault(st.qualname, []).append(_site(st))

    def _record(self, d: Dispatch) -> None:
        if self._log is not None:
            self._log.append(d)
        self.dispatches.setdefault(d.key, d)
        if d.construct == "candidates":
            sites = self.ambiguous.setdefault(d.subject, [])
            s = Site(d.file, d.line)
            if s not in sites:
                sites.append(s)

    def role(self, node: str) -> str | None:
        """Capture-lifecycle role of a function or primitive (memoised)."""
        if node not in self._roles:
            self._roles[node] = self.cap.roles.role(node) if node in self.g else None
        return self._roles[node]

    def _consts_of(self, node: str) -> dict[str, tuple[str, str]]:
        got = self._consts.get(node)
        if got is None:
            got = self._consts[node] = consts_of(self.index.definition(node))
        return got

    # -- loops and closures ----------------------------------------------------------------

    def repeats(self, st: Stage, parent: str, siblings: list[Stage | Dispatch]) -> tuple[list[Repeat], str]:
        """Loops around the call of ``st`` in ``parent``, and a first-call reason when ``st`` runs in a
        closure passed to a cache helper (``cached_or_build(k, || build())``); memoised per stage."""
        got = self._reps.get(id(st))
        if got is None:
            got = self._reps[id(st)] = self._repeats(st, parent, siblings)
        return got

    def _sibling_vias(self, siblings: list[Stage | Dispatch]) -> list[Via]:
        got = self._sibs.get(id(siblings))
        if got is None:
            got = self._sibs[id(siblings)] = [x.via for x in iter_stages(siblings, selected_only=False)
                                                  if x.via is not None]
        return got

    def _repeats(self, st: Stage, parent: str, siblings: list[Stage | Dispatch]) -> tuple[list[Repeat], str]:
        out: list[Repeat] = []
        site = _site(st)
        qual = self.g.nodes[parent].get("qualname", "") if parent in self.g else ""
        for h in st.via.loops if st.via else ():
            m = multiplier(h, self._consts_of(parent))
            bound = self.loop_bind(h, qual) if self.loop_bind and m.value is None else None
            if bound is not None:
                value, source = bound
                r = Repeat(h, value, f"× {value} ({source})", site, Evidence.HEURISTIC,
                           f"bound to {source}", unit(m))
            elif m.value is not None:
                r = Repeat(h, m.value, f"× {m.value}", site, m.status, m.reason, unit(m))
            else:
                r = Repeat(h, None, "", site, m.status, m.reason, unit(m))
                r.label = f"× {loop_symbol(r)} (symbolic)"
            r.last_differs = self._last_differs(st, h)
            r.function = qual
            out.append(r)
        if st.via is None or not st.via.closures:
            return out, ""
        sibs = self._sibling_vias(siblings)
        first = cache_miss_closure(self.rules, st.via, sibs)
        recv = closure_receiver(st.via, sibs) if not first else None
        if recv is not None:
            name = bare_name(recv.callee)
            header = st.via.closures[0]
            at = recv.at
            if name in self.rules.closure_loops:
                out.append(Repeat(header, None, f"× each element (`{name}`)", site, Evidence.HEURISTIC,
                                  f"closure passed to `{name}`: once per element", "per element"))
            else:
                out.append(Repeat(header, 1, f"closure via `{name}` (assumed once)", site, Evidence.HEURISTIC,
                                  f"closure passed to `{name}` at {at}: assumed to run once", ""))
        return out, first

    def _last_differs(self, st: Stage, header: str) -> str:
        """``compute_tail = index + 1 < depth`` when an argument compares the loop variable."""
        m = re.match(r"^for\s*\(?\s*(?:[\w:]+\s+)?\(?([\w\s,]+?)\)?\s*(?:in\b|=|:)", header)
        if not m:
            return ""
        names = {v.strip() for v in m.group(1).split(",") if v.strip() and v.strip() != "_"}
        d = self.index.definition(st.node)
        params = [p.name for p in d.params if p.name != "self"] if d is not None else []
        for i, a in enumerate(st.via.args if st.via else ()):
            if re.search(r"<|>|==|!=", a) and any(re.search(rf"\b{re.escape(n)}\b", a) for n in names):
                p = params[i] if i < len(params) else f"argument {i + 1}"
                return f"{p} = {a}: differs on the last iteration"
        return ""

    # -- operator level -------------------------------------------------------------------------

    def op(self, node: str, stack: tuple[str, ...]) -> _Op:
        """What one call of operator function ``node`` reaches (memoised; keys relative to it)."""
        if self._log is not None:
            self._log.append(node)
        got = self._opmemo.get(node)
        if got is None:
            self._walked.add(node)
            outer, self._log = self._log, []
            try:
                got = self._op_items(node, self.children(node), (*stack, node))
            finally:
                self._effects[node], self._log = self._log, outer
            self._opmemo[node] = got
        elif node not in self._walked:
            self._replay(node)
        return got

    def _replay(self, node: str) -> None:
        """A memo kept from an earlier walk, first used in this one: its notes, as computing it would make."""
        self._walked.add(node)
        outer, self._log = self._log, None
        try:
            for e in self._effects[node]:
                if isinstance(e, str):
                    if e not in self._walked:
                        self._replay(e)
                elif isinstance(e, Stage):
                    self._note(e)
                else:
                    self._record(e)
        finally:
            self._log = outer

    def _op_items(self, node: str, items: list[Stage | Dispatch], stack: tuple[str, ...]) -> _Op:
        out = _Op()
        for it in _merge_cfg(items):
            if isinstance(it, Stage):
                self._op_stage(out, node, it, items, stack)
            else:
                self._op_dispatch(out, node, it, stack)
        return out

    def _op_stage(self, out: _Op, node: str, st: Stage, siblings: _Items, stack: _Stack) -> None:
        self._note(st)
        cl = self.classify(st)
        k = (stage_key(st),)
        reps, first = self.repeats(st, node, siblings)
        phase = Phase.PREPARE if first else None
        if cl.cls in _WORK:
            c = self._call(st, node, cl, k)
            c.repeat = reps
            c.phase = phase
            out.work.append(c)
            add_counts(out.counts, scale({phase or Phase.EAGER: Count.unit(_COUNT_KIND[cl.cls])}, reps))
        elif cl.cls == CallClass.CODE:
            if st.node in stack:
                out.cuts.append(Cut("recursion", st.qualname, _site(st), k))
                return
            if st.kind == NodeKind.ABI_FN:
                _add(out.adapters, [_adapter(st)])
            sub = self.op(st.node, stack)
            if sub.work:
                out.work.append(_Seg(sub.work, k, reps, (), phase))
            if phase:
                _add_others(out.other, sub.other.values(), k, first)
            else:
                _add_others(out.other, sub.other.values(), k)
            _add(out.adapters, sub.adapters)
            if sub.cuts:
                out.cuts.append(_CutsUnder(k, sub.cuts))
            out.arms += [a for a in sub.arms if a not in out.arms]
            sc = scale(sub.counts, reps)
            add_counts(out.counts, {Phase.PREPARE: _sum(sc)} if phase else sc)
        elif cl.cls != CallClass.HOST:
            _add_others(out.other, [OtherCall(cl.cls, bare_name(st.qualname), self._call_site(st), k, bool(phase),
                                              self._detail(st, cl), guard=first)])

    def _call_site(self, st: Stage) -> Site:
        return _site(st)

    def _detail(self, st: Stage, cl: Classified) -> str:
        if cl.cls == CallClass.GRAPH:
            return self.cap.roles.role(st.node) or ""
        if "memcpy" in st.name.lower():
            d = copy_direction(st.name, list(st.via.args) if st.via else [])
            return d if d in ("H2D", "D2H", "D2D") else ""
        return ""

    def _call(self, st: Stage, parent: str, cl: Classified, k: KeyChain) -> Call:
        v = st.via
        dt = ""
        try:
            if cl.cls == CallClass.DEVICE:
                dt = dtype_short(self.dt.kernel(st.node, v))
            elif v is not None and (v.kind == EdgeKind.VENDOR or st.kind == NodeKind.VENDOR_API):
                dt = dtype_short(self.dt.library(parent, v))
        except Exception as e:  # noqa: BLE001 - a dtype rule failing must not lose the row
            dt = f"unknown ({type(e).__name__})"
        name = st.qualname if cl.cls == CallClass.DEVICE else bare_name(st.qualname)
        return Call(cl.cls, name, _site(st), Site(st.file, st.line) if st.file else Site("", 0), k,
                    list(v.template_args) if v else [], dt, library=self.g.nodes[st.node].get("library", "")
                    if st.node in self.g else "", resolution=v.resolution if v else "", how=v.how if v else "")

    def _op_dispatch(self, out: _Op, node: str, d: Dispatch, stack: _Stack) -> None:
        self._record(d)
        shown = [a for a in d.arms if a.selected is not False]
        chosen = [a for a in shown if a.selected]
        if len(chosen) == 1:
            _merge_into(out, self._op_items(node, chosen[0].children, stack))
            return
        first = [a for a in shown if self._first_call_arm(d, a)]
        rest = [a for a in shown if a not in first]
        for a in first:
            sub = self._op_items(node, a.children, stack)
            cond = Condition(a.label, Site(d.file, d.line), d.key, a.index)
            if sub.work:
                out.work.append(_Seg(sub.work, (), [], (cond,), Phase.PREPARE))
            _add_others(out.other, sub.other.values(), (), a.label)
            _add(out.adapters, sub.adapters)
            out.cuts += sub.cuts
            add_counts(out.counts, {Phase.PREPARE: _sum(sub.counts)})
        parts = [(a, self._op_items(node, a.children, stack)) for a in rest]
        for _a, sub in parts:
            _add_others(out.other, sub.other.values())
            _add(out.adapters, sub.adapters)
            out.cuts += sub.cuts
            out.arms += [x for x in sub.arms if x not in out.arms]
        with_work = [(a, sub) for a, sub in parts if sub.work]
        if not with_work:
            return
        if len(parts) == 1:  # one arm shown (the others compiled out): its work, guarded
            a, sub = parts[0]
            cond = Condition(a.label, Site(d.file, d.line), d.key, a.index)
            out.work.append(_Seg(sub.work, (), [], (cond,), None))
            add_counts(out.counts, sub.counts)
            return
        choice = Choice(d.construct, d.subject, Site(d.file, d.line), d.key)
        for a, sub in parts:
            label = _arm_text(d, a)
            work = _rekey(sub.work, (), [], (), None)
            alt = Alternative(label, Site(d.file, d.line), d.key, a.index, work, a.selected)
            if len(work) == 1 and isinstance(work[0], Choice):  # nested choice: flatten
                for inner in work[0].alternatives:
                    choice.alternatives.append(_with(inner, condition=f"{label}; {inner.condition}"))
            else:
                choice.alternatives.append(alt)
        choice.launches = choice_range(choice)
        out.work.append(choice)
        phases = list(dict.fromkeys(ph for _, s in parts for ph in s.counts))
        add_counts(out.counts, {ph: Count.alternatives([s.counts.get(ph, Count()) for _, s in parts]) for ph in phases})
        site = f"{d.file}:{d.line}"
        if site not in out.arms:
            out.arms.append(site)

    def _first_call_arm(self, d: Dispatch, a: Arm) -> bool:
        return first_call_arm(self.rules, d.construct, d.subject, a.label, a.kind, a.implicit)

    # -- model level ---------------------------------------------------------------------

    def build(self, entry: str) -> None:
        self._reset_walk()
        root = self.tracer.stage(entry)
        self.entry_name = root.qualname
        phase = Phase.LOAD if LOADER.match(root.name or "") else Phase.EAGER
        ctx = _Ctx(phase, self._freq(phase, ""))
        self.root = root
        self.totals = self._model(entry, (stage_key(root),), (), (entry,), ctx)

    def _freq(self, phase: Phase, why: str) -> str:
        """A row's frequency: its table's, or for a first call the reason (``why``) it runs once."""
        if phase == Phase.PREPARE:
            return f"first call ({why})" if why else "first call"
        return table_frequency(phase, self.entry_name)

    def _capture_body(self, node: str, items: list[Stage | Dispatch]) -> set[int]:
        got = self._regions.get(node)
        if got is None:
            got = set()
            out: list[CaptureRegion | RegionError] = []
            fn = self.tracer.stage(node)
            fn.children = items
            try:
                for r in self.cap.regions_in(fn):
                    got |= {id(s) for s in r.body_stages}
                    out.append(self._public_region(fn, r))
            except Exception as e:  # noqa: BLE001 - a capture rule failing must not lose the map
                got = set()
                out = [RegionError(fn.qualname, f"{type(e).__name__}: {e}")]
            self._regions[node], self._region_out[node] = got, out
        if node not in self._regions_walked:  # listed at the first call in a walk
            self._regions_walked.add(node)
            self.regions += self._region_out[node]
        return got

    def _public_region(self, fn: Stage, r: CaptureRegion) -> CaptureRegion:
        """A region as the capture audit reports it (no private fields), with the capturing function's own graph
        caches.  The map does not analyse the body, so caches whose key covers a value it freezes (listed by
        the capture audit and the annotated path) are not added here: the listing depends only on the inputs."""
        return replace(r.public(), graph_keys=tuple(graph_keys(self.index, self.cap.roles).keyed_on(fn.node)))

    def _model(self, node: str, prefix: KeyChain, frames: tuple[Frame, ...], stack: tuple[str, ...],
               ctx: _Ctx) -> PhaseCounts:
        items = self.children(node)
        body = self._capture_body(node, items)
        return self._model_items(node, items, items, prefix, frames, stack, ctx, body)

    def _model_items(self, node: str, items: _Items, siblings: _Items, prefix: KeyChain, frames: _Frames,
                     stack: _Stack, ctx: _Ctx, body: set[int]) -> PhaseCounts:
        total: PhaseCounts = {}
        for it in _merge_cfg(items):
            if isinstance(it, Stage):
                add_counts(total, self._model_stage(node, it, siblings, prefix, frames, stack, ctx, body))
            else:
                add_counts(total, self._model_dispatch(node, it, siblings, prefix, frames, stack, ctx, body))
        return total

    def _enter_prepare(self, ctx: _Ctx, why: str) -> _Ctx:
        if ctx.phase != Phase.EAGER:
            return ctx
        gid = len(self._guards) + 1
        self._guards[gid] = {"why": why, "graph": False}
        return _with(ctx, phase=Phase.PREPARE, freq=self._freq(Phase.PREPARE, why), guard=gid)

    def _model_stage(self, node: str, st: Stage, siblings: _Items, prefix: KeyChain, frames: _Frames,
                     stack: _Stack, ctx: _Ctx, body: set[int]) -> PhaseCounts:
        self._note(st)
        cl = self.classify(st)
        k = (*prefix, stage_key(st))
        reps, first = self.repeats(st, node, siblings)
        if first:
            ctx = self._enter_prepare(ctx, first)
        if id(st) in body and ctx.phase != Phase.LOAD:
            ctx = _with(ctx, phase=Phase.CAPTURED, freq=self._freq(Phase.CAPTURED, ""))
            self._mark_graph(ctx)
        ctx = _with(ctx, repeat=(*ctx.repeat, *reps))
        role = self.role(st.node)
        if role and (cl.cls == CallClass.GRAPH or cl.cls == CallClass.CODE and self.ops.contains(self.g, st.node)):
            return self._graph_row(st, k, frames, ctx, role, reps)
        if cl.cls == CallClass.CODE:
            if st.node in stack:
                self.cuts.append(Cut("recursion", st.qualname, _site(st), k))
                return {}
            if self.ops.contains(self.g, st.node):
                return self._row(st, k, frames, ctx, reps)
            if LOADER.match(st.name or "") and ctx.phase == Phase.EAGER:
                ctx = _with(ctx, phase=Phase.LOAD, freq=self._freq(Phase.LOAD, ""))
            mp = self._model_phase(st, reps) or ctx.model_phase
            ctx = _with(ctx, model_phase=mp)
            fr = Frame(call_name(st), st.qualname, _site(st), k, reps, list(ctx.conds), mp)
            seen = self._blocks.get((st.node, ctx.phase, ctx.guard > 0))
            if seen is not None and seen[1] >= MIN_BLOCK_ROWS:  # the same function walked before: one row
                first_frame, n_rows, seen_counts = seen
                row = Row(call_name(st), st.qualname, _site(st), k, ctx.phase, ctx.freq, ref=first_frame.key,
                          ref_rows=n_rows, note=f"same {n_rows} rows as `{first_frame.name}` at {first_frame.site}",
                          resolution=_resolution(st))
                row.counts = to_counts(seen_counts.get(ctx.phase))
                self._emit(row, frames, ctx)
                return scale(seen_counts, reps)
            n0 = len(self.rows)
            sub = self._model(st.node, k, (*frames, fr), (*stack, st.node), ctx)
            self._blocks.setdefault((st.node, ctx.phase, ctx.guard > 0), (fr, len(self.rows) - n0, sub))
            return scale(sub, reps)
        if cl.cls in _WORK:
            return self._row(st, k, frames, ctx, reps, direct=cl)
        if cl.cls in (CallClass.MEMORY, CallClass.TRANSFER, CallClass.GRAPH):
            other = OtherCall(cl.cls, bare_name(st.qualname), _site(st), (), ctx.phase == Phase.PREPARE,
                              self._detail(st, cl))
            self._emit(Row(bare_name(st.qualname), st.qualname, _site(st), k, ctx.phase, ctx.freq, other=[other],
                           note=cl.cls.value), frames, ctx)
        return {}

    def _others(self, node: str, op: _Op) -> list[OtherCall]:
        """An operator's non-work calls, one per (class, name, site, first call), counted (shared by its rows:
        keys relative to the row)."""
        got = self._others_memo.get(node)
        if got is None:
            got = self._others_memo[node] = list(op.other.values())
        return got

    def _model_phase(self, st: Stage, reps: list[Repeat]) -> str:
        text = f"{st.name} {' '.join(r.header for r in reps)}"
        got = self._phase_of.get(text)
        if got is None:
            got = self._phase_of[text] = self.rules.model_phase(text)
        return got

    def _mark_graph(self, ctx: _Ctx) -> None:
        if ctx.guard:
            self._guards[ctx.guard]["graph"] = True

    def _graph_row(self, st: Stage, k: KeyChain, frames: _Frames, ctx: _Ctx, role: str,
                   reps: list[Repeat]) -> PhaseCounts:
        """A capture-lifecycle call (or a wrapper of one): one row, not followed."""
        notes = ROLE_NOTES
        if role != "replay":
            self._mark_graph(ctx)
        other = OtherCall(CallClass.GRAPH, call_name(st), _site(st), (), ctx.phase == Phase.PREPARE, role)
        self._emit(Row(call_name(st), st.qualname, _site(st), k, ctx.phase, ctx.freq,
                       other=[other], note=notes.get(role, role), resolution=_resolution(st)), frames, ctx)
        if role == "replay":
            c = Count.unit("graph_launches")
            return scale({ctx.phase: c}, reps)
        return {}

    def _row(self, st: Stage, k: KeyChain, frames: _Frames, ctx: _Ctx, reps: list[Repeat],
             direct: Classified | None = None) -> PhaseCounts:
        if direct is not None:
            call = self._call(st, st.node, direct, ())
            op = _Op([call], counts={Phase.EAGER: Count.unit(_COUNT_KIND[direct.cls])})
        else:
            op = self.op(st.node, ())
        row = Row(call_name(st), st.qualname, _site(st), k, ctx.phase, ctx.freq,
                  adapter=list(op.adapters), work=_rekey(op.work, k, [], (), None), other=self._others(st.node, op),
                  resolution=_resolution(st))
        if st.kind == NodeKind.ABI_FN and (a := _adapter(st)) not in row.adapter:
            row.adapter.insert(0, a)
        _flat_cuts(op.cuts, k, self.cuts)
        if direct is None:
            got = self._counts.get(st.node)
            if got is None:
                got = self._counts[st.node] = to_counts(op.counts.get(Phase.EAGER), op.arms)
            row.counts = got
        else:
            row.counts = to_counts(op.counts.get(Phase.EAGER), op.arms)
        if row.work or row.other:  # a call reaching no device work, memory, transfer or graph call is no row
            self._emit(row, frames, ctx)
        out: PhaseCounts = {}
        for ph, cnt in op.counts.items():
            out.setdefault(ctx.phase if ph == Phase.EAGER else (ph if ctx.phase == Phase.EAGER else ctx.phase),
                           Count()).add(cnt)
        if op.arms:
            self.range_arms.setdefault(ctx.phase, [])
            self.range_arms[ctx.phase] += [a for a in op.arms if a not in self.range_arms[ctx.phase]]
        return scale(out, reps)

    def _emit(self, row: Row, frames: _Frames, ctx: _Ctx) -> None:
        row.repeat = list(ctx.repeat)
        row.condition = list(ctx.conds)
        row.context = tuple(frames)
        row.model_phase = ctx.model_phase
        row.frequency = ctx.freq
        row.phase = ctx.phase
        row._guard = ctx.guard  # type: ignore[attr-defined]
        self.rows.append(row)

    def _model_dispatch(self, node: str, d: Dispatch, siblings: _Items, prefix: KeyChain, frames: _Frames,
                        stack: _Stack, ctx: _Ctx, body: set[int]) -> PhaseCounts:
        self._record(d)
        shown = [a for a in d.arms if a.selected is not False]
        if not shown:
            return {}
        site = Site(d.file, d.line)
        lone = [_lone_stage(a) for a in shown]
        if d.construct == "candidates" and len(shown) > 1 and all(lone) and any(
                self.ops.contains(self.g, st.node) for st in lone if st is not None):
            return self._candidates_row(node, d, shown, prefix, frames, ctx)
        chosen = [a for a in shown if a.selected]
        per_arm: list[PhaseCounts] = []
        for a in shown:
            actx = ctx
            if not (len(chosen) == 1 and a.selected):
                actx = _with(ctx, conds=(*ctx.conds, Condition(_arm_text(d, a), site, d.key, a.index, _subject(d))))
            if self._first_call_arm(d, a):
                actx = self._enter_prepare(actx, f"`{a.label}` at {site}")
            per_arm.append(self._model_items(node, a.children, siblings, prefix, frames, stack, actx, body))
        if len(per_arm) == 1:
            return per_arm[0]
        phases = list(dict.fromkeys(ph for r in per_arm for ph in r))
        out = {ph: Count.alternatives([r.get(ph, Count()) for r in per_arm]) for ph in phases}
        for ph in phases:
            if len({tuple(r.get(ph, Count()).kinds().values()) for r in per_arm}) > 1:
                lst = self.range_arms.setdefault(ph, [])
                if str(site) not in lst:
                    lst.append(str(site))
        return out

    def _candidates_row(self, node: str, d: Dispatch, shown: list[Arm], prefix: KeyChain, frames: _Frames,
                        ctx: _Ctx) -> PhaseCounts:
        """An ambiguous call into the operator layer: one row, its candidates as alternatives."""
        site = Site(d.file, d.line)
        first = shown[0].children[0]
        assert isinstance(first, Stage)
        k = (*prefix, stage_key(first))
        choice = Choice("candidates", d.subject, site, d.key)
        row = Row(d.subject, first.qualname, site, k, ctx.phase, ctx.freq)
        per: list[PhaseCounts] = []
        for a in shown:
            st = a.children[0]
            assert isinstance(st, Stage)
            op = self.op(st.node, ())
            ka = (*prefix, stage_key(st))
            choice.alternatives.append(Alternative(_arm_text(d, a), site, d.key, a.index,
                                                   _rekey(op.work, ka, [], (), None), a.selected))
            _add(row.adapter, op.adapters)
            row.other += [_with(o, key=(stage_key(st), *o.key)) for o in self._others(st.node, op)]
            per.append({ctx.phase if ph == Phase.EAGER else ph: c for ph, c in op.counts.items()})
        if any(a.work for a in choice.alternatives):
            choice.launches = choice_range(choice)
            row.work = [choice]
        if not row.work and not row.other:
            return {}
        roles = {r for a in shown if (st0 := _lone_stage(a)) is not None and (r := self.role(st0.node))}
        if roles:
            row.note = "; ".join(ROLE_NOTES.get(r, r) for r in sorted(roles))
            if roles - {"replay"}:
                self._mark_graph(ctx)
            if "replay" in roles:
                per.append({ctx.phase: Count.unit("graph_launches")})
        phases = list(dict.fromkeys(ph for r in per for ph in r))
        out = {ph: Count.alternatives([r.get(ph, Count()) for r in per]) for ph in phases}
        row.counts = to_counts(out.get(ctx.phase), [str(site)])
        self._emit(row, frames, ctx)
        lst = self.range_arms.setdefault(ctx.phase, [])
        if str(site) not in lst:
            lst.append(str(site))
        return out

    # -- result ----------------------------------------------------------------------------

    def result(self) -> ExecutionMap:
        for r in self.rows:
            g = getattr(r, "_guard", 0)
            if g and r.phase == Phase.PREPARE and self._guards[g]["graph"]:
                r.frequency = f"once per graph key ({self._guards[g]['why']}; builds a CUDA Graph)"
        tables: dict[Phase, PhaseTable] = {}
        for r in self.rows:
            t = tables.get(r.phase)
            if t is None:
                t = tables[r.phase] = PhaseTable(r.phase, table_frequency(r.phase, self.entry_name))
            t.rows.append(r)
        for ph, t in tables.items():
            t.totals = to_counts(self.totals.get(ph), self.range_arms.get(ph, []))
        m = ExecutionMap(self.entry_name, Site(self.root.file, self.root.line), self.ops.rule,
                         [tables[p] for p in PHASE_ORDER if p in tables], self.cuts,
                         unresolved=self.unresolved, ambiguous=self.ambiguous, static_note=STATIC_NOTE)
        m.capture_regions = self.regions
        m.choices = self._choices()
        m.undecided = self._undecided()
        return m

    def _undecided(self) -> list[ChoiceMade]:
        return [ChoiceMade(key, d.construct, d.subject, Site(d.file, d.line), [a.label for a in d.arms], "")
                for key, d in self.dispatches.items() if not any(a.selected for a in d.arms)]

    def _choices(self) -> list[ChoiceMade]:
        out = []
        for key, d in self.dispatches.items():
            chosen = [a for a in d.arms if a.selected]
            if not chosen or len(chosen) == len([a for a in d.arms if a.selected is not False]) and \
                    all(a.selected for a in d.arms):
                continue
            by = "choice" if key in self.tracer.choices else "select " + ", ".join(self.tracer.select)
            out.append(ChoiceMade(key, d.construct, d.subject, Site(d.file, d.line), [a.label for a in chosen], by))
        return out


#: How often a phase's work runs (the eager phase: per call of the entry).  The renderers name the phase
#: beside it; rows that run as often as their table print no frequency line of their own.
_PHASE_FREQUENCY = {
    Phase.CAPTURED: "recorded once per graph key (capture); replayed on every replay",
    Phase.PREPARE: "first call / once per graph key",
    Phase.CAPTURE: "capture lifecycle",
    Phase.LOAD: "once per model load",
}


def table_frequency(phase: Phase, entry: str) -> str:
    """The frequency of a phase table of ``entry``'s map (and of its rows, but a first call's)."""
    return _PHASE_FREQUENCY.get(phase, f"per call of {entry}")


# -- helpers -----------------------------------------------------------------------------------


def _lone_stage(a: Arm) -> Stage | None:
    """The one stage an arm holds (a candidate of an ambiguous call), or None."""
    return a.children[0] if len(a.children) == 1 and isinstance(a.children[0], Stage) else None


def _arm_text(d: Dispatch, a: Arm) -> str:
    """An arm's condition as shown: a candidate by its short name (``candidate Pi05PreparedInference::run``)."""
    if d.construct == "candidates":
        q = a.label.split(" @ ", 1)[0]
        rest = a.label.split(" [", 1)[1].rstrip("]") if " [" in a.label else ""
        return "candidate " + "::".join(q.split("::")[-2:]) + (f" [{rest}]" if rest else "")
    return a.label


def _subject(d: Dispatch) -> str:
    """What a match / switch tests (shown beside its arm's label); "" for if / cfg / candidates."""
    return d.subject if d.construct in ("match", "switch") else ""


def _exit_arms(d: Dispatch, exits: set[tuple[str, int]]) -> set[int]:
    group = d.key.rpartition(":")[2] if "#" in d.key else ""
    group = d.key.rsplit("#", 1)[-1].split(":", 1)[-1] if "#" in d.key else group
    return {a.index for a in d.arms if (group, a.index) in exits and not a.implicit}


def _after_exits(items: list[Stage | Dispatch], exits: set[tuple[str, int]]) -> list[Stage | Dispatch]:
    """``if c { A; return x } B`` as ``if c { A } else { B }``: the calls after a construct with an arm that
    returns (not on an error path) move into its one continuing arm.  Applied in every arm as well."""
    out: list[Stage | Dispatch] = []
    for i, it in enumerate(items):
        if isinstance(it, Stage):
            out.append(it)
            continue
        arms = [replace(a, children=_after_exits(a.children, exits)) for a in it.arms]
        d = replace(it, arms=arms)
        leaving = _exit_arms(d, exits)
        cont = [a for a in arms if a.index not in leaving]
        rest = items[i + 1:]
        if leaving and len(cont) == 1 and rest:
            a = cont[0]
            label = a.label
            if a.implicit:
                shown = [x.label for x in arms if x.index in leaving]
                label = "; ".join(s[1:].strip() if re.fullmatch(r"!\s*[\w.]+", s) else f"not({s})" for s in shown)
            a.children = [*a.children, *_after_exits(rest, exits)]
            a.label, a.implicit = label + " (else: returns early)", False
            out.append(d)
            return out
        out.append(d)
    return out


def _keys(items: list[Stage | Dispatch]) -> set[str]:
    out: set[str] = set()
    for it in items:
        if isinstance(it, Dispatch):
            out.add(it.key)
            for a in it.arms:
                out |= _keys(a.children)
    return out


def _item_line(it: Stage | Dispatch) -> int:
    if isinstance(it, Stage):
        return it.via.line if it.via else 0
    return it.line


def _synthetic_exits(node: str, items: list[Stage | Dispatch], exits: list[dict[str, Any]]) -> list[Stage | Dispatch]:
    """An arm that returns early but calls nothing has no dispatch point in the trace: the calls of the
    function after that construct (at its top level) go under one, ``if c { return x }`` → ``if !c { … }``."""
    have = _keys(items)
    for e in sorted(exits, key=lambda x: x["end"]):
        kind = "match_arm" if e.get("kind") == "match_arm" else "if"
        key = f"{node}#{kind}:{e['group']}"
        if key in have or not e.get("text"):
            continue
        cut = next((i for i, it in enumerate(items) if _item_line(it) > e["end"]), None)
        if cut is None:
            continue
        line = int(e["group"].split(":")[0]) if e["group"].split(":")[0].isdigit() else e["line"]
        text = e["text"]
        cont = text[1:].strip() if re.fullmatch(r"!\s*[\w.]+", text) else f"not({text})"
        rest = items[cut:]
        d = Dispatch(key, "match" if kind == "match_arm" else "if", e.get("subject", ""), "", line,
                     [Arm(text + " (returns early)", e.get("kind", "if"), e["arm"]),
                      Arm(cont + " (else: returns early)", "implicit", e["arm"] + 1, rest)])
        first = rest[0]
        d.file = (first.via.file if first.via else "") if isinstance(first, Stage) else first.file
        items = [*items[:cut], d]
        have.add(key)
    return items


def _merge_cfg(items: list[Stage | Dispatch]) -> list[Stage | Dispatch]:
    """``#[cfg(X)] {…}`` next to ``#[cfg(not(X))] {…}`` as one dispatch (one of the two blocks runs)."""
    pairs = complementary_cfg(items)
    if not pairs:
        return items
    out: list[Stage | Dispatch] = []
    skip = set(pairs.values())
    for i, it in enumerate(items):
        if i in skip:
            continue
        if i in pairs:
            a, b = it, items[pairs[i]]
            assert isinstance(a, Dispatch) and isinstance(b, Dispatch)
            arms = [x for dd in (a, b) for x in dd.arms if not x.implicit]
            out.append(Dispatch(a.key, "cfg", a.subject, a.file, a.line, arms, a.note))
        else:
            out.append(it)
    return out


def _sum(pc: PhaseCounts) -> Count:
    c = Count()
    for x in pc.values():
        c.add(x)
    return c


def _merge_into(out: _Op, sub: _Op) -> None:
    out.work += sub.work
    _add_others(out.other, sub.other.values())
    _add(out.adapters, sub.adapters)
    out.cuts += sub.cuts
    out.arms += [a for a in sub.arms if a not in out.arms]
    add_counts(out.counts, sub.counts)


def _rekey(work: Sequence[Work | _Seg], prefix: KeyChain, reps: list[Repeat], guard: tuple[Condition, ...],
           phase: Phase | None) -> list[Work]:
    """Copies of ``work`` with keys under ``prefix``, loops ``reps`` and ``guard`` added, ``phase`` set, its
    segments applied (a work item under no change and no segment is kept as it is)."""
    out: list[Work] = []
    same = not (prefix or reps or guard or phase)
    for w in work:
        if isinstance(w, _Seg):
            out += _rekey(w.work, prefix + w.prefix, [*reps, *w.reps], (*guard, *w.guard), phase or w.phase)
        elif same:
            out.append(w)
        elif isinstance(w, Call):
            out.append(_with(w, key=prefix + w.key, repeat=[*reps, *w.repeat], guard=[*guard, *w.guard],
                               phase=phase or w.phase))
        else:  # the loops scale its count (a count is linear in its calls' loops, arms' min / max included)
            out.append(_with(w, alternatives=[_with(a, work=_rekey(a.work, prefix, reps, guard, phase))
                                                for a in w.alternatives],
                             count=scale({Phase.EAGER: w.count}, reps)[Phase.EAGER] if reps and w.count else w.count))
    return out


def map_builder(index: Any, *, select: list[str] | None = None, choices: dict[str, int] | None = None,
                profile: Any = None, loop_bind: LoopBinder | None = None, operators: list[str] | None = None,
                rules: CallRules | None = None) -> MapBuilder:
    """A builder under the selection, arm choices and profile (:meth:`MapBuilder.set_choices` changes the
    choices and keeps what they do not reach)."""
    tracer = Tracer(index.graph, select=select, choices=choices, profile=profile)
    ops = operator_layer(index.graph, getattr(index, "root", None), operators)
    return MapBuilder(index, tracer, rules or call_rules(), ops, loop_bind)


def map_of(b: MapBuilder, entry: str) -> ExecutionMap:
    """Walk from ``entry`` (a node id) and return the map with its lead lines."""
    b.build(entry)
    m = b.result()
    m.lead = lead_lines(m)
    return m


def build_map(index: Any, entry: str, *, select: list[str] | None = None, choices: dict[str, int] | None = None,
              profile: Any = None, loop_bind: LoopBinder | None = None, operators: list[str] | None = None,
              rules: CallRules | None = None) -> ExecutionMap:
    """The execution map of ``entry`` (a node id) under the selection, arm choices and profile."""
    return map_of(map_builder(index, select=select, choices=choices, profile=profile, loop_bind=loop_bind,
                              operators=operators, rules=rules), entry)


__all__ = ["build_map", "map_builder", "map_of", "MapBuilder", "render", "LOADER"]
