"""Views of a map's rows for display: repeated model-level blocks folded, group headings, aliases.

A *block* is the run of rows under one model-level call (a :class:`~apxtui.map.model.Frame`).  When a
block's function and rows are the same as a block shown earlier (the warm-up forward before a
capture, the eager fallback of a captured forward), :func:`fold_blocks` shows it as one
:class:`BlockRef` line pointing at the first.  The map itself (and its JSON) keeps every row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apxtui.map.model import Call, ExecutionMap, Frame, Row, Site, iter_calls, work_text

MIN_BLOCK = 2  # rows: smaller blocks are shown again rather than referenced


@dataclass
class BlockRef:
    """Blocks whose rows are the same as an earlier one's (consecutive references to it grouped)."""

    frame: Frame
    rows: list[Row]  # the folded rows of the first block referenced here (for totals and the explorer)
    same_as: str  # "rows 12–40 of the eager table"
    first: Frame
    frames: list[Frame] = field(default_factory=list)  # every folded call (frame) grouped in this line


@dataclass
class Heading:
    """A change of model-level context: the frames entered (outermost first) before the next row."""

    frames: list[Frame]
    depth: int  # frames above them (below the table's common frames) that are already shown


Line = Row | BlockRef | Heading


#: What a block's rows do (site, operation, work, conditions inside the frame), row by row: equal signatures fold.
_Sig = tuple[tuple[str, str, str, tuple[str, ...]], ...]


def _sig(rows: list[Row], f: Frame, texts: dict[int, tuple[str, str, str, tuple[str, ...]]]) -> _Sig:
    """What the rows of a block do, relative to its frame (conditions outside it left out).  ``texts``:
    each row's texts by ``id`` (a row is in the blocks of each of its frames: its texts are made once)."""
    n = len(f.condition)
    out = []
    for r in rows:
        t = texts.get(id(r))
        if t is None:
            t = texts[id(r)] = (str(r.site), r.op, work_text(r.work), tuple(str(c) for c in r.condition))
        out.append((t[0], t[1], t[2], t[3][n:]))
    return tuple(out)


def _starts(rows: list[Row], i: int, d: int) -> bool:
    """Does row ``i`` open the block of its frame at depth ``d``?"""
    if i == 0:
        return True
    prev = rows[i - 1].context
    return len(prev) <= d or prev[d].key != rows[i].context[d].key


def _block(rows: list[Row], i: int, frame_depth: int) -> int:
    """End (exclusive) of the run of rows from ``i`` sharing ``rows[i].context[frame_depth]``."""
    key = rows[i].context[frame_depth].key
    j = i
    while j < len(rows) and len(rows[j].context) > frame_depth and rows[j].context[frame_depth].key == key:
        j += 1
    return j


def fold_blocks(m: ExecutionMap) -> dict[str, list[Line]]:
    """Per phase table (by phase value): rows, folded blocks and headings in display order."""
    seen: dict[tuple[str, _Sig], tuple[str, Frame]] = {}
    texts: dict[int, tuple[str, str, str, tuple[str, ...]]] = {}  # rows stay alive (in m) for the whole call
    out: dict[str, list[Line]] = {}
    for t in m.phases:
        lines: list[Line] = []
        rows = t.rows
        base = _common_depth(rows)
        shown: list[Frame] = []
        i = 0
        n = 0  # row number in this table
        while i < len(rows):
            r = rows[i]
            folded = False
            for d in range(base, len(r.context)):
                if not _starts(rows, i, d):
                    continue
                j = _block(rows, i, d)
                if j - i < MIN_BLOCK:
                    continue
                f = r.context[d]
                sig = (f.qualname, _sig(rows[i:j], f, texts))
                if sig in seen:
                    where, first = seen[sig]
                    _heading(lines, shown, r.context[base:d], base)
                    last = lines[-1] if lines else None
                    if isinstance(last, BlockRef) and last.first is first and last.frame.name == f.name:
                        last.frames.append(f)  # the same block again, right after: one line
                    else:
                        lines.append(BlockRef(f, rows[i:j], where, first, [f]))
                    i = j
                    folded = True
                    break
            if folded:
                continue
            for d in range(base, len(r.context)):
                if not _starts(rows, i, d):
                    continue
                j = _block(rows, i, d)
                f = r.context[d]
                sig = (f.qualname, _sig(rows[i:j], f, texts))
                if j - i >= MIN_BLOCK and sig not in seen:
                    seen[sig] = (f"rows {n + 1}–{n + j - i} of the {t.phase.value} table", f)
            _heading(lines, shown, r.context[base:], base)
            lines.append(r)
            n += 1
            i += 1
        out[t.phase.value] = lines
    return out


def _common_depth(rows: list[Row]) -> int:
    """Frames every row of a table shares (not repeated in headings)."""
    if not rows:
        return 0
    first = rows[0].context
    d = len(first)
    for r in rows[1:]:
        k = 0
        while k < min(d, len(r.context)) and r.context[k].key == first[k].key:
            k += 1
        d = k
    return d


def _heading(lines: list[Line], shown: list[Frame], want: tuple[Frame, ...] | list[Frame], base: int) -> None:
    """Append a heading for the frames of ``want`` not in ``shown`` (updating ``shown``)."""
    k = 0
    while k < min(len(shown), len(want)) and shown[k].key == want[k].key:
        k += 1
    del shown[k:]
    new = list(want[k:])
    if new:
        lines.append(Heading(new, k))
        shown.extend(new)


def aliases(m: ExecutionMap, limit: int = 40) -> dict[str, str]:
    """Short aliases (``K1``…) for kernel / library names longer than ``limit`` characters."""
    out: dict[str, str] = {}
    for r in m.rows():
        for c in iter_calls(r.work):
            if isinstance(c, Call) and len(c.name) > limit and c.name not in out:
                out[c.name] = f"K{len(out) + 1}"
    return out


def site_short(s: Site, base: Site | None = None) -> str:
    """``:412`` when in the same file as ``base``, else ``file:line``."""
    if base is not None and s.file == base.file and s.file:
        return f":{s.line}"
    return str(s)
