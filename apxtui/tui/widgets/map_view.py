"""The map view: the execution map of the current entry — phases, folded model-level blocks, one row per
operation — in the call tree's place (``m`` switches).  It shows what the screen hands it (an
:class:`~apxtui.map.model.ExecutionMap`, built in a background job) and posts :class:`MapView.Jump` on
``enter``; ``[``/``]`` and export are the screen's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets.tree import TreeNode

from apxtui.map.fold import BlockRef, Heading, fold_blocks
from apxtui.map.model import (
    PHASE_TITLE,
    Alternative,
    Choice,
    ExecutionMap,
    Frame,
    KeyChain,
    PhaseTable,
    Row,
    iter_calls,
    marked,
    work_text,
)
from apxtui.textsafe import one_line
from apxtui.tui.widgets.roles import role_css
from apxtui.tui.widgets.vim_tree import VimTree, vim_bindings


@dataclass(frozen=True)
class PhaseItem:
    table: PhaseTable


@dataclass(frozen=True)
class FrameItem:
    frame: Frame


@dataclass(frozen=True)
class RefItem:
    ref: BlockRef


@dataclass(frozen=True)
class RowItem:
    row: Row
    number: int  # row number in its phase table (1-based)


MapItem = PhaseItem | FrameItem | RefItem | RowItem


def has_work(row: Row) -> bool:
    """A row that reaches device work (a kernel launch or a library compute call), not only setup."""
    return any(True for _ in iter_calls(row.work))


def first_choice(row: Row) -> Choice | None:
    """The row's first set of alternatives (what ``[``/``]`` on the row changes)."""
    return next((w for w in row.work if isinstance(w, Choice)), None)


def arm_cycle(choice: Choice) -> tuple[str, list[Alternative]]:
    """The dispatch point ``[``/``]`` changes on a row with ``choice``, and its alternatives in order.

    A choice whose arms each hold one inner choice lists the inner alternatives (flattened, each
    keeping its own dispatch key): then the cycle is over the first dispatch point listed, so one key
    press never mixes arm indices of two dispatch points."""
    by: dict[str, list[Alternative]] = {}
    for a in choice.alternatives:
        by.setdefault(a.dispatch, []).append(a)
    key = choice.dispatch if choice.dispatch in by else next(iter(by), choice.dispatch)
    return key, by.get(key, [])


def nearest_row(rows: Sequence[Row], keys: KeyChain) -> int | None:
    """Index of the row of ``rows`` (display order) that best stands for the call-tree position ``keys``
    (its stage-key chain): the row with exactly that key; else the deepest row at or above it (the
    operation a kernel belongs to); else the first row below it with device work, else the first below
    it; None when no row is on that path."""
    if not keys:
        return None
    best, depth = None, 0
    below: list[int] = []
    for i, r in enumerate(rows):
        k = r.key
        if k == keys:
            return i
        if len(k) < len(keys) and keys[:len(k)] == k and len(k) > depth:
            best, depth = i, len(k)
        elif len(k) > len(keys) and k[:len(keys)] == keys:
            below.append(i)
    if best is not None:
        return best
    return next((i for i in below if has_work(rows[i])), below[0] if below else None)


