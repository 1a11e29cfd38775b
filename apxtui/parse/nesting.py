"""Interval nesting of captured syntax: which captured constructs enclose a node.

``Node.parent`` in tree-sitter walks down from the root, so its cost grows with the
node's depth, and climbing ancestors once per call is quadratic (or worse) on deep
code: a 4,000-term ``g(0)+g(1)+…`` took minutes.  The extractors therefore never
climb.  Their queries capture the constructs that matter (function bodies, classes,
namespaces, ``if`` arms, loops, …) and one sweep over byte ranges sorted by start
nests them: each captured range becomes a :class:`Frame` whose ``parent`` is the
innermost range around it, and each point (a call, a definition, a string…) gets
the innermost frame that holds it.  Cost: a sort, then linear, whatever the depth.

Ranges of syntax nodes nest properly (two are disjoint or one holds the other); a
range that would overlap its parent's end (only possible for hand-made sub-ranges)
is clipped to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

#: ``kind`` of a frame that stops context collection (a function or class body).
SCOPE = "scope"
#: Default rank: inside any frame of the same range with a lower rank.  Context frames
#: rank by their construct's start, so a ``#[cfg]`` on an item is outside the item's own
#: frames (scope, impl, mod).
INNER = 1 << 62


class Frame:
    """One captured range ``[start, end)``; ``parent`` is the innermost frame around it
    and ``scope`` the innermost frame of kind :data:`SCOPE` at or above it."""

    __slots__ = ("start", "end", "kind", "node", "data", "rank", "parent", "scope", "memo", "ctx")

    def __init__(self, start: int, end: int, kind: str, node: Any = None, data: Any = None, rank: int = INNER):
        self.start = start
        self.end = end
        self.kind = kind
        self.node = node  # the construct (a tree-sitter node) the range belongs to
        self.data = data  # what the language module attached
        self.rank = rank  # order among frames with the same range (lower is outer)
        self.parent: Frame | None = None
        self.scope: Frame | None = None
        self.memo: Any = None  # per-frame cache of the language module (names, cfg…)
        self.ctx: Any = None  # per-frame cache of :mod:`apxtui.parse.contexts`

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Frame({self.kind} {self.start}:{self.end})"


def nest(frames: Sequence[Frame], points: Sequence[tuple[int, int, bool]]) -> list[Frame | None]:
    """Link ``frames`` to their parents and return, per point ``(start, end, outside)``, the
    innermost frame holding it (None at top level), in the order of ``points``.

    A point with the same range as a frame is inside it, unless ``outside`` is true (a
    definition is not inside the frame of its own body when both have the node's range).
    """
    events: list[tuple[int, int, int, int, int]] = []
    for i, f in enumerate(frames):
        events.append((f.start, -f.end, 1, f.rank, i))
    for j, (s, e, outside) in enumerate(points):
        events.append((s, -e, 0 if outside else 2, 0, j))
    events.sort()
    out: list[Frame | None] = [None] * len(points)
    stack: list[Frame] = []
    for start, _, cls, _, i in events:
        while stack and stack[-1].end <= start:
            stack.pop()
        top = stack[-1] if stack else None
        if cls != 1:
            out[i] = top
            continue
        f = frames[i]
        if top is not None and f.end > top.end:
            f.end = top.end
        f.parent = top
        f.scope = f if f.kind == SCOPE else (top.scope if top is not None else None)
        stack.append(f)
    return out


def chain(frame: Frame | None) -> Iterator[Frame]:
    """``frame`` and its parents, innermost first."""
    while frame is not None:
        yield frame
        frame = frame.parent


def frame_at(frames: Sequence[Frame], pos: int) -> Frame | None:
    """Innermost of ``frames`` (linked by :func:`nest`, sorted by start) holding byte ``pos``."""
    lo, hi = 0, len(frames)
    while lo < hi:  # last frame starting at or before pos
        mid = (lo + hi) // 2
        if frames[mid].start <= pos:
            lo = mid + 1
        else:
            hi = mid
    f = frames[lo - 1] if lo else None
    while f is not None and not (f.start <= pos < f.end):
        f = f.parent
    return f
