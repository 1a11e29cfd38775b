"""The speed-of-light panel: device picker, batch/seq/context/launch-floor/bind inputs, the result.

The panel only collects inputs and shows what the screen computed; it posts
:class:`SolPanel.InputsChanged` and the screen runs the worker.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from apxtui.checkpoint.view import SolRequest, sol_request
from apxtui.tui.details import Section
from apxtui.tui.widgets.details_pane import SectionsView, render_sections

FIELDS = (("sol-batch", "batch", "B", 7), ("sol-seq", "seq", "S", 7), ("sol-context", "context", "= seq", 9))
FIELDS2 = (
    ("sol-floor", "launch floor µs", "device table", 13),
    ("sol-bind", "bind loops", "TEXT=N, … (loop header text)", 0),
)


class SolResult(VerticalScroll, can_focus=True):
    """Scrollable result sections (vim keys)."""

    BINDINGS = [
        Binding("j", "scroll_down", "Down", show=False, id="sol.down", tooltip="Scroll down"),
        Binding("k", "scroll_up", "Up", show=False, id="sol.up", tooltip="Scroll up"),
        Binding("g", "scroll_home", "Top", show=False, id="sol.top", tooltip="Top"),
        Binding("G", "scroll_end", "Bottom", show=False, id="sol.bottom", tooltip="Bottom"),
    ]


class SolPanel(Vertical):
    """Inputs on two compact rows, the path it prices, then the bound and the estimate."""

    class InputsChanged(Message):
        def __init__(self, request: SolRequest) -> None:
            super().__init__()
            self.request = request

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, SolPanel.InputsChanged)

    def __init__(self, devices: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.devices = devices
        self._plain = ""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="sol-row"):
            yield Label("device ")
            yield Select([(d, d) for d in self.devices], prompt="choose…", compact=True, id="sol-device")
            for wid, label, hint, width in FIELDS:
                yield Label(f" {label} ")
                box = Input(placeholder=hint, compact=True, id=wid)
                box.styles.width = width
                yield box
        with Horizontal(classes="sol-row"):
            for wid, label, hint, width in FIELDS2:
                yield Label(f"{label} " if wid == "sol-floor" else f" {label} ")
                box = Input(placeholder=hint, compact=True, id=wid)
                if width:
                    box.styles.width = width
                yield box
        yield Static("", id="sol-path", classes="note", markup=False)
        with SolResult(id="sol-result"):
            yield Static("", id="sol-body", markup=False)

    def request(self) -> SolRequest:
        dev = self.query_one("#sol-device", Select).value
        val = {wid: self.query_one(f"#{wid}", Input).value for wid, *_ in (*FIELDS, *FIELDS2)}
        return sol_request(dev if isinstance(dev, str) else None, val["sol-batch"], val["sol-seq"],
                           val["sol-context"], val["sol-floor"], val["sol-bind"])

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.InputsChanged(self.request()))

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.post_message(self.InputsChanged(self.request()))

    def set_path(self, text: str) -> None:
        self.query_one("#sol-path", Static).update(text)

    def show(self, sections: list[Section], note: str = "") -> None:
        self._plain = render_sections(sections).plain
        body = self.query_one("#sol-body", Static)
        body.update(SectionsView(sections) if sections else Text(note, style="dim"))
        if not sections:
            self._plain = note

    def text(self) -> str:
        """The plain text of the result (for tests)."""
        return self._plain
