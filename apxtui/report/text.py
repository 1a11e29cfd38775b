"""Plain-text rendering of a trace tree (``apxtui trace --format text``).

Every string from the checkout goes through :func:`_s` (:func:`apxtui.textsafe.one_line`):
a name with a newline, tab or escape sequence stays on its own line, visibly.
"""

from __future__ import annotations

from typing import Any

from apxtui.analysis.summary import capture_short, dtype_short, launches_short, totals_lines
from apxtui.report.capture_lines import hazard_line
from apxtui.textsafe import one_line
from apxtui.trace import Dispatch, Stage


def _s(x: Any) -> str:
    return one_line(x, 0)


def _via(st: Stage) -> str:
    v = st.via or {}
    if not v:
        return ""
    parts = [f"{v.get('kind', '')} @ {_s(v.get('file', ''))}:{v.get('line', '')}", v.get("resolution", "")]
    loops = v.get("loops") or []
    if loops:
        parts.append("× " + " × ".join(map(_s, loops)))
    if v.get("template_args"):
        parts.append("<" + ", ".join(map(_s, v["template_args"])) + ">")
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


def render_summary(doc: dict[str, Any]) -> str:
    """Path-level analyses: launch totals, dtype boundaries, capture regions, host transfers."""
    if doc.get("analysis_error"):
        return f"analyses failed: {_s(doc['analysis_error'])}"
    lines = ["", "== launch totals (static) =="] + [f"  {_s(x)}" for x in totals_lines(doc)]
    lines += ["", "== device work =="]
    for s in doc.get("stages", []):
        if (
            s.get("dtypes")
            and s["dtypes"].get("kind") in ("kernel", "library")
            or (s.get("capture") or {}).get("hazards")
        ):
            v = s.get("via") or {}
            lines.append(
                _s(
                    f"  {s['qualname']} @ {v.get('file', '')}:{v.get('line', '')}: {dtype_short(s.get('dtypes'))}"
                    f" | {launches_short(s)} | {(s.get('frequency') or {}).get('label', '')}"
                    + (f" | {capture_short(s)}" if s.get("capture") else "")
                )
            )
    lines += ["", "== dtype boundaries =="]
    prev = None
    for b in doc.get("dtype_boundaries", []):
        key = (b["stage"], b["from"], b["to"], b["kind"], b["at"])
        if key != prev:
            lines.append(_s(f"  {b['from']} → {b['to']} ({b['kind']}) at {b['stage']} {b['at']}"
                            + (" [alternative]" if b.get("alternative") else "")))
        prev = key
    lines += ["", "== capture regions =="]
    for r in doc.get("capture_regions", []):
        lines.append(
            _s(
                f"  {r['function']}: begin {(r.get('begin') or {}).get('at', '-')}, "
                f"end {(r.get('end') or {}).get('at', '-')}, body {', '.join(c['call'] for c in r['body_calls'])}"
            )
        )
        for h in r.get("hazards", []):
            lines.append(_s(f"    HAZARD {hazard_line(h)}"))
    lines += ["", "== host transfers / syncs / allocations =="]
    for t in doc.get("host_transfers", []):
        lines.append(_s(f"  {t['kind']} {t['api']} {t.get('direction', '')} at {t['at']} ({t['phase']}"
                        + (", in capture" if t.get("in_capture") else "") + f") {t['frequency']}"))
    return "\n".join(lines)
