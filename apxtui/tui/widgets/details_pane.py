"""The details pane: sections of (label, value) rows rendered as Text (never as markup)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from apxtui.tui.details import NOT_ANALYSED, Section
from apxtui.tui.text import one_line


def render_sections(sections: list[Section]) -> Text:
    """Plain text of the sections (for tests and copying): ``  key  value`` lines under each title."""
    t = Text()
    for i, (title, rows) in enumerate(sections):
        if i:
            t.append("\n")
        t.append(title + "\n", style="bold underline")
        width = max((len(k) for k, _ in rows), default=0)
        for k, v in rows:
            t.append(f"  {k:<{width}}  " if k else "  ", style="dim")
            t.append(one_line(v, 400) + "\n")
    t.rstrip()
    return t


def render_grid(sections: list[Section]) -> Group:
    """The sections as two-column grids: wrapped values keep their indent at any width."""
    parts: list = []
    for i, (title, rows) in enumerate(sections):
        parts.append(Text(("\n" if i else "") + title, style="bold underline"))
        grid = Table.grid(padding=(0, 2, 0, 0), pad_edge=False)
        grid.add_column(no_wrap=True, style="dim")
        grid.add_column(overflow="fold", ratio=1)
        keyed = any(k for k, _ in rows)
        for k, v in rows:
            style = "dim italic" if v == NOT_ANALYSED else ""
            cell = Text(one_line(v, 400), style=style)
            if keyed:
                grid.add_row(Text("  " + k), cell)
            else:
                grid.add_row(Text("  "), cell)
        parts.append(grid)
    return Group(*parts)


class DetailsPane(VerticalScroll, can_focus=True):
    """Scrollable details of the highlighted row."""

    BINDINGS = [
        Binding("j", "scroll_down", "Down", show=False, id="details.down", tooltip="Scroll down"),
        Binding("k", "scroll_up", "Up", show=False, id="details.up", tooltip="Scroll up"),
        Binding("g", "scroll_home", "Top", show=False, id="details.top", tooltip="Top"),
        Binding("G", "scroll_end", "Bottom", show=False, id="details.bottom", tooltip="Bottom"),
    ]

    _plain = "Select a row in the call tree."

    def compose(self):
        yield Static(Text("Select a row in the call tree.", style="dim"), id="details-body")

    def show(self, sections: list[Section]) -> None:
        self._plain = render_sections(sections).plain
        self.query_one("#details-body", Static).update(render_grid(sections))
        self.scroll_home(animate=False)

    def text(self) -> str:
        """The plain text shown (for tests and copying)."""
        return self._plain
