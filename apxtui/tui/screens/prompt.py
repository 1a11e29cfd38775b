"""A one-line value prompt (``ModalScreen[str | None]``): enter accepts, escape cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class Prompt(ModalScreen[str | None]):
    DEFAULT_CSS = """
    Prompt { align: center middle; }
    Prompt > Vertical { width: 70; max-width: 95%; height: auto; border: round $accent; background: $surface;
                        padding: 0 1; }
    Prompt Static { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", priority=True, id="prompt.cancel", tooltip="Close, change nothing")
    ]

    def __init__(self, title: str, value: str = "", hint: str = "") -> None:
        super().__init__()
        self.title_text, self.value, self.hint = title, value, hint

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, markup=False)
            yield Input(value=self.value, id="prompt-input")
            if self.hint:
                yield Static(self.hint, markup=False)

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "enter: accept · esc: cancel"
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
