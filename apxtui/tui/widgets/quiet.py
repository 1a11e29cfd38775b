"""Line-API views whose size never depends on their content: no whole-screen layout per update.

Textual's ``virtual_size`` is a layout reactive, so a tree that opens a row or a details pane
that shows new text re-lays-out (and re-renders) every widget on the screen.  A view in a
fixed-size slot only needs itself and its scrollbars repainted — unless a scrollbar appears
or disappears (``overflow: auto``), which does change its content region; then the layout runs as usual.
Their scrollbars repaint only when the bar they draw changes (:mod:`.scrollbars`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from textual._styles_cache import StylesCache
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
    _only: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # (rows, lines): see _repainting

    def _watch_virtual_size(self, old: Size, new: Size) -> None:
        self._quiet_change = (old, new)

    @contextmanager
    def _repainting(self, rows: Iterable[int] = (), lines: Iterable[int] = ()) -> Iterator[None]:
        """While inside, a whole-pane repaint (Textual's for a new selection, border title or virtual size)
        repaints only these ``rows`` of the pane (0: its top border) and these content ``lines`` (scroll
        offsets added: they are placed when the repaint is asked for, after any scroll the change made)."""
        self._only = (tuple(rows), tuple(lines))
        try:
            yield
        finally:
            self._only = None

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        only, self._only = self._only, None
        try:
            return self._quiet_refresh(only, *regions, repaint=repaint, layout=layout, recompose=recompose)
        finally:
            self._only = only

    def _quiet_refresh(self, only: tuple[tuple[int, ...], tuple[int, ...]] | None, *regions: Region,
                       repaint: bool, layout: bool, recompose: bool) -> Any:
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
        if only is not None and repaint and not (regions or layout or recompose) and self.is_mounted:
            x, y = self.content_offset  # regions are relative to the content
            top, height = int(self.scroll_offset.y), self.scrollable_content_region.height
            width = self.outer_size.width
            rows, lines = only
            regions = (*(Region(-x, r - y, width, 1) for r in rows),
                       *(Region(-x, n - top, width, 1) for n in lines if 0 <= n - top < height))
            if not regions:
                return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """ScrollView's, keeping the rendered rows that stay in view: they move to their new place and only
        the rows the scroll brings into view are rendered again (the pane is still repainted on screen)."""
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.position = new_value
        dy = round(new_value) - round(old_value)
        if dy:
            kept = shift_rows(self._styles_cache, self.styles.gutter.top, self.content_region.height, dy)
            self.refresh(self.size.region)
            self._styles_cache._dirty_lines.difference_update(kept)

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


def shift_rows(cache: StylesCache, top: int, height: int, dy: int) -> set[int]:
    """Move the cached rendered rows ``top … top + height - 1`` of a pane (its content rows, below ``top``
    rows of border and padding) up by ``dy`` rows, as a vertical scroll by ``dy`` moves its content; a row
    whose new content was not rendered (or was to be rendered again) is dropped.  Returns the rows kept."""
    rendered, dirty = cache._cache, cache._dirty_lines
    moved = {y: rendered[y + dy] for y in range(top, top + height)
             if top <= y + dy < top + height and y + dy in rendered and y + dy not in dirty}
    for y in range(top, top + height):
        rendered.pop(y, None)
    rendered.update(moved)
    return set(moved)


class QuietVirtualSize(QuietSize, ScrollView):
    """A ScrollView (list it before the concrete widget class in the bases: ``(QuietVirtualSize, Tree)``)."""
