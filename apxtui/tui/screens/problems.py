"""``i``: what indexing skipped or only half-read, and the indexer's notices."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from apxtui.index.build import Index
from apxtui.textsafe import one_line

MAX_ROWS = 2000


class ProblemsScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ProblemsScreen { align: center middle; }
    ProblemsScreen > Vertical { width: 95%; height: 90%; border: round $warning; background: $surface; }
    """
    BINDINGS = [
        Binding("escape,q,i", "dismiss", "Close", priority=True, id="problems.close", tooltip="Close"),
        Binding("j", "cursor('down')", "Down", show=False, id="problems.down", tooltip="Next row"),
        Binding("k", "cursor('up')", "Up", show=False, id="problems.up", tooltip="Previous row"),
    ]

    def __init__(self, index: Index) -> None:
        super().__init__()
        self.index = index

    def compose(self) -> ComposeResult:
        issues = self.index.issues
        with Vertical():
            head = f"{len(issues):,} index problem(s); files with problems are still used where they could be read."
            if self.index.notices:
                head += "  Notices: " + "; ".join(one_line(n, 120) for n in self.index.notices)
            yield Static(head, classes="note", markup=False)
            yield DataTable(cursor_type="row", zebra_stripes=True, id="problems-table")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("kind", "file:line", "message")
        rows = [(Text(i.kind), Text(one_line(f"{i.file}:{i.line}" if i.line else i.file, 90)),
                 Text(one_line(i.message, 120)))
                for i in self.index.issues[:MAX_ROWS]]
        table.add_rows(rows)
        if len(self.index.issues) > MAX_ROWS:
            table.border_title = f"{MAX_ROWS:,} of {len(self.index.issues):,}"
        table.focus()

    def action_cursor(self, where: str) -> None:
        table = self.query_one(DataTable)
        table.action_cursor_down() if where == "down" else table.action_cursor_up()