def row_label(row: Row, number: int, inherited: int = 0, chosen: str = "") -> Text:
    """``123 op ◆N → work  if cond``: the operation first, then a mark when its work has alternatives
    (◆ and how many; ● when one was chosen, ``chosen``: the arm taken with ``[``/``]`` here, whose work
    alone is then shown), the device work, and conditions the enclosing block (``inherited`` of them) does
    not already show."""
    t = Text(f"{number:>3} ", style="dim")
    t.append(one_line(marked(row.op, row.resolution), 60), style="bold")
    choice = first_choice(row)
    picked = next((a for a in choice.alternatives if a.chosen), None) if choice is not None else None
    if choice is not None:
        t.append(f" ◆{len(choice.alternatives)}", style="ct-dispatch")
    if picked is not None or chosen:
        t.append(" ●", style="bold ct-chosen")
    work = work_text(row.work)
    t.append("  → ", style="dim")
    t.append(one_line(work, 90) if work else "no device work", style="bold ct-kernel" if work else "dim")
    if picked is not None or chosen:
        arm = chosen or (picked.condition if picked is not None else "")
        t.append(f"  ● {one_line(arm, 50)}", style="ct-chosen")
    own = row.condition[inherited:]
    if own:
        t.append("  if " + one_line(" && ".join(str(c) for c in own), 50), style="italic")
    if row.note:
        t.append(f"  {one_line(row.note, 50)}", style="dim")
    return t


def frame_label(f: Frame, inherited: int = 0) -> Text:
    t = Text(one_line(f.name, 60), style="bold")
    for r in f.repeat:
        t.append(f"  {one_line(r.label, 50)}", style="bold ct-loop")
    own = f.condition[inherited:]
    if own:
        t.append("  if " + one_line(" && ".join(str(c) for c in own), 50), style="italic")
    return t


def _shown_conditions(node: TreeNode[MapItem] | None) -> int:
    """How many conditions the block ``node`` (and so everything under it) already shows."""
    return len(node.data.frame.condition) if node is not None and isinstance(node.data, FrameItem) else 0


def phase_label(t: PhaseTable) -> Text:
    out = Text(PHASE_TITLE[t.phase], style="bold underline")
    out.append(f"  {one_line(t.frequency, 60)} · {len(t.rows)} rows · device {t.totals.device}, "
               f"library {t.totals.library}" + ("" if t.totals.exact else " (range: alternatives)"), style="dim")
    return out


