"""Screens 2 and 3: kernels and capture (screen 4 is in checkpoint.py, 5 in profile.py).

Analyses that other issues deliver (dtypes, launches, capture, profiles, the weight
join) are shown as "not analysed yet"; what the graph already knows is shown as raw evidence.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Input, Static

from apxtui.textsafe import one_line
from apxtui.tui.background import kernel_rows
from apxtui.tui.path_analysis import FAILED, PathAnalysis
from apxtui.tui.screens.base import ApxScreen
from apxtui.tui.session import Session

#: Screen 2's row (``background.kernel_rows``): node, qualified name, definition, launchers, entries reaching it,
#: status.
KernelRow = tuple[str, str, str, list[str], list[str], str]

MAX_ROWS = 5000


def lit(s: object, limit: int = 100) -> Text:
    """A literal table cell (DataTable would read a plain str as markup)."""
    return Text(one_line(str(s), limit))


class TableNav:
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "table('down')", "Down", show=False, id="table.down", tooltip="Next row"),
        Binding("k", "table('up')", "Up", show=False, id="table.up", tooltip="Previous row"),
        Binding("g", "table('top')", "Top", show=False, id="table.top", tooltip="First row"),
        Binding("G", "table('bottom')", "Bottom", show=False, id="table.bottom", tooltip="Last row"),
    ]

    def action_table(self, where: str) -> None:
        table = self.query_one(DataTable)  # type: ignore[attr-defined]
        {"down": table.action_cursor_down, "up": table.action_cursor_up,
         "top": table.action_scroll_top, "bottom": table.action_scroll_bottom}[where]()


class KernelsScreen(TableNav, ApxScreen):
    """Every kernel: where it is, who launches it, which entry points reach it, the unreached."""

    AUTO_FOCUS = "DataTable"
    BINDINGS = [*TableNav.BINDINGS,
                Binding("slash", "filter", "Filter", key_display="/", id="kernels.filter", tooltip="Filter kernels"),
                Binding("escape", "leave_filter", "Leave filter", show=False, id="kernels.leave_filter",
                        tooltip="Leave the filter: back to the table (the filter stays)")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session: Session | None = None
        self.rows: list[KernelRow] = []

    def compose(self) -> ComposeResult:
        yield Static("2 · Kernels: every __global__ kernel, who launches it, which entry points reach it",
                     classes="screen-title", markup=False)
        yield Input(placeholder="/ filter kernels by name or file", id="table-filter")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Static("indexing…", id="kernel-detail", classes="panel", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("kernel", "defined", "launched by", "entries reaching", "status")
        self.watch(self.app, "session", self._session_ready)

    def _session_ready(self, session: Session | None) -> None:
        if session is not None and self.session is not session:
            self.session = session
            self._compute()

    @work(exclusive=True, group="kernels", exit_on_error=False)
    async def _compute(self) -> None:
        assert self.session is not None
        self.query_one(DataTable).loading = True
        rows = await self.apx.run_job("kernels", kernel_rows, self.session)
        self.query_one(DataTable).loading = False
        self._show(rows)

    def _show(self, rows: list[KernelRow]) -> None:
        self.rows = rows
        self._fill("")
        unreached = sum(1 for r in rows if not r[4])
        self.query_one("#kernel-detail", Static).update(
            f"{len(rows)} kernels, {unreached} not reached from any entry point (every arm counted). "
            "Select a row for its launchers and entries.")

    def _fill(self, text: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        words = text.lower().split()
        shown = [r for r in self.rows if all(w in (r[1] + " " + r[2]).lower() for w in words)]
        table.add_rows([
            (lit(q, 50), lit(loc, 60), lit(", ".join(ls) if len(ls) <= 2 else f"{ls[0]} +{len(ls) - 1}", 50),
             lit(len(r)), lit(status))
            for _, q, loc, ls, r, status in shown[:MAX_ROWS]
        ])
        table.border_title = f"Kernels {len(shown)} of {len(self.rows)}"

    @on(Input.Changed, "#table-filter")
    def _filtered(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(DataTable.RowHighlighted)
    def _row(self, event: DataTable.RowHighlighted) -> None:
        table = self.query_one(DataTable)
        words = self.query_one("#table-filter", Input).value.lower().split()
        shown = [r for r in self.rows if all(w in (r[1] + " " + r[2]).lower() for w in words)]
        if event.cursor_row >= len(shown):
            return
        _, q, loc, ls, r, status = shown[event.cursor_row]
        t = Text()
        t.append(one_line(q, 80), style="bold")
        t.append(f"  {one_line(loc, 80)}  ({status})\n")
        t.append("launched by: ", style="dim")
        t.append((", ".join(one_line(x, 60) for x in ls[:8]) or "nothing in the checkout") + "\n")
        t.append("reached from: ", style="dim")
        more = f" +{len(r) - 12}" if len(r) > 12 else ""
        t.append(", ".join(one_line(x, 60) for x in r[:12]) + more or "no entry point")
        self.query_one("#kernel-detail", Static).update(t)
        del table

    def action_filter(self) -> None:
        self.query_one("#table-filter", Input).focus()

    def action_leave_filter(self) -> None:
        self.query_one(DataTable).focus()

    @on(Input.Submitted, "#table-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()


class CaptureScreen(TableNav, ApxScreen):
    """Capture regions, bodies, constants and hazards of the explorer's current path (from the analysis)."""

    AUTO_FOCUS = "DataTable"
    BINDINGS = list(TableNav.BINDINGS)

    def compose(self) -> ComposeResult:
        yield Static("3 · Capture: CUDA-graph regions, bodies, constants, hazards", classes="screen-title",
                     markup=False)
        yield Static("indexing…", id="capture-note", classes="note", markup=False)
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("item", "what", "at", "note")
        self.watch(self.app, "analysis", self._show)

    def _show(self, a: PathAnalysis | None) -> None:
        note = self.query_one("#capture-note", Static)
        table = self.query_one(DataTable)
        if a is None:
            note.update("indexing…" if self.apx.session is None else "No path traced yet.")
            table.clear()
            return
        if a.summary is None:
            why = f"analysis failed: {a.error}" if a.status == FAILED else a.pending()
            note.update(f"Path from {one_line(a.entry, 100)}: {one_line(why, 200)} "
                        "(static analysis, not runtime validation)")
            table.clear()
            return
        if table.row_count and getattr(self, "_shown", None) is a:
            return
        self._shown = a
        s = a.summary
        table.clear()
        note.update(f"Path from {one_line(a.entry, 100)} with the explorer's arm choices: {s.capture_regions} capture "
                    f"region(s), {s.host_transfers} host transfer(s). Static analysis, not runtime validation.")
        table.add_rows([(lit(a1, 12), lit(b, 70), lit(c, 60), lit(d, 120))
                        for a1, b, c, d in s.capture_rows[:MAX_ROWS]])
        table.border_title = f"{len(s.capture_rows)} rows"
