"""The profile bar: one line naming the build/run profile every trace on screen follows."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from apxtui.tui.text import one_line


class ProfileBar(Widget):
    """``no profile: all configurations`` until a profile is given (flags) or set on screen 5."""

    DEFAULT_CSS = """
    ProfileBar { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    ProfileBar.-active { color: $text-warning; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.text = "indexing…"
        self.hint = "5: change"

    def set_profile(self, text: str, active: bool) -> None:
        self.text = text
        self.set_class(active, "-active")
        self.refresh()

    def plain(self) -> str:
        return self.render().plain

    def render(self) -> Text:
        t = Text(one_line(self.text, 500))
        if self.hint:
            t.append(f"  · {self.hint}", style="dim")
        t.truncate(max(10, self.size.width - 2) if self.size.width else 500, overflow="ellipsis")
        return t