class MapView(VimTree[MapItem]):
    """Phase tables as top-level rows, model-level blocks (loops, calls) folded under their heading."""

    DEFAULT_CSS = role_css("MapView")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "jump", "To tree", id="map.jump", tooltip="This row's call site in the call tree"),
        *vim_bindings("map", "Open the block", "Fold the block, or go to the enclosing one"),
        Binding("n", "work(1)", "Next", id="map.next_work",
                tooltip="Next row with device work (kernels, library compute calls; setup-only rows skipped)"),
        Binding("N", "work(-1)", "Previous work", show=False, id="map.prev_work",
                tooltip="Previous row with device work"),
    ]

    class Jump(Message):
        """``enter`` on a row: show its call site in the call tree."""

        def __init__(self, row: Row) -> None:
            super().__init__()
            self.row = row

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Text("execution map"), **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self.auto_expand = False
        self.map: ExecutionMap | None = None

    def show_map(self, m: ExecutionMap, keep: KeyChain | None = None,
                 chosen: Mapping[KeyChain, str] | None = None) -> None:
        """Show ``m``; the cursor goes to the row :func:`nearest_row` finds for ``keep`` (a stage-key chain),
        else to the first row with device work.  ``chosen``: row key → the arm chosen on that row with
        ``[``/``]`` (shown on the row)."""
        chosen = chosen or {}
        self.map = m
        self.clear()
        lines = fold_blocks(m)
        shown: list[TreeNode[MapItem]] = []  # row nodes in display order
        first_work: TreeNode[MapItem] | None = None
        for t in m.phases:
            if not t.rows:
                continue
            pnode = self.root.add(phase_label(t), PhaseItem(t), expand=True)
            stack: list[TreeNode[MapItem]] = []
            n = 0
            for line in lines.get(t.phase.value, []):
                if isinstance(line, Heading):
                    del stack[line.depth:]
                    for f in line.frames:
                        parent = stack[-1] if stack else pnode
                        label = frame_label(f, _shown_conditions(stack[-1] if stack else None))
                        stack.append(parent.add(label, FrameItem(f), expand=True))
                    continue
                parent = stack[-1] if stack else pnode
                if isinstance(line, BlockRef):
                    times = f" ×{len(line.frames)}" if len(line.frames) > 1 else ""
                    label = Text(f"↺ {one_line(line.frame.name, 60)}{times}: ", style="bold")
                    label.append(f"same as {one_line(line.same_as, 80)}", style="dim")
                    parent.add_leaf(label, RefItem(line))
                    n += len(line.rows)
                    continue
                n += 1
                node = parent.add_leaf(row_label(line, n, _shown_conditions(stack[-1] if stack else None),
                                                 chosen.get(line.key, "")), RowItem(line, n))
                shown.append(node)
                if first_work is None and has_work(line):
                    first_work = node
        if not m.phases or not any(t.rows for t in m.phases):
            self.root.add_leaf(Text("No operation reaches device work from this entry under the current "
                                    "choices (see the call tree).", style="dim italic"))
        self.root.expand()
        at = nearest_row([n.data.row for n in shown if isinstance(n.data, RowItem)], keep) if keep else None
        goal = shown[at] if at is not None else first_work
        if goal is not None:
            self.call_after_refresh(self._go, goal)

    def mark_cursor(self, chosen: str) -> None:
        """The cursor row's label says the arm just chosen on it (before the map is rebuilt for it)."""
        node = self.cursor_node
        if node is not None and isinstance(node.data, RowItem):
            node.set_label(row_label(node.data.row, node.data.number, _shown_conditions(node.parent), chosen))

    def select_key(self, key: KeyChain) -> bool:
        """Put the cursor on the row :func:`nearest_row` finds for ``key`` (its blocks opened); False when
        no shown row is on that path (not mapped, or inside a block folded as "same as")."""
        nodes = [n for n in self._rows() if isinstance(n.data, RowItem)]
        at = nearest_row([n.data.row for n in nodes if isinstance(n.data, RowItem)], key)
        if at is None:
            return False
        self._go(nodes[at])
        return True

    def _go(self, node: TreeNode[MapItem]) -> None:
        """Cursor to ``node`` now (blocks above it opened), so a key pressed next starts from it."""
        p = node.parent
        while p is not None:
            if not p.is_expanded:
                p.expand()
            p = p.parent
        self._settle(node, scroll_now=True)

    def on_resize(self) -> None:
        """The pane changed size (shown, 80×24 ↔ wide, maximize): the cursor row stays in view, scrolled as
        little as the new height allows.  The scroll is worked out again rather than kept: a map shown while
        its pane was still being laid out had scrolled for a pane a few rows high, and kept that offset."""
        if self.cursor_node is not None:
            self.call_after_refresh(self._reveal, self.cursor_node)

    def _reveal(self, node: TreeNode[MapItem]) -> None:
        self.scroll_to(y=0, animate=False, immediate=True)
        self.scroll_to_node(node, animate=False)

    @property
    def cursor_row(self) -> Row | None:
        node = self.cursor_node
        return node.data.row if node is not None and isinstance(node.data, RowItem) else None

    def _rows(self) -> list[TreeNode[MapItem]]:
        return [n for n in self.walk() if n is not self.root]

    def action_work(self, step: int) -> None:
        """The next / previous row with device work (blocks folded away are opened on the way)."""
        nodes = self._rows()
        cur = self.cursor_node
        i = nodes.index(cur) if cur in nodes else -1
        order = range(i + 1, len(nodes)) if step > 0 else range(i - 1, -1, -1)
        for j in order:
            d = nodes[j].data
            if isinstance(d, RowItem) and has_work(d.row):
                self._go(nodes[j])
                return
        self.notify(f"No row with device work {'after' if step > 0 else 'before'} this one.", timeout=3)

    def action_jump(self) -> None:
        row = self.cursor_row
        if row is not None:
            self.post_message(self.Jump(row))
        elif self.cursor_node is not None:
            self.cursor_node.toggle()
