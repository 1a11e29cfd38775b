"""Theme-aware colours for labels built as Rich ``Text`` outside widgets.

Labels carry role words (``"bold ct-kernel"``) instead of colour names; a widget listing
:data:`ROLE_CLASSES` in ``COMPONENT_CLASSES`` maps them to its component styles, whose
colours come from theme variables (:func:`role_css`).  Unmapped, a role renders unstyled.
"""

from __future__ import annotations

from functools import lru_cache

from rich.style import Style
from rich.text import Span, Text
from textual.widget import Widget

#: role → theme variable
ROLE_VARS = {
    "py": "$text-primary", "pyo3": "$text-secondary", "rust": "$text-accent", "ffi": "$text-warning",
    "host": "$text-success", "kernel": "$text-success", "lib": "$text-primary", "ext": "$text-error",
    "ambiguous": "$text-warning", "unresolved": "$text-error", "loop": "$text-primary",
    "dispatch": "$text-secondary", "chosen": "$text-success",
}
ROLE_CLASSES = {f"ct--{r}" for r in ROLE_VARS}


def role_css(widget_type: str) -> str:
    return "\n".join(f"{widget_type} > .ct--{r} {{ color: {v}; }}" for r, v in ROLE_VARS.items())


@lru_cache(maxsize=256)
def _split(style: str) -> tuple[tuple[str, ...], Style]:
    words = style.split()
    roles = tuple(w[3:] for w in words if w.startswith("ct-"))
    rest = " ".join(w for w in words if not w.startswith("ct-"))
    return roles, Style.parse(rest) if rest else Style()


def themed(text: Text, widget: Widget) -> Text:
    """``text`` with its role words replaced by ``widget``'s component styles (each distinct style resolved once)."""
    done: dict[str, Style] = {}

    def resolve(style: str | Style) -> str | Style:
        if not isinstance(style, str) or "ct-" not in style:
            return style
        got = done.get(style)
        if got is None:
            roles, got = _split(style)
            for r in roles:
                got += widget.get_component_rich_style(f"ct--{r}", partial=True)
            done[style] = got
        return got

    out = text.copy()
    out.style = resolve(text.style)
    out.spans = [Span(s.start, s.end, resolve(s.style)) for s in text.spans]
    return out
