"""The execution tree of the selected entry, built lazily one level per expansion."""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets._tree import TOGGLE_STYLE
from textual.widgets.tree import TreeNode

from apxtui.analysis.launches import own_kind
from apxtui.trace import Arm, Dispatch, Stage
from apxtui.tui.session import Session, stage_key
from apxtui.tui.widgets.labels import arm_label, dispatch_label, stage_label
from apxtui.tui.widgets.roles import ROLE_CLASSES, role_css, themed
from apxtui.vocab import DEVICE_KINDS

CHUNK = 250  # children shown before a "+N more…" node
SEARCH_ROWS = 50_000  # rows `n` looks through before stopping …
SEARCH_BUILDS = 2_000  # … or stages whose calls it had to trace (one level each)


@dataclass
class Item:
    """What a tree row stands for.  ``path`` = stage node ids from the entry down to here."""

    kind: str  # stage | dispatch | arm | more
    obj: Stage | Dispatch | Arm | None
    path: tuple[str, ...]
    dispatch: Dispatch | None = None  # for arms
    populated: bool = False
    rest: list | None = None  # for "more" rows: the items not shown yet
    key: tuple[str, ...] = ()  # stage_key chain (matches Session.analysis keys)


class CallTree(Tree[Item]):
    """Stages, dispatch points and arms; ``[``/``]`` handled by the screen through :meth:`dispatch_at`."""

    COMPONENT_CLASSES = Tree.COMPONENT_CLASSES | ROLE_CLASSES
    DEFAULT_CSS = role_css("CallTree")

    BINDINGS = [
        Binding("enter", "follow", "Follow", id="tree.follow", tooltip="Open the callee's definition and expand it"),
        Binding("j", "cursor_down", "Down", show=False, id="tree.down", tooltip="Next row"),
        Binding("k", "cursor_up", "Up", show=False, id="tree.up", tooltip="Previous row"),
        Binding("l,right", "expand", "Expand", show=False, id="tree.expand", tooltip="Expand the row"),
        Binding("h,left", "collapse", "Collapse", show=False, id="tree.collapse",
                tooltip="Collapse the row, or go to its parent"),
        Binding("g,home", "first", "Top", show=False, id="tree.top", tooltip="First row"),
        Binding("G,end", "last", "Bottom", show=False, id="tree.bottom", tooltip="Last row"),
        Binding("J", "next_dispatch", "Next dispatch", show=False, id="tree.next_dispatch",
                tooltip="Next dispatch point (expanded rows)"),
        Binding("K", "previous_dispatch", "Previous dispatch", show=False, id="tree.prev_dispatch",
                tooltip="Previous dispatch point (expanded rows)"),
        Binding("n", "next_device", "Next kernel", id="tree.next_device",
                tooltip="Next kernel launch or library call in execution order (opens rows as needed; ○ arms skipped)"),
        Binding("N", "previous_device", "Previous kernel", show=False, id="tree.prev_device",
                tooltip="Previous kernel launch or library call among the rows built so far"),
        Binding("shift+space", "toggle_node", "Toggle", show=False, id="tree.toggle_safe",
                tooltip="Toggle the row (never expands everything)"),
    ]

    class Follow(Message):
        """The user asked to open the definition of a stage."""

        def __init__(self, node: TreeNode[Item]) -> None:
            super().__init__()
            self.node = node

    def __init__(self, **kwargs) -> None:
        super().__init__(Text("no entry selected", style="dim"), **kwargs)
        self.session: Session | None = None
        self.guide_depth = 2
        self._builds = 0
        self.auto_expand = False

    def render_label(self, node: TreeNode[Item], base_style: Style, style: Style) -> Text:
        """As Tree's, with the label's role words in theme colours (re-done after a theme change)."""
        label = themed(node._label, self) if self.is_mounted else node._label.copy()
        label.stylize(style)
        if node._allow_expand:
            prefix = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE, base_style + TOGGLE_STYLE)
        else:
            prefix = ("", base_style)
        return Text.assemble(prefix, label)

    # -- building ------------------------------------------------------------------------

    def show_trace(self, session: Session, root: Stage, expanded: set[tuple] | None = None,
                   cursor: tuple | None = None) -> None:
        """Rebuild from ``root``; re-open the rows in ``expanded`` (row keys) and put the cursor on ``cursor``."""
        self.session = session
        self.clear()
        self.root.set_label(stage_label(root))
        self.root.data = Item("stage", root, (root.node,), key=(stage_key(root),))
        self._populate(self.root)
        self.root.expand()
        if expanded:
            self._reopen(self.root, expanded)
        target = None
        for n in range(len(cursor or ()), 0, -1):  # the row itself, else its nearest surviving ancestor
            target = self.find(cursor[:n])  # type: ignore[index]
            if target is not None:
                break
        # rows get their line numbers on the next refresh; move the cursor then
        self.call_after_refresh(self._settle, target or self.root)

    def _settle(self, node: TreeNode[Item]) -> None:
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        """Deep rows: scroll sideways so the highlighted row's label, not just its guides, is in view."""
        depth, n = 0, event.node
        while n.parent is not None:
            depth, n = depth + 1, n.parent
        x = depth * self.guide_depth  # where the row's label starts
        end = x + event.node.label.cell_len + 2  # type: ignore[union-attr]  # row labels are Text
        width = self.scrollable_content_region.width
        if x < self.scroll_x:
            self.scroll_to(x=max(0, x - 4), animate=False)
        elif end > self.scroll_x + width:  # show the whole label if it fits, else from its start
            self.scroll_to(x=max(0, min(x - 2, end - width)), animate=False)

    def _reopen(self, node: TreeNode[Item], expanded: set[tuple]) -> None:
        for child in node.children:
            if child.data and child.data.kind == "arm":
                pass  # arms follow the selection: the chosen one open, the others closed
            elif row_key(child) in expanded:
                self._populate(child)
                child.expand()
            else:
                child.collapse()
            if child.is_expanded:
                self._reopen(child, expanded)

    def _populate(self, node: TreeNode[Item]) -> None:
        item = node.data
        if item is None or item.populated or item.kind != "stage":
            return
        item.populated = True
        assert self.session is not None
        children = self.session.expand(item.obj, item.path)  # type: ignore[arg-type]
        self._add_items(node, children, item.path, item.key)

    def _add_items(self, node: TreeNode[Item], items: list, path: tuple[str, ...], key: tuple[str, ...]) -> None:
        shown, rest = items[:CHUNK], items[CHUNK:]
        for it in shown:
            if isinstance(it, Stage):
                has = self.session.has_calls(it) if self.session else False
                node.add(stage_label(it), Item("stage", it, (*path, it.node), key=(*key, stage_key(it))),
                         allow_expand=has)
            else:
                dn = node.add(dispatch_label(it), Item("dispatch", it, path, key=key), expand=True)
                for arm in it.arms:
                    an = dn.add(arm_label(arm), Item("arm", arm, path, dispatch=it, key=key),
                                expand=arm.selected is not False and bool(arm.children),
                                allow_expand=bool(arm.children))
                    self._add_items(an, arm.children, path, key)
        if rest:
            node.add_leaf(Text(f"+{len(rest)} more… (enter)", style="dim italic"),
                          Item("more", None, path, rest=rest, key=key))

    def ensure_populated(self, node: TreeNode[Item]) -> None:
        self._populate(node)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        self._populate(event.node)

    # -- queries -------------------------------------------------------------------------

    def find(self, key: tuple) -> TreeNode[Item] | None:
        """The built row whose :func:`row_key` is ``key``, if any."""
        stack = [self.root]
        while stack:
            n = stack.pop()
            if row_key(n) == key:
                return n
            stack.extend(n.children)
        return None

    def find_stage(self, node_id: str) -> TreeNode[Item] | None:
        """The first built row (pre-order) for graph node ``node_id``."""
        stack = [self.root]
        while stack:
            n = stack.pop(0)
            if n.data and n.data.kind == "stage" and n.data.obj.node == node_id:  # type: ignore[union-attr]
                return n
            stack[0:0] = list(n.children)
        return None

    def expanded_keys(self) -> set[tuple]:
        out: set[tuple] = set()
        stack = [self.root]
        while stack:
            n = stack.pop()
            if n.is_expanded and n is not self.root:
                out.add(row_key(n))
            stack.extend(n.children)
        return out

    @staticmethod
    def dispatch_at(node: TreeNode[Item] | None) -> TreeNode[Item] | None:
        """The dispatch row at or above ``node`` (stopping at the enclosing stage's own dispatch)."""
        while node is not None:
            if node.data and node.data.kind == "dispatch":
                return node
            node = node.parent
        return None

    @staticmethod
    def stage_path(node: TreeNode[Item] | None) -> list[Stage]:
        """Stages from the entry down to ``node`` (its own stage included)."""
        out: list[Stage] = []
        while node is not None:
            if node.data and node.data.kind == "stage":
                out.append(node.data.obj)  # type: ignore[arg-type]
            node = node.parent
        return out[::-1]

    # -- actions -------------------------------------------------------------------------

    def action_follow(self) -> None:
        node = self.cursor_node
        if node is None or node.data is None:
            return
        if node.data.kind == "more":
            parent = node.parent
            rest = node.data.rest or []
            path, key = node.data.path, node.data.key
            node.remove()
            if parent is not None:
                self._add_items(parent, rest, path, key)
            return
        if node.data.kind == "stage":
            self.post_message(self.Follow(node))
        else:
            node.toggle()

    def action_expand(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.allow_expand and not node.is_expanded:
            self._populate(node)
            node.expand()
        elif node.children:
            self.move_cursor(node.children[0])

    def action_collapse(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded and node.children:
            node.collapse()
        elif node.parent is not None:
            self.move_cursor(node.parent)

    def action_first(self) -> None:
        self.move_cursor_to_line(0)

    def action_last(self) -> None:
        self.move_cursor_to_line(max(0, self.last_line))

    def _jump_dispatch(self, step: int) -> None:
        line = self.cursor_line + step
        while 0 <= line <= self.last_line:
            n = self.get_node_at_line(line)
            if n is not None and n.data and n.data.kind == "dispatch":
                self.move_cursor(n)
                return
            line += step

    # -- next / previous device stage -----------------------------------------------------

    def _kids(self, node: TreeNode[Item], populate: bool) -> list[TreeNode[Item]]:
        d = node.data
        if d is None or (d.kind == "arm" and d.obj.selected is False):  # type: ignore[union-attr]
            return []
        if populate and d.kind == "stage" and node.allow_expand and not d.populated:
            self._builds += 1
            self._populate(node)
        return list(node.children)

    def _subtree(self, node: TreeNode[Item], populate: bool, include_self: bool = True):
        stack = [node] if include_self else list(reversed(self._kids(node, populate)))
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(self._kids(n, populate)))

    def _after(self, node: TreeNode[Item]):
        """Rows after ``node`` in execution (pre-)order, building stages' children on the way."""
        yield from self._subtree(node, True, include_self=False)
        while node.parent is not None:
            sibs = list(node.parent.children)
            for s in sibs[sibs.index(node) + 1:]:
                yield from self._subtree(s, True)
            node = node.parent

    def is_device(self, node: TreeNode[Item]) -> bool:
        """A kernel launch or a library call that does work (setup calls such as ``cublasLtCreate`` are skipped)."""
        d = node.data
        if d is None or d.kind != "stage" or d.obj.kind not in DEVICE_KINDS:  # type: ignore[union-attr,operator]
            return False
        g = self.session.index.graph if self.session is not None else None
        return own_kind(d.obj, g) in ("device", "library")  # type: ignore[arg-type,operator]

    def reveal(self, node: TreeNode[Item]) -> None:
        """Open ``node``'s ancestors and put the cursor on it (after the rows are laid out)."""
        p = node.parent
        while p is not None:
            if not p.is_expanded:
                p.expand()
            p = p.parent
        self.call_after_refresh(self._settle, node)

    def action_next_device(self) -> None:
        start = self.cursor_node or self.root
        self._builds = 0
        for i, n in enumerate(self._after(start)):
            if self.is_device(n):
                self.reveal(n)
                return
            if i >= SEARCH_ROWS or self._builds >= SEARCH_BUILDS:
                self.notify(f"No kernel or library call in the next {i:,} rows; press n again to go on.", timeout=4)
                self.reveal(n)
                return
        self.notify("No kernel launch or library call after this row on the chosen arms.", timeout=3)

    def action_previous_device(self) -> None:
        cur = self.cursor_node
        prev = None
        for n in self._subtree(self.root, False):
            if n is cur:
                break
            if self.is_device(n):
                prev = n
        if prev is None:
            self.notify("No kernel launch or library call before this row.", timeout=3)
        else:
            self.reveal(prev)

    def action_next_dispatch(self) -> None:
        self._jump_dispatch(1)

    def action_previous_dispatch(self) -> None:
        self._jump_dispatch(-1)


def row_key(node: TreeNode[Item]) -> tuple:
    """A key for a row that survives a re-trace: the chain of stage nodes, dispatch keys and arm indices."""
    parts: list[str] = []
    n: TreeNode[Item] | None = node
    while n is not None:
        d = n.data
        if d is not None:
            if d.kind == "stage":
                site = (d.obj.via or {}).get("site", "")  # type: ignore[union-attr]
                parts.append(f"s:{d.obj.node}@{site}")  # type: ignore[union-attr]
            elif d.kind == "dispatch":
                parts.append("d:" + d.obj.key)  # type: ignore[union-attr]
            elif d.kind == "arm":
                parts.append(f"a:{d.obj.index}")  # type: ignore[union-attr]
            else:
                parts.append("more")
        n = n.parent
    return tuple(reversed(parts))
