"""Screen 1: entry points → execution tree → source → details, with a breadcrumb.

The screen mediates: panes post messages up, the screen updates the others.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, ProgressBar, Tree
from textual.widgets.tree import TreeNode

from apxtui.tui.commands import ExplorerCommands, SymbolCommands
from apxtui.tui.details import dispatch_details, stage_details
from apxtui.tui.entries import default_entry, entry_points
from apxtui.tui.screens.problems import ProblemsScreen
from apxtui.tui.session import Session
from apxtui.tui.text import one_line
from apxtui.tui.widgets.breadcrumb import Breadcrumb
from apxtui.tui.widgets.call_tree import CallTree, Item, row_key
from apxtui.tui.widgets.details_pane import DetailsPane
from apxtui.tui.widgets.entry_list import EntryList
from apxtui.tui.widgets.profile_bar import ProfileBar
from apxtui.tui.widgets.source_view import SourceView

HISTORY = 100


class ExplorerScreen(Screen):
    AUTO_FOCUS = "#tree"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    COMMANDS = {ExplorerCommands, SymbolCommands}
    BINDINGS = [
        Binding("left_square_bracket", "arm(-1)", "Prev arm", key_display="[", show=False, id="explorer.arm_prev",
                tooltip="At a dispatch point (◆ row, an arm or a stage directly in an arm): choose the previous arm"),
        Binding("right_square_bracket", "arm(1)", "Arm", key_display="[ ]", id="explorer.arm_next",
                tooltip="At a dispatch point: choose the next arm (] next, [ previous)"),
        Binding("backspace,ctrl+left", "back", "Back", key_display="⌫", id="explorer.back",
                tooltip="Back to the row before the last follow (enter)"),
        Binding("slash", "filter", "Filter", key_display="/", show=False, id="explorer.filter",
                tooltip="Filter the entry points by name"),
        Binding("e", "export", "Export", id="explorer.export",
                tooltip="Write the current path as a Markdown report (CHECKOUT/devlocal/<entry>/reports)"),
        Binding("y", "copy", "Copy", id="explorer.copy", tooltip="Copy the Markdown report to the clipboard (OSC 52)"),
        Binding("i", "problems", "Problems", show=False, id="explorer.problems",
                tooltip="Index problems: skipped files, syntax errors, notices"),
        Binding("z,f10", "maximize_pane", "Maximize", show=False, id="explorer.maximize",
                tooltip="Maximize the focused pane (again to restore)"),
        Binding("escape", "close_filter", "Close filter", show=False, id="explorer.close_filter",
                tooltip="Close the entry filter"),
        Binding("t", "focus_pane('tree')", "Tree", show=False, id="explorer.focus_tree", tooltip="Focus the call tree"),
        Binding("s", "focus_pane('source')", "Source", show=False, id="explorer.focus_source",
                tooltip="Focus the source pane"),
        Binding("d", "focus_pane('details')", "Details", show=False, id="explorer.focus_details",
                tooltip="Focus the details pane"),
        Binding("o", "focus_pane('entries')", "Entries", show=False, id="explorer.focus_entries",
                tooltip="Focus the entry points (open another entry)"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.session: Session | None = None
        self.history: list[tuple] = []

    def compose(self) -> ComposeResult:
        yield Breadcrumb(id="crumb")
        yield ProfileBar(id="profile-bar")
        with Vertical(id="loading"):
            yield Label("indexing: scanning the checkout…", id="progress-label")
            yield ProgressBar(id="progress", show_eta=False)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="filter entry points (enter: open first, esc: close)", id="entry-filter",
                            disabled=True)
                yield EntryList(id="entries")
                yield CallTree(id="tree")
            with Vertical(id="right"):
                yield SourceView(id="source")
                yield DetailsPane(id="details")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#entries", EntryList).border_title = "Entries"
        self.query_one("#tree", CallTree).border_title = "Call tree"
        self.query_one("#source", SourceView).border_title = "Source"
        self.query_one("#details", DetailsPane).border_title = "Details"
        for pane in ("#entries", "#tree"):
            self.query_one(pane).loading = True
        self.query_one("#tree", CallTree).focus()
        self.app.register_listener(self)  # type: ignore[attr-defined]

    # -- loading -------------------------------------------------------------------------

    def index_progress(self, done: int, total: int, current: str, label: str = "") -> None:
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=max(total, 1), progress=done)
        if not label and done >= total:
            label = f"indexing: parsed {total:,} files; linking the graph…"
        elif not label:
            label = f"indexing: parsed {done:,} of {total:,} files" + (f" · {one_line(current, 80)}" if current else "")
        self.query_one("#progress-label", Label).update(label)

    def index_failed(self, error: str) -> None:
        self.query_one("#progress-label", Label).update(f"indexing failed: {one_line(error, 300)}")
        for pane in ("#entries", "#tree"):
            self.query_one(pane).loading = False

    def session_ready(self, session: Session) -> None:
        self.session = session
        self._show_profile()
        self.query_one("#loading").add_class("-done")
        for pane in ("#entries", "#tree"):
            self.query_one(pane).loading = False
        if self.focused is None or isinstance(self.focused, Input):
            self.query_one("#tree", CallTree).focus()
        self.call_after_refresh(self.refresh_bindings)  # the Footer missed the tree's keys while it was loading
        self.query_one("#source", SourceView).root = session.index.root
        entries = entry_points(session.index.graph)
        first = default_entry(entries, session.index.graph)
        self.query_one("#entries", EntryList).set_entries(entries, first.node if first else None)
        crumb = self.query_one("#crumb", Breadcrumb)
        if first is None:
            crumb.set_path([], "no entry points found: use ctrl+p to trace from any symbol")
            return
        self.set_entry(first.node)

    # -- state changes -------------------------------------------------------------------

    def _show_profile(self) -> None:
        if self.session is not None:
            self.query_one("#profile-bar", ProfileBar).set_profile(self.session.profile_text(),
                                                                   self.session.resolved is not None)

    def profile_changed(self) -> None:
        """The session's profile changed (screen 5): re-trace, keeping the open rows and the cursor."""
        self._show_profile()
        if self.session is not None and self.session.entry is not None:
            self._retrace()

    def set_entry(self, node: str) -> None:
        assert self.session is not None
        root = self.session.set_entry(node)
        self.history.clear()
        entries = self.query_one("#entries", EntryList)
        entries.current = node
        entries.apply_filter(entries.filter_text)
        tree = self.query_one("#tree", CallTree)
        tree.show_trace(self.session, root)
        tree.border_title = f"Call tree · {one_line(root.qualname, 60)}"
        self._update_for(tree.cursor_node)
        self._analyse()

    @work(thread=True, exclusive=True, group="analysis", exit_on_error=False)
    def _analyse(self) -> None:
        assert self.session is not None
        result = self.session.analyse()
        self.app.call_from_thread(self._analysed, result)
        if self.session.checkpoint is not None and not result.error:
            self.app.call_from_thread(self._analysed, self.session.add_weights(result))  # stored weights per stage

    def _analysed(self, result) -> None:
        if self.session is None or result.generation != self.session.generation:
            return  # the entry or an arm changed meanwhile
        self.session.analysis = result
        self._update_for(self.query_one("#tree", CallTree).cursor_node)
        self.app.analysis_updated()  # type: ignore[attr-defined]

    def jump_to(self, node: str) -> None:
        """Move to ``node`` in the built tree, or trace from it when it is not there."""
        tree = self.query_one("#tree", CallTree)
        row = tree.find_stage(node)
        if row is None:
            self.set_entry(node)
        else:
            self._remember()
            tree.move_cursor(row)
            tree.scroll_to_node(row)
        tree.focus()

    def _remember(self) -> None:
        tree = self.query_one("#tree", CallTree)
        if tree.cursor_node is not None:
            self.history.append(row_key(tree.cursor_node))
            del self.history[:-HISTORY]

    def _update_for(self, node: TreeNode[Item] | None) -> None:
        if self.session is None or node is None or node.data is None:
            return
        item = node.data
        source = self.query_one("#source", SourceView)
        details = self.query_one("#details", DetailsPane)
        crumb = self.query_one("#crumb", Breadcrumb)
        stages = CallTree.stage_path(node)
        note = ""
        if item.kind == "stage":
            st = item.obj
            v = st.via or {}  # type: ignore[union-attr]
            if v.get("file"):
                source.show(v["file"], int(v.get("line") or 0), f"call site of {one_line(st.name, 40)}")  # type: ignore[union-attr]
            else:
                source.show(st.file, st.line, "definition")  # type: ignore[union-attr]
            details.show(stage_details(self.session, st, item.key))  # type: ignore[arg-type]
        elif item.kind in ("dispatch", "arm"):
            disp = item.obj if item.kind == "dispatch" else item.dispatch
            source.show(disp.file, disp.line, f"{disp.construct} dispatch point")  # type: ignore[union-attr]
            details.show(dispatch_details(disp, item.obj if item.kind == "arm" else None))  # type: ignore[arg-type]
            note = f"at ◆ {disp.construct} {one_line(disp.subject, 40)}"  # type: ignore[union-attr]
        crumb.set_path(stages, note)

    @on(Tree.NodeHighlighted, "#tree")
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        self._update_for(event.node)

    @on(CallTree.Follow)
    def _follow(self, event: CallTree.Follow) -> None:
        node = event.node
        tree = self.query_one("#tree", CallTree)
        self._remember()
        tree.ensure_populated(node)
        node.expand()
        st = node.data.obj  # type: ignore[union-attr]
        source = self.query_one("#source", SourceView)
        if st.file:  # type: ignore[union-attr]
            source.show(st.file, st.line, f"definition of {one_line(st.name, 40)}")  # type: ignore[union-attr]
        else:
            self.notify(f"{st.qualname} has no definition in the checkout", severity="warning")  # type: ignore[union-attr]

    @on(EntryList.Chosen)
    def _entry_chosen(self, event: EntryList.Chosen) -> None:
        self.set_entry(event.node)
        self.query_one("#tree", CallTree).focus()

    @on(Input.Changed, "#entry-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.query_one("#entries", EntryList).apply_filter(event.value)

    @on(Input.Submitted, "#entry-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        node = self.query_one("#entries", EntryList).first_match()
        self._close_filter()
        if node:
            self.set_entry(node)
            self.query_one("#tree", CallTree).focus()

    def action_close_filter(self) -> None:
        if self.query_one("#entry-filter", Input).has_class("-show"):
            self._close_filter()

    def _close_filter(self) -> None:
        box = self.query_one("#entry-filter", Input)
        box.remove_class("-show")
        box.disabled = True
        self.query_one("#entries", EntryList).focus()

    # -- actions -------------------------------------------------------------------------

    def _dispatch_row(self, node: TreeNode[Item] | None) -> TreeNode[Item] | None:
        """The dispatch for ``[``/``]``: the ◆ row itself, an arm's, or the one a stage directly sits in."""
        if node is None or node.data is None:
            return None
        if node.data.kind == "stage":
            node = node.parent
        while node is not None and node.data is not None and node.data.kind in ("arm", "dispatch"):
            if node.data.kind == "dispatch":
                return node
            node = node.parent
        return None

    def action_arm(self, step: int) -> None:
        if self.session is None:
            return
        tree = self.query_one("#tree", CallTree)
        row = self._dispatch_row(tree.cursor_node)
        if row is None:
            self.notify("Not at a dispatch point: move to a ◆ row or one of its arms (J/K jump between them).",
                        severity="warning", timeout=4)
            return
        disp = row.data.obj  # type: ignore[union-attr]
        chosen = self.session.choose(disp, step)  # type: ignore[arg-type]
        key = row_key(row)
        on_arm = tree.cursor_node is not row
        self._retrace((*key, f"a:{chosen}") if on_arm else key)
        label = next(a.label for a in disp.arms if a.index == chosen)  # type: ignore[union-attr]
        self.notify(f"● {one_line(label, 80)}", title=f"{disp.construct} {one_line(disp.subject, 40)}",  # type: ignore[union-attr]
                    timeout=3)

    def _retrace(self, cursor: tuple | None = None) -> None:
        """Trace the current entry again (arm or profile change); open rows and the cursor survive."""
        assert self.session is not None
        tree = self.query_one("#tree", CallTree)
        expanded = tree.expanded_keys()
        if cursor is None and tree.cursor_node is not None:
            cursor = row_key(tree.cursor_node)
        root = self.session.retrace()
        tree.show_trace(self.session, root, expanded, cursor)
        self._update_for(tree.cursor_node)
        self._analyse()

    def action_back(self) -> None:
        tree = self.query_one("#tree", CallTree)
        while self.history:
            row = tree.find(self.history.pop())
            if row is not None:
                tree.move_cursor(row)
                tree.scroll_to_node(row)
                tree.focus()
                return
        self.notify("Nothing to go back to.", timeout=2)

    def action_filter(self) -> None:
        box = self.query_one("#entry-filter", Input)
        box.disabled = False
        box.add_class("-show")
        box.focus()

    def action_problems(self) -> None:
        if self.session is None:
            return
        self.app.push_screen(ProblemsScreen(self.session.index))

    def action_maximize_pane(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused)

    def action_focus_pane(self, pane: str) -> None:
        self.query_one(f"#{pane}").focus()

    def action_export(self) -> None:
        if self.session is None or self.session.entry is None:
            self.notify("Nothing to export yet.", severity="warning")
            return
        self._export()

    @work(thread=True, exclusive=True, group="report", exit_on_error=False)
    def _export(self) -> None:
        assert self.session is not None
        try:
            path = self.session.write_report(demo=getattr(self.app, "demo", False))
        except OSError as e:
            self.app.call_from_thread(self.notify, f"Export failed: {e}", severity="error", timeout=8)
            return
        self.app.call_from_thread(self.notify, str(path), title="Report written", timeout=8)

    def action_copy(self) -> None:
        if self.session is None or self.session.entry is None:
            self.notify("Nothing to copy yet.", severity="warning")
            return
        self._copy()

    @work(thread=True, exclusive=True, group="report", exit_on_error=False)
    def _copy(self) -> None:
        assert self.session is not None
        text = self.session.report()
        self.app.call_from_thread(self.app.copy_to_clipboard, text)
        size = len(text.encode())
        warn = " (large: some terminals cap OSC 52; `e` writes a file)" if size > 74_000 else ""
        self.app.call_from_thread(self.notify, f"Copied {size / 1024:.0f} KB of Markdown{warn}",
                                  title="Report copied (OSC 52)", timeout=5)
