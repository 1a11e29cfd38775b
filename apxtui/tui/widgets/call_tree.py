"""The execution tree of the selected entry: rows built lazily, one level per expansion.

The tree shows what a :class:`TraceSource` (the session) gives it and never traces itself
beyond one level on ``l``/``enter``; whole-path questions (``n``/``N``) go up to the screen
as :class:`CallTree.FindDevice`.  Rows are :mod:`apxtui.tui.rows` records keyed by position.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any, Protocol

from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Tree
from textual.widgets._tree import _TreeLine
from textual.widgets.tree import TreeNode

from apxtui.trace import Dispatch, Stage
from apxtui.tui.positions import MORE, Pos, arm_part, dispatch_part, stage_part
from apxtui.tui.rows import ArmRow, DispatchRow, MoreRow, Row, StageRow
from apxtui.tui.widgets.labels import arm_label, dispatch_label, stage_label
from apxtui.tui.widgets.quiet import QuietSize
from apxtui.tui.widgets.roles import role_css
from apxtui.tui.widgets.vim_tree import VimTree, vim_bindings

CHUNK = 250  # children shown before a "+N more…" row
REOPEN_SLICE = 0.008  # seconds of re-opening rows (after a re-trace) between keys and repaints


class TraceSource(Protocol):
    """What the tree reads: one level of children, and whether a stage has any."""

    def expand(self, stage: Stage, path: tuple[str, ...]) -> list[Stage | Dispatch]: ...

    def has_calls(self, stage: Stage) -> bool: ...


class CallTree(QuietSize, VimTree[Row]):
    """Stages, dispatch points and arms; the screen handles ``[``/``]`` and ``n``/``N``."""

    DEFAULT_CSS = role_css("CallTree")

    BINDINGS = [
        Binding("enter", "follow", "Follow", id="tree.follow", tooltip="Open the callee's definition and expand it"),
        *vim_bindings("tree", "Expand the row", "Collapse the row, or go to its parent"),
        Binding("J", "next_dispatch", "Next dispatch", show=False, id="tree.next_dispatch",
                tooltip="Next dispatch point (expanded rows)"),
        Binding("K", "previous_dispatch", "Previous dispatch", show=False, id="tree.prev_dispatch",
                tooltip="Previous dispatch point (expanded rows)"),
        Binding("n", "find_device(1)", "Next", id="tree.next_device",
                tooltip="Next kernel launch or library call in execution order (opens rows as needed; ○ arms skipped)"),
        Binding("N", "find_device(-1)", "Previous kernel", show=False, id="tree.prev_device",
                tooltip="Previous kernel launch or library call in execution order"),
        Binding("shift+space", "toggle_node", "Toggle", show=False, id="tree.toggle_safe",
                tooltip="Toggle the row (never expands everything)"),
    ]

    class Follow(Message):
        """The user asked to open the definition of a stage."""

        def __init__(self, node: TreeNode[Row]) -> None:
            super().__init__()
            self.node = node

    class FindDevice(Message):
        """``n`` (step 1) / ``N`` (step -1): the screen finds the next device work from ``pos``."""

        def __init__(self, pos: Pos, step: int) -> None:
            super().__init__()
            self.pos, self.step = pos, step

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Text("no entry selected", style="dim"), **kwargs)
        self.source: TraceSource | None = None
        self.guide_depth = 2
        self.auto_expand = False
        self._by_pos: dict[Pos, TreeNode[Row]] = {}

    def get_label_width(self, node: TreeNode[Row]) -> int:
        """Cheap (Tree asks for every row's width after each expand): roles do not change widths."""
        icon = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE) if node._allow_expand else ""
        return node._label.cell_len + len(icon)

    def _build(self) -> None:
        """Tree's line numbering, iterative and with the widths summed inline (7,000 rows: a few ms, not ~50)."""
        lines: list[_TreeLine[Row]] = []
        add = lines.append
        guide = self.guide_depth
        open_icon, closed_icon = len(self.ICON_NODE_EXPANDED), len(self.ICON_NODE)
        width = 0
        stack: list[tuple[list[TreeNode[Row]], TreeNode[Row], bool]]
        if self.show_root:
            stack = [([], self.root, True)]
        else:
            stack = [([], n, True) for n in reversed(self.root._children)]
        while stack:
            path, node, last = stack.pop()
            child_path = [*path, node]
            node._line = len(lines)
            add(_TreeLine(child_path, last))
            w = node._label.cell_len + (len(child_path) - 1) * guide
            if node._allow_expand:
                w += open_icon if node._expanded else closed_icon
            if w > width:
                width = w
            if node._expanded and node._children:
                kids = node._children
                final = len(kids) - 1
                stack.extend((child_path, kids[i], i == final) for i in range(final, -1, -1))
        self._tree_lines_cached = lines
        self.virtual_size = Size(width if lines else self.size.width, len(lines))
        if self.cursor_line != -1:
            if self.cursor_node is not None:
                self.cursor_line = self.cursor_node._line
            if self.cursor_line >= len(lines):
                self.cursor_line = -1

    def _invalidate(self) -> None:
        """As Tree's, without a layout pass of the whole screen: the tree's own size does not change."""
        self._clear_line_cache()
        self._updates += 1
        self.root._reset()
        self.refresh()

    # -- building ------------------------------------------------------------------------

    def show_trace(self, source: TraceSource, root: Stage, expanded: set[Pos] | None = None,
                   cursor: Pos | None = None) -> None:
        """Rebuild from ``root``; re-open the rows in ``expanded`` and put the cursor on ``cursor``
        (or its nearest surviving ancestor)."""
        self.source = source
        self.clear()
        self._by_pos.clear()
        pos = (stage_part(root),)
        self.root.set_label(stage_label(root))
        self.root.data = StageRow(root, (root.node,), pos)
        self._by_pos[pos] = self.root
        self._populate(self.root)
        self.root.expand()
        target = None
        for n in range(len(cursor or ()), 0, -1):  # the cursor's row first (rows down to it are built) …
            if self._reveal_quietly(cursor[:n]) is not None:  # type: ignore[index]
                target = self._by_pos.get(cursor[:n])  # type: ignore[index]
                break
        self._settle(target or self.root)
        if expanded:  # … then the rows that were open, a slice at a time between keys and repaints
            self.run_worker(self._reopen(expanded), group="tree-reopen", exclusive=True, exit_on_error=False)

    async def _reopen(self, expanded: set[Pos]) -> None:
        """Open again the rows that were open before a re-trace (breadth first, in slices of ~8 ms)."""
        queue = deque([self.root])
        t0 = time.perf_counter()
        while queue:
            node = queue.popleft()
            for child in list(node.children):
                row = child.data
                if isinstance(row, StageRow) and row.pos in expanded and not child.is_expanded:
                    self._populate(child)
                    child.expand()
                if child.is_expanded:  # arms follow the selection: the chosen one open, the others closed
                    queue.append(child)
            if time.perf_counter() - t0 > REOPEN_SLICE:
                await asyncio.sleep(0)
                t0 = time.perf_counter()

    def _reveal_quietly(self, pos: Pos) -> TreeNode[Row] | None:
        """Build and open the rows down to ``pos`` (no cursor move); None when it is not in the trace."""
        node = self._by_pos.get(pos[:1])
        if node is None:
            return None
        for n in range(2, len(pos) + 1):
            found = self._by_pos.get(pos[:n])
            while found is None:
                self._populate(node)
                found = self._by_pos.get(pos[:n])
                more = self._by_pos.get((*pos[: n - 1], MORE))
                if found is None and more is not None:
                    self._show_more(more)
                elif found is None:
                    return None
            if not node.is_expanded:
                node.expand()
            node = found
        return node

    def _populate(self, node: TreeNode[Row]) -> None:
        row = node.data
        if not isinstance(row, StageRow) or row.populated or self.source is None:
            return
        row.populated = True
        self._add_items(node, self.source.expand(row.stage, row.path), row.path, row.pos)

    def _add(self, parent: TreeNode[Row], label: Text, row: Row, **kw: Any) -> TreeNode[Row]:
        node = parent.add(label, row, **kw)
        self._by_pos[row.pos] = node
        return node

    def _add_items(self, node: TreeNode[Row], items: list[Stage | Dispatch], path: tuple[str, ...], pos: Pos) -> None:
        shown, rest = items[:CHUNK], items[CHUNK:]
        for it in shown:
            if isinstance(it, Stage):
                has = self.source.has_calls(it) if self.source else False
                self._add(node, stage_label(it), StageRow(it, (*path, it.node), (*pos, stage_part(it))),
                          allow_expand=has)
            else:
                dpos = (*pos, dispatch_part(it))
                dn = self._add(node, dispatch_label(it), DispatchRow(it, path, dpos), expand=True)
                for arm in it.arms:
                    apos = (*dpos, arm_part(arm))
                    an = self._add(dn, arm_label(arm), ArmRow(arm, it, path, apos),
                                   expand=arm.selected is not False and bool(arm.children),
                                   allow_expand=bool(arm.children))
                    self._add_items(an, arm.children, path, apos)
        if rest:
            mpos = (*pos, MORE)
            self._add(node, Text(f"+{len(rest)} more… (enter)", style="dim italic"),
                      MoreRow(rest, path, mpos, pos), allow_expand=False)

    def _show_more(self, node: TreeNode[Row]) -> None:
        """Replace a "+N more…" row by the next chunk of its items."""
        row = node.data
        parent = node.parent
        if not isinstance(row, MoreRow) or parent is None:
            return
        self._by_pos.pop(row.pos, None)
        node.remove()
        self._add_items(parent, row.rest, row.path, row.parent_pos)

    def ensure_populated(self, node: TreeNode[Row]) -> None:
        self._populate(node)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Row]) -> None:
        self._populate(event.node)

    # -- queries -------------------------------------------------------------------------

    def find(self, pos: Pos) -> TreeNode[Row] | None:
        """The built row at ``pos``, if any."""
        return self._by_pos.get(pos)

    def pos_of(self, node: TreeNode[Row] | None) -> Pos:
        return node.data.pos if node is not None and node.data is not None else ()

    @property
    def cursor_pos(self) -> Pos:
        return self.pos_of(self.cursor_node)

    def stage_positions_near(self, rows: int) -> list[Pos]:
        """Positions of the stage rows within ``rows`` lines of the cursor (for prefetching)."""
        lines = self._tree_lines
        lo, hi = max(0, self.cursor_line - rows), min(len(lines), self.cursor_line + rows + 1)
        return [ln.node.data.pos for ln in lines[lo:hi] if isinstance(ln.node.data, StageRow)]

    def rows_near(self, rows: int) -> list[Row]:
        """The rows within ``rows`` lines of the cursor, nearest first (below before above)."""
        lines, at = self._tree_lines, self.cursor_line
        order = [at + d * s for d in range(1, rows + 1) for s in (1, -1)]
        return [row for i in order if 0 <= i < len(lines) and (row := lines[i].node.data) is not None]

    def find_stage(self, node_id: str) -> TreeNode[Row] | None:
        """The first built row (pre-order) for graph node ``node_id``."""
        return next((n for n in self.walk() if isinstance(n.data, StageRow) and n.data.stage.node == node_id), None)

    def expanded_positions(self) -> set[Pos]:
        return {n.data.pos for n in self.walk() if n.is_expanded and n is not self.root and n.data is not None}

    @staticmethod
    def stage_path(node: TreeNode[Row] | None) -> list[Stage]:
        """Stages from the entry down to ``node`` (its own stage included)."""
        out: list[Stage] = []
        while node is not None:
            if isinstance(node.data, StageRow):
                out.append(node.data.stage)
            node = node.parent
        return out[::-1]

    def reveal(self, pos: Pos) -> TreeNode[Row] | None:
        """Build and open the rows down to ``pos`` and put the cursor on it; None when it is not in the trace."""
        node = self._reveal_quietly(pos)
        if node is not None:
            self._settle(node)
        return node

    def refresh_dispatches(self, changed: list[Dispatch]) -> None:
        """Arm choices changed in place at these dispatch points: relabel and re-open their arms."""
        keys = {d.key for d in changed}
        for node in list(self._by_pos.values()):
            row = node.data
            if isinstance(row, ArmRow) and row.dispatch.key in keys:
                node.set_label(arm_label(row.arm))
                if row.arm.selected is False:
                    node.collapse()
                elif row.arm.children:
                    node.expand()

    # -- actions -------------------------------------------------------------------------

    def action_follow(self) -> None:
        node = self.cursor_node
        if node is None or node.data is None:
            return
        if isinstance(node.data, MoreRow):
            self._show_more(node)
        elif isinstance(node.data, StageRow):
            self.post_message(self.Follow(node))
        else:
            node.toggle()

    def ensure_children(self, node: TreeNode[Row]) -> None:
        self._populate(node)

    def _jump_dispatch(self, step: int) -> None:
        line = self.cursor_line + step
        while 0 <= line <= self.last_line:
            n = self.get_node_at_line(line)
            if n is not None and isinstance(n.data, DispatchRow):
                self.move_cursor(n)
                return
            line += step

    def action_next_dispatch(self) -> None:
        self._jump_dispatch(1)

    def action_previous_dispatch(self) -> None:
        self._jump_dispatch(-1)

    def action_find_device(self, step: int) -> None:
        self.post_message(self.FindDevice(self.cursor_pos, step))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Row]) -> None:
        """Deep rows: scroll sideways so the highlighted row's label, not just its guides, is in view."""
        depth, n = 0, event.node
        while n.parent is not None:
            depth, n = depth + 1, n.parent
        x = depth * self.guide_depth  # where the row's label starts
        end = x + event.node._label.cell_len + 2
        width = self.scrollable_content_region.width
        if x < self.scroll_x:
            self.scroll_to(x=max(0, x - 4), animate=False)
        elif end > self.scroll_x + width:  # show the whole label if it fits, else from its start
            self.scroll_to(x=max(0, min(x - 2, end - width)), animate=False)
