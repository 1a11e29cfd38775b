"""Patterns tab: the loader's tensor-name patterns, those matching nothing first, with their sources."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from apxtui.checkpoint.join import STATUS_TEXT
from apxtui.checkpoint.view import pattern_rows
from apxtui.textsafe import one_line
from apxtui.tui.widgets.checkpoint.common import MAX_ROWS, TableTab, lit

if TYPE_CHECKING:
    from apxtui.checkpoint.join import JoinResult


class PatternsTab(TableTab):
    TITLE, DETAIL = "Patterns", "pattern-detail"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.join: JoinResult | None = None
        self.patterns: list[tuple[str, str, int, int, str]] = []  # status, pattern, tensors, bytes, source

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row", zebra_stripes=True, id="pattern-table")
        yield Static("", id="pattern-detail", classes="panel ckpt-detail", markup=False)

    def on_mount(self) -> None:
        self.table.add_columns("status", "pattern", "tensors", "source")

    def join_failed(self, error: str) -> None:
        self.set_loading(False)
        self.table.border_title = "Patterns: join failed"
        self.say(f"The weight join failed: {one_line(error, 300)}")

    def show_join(self, j: JoinResult) -> None:
        self.join = j
        self.patterns = pattern_rows(j)
        table = self.table
        self.set_loading(False)
        table.clear()
        table.add_rows([(Text(one_line(st, 30), style="bold" if st != "matched" else ""), lit(p, 70), lit(n),
                         lit(src, 60)) for st, p, n, _b, src in self.patterns[:MAX_ROWS]])
        unmatched = sum(1 for r in self.patterns if r[0] != "matched")
        table.border_title = f"Patterns {len(self.patterns):,}: {unmatched:,} match nothing or only a prefix"
        self.detail(0)

    def detail(self, i: int) -> None:
        box = self.query_one("#pattern-detail", Static)
        if self.join is None:
            return
        if not self.patterns:
            box.update(STATUS_TEXT[self.join.status])
            return
        if not (0 <= i < len(self.patterns)):
            return
        m = sorted(self.join.matches, key=lambda m: {"unmatched": 0, "prefix": 1, "matched": 2}.get(m.status, 3))[i]
        out = Text()
        out.append(one_line(m.pattern.text, 120), style="bold")
        out.append(f"  {one_line(self.patterns[i][0], 30)}; {len(m.tensors)} tensor(s), {m.nbytes:,} B\n")
        for s in m.pattern.sources[:3]:
            out.append(f"  {one_line(s.at, 80)}", style="dim")
            out.append(f"  {one_line(s.written, 80)}  ({one_line(s.origin, 30)}"
                       f"{', in ' + one_line(s.caller, 50) if s.caller else ''})\n")
        if m.pattern.how:
            out.append("  how: " + one_line("; ".join(m.pattern.how[:3]), 200) + "\n", style="dim")
        out.rstrip()
        box.update(out)

    @on(DataTable.RowHighlighted, "#pattern-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        self.detail(event.cursor_row)
