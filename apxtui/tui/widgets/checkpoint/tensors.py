"""Tensors tab: every tensor with its join status, filterable; the detail names the claiming patterns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, Input, Static

from apxtui.checkpoint.view import MULTI, UNCLAIMED
from apxtui.textsafe import one_line
from apxtui.tui.widgets.checkpoint.common import MAX_ROWS, TableTab, lit, mb, shape

if TYPE_CHECKING:
    from apxtui.checkpoint.model import Checkpoint, TensorInfo
    from apxtui.checkpoint.view import Claim


def claim_cell(label: str) -> Text:
    """Matched plain; unclaimed bold; claimed by several patterns bold underlined; pending dim."""
    style = {"matched": "", "unclaimed": "bold", "joining…": "dim", "join failed": "dim"}.get(label, "bold underline")
    return Text(one_line(label, 40), style=style)


class TensorsTab(TableTab):
    TITLE, DETAIL = "Tensors", "tensor-detail"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ckpt: Checkpoint | None = None
        self.claims: dict[str, Claim] = {}
        self.join_error = ""
        self.shown: list[tuple[TensorInfo, str]] = []  # (tensor, join status) under the filter

    def compose(self) -> ComposeResult:
        yield Input(placeholder="/ filter by name or status (unclaimed, claimed ×)", id="ckpt-filter", compact=True)
        yield DataTable(cursor_type="row", zebra_stripes=True, id="tensor-table")
        yield Static("", id="tensor-detail", classes="panel ckpt-detail", markup=False)

    def on_mount(self) -> None:
        self.table.add_columns("tensor", "join", "dtype", "shape", "MB")

    def read_failed(self, error: str) -> None:
        super().read_failed(error)
        self.say(f"Unreadable checkpoint: {one_line(error, 300)}")

    def show_checkpoint(self, ckpt: Checkpoint) -> None:
        self.ckpt = ckpt
        self.set_loading(False)
        self.fill()

    def show_claims(self, claims: dict[str, Claim], join_error: str = "") -> None:
        self.claims, self.join_error = claims, join_error
        self.fill()

    def fill(self) -> None:
        if self.ckpt is None:
            return
        text = self.query_one("#ckpt-filter", Input).value
        table = self.table
        table.clear()
        words = text.lower().split()

        def status(t: TensorInfo) -> str:
            c = self.claims.get(t.name)
            return c.label if c is not None else ("join failed" if self.join_error else "joining…")

        rows = [(t, status(t)) for t in self.ckpt.tensors]
        self.shown = [(t, st) for t, st in rows if all(w in f"{t.name} {st}".lower() for w in words)]
        table.add_rows([(lit(t.name, 70), claim_cell(st), lit(t.dtype), lit(shape(t.shape)), lit(mb(t.nbytes)))
                        for t, st in self.shown[:MAX_ROWS]])
        n = len(self.ckpt.tensors)
        table.border_title = (f"Tensors {min(len(self.shown), MAX_ROWS):,} of {n:,}" if n else
                              "Tensors: EMPTY HEADER (no tensor declared)")
        self.detail(table.cursor_row if self.shown else -1)

    def detail(self, i: int) -> None:
        box = self.query_one("#tensor-detail", Static)
        if not (0 <= i < len(self.shown)):
            box.update("No tensor matches the filter." if self.ckpt is not None and self.ckpt.tensors else
                       "The checkpoint declares no tensor: nothing to join." if self.ckpt is not None else "")
            return
        t, st = self.shown[i]
        out = Text()
        out.append(one_line(t.name, 120), style="bold")
        out.append(f"  {one_line(t.dtype, 20)} [{', '.join(map(str, t.shape))}] {t.nbytes:,} B in "
                   f"{one_line(t.shard, 60)}\n")
        c = self.claims.get(t.name)
        if c is None:
            out.append(f"join: {st}")
        elif c.status == UNCLAIMED:
            out.append("unclaimed: no loader pattern in the checkout names this tensor", style="bold")
        else:
            if c.status == MULTI:
                out.append(f"claimed by {len(c.patterns)} patterns (each may load it):\n", style="bold")
            for p, at in c.patterns[:4]:
                out.append("  ← " if c.status == MULTI else "matched by ")
                out.append(one_line(p, 80))
                out.append(f"  at {one_line(at, 80)}\n", style="dim")
        out.rstrip()
        box.update(out)

    @on(Input.Changed, "#ckpt-filter")
    def _filtered(self, event: Input.Changed) -> None:
        self.fill()

    @on(Input.Submitted, "#ckpt-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self.table.focus()

    @on(DataTable.RowHighlighted, "#tensor-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        self.detail(event.cursor_row)

    def focus_filter(self) -> None:
        self.query_one("#ckpt-filter", Input).focus()
