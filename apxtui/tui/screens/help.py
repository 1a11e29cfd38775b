"""``?``: the keys of the screen below (from its active bindings) and what the tree's markers mean."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

MARKERS = [
    ("◆", "dispatch point (if / match / switch / #[cfg] / #if); its arms are below it"),
    ("● ○ ◦", "chosen arm · not chosen arm · no choice made (every arm shown)"),
    ("◆ ambiguous", "a call with several candidate definitions: one arm per candidate"),
    ("×…", "the call sits in a loop (header shown): it runs once per iteration"),
    ("unresolved / ~", "no definition found / resolved by heuristic"),
    ("↻", "recursion: the function is already on the path above"),
    ("Py PyO3 Rust FFI ABI host dev kernel lib ext", "language / layer of a stage"),
]


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 100; height: 90%; border: round $accent;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close", priority=True, id="help.close",
                tooltip="Close the help"),
        Binding("j", "scroll('down')", "Down", show=False, id="help.down", tooltip="Scroll down"),
        Binding("k", "scroll('up')", "Up", show=False, id="help.up", tooltip="Scroll up"),
    ]

    def __init__(self, below: Screen[object]) -> None:
        super().__init__()
        self.below = below

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self._text(), id="help-text")

    def action_scroll(self, where: str) -> None:
        box = self.query_one(VerticalScroll)
        box.scroll_down() if where == "down" else box.scroll_up()

    def _text(self) -> Text:
        t = Text()
        t.append("Keys on this screen\n", style="bold underline")
        seen: set[tuple[str, str]] = set()
        rows = []
        for active in self.below.active_bindings.values():
            b = active.binding
            label = b.key_display or self.app.get_key_display(b)
            if (b.action, label) in seen:
                continue
            seen.add((b.action, label))
            rows.append((label, b.description or b.action, active.tooltip or b.tooltip or ""))
        rows.sort(key=lambda r: r[1].lower())
        w = max((len(r[0]) for r in rows), default=4)
        for label, desc, tip in rows:
            t.append(f"  {label:<{w}}  ", style="bold")
            t.append(desc)
            if tip and tip != desc:
                t.append(f" — {tip}", style="dim")
            t.append("\n")
        t.append("\nEverywhere: ", style="bold")
        t.append("ctrl+p or : command palette (jump to any symbol, switch entry, open a screen, export) · "
                 "1–5 screens · tab / shift+tab move between panes · ctrl+q quit\n")
        t.append("\nCall-tree markers\n", style="bold underline")
        for mark, what in MARKERS:
            t.append(f"  {mark}  ", style="bold")
            t.append(what + "\n")
        t.append("\nOver SSH: ", style="bold")
        t.append("set ESCDELAY=25 for a snappy escape; tmux needs `set -g set-clipboard on` for y (OSC 52); "
                 "--no-mouse leaves text selection to the terminal; TEXTUAL_COLOR_SYSTEM=256/16 and NO_COLOR work.\n")
        return t
