"""Plain-text rendering of a trace tree (``apxtui trace --format text``).

Every string from the checkout goes through :func:`_s` (:func:`apxtui.textsafe.one_line`):
a name with a newline, tab or escape sequence stays on its own line, visibly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apxtui.analysis.dtypefacts import KernelDtypes, LibraryDtypes
from apxtui.analysis.summary import capture_short, dtype_short, launches_short, totals_lines
from apxtui.map.fold import BlockRef, Heading, aliases, fold_blocks
from apxtui.map.model import marked
from apxtui.report.capture_lines import hazard_line
from apxtui.report.maptable import FrequencyChange, table_lines
from apxtui.report.markdown import also_cell, map_choice_lines, path_line, work_cell
from apxtui.textsafe import one_line
from apxtui.trace import Dispatch, Stage

if TYPE_CHECKING:
    from apxtui.analysis.path import AnalysedPath
    from apxtui.report.model import MapReport


def _s(x: Any) -> str:
    return one_line(x, 0)


def _via(st: Stage) -> str:
    v = st.via
    if v is None:
        return ""
    parts = [f"{v.kind} @ {_s(v.file)}:{v.line}", v.resolution]
    if v.loops:
        parts.append("× " + " × ".join(map(_s, v.loops)))
    if v.template_args:
        parts.append("<" + ", ".join(map(_s, v.template_args)) + ">")
    return "  (" + ", ".join(p for p in parts if p) + ")"


def stage_line(st: Stage) -> str:
    cut = f"  [{st.cut}: not expanded]" if st.cut else ""
    loc = f"{_s(st.file)}:{st.line}" if st.file else "(no definition in the checkout)"
    return f"{_s(st.qualname)}  [{st.kind}]  {loc}{_via(st)}{cut}"


def render_tree(root: Stage) -> str:
    lines = [stage_line(root)]
    _items(root.children, "", lines)
    return "\n".join(lines)


def _items(items: list[Stage | Dispatch], prefix: str, lines: list[str]) -> None:
    for i, it in enumerate(items):
        last = i == len(items) - 1
        branch, cont = ("└─ ", "   ") if last else ("├─ ", "│  ")
        if isinstance(it, Stage):
            lines.append(prefix + branch + stage_line(it))
            _items(it.children, prefix + cont, lines)
        else:
            subj = f" {_s(it.subject)}" if it.subject else ""
            lines.append(f"{prefix}{branch}◆ {it.construct}{subj}  @ {_s(it.file)}:{it.line}")
            for j, arm in enumerate(it.arms):
                alast = j == len(it.arms) - 1
                ab, ac = ("└─ ", "   ") if alast else ("├─ ", "│  ")
                mark = {True: "▶", False: "▷", None: "•"}[arm.selected]
                note = " (not selected)" if arm.selected is False else ""
                lines.append(f"{prefix}{cont}{ab}{mark} {_s(arm.label)}{note}")
                if arm.selected is not False:
                    _items(arm.children, prefix + cont + ac, lines)


def render_summary(path: AnalysedPath) -> str:
    """Path-level analyses of ``path``: launch totals, device work, dtype boundaries, capture regions, host
    transfers."""
    if path.error:
        return f"analyses failed: {_s(path.error)}"
    lines = ["", "== launch totals (static) =="] + [f"  {_s(x)}" for x in totals_lines(path.summary.launch_totals)]
    lines += ["", "== device work =="]
    for ps in path.stages:
        f, v = ps.facts, ps.stage.via
        if f is None:
            continue
        if isinstance(f.dtypes, (KernelDtypes, LibraryDtypes)) or (f.capture is not None and f.capture.hazards):
            lines.append(
                _s(
                    f"  {ps.stage.qualname} @ {v.file if v else ''}:{v.line if v else ''}: {dtype_short(f.dtypes)}"
                    f" | {launches_short(f.launches)} | {f.frequency.label}"
                    + (f" | {capture_short(f.capture)}" if f.capture is not None and f.capture.shown else "")
                )
            )
    lines += ["", "== dtype boundaries =="]
    prev = None
    for b in path.summary.dtype_boundaries:
        if b.key != prev:
            lines.append(_s(f"  {b.source} → {b.to} ({b.kind}) at {b.stage} {b.at}"
                            + (" [alternative]" if b.alternative else "")))
        prev = b.key
    lines += ["", "== capture regions =="]
    for r in path.summary.capture_regions:
        lines.append(
            _s(
                f"  {r.function}: begin {r.begin.at if r.begin else '-'}, "
                f"end {r.end.at if r.end else '-'}, body {', '.join(c.call for c in r.body_calls)}"
            )
        )
        for h in r.hazards:
            lines.append(_s(f"    HAZARD {hazard_line(h)}"))
    lines += ["", "== host transfers / syncs / allocations =="]
    for t in path.summary.host_transfers:
        lines.append(_s(f"  {t.kind} {t.api} {t.direction or ''} at {t.at} ({t.phase}"
                        + (", in capture" if t.in_capture else "") + f") {t.frequency}"))
    return "\n".join(lines)


def render_map_text(rep: MapReport) -> str:
    """The execution map as plain text (``apxtui trace`` default; ``--view tree`` for the call tree)."""
    h, m = rep.header, rep.map
    plain = _plain
    out = [f"# execution map: {h.entry.qualname}  ({h.entry.file}:{h.entry.line})",
           f"# {h.profile} · selection: {', '.join(h.select) or 'none'} · {m.static_note}",
           f"# operator layer: {m.operator_rule}"]
    out += [plain(x.removeprefix("- ")) for x in map_choice_lines(h.choices, m)]
    out += [f"lead: {x}" for x in m.lead]
    out.append("path: " + plain(path_line(rep.path)))
    al = aliases(m)
    folded = fold_blocks(m)
    for t in m.phases:
        out += ["", f"== {t.phase.value}: {t.frequency} — {t.totals.device} device launches, {t.totals.library} "
                    f"library calls (static{'' if t.totals.exact else ', range'}) =="]
        for ln in table_lines(t, folded.get(t.phase.value, [])):
            if isinstance(ln, FrequencyChange):
                out.append(f"  -- {ln.frequency}")
            elif isinstance(ln, Heading):
                for i, fr in enumerate(ln.frames):
                    reps = " ".join(x.label for x in fr.repeat if x.value != 1)
                    last = "; ".join(x.last_differs for x in fr.repeat if x.last_differs)
                    out.append("  " + "  " * (ln.depth + i) + f"▸ {fr.name} ({fr.site})" + (f" {reps}" if reps else "")
                               + (f" [{fr.model_phase}]" if fr.model_phase else "")
                               + (f" — last iteration differs: {last}" if last else ""))
            elif isinstance(ln, BlockRef):
                sites = ", ".join(str(f.site) for f in ln.frames[:3]) + (
                    f" (+{len(ln.frames) - 3})" if len(ln.frames) > 3 else "")
                out.append(f"  ↳ {ln.frame.name} at {sites}: same {len(ln.rows)} rows as {ln.same_as}")
            else:
                r = ln.row
                reps = " ".join(x.label for x in ln.repeats if x.value != 1)
                conds = ln.conditions
                work = plain(work_cell(r.work, r.site, al)) or r.note or "—"
                op = marked(r.op, r.resolution)
                line = f"  {ln.n:>3}  {op}  @ {r.site}  →  {work}  [{r.counts.device} dev / {r.counts.library} lib]"
                if reps:
                    line += f"  {reps}"
                if conds:
                    line += "  if " + "; ".join(str(c) for c in conds)
                also = plain(also_cell(r, al))
                if also:
                    line += f"  ({also})"
                out.append(line)
    if al:
        out += ["", "aliases: " + "; ".join(f"{a} = {n}" for n, a in al.items())]
    out += ["", f"== cuts: {len(m.cuts)} =="] + [f"  {c.reason}: {c.name} at {c.site}" for c in m.cuts[:20]]
    out.append(f"== ambiguous calls: {len(m.ambiguous)}; unresolved callees: {len(m.unresolved)} "
               "(--format md lists them) ==")
    return "\n".join(out) + "\n"


def _plain(s: str) -> str:
    """Markdown cell text as plain text (backticks, escapes and entities removed)."""
    return (s.replace("`", "").replace("\\|", "|").replace("&lt;", "<").replace("&gt;", ">")
            .replace("\\\\", "\\").replace("**", ""))
