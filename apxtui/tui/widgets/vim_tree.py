"""What the call tree and the map view share: a Tree with vim keys (ids under the widget's own prefix,
so a keymap can rebind them apart) and labels whose role words take theme colours."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets._tree import TOGGLE_STYLE
from textual.widgets.tree import TreeNode

from apxtui.tui.widgets.roles import ROLE_CLASSES, themed

T = TypeVar("T")


def vim_bindings(prefix: str, expand: str, collapse: str) -> list[Binding]:
    """``j k l h g G ctrl+d ctrl+u`` (arrows, home/end as twins), ids ``<prefix>.down`` …;
    ``expand`` / ``collapse``: what ``l`` / ``h`` do, for the help screen."""
    return [
        Binding("j", "cursor_down", "Down", show=False, id=f"{prefix}.down", tooltip="Next row"),
        Binding("k", "cursor_up", "Up", show=False, id=f"{prefix}.up", tooltip="Previous row"),
        Binding("l,right", "expand", "Expand", show=False, id=f"{prefix}.expand", tooltip=expand),
        Binding("h,left", "collapse", "Collapse", show=False, id=f"{prefix}.collapse", tooltip=collapse),
        Binding("g,home", "first", "Top", show=False, id=f"{prefix}.top", tooltip="First row"),
        Binding("G,end", "last", "Bottom", show=False, id=f"{prefix}.bottom", tooltip="Last row"),
        Binding("ctrl+d", "half_page(1)", "Half page down", show=False, id=f"{prefix}.half_down",
                tooltip="Half a page down"),
        Binding("ctrl+u", "half_page(-1)", "Half page up", show=False, id=f"{prefix}.half_up",
                tooltip="Half a page up"),
    ]


class VimTree(Tree[T]):
    """Tree with the actions behind :func:`vim_bindings`; ``l`` on a row calls :meth:`ensure_children` first."""

    COMPONENT_CLASSES = Tree.COMPONENT_CLASSES | ROLE_CLASSES
    #: Called with the cursor's row for each highlight still current when the tree handles it (highlights of
    #: rows a held key has already left are skipped).  The screen sets it so the panes that follow the cursor
    #: change in the tree's own turn, before the tree's repaint reaches the screen: one frame per key, not
    #: the tree's row first and the other panes a frame later (as a handler of the bubbled message gives).
    follow: Callable[[TreeNode[T]], None] | None = None
    # The cursor's subtree keeps the plain guide colour: Tree repaints every visible line under a row the
    # cursor enters or leaves to recolour its guides (most of the pane in a deep tree, on most keys).
    DEFAULT_CSS = """
    VimTree > .tree--guides-selected { color: $surface-lighten-2; }
    VimTree:focus > .tree--guides-selected { color: $surface-lighten-3; }
    """

    def render_label(self, node: TreeNode[T], base_style: Style, style: Style) -> Text:
        """As Tree's, with the label's role words in theme colours (re-done after a theme change)."""
        label = themed(node._label, self) if self.is_mounted else node._label.copy()
        label.stylize(style)
        if node._allow_expand:
            prefix = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE, base_style + TOGGLE_STYLE)
        else:
            prefix = ("", base_style)
        return Text.assemble(prefix, label)

    _holding = False  # a highlight is queued: the tree's repaint waits for it (see ``_on_idle``)

    def post_message(self, message: Message) -> bool:
        posted = super().post_message(message)
        if posted and isinstance(message, Tree.NodeHighlighted) and self.follow is not None:
            self._holding = True
        return posted

    async def _on_idle(self, event: events.Idle) -> None:
        """Textual idles a pump when its next message has been peeked (the queue looks empty), so the tree
        would send its repaint to the screen before it handles the highlight queued behind the key, and the
        screen would paint the tree's row a frame before the panes that follow it.  That early idle waits;
        the idle after the highlight sends the repaint."""
        if self._holding and self._pending_message is not None:
            self._holding = False
            event.prevent_default()  # Widget's: sends the repaint

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[T]) -> None:
        self._holding = False
        if self.follow is not None and event.node is self.cursor_node:
            self.follow(event.node)

    def ensure_children(self, node: TreeNode[T]) -> None:
        """Build ``node``'s children before it opens (lazy trees); nothing by default."""

    def _refresh_node(self, node: TreeNode[T]) -> None:
        """Tree's repaints the node's visible subtree (for the selected guides' colour, the same here): the
        node's own line is enough."""
        if node._line >= 0:
            self._refresh_line(node._line)

    def watch_hover_line(self, previous_hover_line: int, hover_line: int) -> None:
        """Tree's: the mouse highlights the hovered row's whole subtree, so there every visible line repaints."""
        for line, hover in ((previous_hover_line, False), (hover_line, True)):
            node = self._get_node(line)
            if node is not None:
                Tree._refresh_node(self, node)
                node._hover = hover

    def walk(self) -> Iterator[TreeNode[T]]:
        """Every built node, the root first, in display order (collapsed nodes' children too)."""
        stack = [self.root]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.children))

    def lines_now(self) -> None:
        """Number the rows now (Tree does it lazily), so the cursor can move to a new row at once."""
        self._tree_lines  # noqa: B018 - the property builds the line cache

    def _settle(self, node: TreeNode[T], scroll_now: bool = False) -> None:
        """Cursor on ``node`` now; scrolled to it once the rows are laid out (or at once: ``scroll_now``)."""
        self.lines_now()
        self.move_cursor(node)
        if scroll_now:
            self.scroll_to_node(node, animate=False)
        else:
            self.call_after_refresh(self.scroll_to_node, node, animate=False)

    def action_expand(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.allow_expand and not node.is_expanded:
            self.ensure_children(node)
            node.expand()
        elif node.children:
            self.move_cursor(node.children[0])

    def action_collapse(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded and node.children:
            node.collapse()
        elif node.parent is not None and (self.show_root or node.parent is not self.root):
            self.move_cursor(node.parent)

    def action_first(self) -> None:
        self.move_cursor_to_line(0)

    def action_last(self) -> None:
        self.move_cursor_to_line(max(0, self.last_line))

    def action_half_page(self, step: int) -> None:
        half = max(1, self.scrollable_content_region.height // 2)
        self.move_cursor_to_line(max(0, min(self.last_line, self.cursor_line + step * half)))
