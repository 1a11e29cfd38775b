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
