"""The breadcrumb: the language-tagged path from the entry to the highlighted row."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from apxtui.textsafe import one_line
from apxtui.trace import Stage
from apxtui.tui.widgets.labels import tag
from apxtui.tui.widgets.roles import ROLE_CLASSES, role_css, themed

ARROW = 3  # cells of " → " between stages


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

    def _pieces(self) -> list[Text]:
        """Each stage as its language tag and name."""
        out = []
        for st in self.stages:
            t = Text()
            t.append_text(tag(st.kind))
            t.append(" " + one_line(st.name or st.qualname, 60))
            out.append(t)
        return out

    @staticmethod
    def _join(pieces: list[Text], head: Text | None = None) -> Text:
        t = head.copy() if head is not None else Text()
        for i, piece in enumerate(pieces):
            if i:
                t.append(" → ", style="dim")
            t.append_text(piece)
        return t

    def _full(self, pieces: list[Text] | None = None) -> Text:
        t = self._join(self._pieces() if pieces is None else pieces)
        if self.note:
            t.append(("  " if self.stages else "") + self.note, style="dim italic")
        return t

    def render(self) -> Text:
        return themed(self._fit(), self)

    def _fit(self) -> Text:
        """The path, elided at its head to fit one line (widths summed from the pieces: one pass)."""
        width = max(10, self.size.width - 2)
        pieces = self._pieces()
        widths = [p.cell_len for p in pieces]
        note = cell_len(self.note) + (2 if self.stages else 0) if self.note else 0
        if sum(widths) + ARROW * max(0, len(pieces) - 1) + note <= width:
            return self._full(pieces)
        if len(pieces) <= 1:
            full = self._full(pieces)
            if not pieces:  # a note alone (the map's "map · phase › block › op"): keep its end
                return Text("…", style="dim italic") + full[full.cell_len - width + 1:]
            full.truncate(width, overflow="ellipsis")
            return full
        # drop stages from the head until it fits: "… → " and the longest tail that fits
        head = Text("… → ", style="dim")
        start, tail = len(pieces) - 1, widths[-1]
        while start > 1 and head.cell_len + tail + ARROW + widths[start - 1] <= width:
            start -= 1
            tail += ARROW + widths[start]
        t = self._join(pieces[start:], head)
        if t.cell_len > width:
            t.truncate(width, overflow="ellipsis")
        return t
