"""The scrollbar's skip rule: two states with the same thumb draw the same bar, and different thumbs differ."""

from __future__ import annotations

from textual.scrollbar import ScrollBarRender

from apxtui.tui.widgets.scrollbars import changed_cells, thumb


def drawn(size: int, virtual: int, window: int, position: float, vertical: bool) -> list[tuple[str, str]]:
    bar = ScrollBarRender.render_bar(size=size, virtual_size=virtual, window_size=window, position=position,
                                     vertical=vertical)
    return [(s.text, str(s.style)) for s in bar.segments]


def test_the_same_thumb_draws_the_same_bar():
    for vertical in (True, False):
        for size, virtual, window in ((22, 1000, 22), (10, 37, 10), (24, 7137, 24), (5, 5, 5), (13, 0, 13)):
            bars: dict[object, list[tuple[str, str]]] = {}
            last = 8 * max(1, virtual - window)
            for eighth in sorted({*range(0, last + 1, max(1, last // 500)), last}):
                position = eighth / 8
                key = thumb(size, virtual, window, position)
                got = drawn(size, virtual, window, position, vertical)
                assert bars.setdefault(key, got) == got, (size, virtual, window, position)
            assert len({tuple(b) for b in bars.values()}) == len(bars)  # different thumbs, different bars
            assert len(bars) > 1 or virtual <= size


def test_a_moved_thumb_changes_only_the_cells_repainted():
    """Every cell whose glyph, style or click action differs between two thumbs is among those repainted."""
    for vertical in (True, False):
        for size, virtual, window in ((22, 1000, 22), (10, 37, 10), (24, 7137, 24), (13, 40, 9)):
            last = 8 * max(1, virtual - window)
            positions = sorted({*range(0, last + 1, max(1, last // 60)), last})
            for a in positions:
                for b in positions[::7]:
                    old = ScrollBarRender.render_bar(size=size, virtual_size=virtual, window_size=window,
                                                     position=a / 8, vertical=vertical).segments
                    new = ScrollBarRender.render_bar(size=size, virtual_size=virtual, window_size=window,
                                                     position=b / 8, vertical=vertical).segments
                    differ = [i for i, (x, y) in enumerate(zip(old, new, strict=True))
                              if (x.text, x.style, x.style.meta if x.style else None)
                              != (y.text, y.style, y.style.meta if y.style else None)]
                    old_thumb, new_thumb = (thumb(size, virtual, window, p / 8) for p in (a, b))
                    if not differ:
                        continue
                    assert old_thumb is not None and new_thumb is not None
                    first, end = changed_cells(old_thumb, new_thumb)
                    assert first <= min(differ) and max(differ) <= end, (size, virtual, window, a, b, differ)
