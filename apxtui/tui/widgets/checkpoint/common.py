"""Small helpers shared by the checkpoint tabs."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from apxtui.textsafe import one_line

MAX_ROWS = 5000
NO_CKPT = "No checkpoint given: start with --checkpoint PATH (a .safetensors file or a directory of shards)."


def lit(s: object, limit: int = 100) -> Text:
    """A literal table cell (DataTable would read a plain str as markup)."""
    return Text(one_line(str(s), limit))


def mb(n: int) -> str:
    return f"{n / 1e6:,.2f}"


def params(n: int) -> str:
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:.2f}{unit}"
    return str(n)


def shape(s: tuple[int, ...]) -> str:
    return "×".join(map(str, s)) or "scalar"


class TableTab(Vertical):
    """A tab whose first DataTable the screen's j/k/g/G move; ``DETAIL`` names its detail panel, if any."""

    DEFAULT_CSS = "TableTab { height: 1fr; }"
    TITLE = ""
    DETAIL = ""

    @property
    def table(self) -> DataTable[object]:
        return self.query_one(DataTable)

    def set_loading(self, loading: bool) -> None:
        self.table.loading = loading

    def say(self, text: str) -> None:
        """Put ``text`` in the detail panel (tabs without one have nothing to say)."""
        if self.DETAIL:
            self.query_one(f"#{self.DETAIL}", Static).update(text)

    def no_checkpoint(self) -> None:
        self.table.border_title = "no checkpoint"
        self.say(NO_CKPT)

    def read_failed(self, error: str) -> None:
        self.set_loading(False)
        self.table.border_title = f"{self.TITLE}: checkpoint unreadable"
