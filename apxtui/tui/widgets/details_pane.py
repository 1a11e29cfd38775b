"""The details pane: sections of (label, value) rows rendered as Text (never as markup)."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from apxtui.tui.details import NOT_ANALYSED, Section
from apxtui.tui.text import one_line


def render_sections(sections: list[Section]) -> Text:
    t = Text()
    for i, (title, rows) in enumerate(sections):
        if i:
            t.append("\n")
        t.append(title + "\n", style="bold underline")
        width = max((len(k) for k, _ in rows), default=0)
        for k, v in rows:
            style = "dim italic" if v == NOT_ANALYSED else ""
            if k:
                t.append(f"  {k:<{width}}  ", style="dim")
            else:
                t.append("  ")
            t.append(one_line(v, 400) + "\n", style=style)
    t.rstrip()
    return t


class DetailsPane(VerticalScroll, can_focus=True):
    """Scrollable details of the highlighted row."""

    BINDINGS = [
        Binding("j", "scroll_down", "Down", show=False, id="details.down", tooltip="Scroll down"),
        Binding("k", "scroll_up", "Up", show=False, id="details.up", tooltip="Scroll up"),
        Binding("g", "scroll_home", "Top", show=False, id="details.top", tooltip="Top"),
        Binding("G", "scroll_end", "Bottom", show=False, id="details.bottom", tooltip="Bottom"),
    ]

    def compose(self):
        yield Static(Text("Select a row in the call tree.", style="dim"), id="details-body")

    def show(self, sections: list[Section]) -> None:
        self.query_one("#details-body", Static).update(render_sections(sections))
        self.scroll_home(animate=False)

    def text(self) -> str:
        """The plain text shown (for tests and copying)."""
        body = self.query_one("#details-body", Static)
        return str(body.render())
