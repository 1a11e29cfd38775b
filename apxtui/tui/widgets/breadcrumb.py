"""The breadcrumb: the language-tagged path from the entry to the highlighted row."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget

from apxtui.textsafe import one_line
from apxtui.trace import Stage
from apxtui.tui.widgets.labels import tag
from apxtui.tui.widgets.roles import ROLE_CLASSES, role_css, themed


class Breadcrumb(Widget):
    """One line; when it is too long the head is elided so the current stage stays visible."""

    COMPONENT_CLASSES = ROLE_CLASSES
    DEFAULT_CSS = """
    Breadcrumb { height: 1; padding: 0 1; background: $boost; }
    """ + role_css("Breadcrumb")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.stages: list[Stage] = []
        self.note = "indexing…"

    def set_path(self, stages: list[Stage], note: str = "") -> None:
        self.stages, self.note = stages, note
        self.refresh()

    def plain(self) -> str:
        return self._full().plain

    def _full(self) -> Text:
        t = Text()
        for i, st in enumerate(self.stages):
            if i:
                t.append(" → ", style="dim")
            t.append_text(tag(st.kind))
            t.append(" " + one_line(st.name or st.qualname, 60))
        if self.note:
            t.append(("  " if self.stages else "") + self.note, style="dim italic")
        return t

    def render(self) -> Text:
        return themed(self._fit(), self)

    def _fit(self) -> Text:
        width = max(10, self.size.width - 2)
        full = self._full()
        if full.cell_len <= width:
            return full
        if not self.stages:  # a note alone (the map's "map · phase › block › op"): keep its end
            return Text("…", style="dim italic") + full[full.cell_len - width + 1:]
        # drop stages from the head until it fits
        t = full
        for start in range(1, len(self.stages)):
            t = Text("… → ", style="dim")
            for i, st in enumerate(self.stages[start:]):
                if i:
                    t.append(" → ", style="dim")
                t.append_text(tag(st.kind))
                t.append(" " + one_line(st.name or st.qualname, 60))
            if t.cell_len <= width:
                return t
        t.truncate(width, overflow="ellipsis")
        return t
