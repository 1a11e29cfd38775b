"""Positions in a trace: the one key scheme the explorer uses for rows, analyses and history.

A position (:data:`Pos`) is the chain of parts from the entry down to an item:
``s:<node>@<site>`` for a stage, ``d:<dispatch key>`` for a dispatch point, ``a:<index>`` for
one of its arms, and a final ``more`` for a "+N more…" row.  It survives a re-trace (node ids,
call sites, dispatch keys and arm indices are stable), so the tree, the background analysis,
``n``/``N`` and back/forward all use it.  No Textual here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence

from apxtui.trace import Arm, Dispatch, Stage, stage_key

Pos = tuple[str, ...]
Item = Stage | Dispatch | Arm
MORE = "more"


def stage_part(st: Stage) -> str:
    """``s:`` + :func:`apxtui.trace.stage_key` (``node@site``): the execution map's rows carry chains of them."""
    return f"s:{stage_key(st)}"


def stage_keys(pos: Pos) -> tuple[str, ...]:
    """The :func:`~apxtui.trace.stage_key` chain of ``pos`` (what the map and the report's ``Path:`` use)."""
    return tuple(p[2:] for p in pos if p.startswith("s:"))


def dispatch_part(d: Dispatch) -> str:
    return f"d:{d.key}"


def arm_part(a: Arm) -> str:
    return f"a:{a.index}"


def part(item: Item) -> str:
    if isinstance(item, Stage):
        return stage_part(item)
    if isinstance(item, Dispatch):
        return dispatch_part(item)
    return arm_part(item)


def walk_positions(root: Stage) -> Iterator[tuple[Pos, Item, tuple[str, ...]]]:
    """Pre-order (execution order) over the expanded tree, skipping arms not chosen:
    ``(pos, item, arm labels taken)`` for every stage, dispatch point and arm."""
    stack: list[tuple[Pos, Item, tuple[str, ...]]] = [((stage_part(root),), root, ())]
    while stack:
        pos, item, arms = stack.pop()
        yield pos, item, arms
        if isinstance(item, Stage):
            kids: list[tuple[Pos, Item, tuple[str, ...]]] = [((*pos, part(c)), c, arms) for c in item.children]
        elif isinstance(item, Dispatch):
            kids = [((*pos, arm_part(a)), a, (*arms, a.label)) for a in item.arms if a.selected is not False]
        else:
            kids = [((*pos, part(c)), c, arms) for c in item.children]
        stack.extend(reversed(kids))


Expand = Callable[[Stage, tuple[str, ...]], Sequence[Stage | Dispatch]]


def children(item: Item, path: tuple[str, ...], expand: Expand) -> list[Item]:
    """The items directly under ``item`` (``expand`` fills a stage's children on demand)."""
    if isinstance(item, Stage):
        return list(expand(item, path))
    if isinstance(item, Dispatch):
        return list(item.arms)
    return list(item.children)


def resolve(root: Stage, pos: Pos, expand: Expand) -> list[tuple[Item, tuple[str, ...]]] | None:
    """The items along ``pos`` with each one's stage path (node ids); None when ``pos`` is not in the trace."""
    if not pos or pos[0] != stage_part(root):
        return None
    chain: list[tuple[Item, tuple[str, ...]]] = [(root, (root.node,))]
    for p in pos[1:]:
        item, path = chain[-1]
        nxt = next((c for c in children(item, path, expand) if part(c) == p), None)
        if nxt is None:
            return None
        chain.append((nxt, (*path, nxt.node) if isinstance(nxt, Stage) else path))
    return chain


def positions_after(root: Stage, pos: Pos, expand: Expand) -> Iterator[tuple[Pos, Item]]:
    """Items after ``pos`` in execution order (its subtree first, then what follows its ancestors),
    expanding stages as it goes; arms not chosen are skipped."""
    chain = resolve(root, pos, expand)
    if chain is None:
        return

    def subtree(start_pos: Pos, item: Item, path: tuple[str, ...], include_self: bool) -> Iterator[tuple[Pos, Item]]:
        stack = [(start_pos, item, path)]
        first = True
        while stack:
            p, it, pa = stack.pop()
            if not (first and not include_self):
                yield p, it
            first = False
            if isinstance(it, Arm) and it.selected is False:
                continue
            if isinstance(it, Stage) and it.cut:
                continue
            kids = children(it, pa, expand)
            stack.extend(reversed([((*p, part(c)), c, (*pa, c.node) if isinstance(c, Stage) else pa)
                                   for c in kids]))

    item, path = chain[-1]
    yield from subtree(pos, item, path, include_self=False)
    for depth in range(len(chain) - 1, 0, -1):
        parent, ppath = chain[depth - 1]
        sibs = children(parent, ppath, expand)
        me = pos[depth]
        idx = next((i for i, c in enumerate(sibs) if part(c) == me), len(sibs))
        for c in sibs[idx + 1:]:
            cpath = (*ppath, c.node) if isinstance(c, Stage) else ppath
            yield from subtree((*pos[:depth], part(c)), c, cpath, include_self=True)


def find_keys(root: Stage, keys: tuple[str, ...], expand: Expand) -> Pos | None:
    """The position of the stage whose :func:`~apxtui.trace.stage_key` chain from the entry is ``keys`` (an
    execution-map row's key), searching through dispatch points and arms between stages; None when absent."""
    if not keys or keys[0] != stage_key(root):
        return None
    pos: Pos = (stage_part(root),)
    item: Item = root
    path: tuple[str, ...] = (root.node,)
    for k in keys[1:]:
        found = None
        queue = deque((pos, c, path) for c in children(item, path, expand))
        while queue and found is None:
            ppos, it, pa = queue.popleft()
            here = (*ppos, part(it))
            if isinstance(it, Stage):
                if stage_key(it) == k:
                    found = (here, it, (*pa, it.node))
            else:
                queue.extend((here, c, pa) for c in children(it, pa, expand))
        if found is None:
            return None
        pos, item, path = found
    return pos
