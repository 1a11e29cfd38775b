"""The details pane: sections of (label, value) rows rendered as Text (never as markup).

A line-API view: new details are rendered to lines once (at the pane's width) and shown
without a layout pass, so moving the cursor in the tree does not re-lay-out the screen.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding
from textual.events import Resize
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from apxtui.textsafe import one_line
from apxtui.tui.details import NOT_ANALYSED, Section
from apxtui.tui.widgets.quiet import QuietVirtualSize

_CONSOLE = Console(width=200, color_system=None, legacy_windows=False)  # measures only (wrapping)


def render_sections(sections: list[Section]) -> Text:
    """Plain text of the sections (for tests and copying): ``  key  value`` lines under each title."""
    t = Text()
    for i, (title, rows) in enumerate(sections):
        if i:
            t.append("\n")
        t.append(title + "\n", style="bold underline")
        width = max((len(k) for k, _ in rows), default=0)
        for k, v in rows:
            t.append(f"  {k:<{width}}  " if k else "  ", style="dim")
            t.append(one_line(v, 400) + "\n")
    t.rstrip()
    return t


def render_grid(sections: list[Section], width: int) -> list[Text]:
    """The sections as lines of ``width`` cells: a key column, values wrapped under their own indent."""
    lines: list[Text] = []
    for i, (title, rows) in enumerate(sections):
        if i:
            lines.append(Text())
        lines.append(Text(one_line(title, 200), style="bold underline"))
        keyed = any(k for k, _ in rows)
        keys = [one_line(k, 40) for k, _ in rows]
        indent = 2 + (max(len(k) for k in keys) + 2 if keyed else 0)
        room = max(8, width - indent)
        for key, (_k, v) in zip(keys, rows, strict=True):
            value = Text(one_line(v, 400), style="dim italic" if v == NOT_ANALYSED else "")
            parts = value.wrap(_CONSOLE, room, overflow="fold") if value.cell_len > room else [value]
            for n, part in enumerate(parts):
                line = Text(("  " + key).ljust(indent) if n == 0 else " " * indent, style="dim")
                line.append_text(part)
                lines.append(line)
    return lines


def _same(a: Text, b: Text) -> bool:
    """The same characters in the same styles."""
    return a.plain == b.plain and a.style == b.style and a.spans == b.spans


class SectionsView:
    """The sections as a Rich renderable (wrapped to the width it is given)."""

    def __init__(self, sections: list[Section]) -> None:
        self.sections = sections

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from render_grid(self.sections, options.max_width)


class DetailsPane(QuietVirtualSize, ScrollView, can_focus=True):
    """Scrollable details of the highlighted row."""

    # The scrollbar always shown: one that came and went with the text's length re-laid-out the screen.
    DEFAULT_CSS = "DetailsPane { overflow-y: scroll; overflow-x: hidden; }"

    BINDINGS = [
        Binding("j", "scroll_down", "Down", show=False, id="details.down", tooltip="Scroll down"),
        Binding("k", "scroll_up", "Up", show=False, id="details.up", tooltip="Scroll up"),
        Binding("g", "scroll_home", "Top", show=False, id="details.top", tooltip="Top"),
        Binding("G", "scroll_end", "Bottom", show=False, id="details.bottom", tooltip="Bottom"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._sections: list[Section] | None = None
        self._texts: list[Text] = []
        self._lines: list[Strip | None] = []
        self._width = 0

    def show(self, sections: list[Section]) -> None:
        """Show ``sections`` from the top; the same sections again (the analysis re-sends them as it
        progresses) change nothing, and only the lines that differ from those shown are rendered again."""
        if sections == self._sections:
            return
        self._sections = sections
        self._render_lines(keep=True)
        self.scroll_to(0, 0, animate=False, immediate=True)

    def text(self) -> str:
        """The plain text shown (for tests and copying; made on request, not per row shown)."""
        return render_sections(self._sections).plain if self._sections is not None else "Select a row in the call tree."

    def _render_lines(self, keep: bool = False) -> None:
        """Lay the sections out at the pane's width; with ``keep``, lines equal to those shown keep their
        rendering and only the others (and lines no longer there) are repainted."""
        width = max(1, self.scrollable_content_region.width)
        texts = (render_grid(self._sections, width) if self._sections is not None
                 else [Text("Select a row in the call tree.", style="dim")])
        old_texts, old_lines = self._texts, self._lines
        keep = keep and width == self._width and self.is_mounted
        # rendered when first shown (most rows are below the pane), or kept when the same text is shown
        self._lines = [old_lines[i] if keep and i < len(old_texts) and _same(old_texts[i], t) else None
                       for i, t in enumerate(texts)]
        self._texts, self._width = texts, width
        changed = [i for i, got in enumerate(self._lines) if got is None] + list(range(len(texts), len(old_texts)))
        with self._repainting(lines=changed) if keep else nullcontext():
            self.virtual_size = Size(width, len(texts))
            self.refresh()

    def _strip(self, i: int) -> Strip:
        strip = self._lines[i]
        if strip is None:
            width, style = self._width, self.rich_style
            t = self._texts[i]
            if t.cell_len > width:
                t = t.copy()
                t.truncate(width)
            segs = [Segment(s.text, style + s.style if s.style else style) for s in t.render(self.app.console)]
            strip = self._lines[i] = Strip(Segment.adjust_line_length(segs, width, style=style), width)
        return strip

    def on_resize(self, event: Resize) -> None:
        if self.scrollable_content_region.width != self._width:
            self._render_lines()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._render_lines())
        self.call_after_refresh(self._render_lines)

    def render_line(self, y: int) -> Strip:
        i = y + int(self.scroll_offset.y)
        width = self.scrollable_content_region.width
        if 0 <= i < len(self._lines):
            return self._strip(i).crop(0, width)
        return Strip.blank(width, self.rich_style)
