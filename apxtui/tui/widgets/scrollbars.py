"""A scrollbar that repaints only when what it draws changes.

Textual's ``ScrollBar`` repaints (every row of it) whenever its position or sizes change, and
the explorer's panes change them on most keys: the source pane centres each new line, the
details pane shows text of a new length, the tree scrolls by a row.  The thumb is drawn in
eighths of a cell, so most of those changes draw the same bar; this one compares what it
would draw and skips the repaint when nothing differs; when only the thumb moved or changed length,
it repaints the cells from the top of the higher thumb to the bottom of the lower one (with the back
cells between, whose click action changes from "scroll down" to "scroll up"), not the whole bar.
"""

from __future__ import annotations

from math import ceil
from typing import Any

from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender


def thumb(size: int, virtual_size: float, window_size: float, position: float) -> tuple[int, int] | None:
    """The thumb's start and end in eighths of a cell, as :meth:`ScrollBarRender.render_bar` draws it
    (None: no thumb)."""
    if not (window_size and size and virtual_size and size != virtual_size):
        return None
    eighths = len(ScrollBarRender.VERTICAL_BARS)
    thumb_size = max(1, window_size / (virtual_size / size))
    offset = (size - thumb_size) * (position / (virtual_size - window_size))
    start = int(offset * eighths)
    return start, start + ceil(thumb_size * eighths)


def changed_cells(old: tuple[int, int], new: tuple[int, int]) -> tuple[int, int]:
    """The first and last cell whose drawing (glyph, or the click action of a back cell: up above the thumb,
    down below) can differ between two thumbs (:func:`thumb`): from the higher start to the lower end,
    including the cell at an end on a cell boundary (drawn with the thumb's edge glyph)."""
    eighths = len(ScrollBarRender.VERTICAL_BARS)
    return min(old[0], new[0]) // eighths, max(old[1], new[1]) // eighths


class ThumbScrollBar(ScrollBar):
    """``ScrollBar`` whose content repaints are skipped while the drawn bar stays the same."""

    _drawn: tuple[Any, ...] | None = None

    def _looks(self) -> tuple[Any, ...]:
        """Everything :meth:`render` draws from: colours, size and the thumb."""
        window_size = self.window_size if self.window_size < self.window_virtual_size else 0
        length = self.size.height if self.vertical else self.size.width
        parent = self.parent
        colours = (parent.styles.scrollbar_background, parent.styles.scrollbar_color,
                   parent.styles.scrollbar_background_hover, parent.styles.scrollbar_color_hover,
                   parent.styles.scrollbar_background_active, parent.styles.scrollbar_color_active,
                   parent.background_colors) if parent is not None else ()
        return (self.app.theme, self.size, self.thickness, self.vertical, self.mouse_over, bool(self.grabbed), colours,
                thumb(length, ceil(self.window_virtual_size), ceil(window_size), self.position))

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        if repaint and not (regions or layout or recompose) and self.is_mounted and self.parent is not None:
            looks, drawn = self._looks(), self._drawn
            if looks == drawn:
                return self
            self._drawn = looks
            if drawn is not None and looks[:-1] == drawn[:-1] and looks[-1] is not None and drawn[-1] is not None:
                first, last = changed_cells(drawn[-1], looks[-1])
                n, (w, h) = last - first + 1, self.size
                return super().refresh(Region(0, first, w, n) if self.vertical else Region(first, 0, n, h))
        else:
            self._drawn = None  # a layout, part or recompose: compare afresh next time
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
