"""Shape checks tab: config against tensor shapes, findings first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from apxtui.checkpoint.names import pattern
from apxtui.textsafe import one_line
from apxtui.tui.widgets.checkpoint.common import MAX_ROWS, TableTab, lit

if TYPE_CHECKING:
    from apxtui.checkpoint.model import Checkpoint
    from apxtui.checkpoint.shapes import Finding


class ChecksTab(TableTab):
    TITLE, DETAIL = "Shape checks", "checks-detail"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.findings: list[Finding] = []
        self.ckpt: Checkpoint | None = None

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row", zebra_stripes=True, id="checks-table")
        yield Static("", id="checks-detail", classes="panel ckpt-detail", markup=False)

    def on_mount(self) -> None:
        self.table.add_columns("kind", "section", "tensor", "finding")

    def shown(self) -> list[Finding]:
        """Findings first, passed checks after."""
        return sorted(self.findings, key=lambda f: f.kind == "ok")

    def show(self, ckpt: Checkpoint, findings: list[Finding]) -> None:
        self.ckpt, self.findings = ckpt, findings
        table = self.table
        self.set_loading(False)
        table.clear()
        shown = self.shown()
        oks = sum(1 for f in shown if f.kind == "ok")
        table.add_rows([(Text(one_line(f.kind, 20), style="" if f.kind == "ok" else "bold"), lit(f.section), lit(
            (pattern(f.tensor) if f.count > 1 else f.tensor) if f.tensor else "-", 60), lit(f.message, 120))
            for f in shown[:MAX_ROWS]])
        table.border_title = f"Shape checks: {len(shown) - oks} finding(s) first, then {oks} passed"
        self.detail(0)

    def detail(self, i: int) -> None:
        box = self.query_one("#checks-detail", Static)
        shown = self.shown()
        if not (0 <= i < len(shown)):
            box.update("No check could run: the checkpoint declares no tensor and its config no dimension."
                       if self.ckpt is not None else "")
            return
        f = shown[i]
        out = Text()
        out.append(f"{one_line(f.kind, 20)} [{one_line(f.section, 40)}] ", style="bold")
        out.append(one_line(f.message, 300) + "\n")
        if f.tensor:
            out.append(f"  shown by {one_line(f.tensor, 100)}" + (f" and {f.count - 1} more" if f.count > 1 else ""),
                       style="dim")
        if f.keys:
            out.append("\n  config keys: " + one_line(", ".join(f.keys), 200), style="dim")
        box.update(out)

    @on(DataTable.RowHighlighted, "#checks-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        self.detail(event.cursor_row)
