"""The entries pane: entry points grouped (Python, PyO3 bindings, Rust, examples), filterable."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from apxtui.textsafe import one_line
from apxtui.tui.entries import GROUPS, Entry, filter_entries
from apxtui.tui.text import label


def tail(name: str, room: int) -> str:
    """``name`` in ``room`` cells, its head elided: the end of a qualified name says the most."""
    return name if len(name) <= room else "…" + name[len(name) - room + 1:]


class EntryList(OptionList):
    """Group headers are disabled options; option ids are graph node ids."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="entries.down", tooltip="Next entry"),
        Binding("k", "cursor_up", "Up", show=False, id="entries.up", tooltip="Previous entry"),
        Binding("g", "first", "Top", show=False, id="entries.top", tooltip="First entry"),
        Binding("G", "last", "Bottom", show=False, id="entries.bottom", tooltip="Last entry"),
        Binding("l", "select", "Open", show=False, id="entries.open", tooltip="Trace from this entry"),
    ]

    class Chosen(Message):
        def __init__(self, node: str) -> None:
            super().__init__()
            self.node = node

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entries: list[Entry] = []
        self.filter_text = ""
        self.current: str | None = None

    def set_entries(self, entries: list[Entry], current: str | None) -> None:
        self.entries, self.current = entries, current
        self.apply_filter(self.filter_text)

    def apply_filter(self, text: str) -> None:
        self.filter_text = text
        shown = filter_entries(self.entries, text)
        room = max(12, self.scrollable_content_region.width - 3) if self.is_mounted else 120
        self._room = room
        opts: list[Option] = []
        for g in GROUPS:
            members = [e for e in shown if e.group == g]
            if not members:
                continue
            opts.append(Option(Text(f"{g} ({len(members)})", style="bold"), disabled=True))
            for e in members:
                mark = "● " if e.node == self.current else "  "
                opts.append(Option(Text(mark + tail(one_line(e.qualname, 300), room), no_wrap=True), id=e.node))
        self.clear_options()
        self.add_options(opts)
        total = len(self.entries)
        self.border_title = label(f"Entries {len(shown)} of {total}" if text else f"Entries {total}")
        self.border_subtitle = label(f"filter: {one_line(text, 30)}" if text else "/ filter")
        if self.current:
            self.highlight_node(self.current)

    def on_resize(self) -> None:
        room = max(12, self.scrollable_content_region.width - 3)
        if room != getattr(self, "_room", room):
            keep = self.highlighted
            self.apply_filter(self.filter_text)
            if keep is not None and keep < self.option_count:
                self.highlighted = keep

    def highlight_node(self, node: str) -> None:
        try:
            self.highlighted = self.get_option_index(node)
        except Exception:  # noqa: BLE001 - not shown under the current filter
            pass

    def first_match(self) -> str | None:
        for opt in self.options:
            if opt.id and not opt.disabled:
                return opt.id
        return None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Chosen(event.option.id))
