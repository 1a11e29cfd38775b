"""Plain-text rendering of a trace tree (``apxtui trace --format text``)."""

from __future__ import annotations

from apxtui.trace import Dispatch, Stage


def _via(st: Stage) -> str:
    v = st.via or {}
    if not v:
        return ""
    parts = [f"{v.get('kind', '')} @ {v.get('file', '')}:{v.get('line', '')}", v.get("resolution", "")]
    loops = v.get("loops") or []
    if loops:
        parts.append("× " + " × ".join(loops))
    if v.get("template_args"):
        parts.append("<" + ", ".join(v["template_args"]) + ">")
    return "  (" + ", ".join(p for p in parts if p) + ")"


def stage_line(st: Stage) -> str:
    cut = f"  [{st.cut}: not expanded]" if st.cut else ""
    loc = f"{st.file}:{st.line}" if st.file else "(no definition in the checkout)"
    return f"{st.qualname}  [{st.kind}]  {loc}{_via(st)}{cut}"


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
            subj = f" {it.subject}" if it.subject else ""
            lines.append(f"{prefix}{branch}◆ {it.construct}{subj}  @ {it.file}:{it.line}")
            for j, arm in enumerate(it.arms):
                alast = j == len(it.arms) - 1
                ab, ac = ("└─ ", "   ") if alast else ("├─ ", "│  ")
                mark = {True: "▶", False: "▷", None: "•"}[arm.selected]
                note = " (not selected)" if arm.selected is False else ""
                lines.append(f"{prefix}{cont}{ab}{mark} {arm.label}{note}")
                if arm.selected is not False:
                    _items(arm.children, prefix + cont + ac, lines)


def render_summary(doc: dict) -> str:
    """Path-level analyses: launch totals, dtype boundaries, capture regions, host transfers."""
    from apxtui.analysis.summary import capture_short, dtype_short, launches_short, totals_lines
    from apxtui.report.capture_lines import hazard_line

    if doc.get("analysis_error"):
        return f"analyses failed: {doc['analysis_error']}"
    lines = ["", "== launch totals (static) =="] + [f"  {x}" for x in totals_lines(doc)]
    lines += ["", "== device work =="]
    for s in doc.get("stages", []):
        if s.get("dtypes") and s["dtypes"].get("kind") in ("kernel", "library") or (s.get("capture") or {}).get("hazards"):
            v = s.get("via") or {}
            lines.append(f"  {s['qualname']} @ {v.get('file', '')}:{v.get('line', '')}: {dtype_short(s.get('dtypes'))}"
                         f" | {launches_short(s)} | {(s.get('frequency') or {}).get('label', '')}"
                         + (f" | {capture_short(s)}" if s.get("capture") else ""))
    lines += ["", "== dtype boundaries =="]
    prev = None
    for b in doc.get("dtype_boundaries", []):
        key = (b["stage"], b["from"], b["to"], b["kind"], b["at"])
        if key != prev:
            lines.append(f"  {b['from']} → {b['to']} ({b['kind']}) at {b['stage']} {b['at']}"
                         + (" [alternative]" if b.get("alternative") else ""))
        prev = key
    lines += ["", "== capture regions =="]
    for r in doc.get("capture_regions", []):
        lines.append(f"  {r['function']}: begin {(r.get('begin') or {}).get('at', '-')}, end {(r.get('end') or {}).get('at', '-')}"
                     f", body {', '.join(c['call'] for c in r['body_calls'])}")
        for h in r.get("hazards", []):
            lines.append(f"    HAZARD {hazard_line(h)}")
    lines += ["", "== host transfers / syncs / allocations =="]
    for t in doc.get("host_transfers", []):
        lines.append(f"  {t['kind']} {t['api']} {t.get('direction', '')} at {t['at']} ({t['phase']}"
                     + (", in capture" if t.get("in_capture") else "") + f") {t['frequency']}")
    return "\n".join(lines)
