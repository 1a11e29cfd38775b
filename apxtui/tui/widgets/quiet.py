"""Line-API views whose size never depends on their content: no whole-screen layout per update.

Textual's ``virtual_size`` is a layout reactive, so a tree that opens a row or a details pane
that shows new text re-lays-out (and re-renders) every widget on the screen.  A view in a
fixed-size slot only needs itself and its scrollbars repainted — unless a scrollbar appears
or disappears (``overflow: auto``), which does change its content region; then the layout runs as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.geometry import Region, Size
from textual.scroll_view import ScrollView

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


class QuietVirtualSize(QuietSize, ScrollView):
    """A ScrollView (list it before the concrete widget class in the bases: ``(QuietVirtualSize, Tree)``)."""
