"""Line-API views whose size never depends on their content: no whole-screen layout per update.

Textual's ``virtual_size`` is a layout reactive, so a tree that opens a row or a details pane
that shows new text re-lays-out (and re-renders) every widget on the screen.  A view in a
fixed-size slot only needs itself and its scrollbars repainted — unless a scrollbar appears
or disappears (``overflow: auto``), which does change its content region; then the layout runs as usual.
Their scrollbars repaint only when the bar they draw changes (:mod:`.scrollbars`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar

from apxtui.tui.widgets.scrollbars import ThumbScrollBar

if TYPE_CHECKING:
    _Base = ScrollView
else:
    _Base = object


class QuietSize(_Base):
    """The behaviour, as a mixin that is no widget class: list it first in the bases of a ScrollView
    subclass (``(QuietSize, TextArea)``).  Textual takes a widget's default CSS from its first widget base
    only, so a widget mixin there would drop the concrete class's (TextArea's padding, gutter …)."""

    _quiet_change: tuple[Size, Size] | None = None

    def _watch_virtual_size(self, old: Size, new: Size) -> None:
        self._quiet_change = (old, new)

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        change, self._quiet_change = self._quiet_change, None
        if layout and change is not None and not recompose and self.is_mounted:
            old, new = change
            width, height = self.scrollable_content_region.size
            styles = self.styles  # a scrollbar kept (overflow: scroll) or never shown (hidden) does not flip
            flips = (styles.overflow_y == "auto" and (old.height > height) != (new.height > height)
                     or styles.overflow_x == "auto" and (old.width > width) != (new.width > width))
            if not flips:
                if self.show_vertical_scrollbar:
                    self.vertical_scrollbar.window_virtual_size = new.height
                if self.show_horizontal_scrollbar:
                    self.horizontal_scrollbar.window_virtual_size = new.width
                layout = False
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    # Widget's two properties, with scrollbars that repaint only when the bar they draw changes.
    @property
    def vertical_scrollbar(self) -> ScrollBar:
        if self._vertical_scrollbar is None:
            self._vertical_scrollbar = self._thumb_bar(vertical=True)
        return self._vertical_scrollbar

    @property
    def horizontal_scrollbar(self) -> ScrollBar:
        if self._horizontal_scrollbar is None:
            self._horizontal_scrollbar = self._thumb_bar(vertical=False)
        return self._horizontal_scrollbar

    def _thumb_bar(self, vertical: bool) -> ScrollBar:
        bar = ThumbScrollBar(vertical=vertical, name="vertical" if vertical else "horizontal",
                             thickness=self.scrollbar_size_vertical if vertical else self.scrollbar_size_horizontal)
        bar.display = False
        self.app._start_widget(self, bar)
        return bar


class QuietVirtualSize(QuietSize, ScrollView):
    """A ScrollView (list it before the concrete widget class in the bases: ``(QuietVirtualSize, Tree)``)."""
