"""What a call-tree row stands for: a tagged union of dataclasses (no Textual).

Every row has ``pos`` (its :mod:`~apxtui.tui.positions` key) and ``path`` (the stage node
ids from the entry down to it, what the tracer needs to detect recursion).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apxtui.trace import Arm, Dispatch, Stage
from apxtui.tui.positions import Pos


@dataclass
class StageRow:
    stage: Stage
    path: tuple[str, ...]
    pos: Pos
    populated: bool = False  # its children's rows are built


@dataclass
class DispatchRow:
    dispatch: Dispatch
    path: tuple[str, ...]
    pos: Pos


@dataclass
class ArmRow:
    arm: Arm
    dispatch: Dispatch
    path: tuple[str, ...]
    pos: Pos


@dataclass
class MoreRow:
    """"+N more…": the items of a long list not shown yet (``enter`` adds the next chunk)."""

    rest: list[Stage | Dispatch]
    path: tuple[str, ...]
    pos: Pos  # the parent's position plus ``more``
    parent_pos: Pos = field(default=())


Row = StageRow | DispatchRow | ArmRow | MoreRow
