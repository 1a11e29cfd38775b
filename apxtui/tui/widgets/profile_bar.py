"""The profile bar: the build/run profile every trace on screen follows, and what runs in the background."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget

from apxtui.textsafe import one_line


class ProfileBar(Widget):
    """``no profile: all configurations`` until a profile is given (flags) or set on screen 5; on the right,
    the app's background ``activity`` (analysis, export …) while it runs."""

    DEFAULT_CSS = """
    ProfileBar { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    ProfileBar.-active { color: $text-warning; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = "indexing…"
        self.hint = "5: change"
        self.busy = ""

    def on_mount(self) -> None:
        if hasattr(self.app, "activity"):
            self.watch(self.app, "activity", self._activity)

    def _activity(self, activity: dict[str, str]) -> None:
        busy = " · ".join(one_line(t, 80) for t in activity.values())
        if busy != self.busy:
            self.busy = busy
            self.refresh()

    def set_profile(self, text: str, active: bool) -> None:
        self.text = text
        self.set_class(active, "-active")
        self.refresh()

    def plain(self) -> str:
        return self._left().plain

    def _left(self) -> Text:
        t = Text(one_line(self.text, 500))
        if self.hint:
            t.append(f"  · {self.hint}", style="dim")
        return t

    def render(self) -> Text:
        width = max(10, self.size.width - 2) if self.size.width else 500
        left = self._left()
        if not self.busy:
            left.truncate(width, overflow="ellipsis")
            return left
        right = Text(f"⟳ {self.busy}", style="italic")
        room = width - right.cell_len - 2
        if room < 20:  # narrow: the background work wins, the profile is one click away (5)
            right.truncate(width, overflow="ellipsis")
            return right
        left.truncate(room, overflow="ellipsis")
        left.append(" " * (width - left.cell_len - right.cell_len))
        left.append_text(right)
        return left
