"""The execution map's records: phases → rows → work, typed (see :mod:`apxtui.map` for the API).

Plain dataclasses with StrEnum fields from :mod:`apxtui.vocab`; :meth:`ExecutionMap.to_dict` is the
JSON form (the trace document's ``execution_map``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from apxtui.analysis.capturefacts import CaptureRegion, RegionError
from apxtui.vocab import CallClass, Evidence, Phase

if TYPE_CHECKING:
    from apxtui.analysis.launches import Count

#: Stage key chain from the entry: one ``node@site`` per stage (:func:`apxtui.trace.stage_key`).
KeyChain = tuple[str, ...]


@dataclass(frozen=True)
class Site:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "—"


@dataclass
class Repeat:
    """One loop around a row or a work item: a number (literal, constant, checkpoint config) or symbolic."""

    header: str  # the loop header as written
    value: int | None  # None: symbolic
    label: str  # "× 18 (language.depth, config.json)" or "× self.layers (symbolic)"
    site: Site
    status: Evidence
    reason: str = ""
    unit: str = ""  # "per layer", "per step", …
    last_differs: str = ""  # "compute_tail = index + 1 < depth: false on the last iteration"
    function: str = ""  # qualified name of the function holding the loop


@dataclass
class Condition:
    """A branch arm that must hold for a row or work item to run."""

    text: str
    site: Site
    dispatch: str = ""  # the dispatch key (the explorer's [ / ] changes its arm)
    arm: int = -1
    subject: str = ""  # what a match / switch tests ("self.graphs.get(&seq_len)"); "" for an if

    def __str__(self) -> str:
        if not self.subject:
            return self.text
        subj = " ".join(self.subject.split())
        return f"{self.text} (of {subj if len(subj) <= 40 else subj[:39] + '…'})"


@dataclass
class Call:
    """One kernel launch or library compute call reached below a row."""

    kind: CallClass  # DEVICE (kernel launch) or LIBRARY (library compute call)
    name: str
    site: Site  # launch / call site
    definition: Site  # kernel definition (no definition for a library call)
    key: KeyChain
    template_args: list[str] = field(default_factory=list)
    dtypes: str = ""
    repeat: list[Repeat] = field(default_factory=list)  # loops inside the operator
    guard: list[Condition] = field(default_factory=list)  # conditions inside the operator (not alternatives)
    phase: Phase | None = None  # set when it differs from the row's phase (first call inside the operator)
    library: str = ""
    resolution: str = ""  # how the launch / call edge was linked (exact, heuristic, ambiguous)
    how: str = ""  # the rule that linked it

    @property
    def is_work(self) -> bool:
        return True


@dataclass(frozen=True)
class Adapter:
    """An ``extern "C"`` / ABI function reached below a row, with the edge that reached it."""

    name: str
    definition: Site  # where the adapter is defined (a .cu / .cpp file)
    site: Site  # the edge's site: the extern "C" declaration that links to it, or the call of it
    resolution: str  # how that edge was linked (exact, heuristic, ambiguous, unresolved)
    how: str = ""  # the rule that linked it

    def __str__(self) -> str:
        return f"{marked(self.name, self.resolution)} ({self.definition}; linked at {self.site})"


@dataclass
class Alternative:
    """One arm of a choice below a row: the work it does (possibly none) and its condition."""

    condition: str
    site: Site
    dispatch: str
    arm: int
    work: list[Work] = field(default_factory=list)
    chosen: bool | None = None  # True: chosen by selection; None: no selection at this point

    @property
    def name(self) -> str:
        return work_text(self.work) or "no device work"


@dataclass
class Choice:
    """Mutually exclusive alternatives (an if / else if / else, a match, ambiguous candidates):
    counts take one arm, never the sum."""

    construct: str
    subject: str
    site: Site
    dispatch: str
    alternatives: list[Alternative] = field(default_factory=list)
    launches: str = ""  # launches + library calls of one arm, "lo..hi" over the arms (set by the builder)
    #: one execution's count (:func:`apxtui.map.counts.work_count`), kept by the builder: an enclosing choice
    #: counts its arms from it instead of walking every call below again
    count: Count | None = field(default=None, compare=False, repr=False)

    @property
    def kind(self) -> CallClass:
        kinds = {c.kind for a in self.alternatives for c in iter_calls(a.work)}
        return CallClass.DEVICE if CallClass.DEVICE in kinds or not kinds else CallClass.LIBRARY

    @property
    def name(self) -> str:
        return " | ".join(dict.fromkeys(a.name for a in self.alternatives))


Work = Call | Choice


@dataclass
class OtherCall:
    """A reached call that is not device work (setup, memory, transfer, graph lifecycle)."""

    cls: CallClass
    name: str
    site: Site
    key: KeyChain  # relative to the row: ``row.key + other.key`` is the stage's chain from the entry
    first_call: bool = False
    detail: str = ""  # copy direction, capture role
    count: int = 1  # calls at this site reached from the row (one per path)
    guard: str = ""  # the first-call condition it runs under (``workspace.is_null()``), when first_call


@dataclass
class Frame:
    """A model-level function call (or loop) enclosing rows: the folding context."""

    name: str  # callee as written at the call site
    qualname: str
    site: Site  # call site
    key: KeyChain
    repeat: list[Repeat] = field(default_factory=list)
    condition: list[Condition] = field(default_factory=list)
    model_phase: str = ""


@dataclass
class Counts:
    """Static counts (min..max over alternatives) of device launches and library calls."""

    device: str = "0"
    library: str = "0"
    exact: bool = True
    arms: list[str] = field(default_factory=list)  # the dispatch sites whose arms make a range
    device_range: tuple[int, int] | None = (0, 0)  # (min, max) as numbers; None when a loop is symbolic
    library_range: tuple[int, int] | None = (0, 0)


@dataclass
class Row:
    """One model operation: the call from model code into the operator layer, and what it reaches."""

    op: str  # callee as written at the call site ("gemm::bf16")
    target: str  # the operator function's qualified name
    site: Site  # call site in model code
    key: KeyChain  # stage key chain to the operator call
    phase: Phase
    frequency: str
    adapter: list[Adapter] = field(default_factory=list)  # extern "C" / ABI functions reached
    work: list[Work] = field(default_factory=list)
    other: list[OtherCall] = field(default_factory=list)
    repeat: list[Repeat] = field(default_factory=list)  # all loops from the entry to this call
    condition: list[Condition] = field(default_factory=list)  # model-level conditions
    context: tuple[Frame, ...] = ()  # model-level calls from the entry down to the row
    model_phase: str = ""
    counts: Counts = field(default_factory=Counts)  # one execution of the row
    note: str = ""  # "graph replay: replays the captured body", "same 12 rows as …"
    ref: KeyChain = ()  # a call of a model-level function shown before: the key of that first call
    ref_rows: int = 0  # how many rows the first call has (found under ``ref`` in the same phase)
    resolution: str = ""  # how the call into the operator was linked (exact, heuristic, ambiguous)


def marked(name: str, resolution: str) -> str:
    """``name`` with its link's evidence when that is weaker than exact: ``f [heuristic]``."""
    return f"{name} [{resolution}]" if resolution and resolution != "exact" else name


