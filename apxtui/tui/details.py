"""What the details pane says about a tree item, as plain (title, rows) sections (no Textual).

Each section is one function ``(session, stage, annotations, pending) -> Section | None``
listed in :data:`STAGE_SECTIONS`.  ``annotations`` is the stage's record from the background
analysis (None when there is none to show); ``pending`` says why (still analysing, failed,
not on the chosen path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from apxtui.analysis.dtypefacts import DtypeFact, KernelDtypes, LibraryDtypes
from apxtui.checkpoint.view import stage_weight_rows
from apxtui.map.model import Call, ExecutionMap, Frame, PhaseTable, Repeat, Work
from apxtui.map.model import Row as MapRow
from apxtui.report.capture_lines import constant_line, hazard_line
from apxtui.trace import Arm, Dispatch, Stage
from apxtui.tui.session import Session
from apxtui.vocab import CallClass

if TYPE_CHECKING:
    from apxtui.tui.background import StageRecord

Row = tuple[str, str]
Section = tuple[str, list[Row]]
NOT_ANALYSED = "not analysed yet"

KIND_LABEL = {
    "python_fn": "Python function", "python_class": "Python class", "pyo3_binding": "PyO3 binding",
    "cpp_binding": "C++ binding (torch.ops / pybind11)",
    "rust_fn": "Rust function", "ffi_decl": "extern \"C\" declaration", "abi_fn": "C ABI adapter",
    "host_fn": "host function", "device_fn": "device function", "kernel": "__global__ kernel",
    "vendor_api": "library call", "external": "external (no definition in the checkout)",
}


def identity(session: Session, st: Stage, ann: StageRecord | None = None, pending: str = "") -> Section:
    d = session.index.graph.nodes.get(st.node, {})
    rows: list[Row] = [("kind", KIND_LABEL.get(st.kind, st.kind)), ("name", st.qualname or st.name)]
    rows.append(("defined", f"{st.file}:{st.line}" if st.file else "no definition in the checkout"))
    if d.get("library"):
        rows.append(("library", d["library"]))
    if d.get("external_kind"):
        rows.append(("external", d["external_kind"]))
    if d.get("template_params"):
        rows.append(("template", ", ".join(d["template_params"])))
    if d.get("params"):
        rows.append(("params", ", ".join(d["params"])))
    for c in d.get("cfg") or []:
        rows.append(("cfg", c))
    for c in d.get("pp") or []:
        rows.append(("#if", c))
    if d.get("vendored"):
        rows.append(("vendored", "yes (third-party code)"))
    if st.cut:
        rows.append(("not expanded", {"recursion": "recursion: shown above", "depth": "depth limit",
                                      "budget": "node budget reached"}.get(st.cut, st.cut)))
    return "Symbol", rows


def call_site(session: Session, st: Stage, ann: StageRecord | None = None, pending: str = "") -> Section | None:
    v = st.via
    if not v:
        return "Call site", [("", "entry point of this trace")]
    rows: list[Row] = [("edge", v.kind), ("at", v.at)]
    if v.callee:
        rows.append(("callee", v.callee))
    if v.receiver:
        rows.append(("receiver", v.receiver))
    res = v.resolution
    rows.append(("resolution", f"{res} ({v.how})" if v.how else res))
    if v.template_args:
        rows.append(("template args", ", ".join(v.template_args)))
    if v.launch_config:
        rows.append(("launch", "<<<" + ", ".join(v.launch_config) + ">>>"))
    if v.args:
        rows.append(("args", ", ".join(v.args)))
    for c in v.conditions:
        rows.append(("condition", c.text))
    for loop in v.loops:
        rows.append(("× loop", loop))
    return "Call site", rows


def _status(status: str) -> str:
    """`` (heuristic)`` for a status other than exact ("" for exact or none)."""
    return f" ({status})" if status and status != "exact" else ""


def _vals(v: object) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return ", ".join(str(x) for x in v)
    return str(v)


def _fact_row(name: str, f: DtypeFact[Any] | None) -> list[Row]:
    return [] if f is None else [(name, (_vals(f.value) or "unknown") + _status(f.status.value))]


def dtypes(session: Session, st: Stage, ann: StageRecord | None, pending: str) -> Section:
    title = "Dtypes"
    if ann is None:
        return title, [("", pending)]
    d = ann.facts.dtypes
    if d is None:
        return title, [("", "no device work here (dtypes are read at kernels and library calls)")]
    rows: list[Row] = []
    if isinstance(d, KernelDtypes):
        for name, f in (("storage", d.storage), ("input", d.input), ("accumulator", d.accumulator),
                        ("output", d.output)):
            rows += _fact_row(name, f)
        if d.template_bindings:
            rows.append(("template", _vals(d.template_bindings)))
        for c in d.conversions[:6]:
            rows.append(("conversion", f"{c.source}→{c.to} {c.kind} {c.call} @ {c.where}" + _status(c.status)))
        if len(d.conversions) > 6:
            rows.append(("", f"+{len(d.conversions) - 6} more conversions (in the report)"))
    elif isinstance(d, LibraryDtypes):
        for name, lf in (("operands", d.operands), ("compute", d.compute), ("scale", d.scale)):
            rows += _fact_row(name, lf)
    return title, rows or [("", "no dtype facts")]


def launches(session: Session, st: Stage, ann: StageRecord | None, pending: str) -> Section:
    title = "Launches"
    if ann is None:
        return title, [("", pending)]
    la = ann.facts.launches
    rows: list[Row] = []
    if la.own:
        rows.append(("this call", la.own))
    if la.multiplier:
        rows.append(("multiplier", la.multiplier))
    for phase, count in la.subtree.items():
        for kind, c in count.kinds().items():
            if c.max == "0":
                continue
            span = c.max if c.exact or c.min == c.max else f"{c.min}..{c.max}"
            rows.append((f"{phase} {kind.replace('_', ' ')}", f"{span} (static, subtree)"))
    fr = ann.facts.frequency
    if fr.label:
        rows.append(("frequency", fr.label + _status(fr.status.value)))
    if fr.phase:
        rows.append(("phase", fr.phase))
    return title, rows or [("", "no launches below this stage")]


def capture(session: Session, st: Stage, ann: StageRecord | None, pending: str) -> Section:
    """The stage's capture region and role; a captured launch's frozen constants and baked-in buffers, and
    the hazards at its site (one line each, as ``apxtui capture`` writes them)."""
    title = "Capture role"
    if ann is None:
        return title, [("", pending)]
    c = ann.facts.capture
    if c is None or not c.shown:
        return title, [("", "outside any CUDA-graph capture region")]
    rows: list[Row] = []
    if c.region:
        rows.append(("region", c.region))
    if c.role:
        rows.append(("role", c.role))
    kernel = st.qualname or st.name
    rows += [("constant", constant_line(kernel, k).removeprefix("constant ")) for k in c.constants or ()]
    rows += [("buffer", f"{b.param} = {b.arg} ({b.type}) [{b.status}]: {b.reason}") for b in c.buffers or ()]
    rows += [("hazard", hazard_line(h)) for h in c.hazards or ()]
    return title, rows


def checkpoint(session: Session, st: Stage, ann: StageRecord | None, pending: str,
               weights_note: str = "") -> Section:
    """Stored weights (checkpoint) of the stage and, as separate rows, the compute dtypes below it."""
    title = "Checkpoint weights (stored dtype ≠ compute dtype: two facts)"
    if not session.checkpoint:
        return title, [("", "no checkpoint given (--checkpoint PATH)")]
    if ann is None:
        return title, [("", pending)]
    if weights_note:
        return title, [("", weights_note)]
    rows = stage_weight_rows(ann.weights)
    if rows:
        return title, rows
    return title, [("", "no argument here names a weight the loader reads (screen 4 lists the join)")]


STAGE_SECTIONS: list[Callable[[Session, Stage, StageRecord | None, str], Section | None]] = [
    identity, call_site, dtypes, launches, capture,
]


def stage_details(session: Session, st: Stage, ann: StageRecord | None = None, pending: str = "analysing…",
                  weights_note: str = "") -> list[Section]:
    """Sections for ``st`` with its annotations ``ann`` (None: ``pending`` says why there are none)."""
    out = [s for f in STAGE_SECTIONS if (s := f(session, st, ann, pending))]
    out.append(checkpoint(session, st, ann, pending, weights_note))
    return out


def dispatch_details(disp: Dispatch, arm: Arm | None = None) -> list[Section]:
    what = "ambiguous call: one arm per candidate" if disp.construct == "candidates" else disp.construct
    rows: list[Row] = [("construct", what), ("subject", disp.subject or "—"), ("at", f"{disp.file}:{disp.line}")]
    marks = {True: "● chosen", False: "○ not chosen", None: "◦ shown (no choice)"}
    arms = [(marks[a.selected], a.label + (f"  [env {', '.join(a.env)}]" if a.env else "")) for a in disp.arms]
    out: list[Section] = [("Dispatch point", rows), ("Arms  ([ / ] to choose)", arms)]
    if arm is not None:
        out.insert(0, ("Arm", [("label", arm.label), ("kind", arm.kind), ("state", marks[arm.selected])]
                       + [("env", e) for e in arm.env]))
    return out


# -- the map view ----------------------------------------------------------------------------


def _repeat_rows(repeats: list[Repeat]) -> list[Row]:
    rows: list[Row] = []
    for r in repeats:
        rows.append(("× loop", f"{r.label}  ({r.status.value}{': ' + r.reason if r.reason else ''}) @ {r.site}"))
        if r.last_differs:
            rows.append(("  last iteration", r.last_differs))
    return rows


def _work_rows(work: list[Work], indent: str = "") -> list[Row]:
    rows: list[Row] = []
    for w in work:
        if isinstance(w, Call):
            what = "kernel" if w.kind == CallClass.DEVICE else "library"
            rows.append((f"{indent}{what}", f"{w.name}" + (f"<{', '.join(w.template_args)}>" if w.template_args else "")
                         + f"  @ {w.site}" + (f"  dtypes {w.dtypes}" if w.dtypes else "")))
            if w.resolution:
                rows.append((f"{indent}  linked", f"{w.resolution}" + (f" — {w.how}" if w.how else "")))
            if w.definition.file:
                rows.append((f"{indent}  defined", str(w.definition)))
            rows += [(f"{indent}  × loop", r.label) for r in w.repeat]
            rows += [(f"{indent}  if", str(c)) for c in w.guard]
        else:
            rows.append((f"{indent}◆ {w.construct}", f"{w.subject or '—'}  @ {w.site}  ({w.launches} per call)"))
            for a in w.alternatives:
                mark = {True: "●", False: "○", None: "◦"}[a.chosen]
                rows.append((f"{indent}  {mark} arm {a.arm}", f"{a.name}  when {a.condition}"))
                rows += _work_rows(a.work, indent + "    ")
    return rows


def map_row_details(row: MapRow) -> list[Section]:
    """A map row: the operation, its device work (alternatives with their conditions), loops, other calls."""
    c = row.counts
    counts = f"device {c.device}, library {c.library}" + (" (exact)" if c.exact else
                                                          f" (a range: arms at {', '.join(c.arms)})")
    op: list[Row] = [("operation", row.op), ("function", row.target), ("call site", str(row.site)),
                     ("linked", row.resolution or "—"),
                     ("phase", f"{row.phase.value} — {row.frequency}"), ("counts", counts + ", static, one execution")]
    if row.model_phase:
        op.append(("model phase", row.model_phase))
    for a in row.adapter:
        op.append(("adapter", f"{a.name}  @ {a.definition}"))
        op.append(("  linked", f"{a.resolution or '—'}" + (f" — {a.how}" if a.how else "") + f"  @ {a.site}"))
    op += [("if", str(cnd)) for cnd in row.condition]
    op += _repeat_rows(row.repeat)
    if row.note:
        op.append(("note", row.note))
    out: list[Section] = [("Map row  (enter: call tree · [ ]: arm)", op)]
    out.append(("Device work", _work_rows(row.work) or [("", "none: this operation reaches no kernel or library "
                                                              "compute call under the current choices")]))
    if row.other:
        by: dict[str, int] = {}
        for o in row.other:
            by[o.cls.value] = by.get(o.cls.value, 0) + o.count
        other: list[Row] = [("calls", ", ".join(f"{n} {k}" for k, n in sorted(by.items())))]
        other += [(o.cls.value, f"{o.name}  @ {o.site}" + (f"  (first call: {o.guard})" if o.first_call else ""))
                  for o in row.other[:12]]
        if len(row.other) > 12:
            other.append(("", f"+{len(row.other) - 12} more (in the report)"))
        out.append(("Other calls (not device work)", other))
    if row.context:
        out.append(("Inside", [("", f"{f.name}  @ {f.site}") for f in row.context]))
    return out


def map_frame_details(f: Frame) -> list[Section]:
    rows: list[Row] = [("call", f.name), ("function", f.qualname), ("call site", str(f.site))]
    rows += [("if", str(c)) for c in f.condition]
    rows += _repeat_rows(f.repeat)
    return [("Model-level block", rows)]


def map_phase_details(t: PhaseTable, m: ExecutionMap) -> list[Section]:
    tot = t.totals
    rows: list[Row] = [("phase", t.phase.value), ("frequency", t.frequency), ("rows", str(len(t.rows))),
                       ("device launches", tot.device), ("library calls", tot.library),
                       ("exact", "yes" if tot.exact else f"no: a range over the arms at {', '.join(tot.arms)}")]
    out: list[Section] = [("Phase table", rows)]
    if m.lead:
        out.append(("Main implementation choices", [("", x) for x in m.lead]))
    if m.choices:
        out.append(("Choices made", [(c.by, f"{c.subject or c.construct} @ {c.site} → {', '.join(c.chosen)}")
                                     for c in m.choices]))
    if m.cuts:
        out.append(("Not followed", [(c.reason, f"{c.name} @ {c.site}") for c in m.cuts[:10]]))
    return out
