"""One walk over a phase table of the execution map, shared by the Markdown and text renderers.

:func:`table_lines` turns a table's folded lines (:func:`apxtui.map.fold.fold_blocks`) into what a
renderer prints, in order: a frequency change, a heading (model-level frames entered), a reference to
an earlier block, or a numbered row with the loops and conditions its enclosing frames do not show.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from apxtui.map.fold import BlockRef, Heading, Line
from apxtui.map.model import Condition, Frame, PhaseTable, Repeat, Row

T = TypeVar("T", Repeat, Condition)


@dataclass(frozen=True)
class FrequencyChange:
    """The rows from here on run at another frequency than the ones above."""

    frequency: str


@dataclass(frozen=True)
class NumberedRow:
    """A row, numbered within its table, with what it shows beyond its enclosing frames."""

    n: int
    row: Row
    repeats: list[Repeat]  # the row's loops not already shown on an enclosing frame
    conditions: list[Condition]  # the row's conditions not already shown on its innermost frame


TableLine = FrequencyChange | Heading | BlockRef | NumberedRow


def own(items: Sequence[T], frames: Sequence[Frame], attr: str) -> list[T]:
    """``items`` of a row (``attr``: ``repeat`` / ``condition``) not already shown on ``frames``."""
    shown = {id(x) for f in frames for x in getattr(f, attr)}
    return [x for x in items if id(x) not in shown]


def table_lines(t: PhaseTable, lines: list[Line]) -> Iterator[TableLine]:
    """The lines of table ``t`` (its folded ``lines``) as a renderer prints them, in order."""
    n = 0
    freq = t.frequency
    for ln in lines:
        f = ln.frequency if isinstance(ln, Row) else ln.rows[0].frequency if isinstance(ln, BlockRef) else freq
        if f != freq:
            freq = f
            yield FrequencyChange(f)
        if isinstance(ln, Row):
            n += 1
            conds = own(ln.condition, ln.context[-1:], "condition") if ln.context else list(ln.condition)
            yield NumberedRow(n, ln, own(ln.repeat, ln.context, "repeat"), conds)
        else:
            yield ln