@dataclass
class Cut:
    """A subtree not expanded (recursion, depth, budget): never silent."""

    reason: str
    name: str
    site: Site
    key: KeyChain


#: A phase table's title (its frequency is shown beside it: :func:`apxtui.map.build.table_frequency`).
PHASE_TITLE = {Phase.EAGER: "Steady state", Phase.CAPTURED: "Captured (CUDA Graph body)",
               Phase.PREPARE: "Preparation and first call", Phase.CAPTURE: "Capture lifecycle", Phase.LOAD: "Load"}


@dataclass
class PhaseTable:
    phase: Phase
    frequency: str
    rows: list[Row] = field(default_factory=list)
    totals: Counts = field(default_factory=Counts)


@dataclass
class ChoiceMade:
    """A dispatch point whose arm was chosen (selection or the explorer's [ / ])."""

    dispatch: str
    construct: str
    subject: str
    site: Site
    chosen: list[str]
    by: str  # "choice" (explorer / --choice), "select TEXT", "profile"


@dataclass
class ExecutionMap:
    entry: str
    entry_site: Site
    operator_rule: str  # how the operator layer was decided
    phases: list[PhaseTable] = field(default_factory=list)
    cuts: list[Cut] = field(default_factory=list)
    choices: list[ChoiceMade] = field(default_factory=list)
    undecided: list[ChoiceMade] = field(default_factory=list)  # dispatch points no selection decided (by "")
    unresolved: dict[str, list[Site]] = field(default_factory=dict)  # callee → call sites
    ambiguous: dict[str, list[Site]] = field(default_factory=dict)
    lead: list[str] = field(default_factory=list)  # the main implementation choices
    # regions_in() of the walked functions
    capture_regions: list[CaptureRegion | RegionError] = field(default_factory=list)
    static_note: str = ""

    def rows(self) -> Iterator[Row]:
        for t in self.phases:
            yield from t.rows

    def to_dict(self) -> dict[str, Any]:
        return {
            "entry": self.entry, "site": str(self.entry_site), "operator_layer": self.operator_rule,
            "lead": list(self.lead), "static_analysis": self.static_note,
            "phases": [_table_dict(t) for t in self.phases],
            "cuts": [{"reason": c.reason, "name": c.name, "site": str(c.site), "key": list(c.key)} for c in self.cuts],
            "choices": [{"dispatch": c.dispatch, "construct": c.construct, "subject": c.subject,
                         "site": str(c.site), "chosen": c.chosen, "by": c.by} for c in self.choices],
            "undecided": [{"dispatch": c.dispatch, "construct": c.construct, "subject": c.subject,
                           "site": str(c.site), "arms": c.chosen} for c in self.undecided],
            "capture_regions": [r.to_dict() for r in self.capture_regions],
            "unresolved": {k: [str(s) for s in v] for k, v in self.unresolved.items()},
            "ambiguous": {k: [str(s) for s in v] for k, v in self.ambiguous.items()},
        }


# -- helpers ----------------------------------------------------------------------------------------


def iter_calls(work: list[Work]) -> Iterator[Call]:
    """Every call in ``work``, descending into every alternative."""
    for w in work:
        if isinstance(w, Call):
            yield w
        else:
            for a in w.alternatives:
                yield from iter_calls(a.work)


def work_text(work: list[Work]) -> str:
    """``rms_norm_kernel; 2× cublasLtMatmul`` — consecutive equal calls folded."""
    parts: list[str] = []
    prev, n = "", 0
    for w in work:
        t = marked(w.name, w.resolution) if isinstance(w, Call) else f"({w.name})"
        if isinstance(w, Call) and w.repeat:
            t += " " + " ".join(r.label for r in w.repeat)
        if t == prev:
            n += 1
            continue
        if prev:
            parts.append(f"{n}× {prev}" if n > 1 else prev)
        prev, n = t, 1
    if prev:
        parts.append(f"{n}× {prev}" if n > 1 else prev)
    return "; ".join(parts)


def _repeat_dict(r: Repeat) -> dict[str, Any]:
    return {"header": r.header, "value": r.value, "label": r.label, "site": str(r.site), "status": r.status.value,
            "reason": r.reason, "unit": r.unit, "last_differs": r.last_differs, "function": r.function}


def _cond_dict(c: Condition) -> dict[str, Any]:
    return {"text": c.text, "subject": c.subject, "site": str(c.site), "dispatch": c.dispatch, "arm": c.arm}


def _work_dict(w: Work) -> dict[str, Any]:
    if isinstance(w, Call):
        return {"kind": "kernel" if w.kind == CallClass.DEVICE else "library", "name": w.name,
                "launches": 1, "dtypes": w.dtypes, "site": str(w.site), "definition": str(w.definition),
                "template_args": list(w.template_args), "repeat": [_repeat_dict(r) for r in w.repeat],
                "guard": [_cond_dict(c) for c in w.guard], "phase": w.phase.value if w.phase else None,
                "library": w.library, "resolution": w.resolution, "how": w.how, "key": list(w.key),
                "alternatives": []}
    return {"kind": "kernel" if w.kind == CallClass.DEVICE else "library", "name": w.name,
            "launches": _choice_range(w), "dtypes": "", "site": str(w.site), "construct": w.construct,
            "subject": w.subject, "dispatch": w.dispatch,
            "alternatives": [{"name": a.name, "condition": a.condition, "site": str(a.site), "arm": a.arm,
                              "chosen": a.chosen, "work": [_work_dict(x) for x in a.work]} for a in w.alternatives]}


def _choice_range(c: Choice) -> str:
    return c.launches


def _counts_dict(c: Counts) -> dict[str, Any]:
    return {"device": c.device, "library": c.library, "exact": c.exact, "arms": list(c.arms)}


def _row_dict(r: Row) -> dict[str, Any]:
    return {
        "op": r.op, "target": r.target, "site": str(r.site), "resolution": r.resolution,
        "adapter": ", ".join(dict.fromkeys(a.name for a in r.adapter)),
        "adapters": [{"name": a.name, "definition": str(a.definition), "site": str(a.site),
                      "resolution": a.resolution, "how": a.how} for a in r.adapter],
        "work": [_work_dict(w) for w in r.work],
        "other": [{"class": o.cls.value, "name": o.name, "site": str(o.site), "first_call": o.first_call,
                   "detail": o.detail, "count": o.count, "guard": o.guard} for o in r.other],
        "repeat": " × ".join(x.label for x in r.repeat), "repeats": [_repeat_dict(x) for x in r.repeat],
        "condition": " && ".join(str(c) for c in r.condition), "conditions": [_cond_dict(c) for c in r.condition],
        "phase": r.phase.value, "frequency": r.frequency, "model_phase": r.model_phase,
        "context": [{"name": f.name, "qualname": f.qualname, "site": str(f.site)} for f in r.context],
        "counts": _counts_dict(r.counts), "note": r.note, "key": list(r.key),
        "ref": list(r.ref), "ref_rows": r.ref_rows,
    }


def _table_dict(t: PhaseTable) -> dict[str, Any]:
    return {"phase": t.phase.value, "frequency": t.frequency, "rows": [_row_dict(r) for r in t.rows],
            "totals": _counts_dict(t.totals)}
