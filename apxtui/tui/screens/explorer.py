"""Screen 1: entry points → execution tree → source → details, with a breadcrumb.

The screen mediates: panes post messages up, the screen updates the others.  It watches the
app's ``session``, ``index_state``, ``profile_version`` and ``analysis``; it tells the app
when the traced path changed (``path_changed``), and the app re-analyses it in the background.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widgets import Footer, Input, Label, ProgressBar
from textual.widgets.tree import TreeNode

from apxtui.analysis.launches import own_kind
from apxtui.map.model import Choice, ExecutionMap, KeyChain
from apxtui.textsafe import one_line
from apxtui.trace import Dispatch, Stage
from apxtui.tui.background import Progress, ReportRequest, map_server
from apxtui.tui.commands import ExplorerCommands, SymbolCommands
from apxtui.tui.details import (
    dispatch_details,
    map_frame_details,
    map_phase_details,
    map_row_details,
    stage_details,
)
from apxtui.tui.entries import Entry, default_entry, entry_points
from apxtui.tui.jobs import Job, JobFailed, serve_first
from apxtui.tui.path_analysis import PathAnalysis
from apxtui.tui.positions import Pos, find_keys, positions_after, stage_keys
from apxtui.tui.rows import ArmRow, DispatchRow, MoreRow, Row, StageRow
from apxtui.tui.screens.base import ApxScreen
from apxtui.tui.screens.problems import ProblemsScreen
from apxtui.tui.session import Session
from apxtui.tui.text import label
from apxtui.tui.widgets.breadcrumb import Breadcrumb
from apxtui.tui.widgets.call_tree import CallTree
from apxtui.tui.widgets.details_pane import DetailsPane
from apxtui.tui.widgets.entry_list import EntryList
from apxtui.tui.widgets.map_view import (
    FrameItem,
    MapItem,
    MapView,
    PhaseItem,
    RefItem,
    RowItem,
    arm_cycle,
    first_choice,
)
from apxtui.tui.widgets.profile_bar import ProfileBar
from apxtui.tui.widgets.source_view import SourceView

if TYPE_CHECKING:
    from apxtui.tui.app import IndexState

HISTORY = 100
ANALYSE_AFTER = 0.15  # arm presses closer together than this rebuild the map once
PREFETCH_ROWS = 60  # rows above and below the cursor whose analysis is fetched with the cursor's
PREFETCH_SOURCES = 8  # rows above and below the cursor whose source documents are built while idle
SLICE = 0.008  # seconds of searching (n/N before the analysis is ready) between repaints
SEARCH_ROWS = 50_000  # rows `n` looks through before it stops and says so …
SEARCH_BUILDS = 2_000  # … or stages whose calls it had to trace (one level each)


@dataclass(frozen=True)
class MapMark:
    """A place in the back history: the map row (its key) the user left with ``enter``."""

    key: KeyChain


def row_file(row: Row) -> str:
    """The file the source pane shows for a call-tree row (its call site, else its definition)."""
    if isinstance(row, StageRow):
        v = row.stage.via
        return v.file if v is not None and v.file else row.stage.file
    return row.dispatch.file if isinstance(row, DispatchRow | ArmRow) else ""


def is_device(st: Stage, session: Session) -> bool:
    """A kernel launch or a library call that does work (setup calls such as ``cublasLtCreate`` are not)."""
    return own_kind(st, session.index.graph) in ("device", "library")


class ExplorerScreen(ApxScreen):
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
        Binding("m", "toggle_map", "Map", id="explorer.map",
                tooltip="The execution map of this entry (phases, folded blocks, one row per operation) "
                        "in the call tree's place; again for the tree"),
        Binding("w,f6", "cycle_pane", "Pane", key_display="w", id="explorer.cycle_pane",
                tooltip="Narrow terminal (< 100 columns): the next pane under the tree (source → details → entries)"),
    ]

    #: Under the tree in a narrow terminal: one of these at a time (``w`` cycles).
    NARROW_PANES = ("source", "details", "entries")
    narrow_pane: var[str] = var("source")
    #: The execution map in the call tree's place (``m``).
    map_shown: var[bool] = var(False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session: Session | None = None
        self.history: list[Pos | MapMark] = []  # ⌫ goes back: tree rows, and map rows left with enter
        self.entries: list[Entry] = []
        self._map: tuple[int, ExecutionMap] | None = None  # (session generation, map) shown in the map view
        self._map_timer: Any = None
        self._row_choices: dict[KeyChain, Choice] = {}  # map row key → the choice [ / ] cycles there
        self._map_goal: KeyChain | None = None  # where the map's cursor goes when it is shown next
        self._tree_left_at: KeyChain = ()  # the tree's position when the map was last hidden
        self._finds: deque[int] = deque()  # n/N presses not yet searched, in order
        self._finding = False
        self._map_job: Job | None = None  # serves maps of one entry and profile for new arm choices
        self._map_basis: tuple[Any, Any] = (None, None)  # (entry, bound profile) the map job serves
        self._map_basis_choices: dict[str, int] = {}  # the choices of its first map …
        self._map_first: asyncio.Future[ExecutionMap] | None = None  # … which arrives here

    def compose(self) -> ComposeResult:
        yield ProfileBar(id="profile-bar")
        with Vertical(id="loading"):
            yield Label("indexing: scanning the checkout…", id="progress-label", markup=False)
            yield ProgressBar(id="progress", show_eta=False)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="filter entry points (enter: open first, esc: close)", id="entry-filter",
                            disabled=True)
                yield EntryList(id="entries")
                yield CallTree(id="tree")
                yield MapView(id="map")
            with Vertical(id="right"):  # the breadcrumb here, not across the screen: a keypress repaints this
                yield Breadcrumb(id="crumb")  # column and the tree's two rows, not every line between them
                yield SourceView(id="source")
                yield DetailsPane(id="details")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#entries", EntryList).border_title = "Entries"
        self.query_one("#tree", CallTree).border_title = "Call tree"
        self.query_one("#map", MapView).border_title = "Execution map"
        # source, details and breadcrumb follow the cursor in the tree's (the map's) own turn: one repaint a key
        self.query_one("#tree", CallTree).follow = self._update_for
        self.query_one("#map", MapView).follow = self._update_for_map
        self.query_one("#source", SourceView).border_title = "Source"
        self.query_one("#details", DetailsPane).border_title = "Details"
        for pane in ("#entries", "#tree"):
            self.query_one(pane).loading = True
        self.query_one("#tree", CallTree).focus()
        self.watch_narrow_pane(self.narrow_pane)
        self.watch(self.app, "index_state", self._index_state)
        self.watch(self.app, "session", self._session_ready)
        self.watch(self.app, "profile_version", self._profile_changed, init=False)
        self.watch(self.app, "analysis", self._analysis_changed, init=False)
        self.watch(self.app, "path_version", self._path_version, init=False)

    # -- loading -------------------------------------------------------------------------

    def _index_state(self, st: IndexState) -> None:
        if st.ready:
            return
        label = self.query_one("#progress-label", Label)
        if st.error:
            label.update(f"indexing failed: {one_line(st.error, 300)}")
            for pane in ("#entries", "#tree"):
                self.query_one(pane).loading = False
            return
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=max(st.total, 1), progress=st.done)
        text = st.label
        if not text and st.total and st.done >= st.total:
            text = f"indexing: parsed {st.total:,} files; linking the graph…"
        elif not text and st.total:
            text = f"indexing: parsed {st.done:,} of {st.total:,} files" + (
                f" · {one_line(st.current, 80)}" if st.current else "")
        label.update(text or "indexing: scanning the checkout…")

    def _session_ready(self, session: Session | None) -> None:
        if session is None or self.session is session:
            return
        self.session = session
        self._show_profile()
        self.query_one("#loading").add_class("-done")
        for pane in ("#entries", "#tree"):
            self.query_one(pane).loading = False
        if self.focused is None or isinstance(self.focused, Input):
            self.query_one("#tree", CallTree).focus()
        self.call_after_refresh(self.refresh_bindings)  # the Footer missed the tree's keys while it was loading
        self.query_one("#source", SourceView).root = session.index.root
        self.entries = entry_points(session.index.graph)
        first = default_entry(self.entries, session.index.graph)
        self.query_one("#entries", EntryList).set_entries(self.entries, first.node if first else None)
        if first is None:
            crumb = self.query_one("#crumb", Breadcrumb)
            crumb.set_path([], "no entry points found: use ctrl+p to trace from any symbol")
            return
        self.set_entry(first.node)

    # -- state changes -------------------------------------------------------------------

    def _show_profile(self) -> None:
        if self.session is not None:
            self.query_one("#profile-bar", ProfileBar).set_profile(self.session.profile_text(),
                                                                   self.session.resolved is not None)

    def _profile_changed(self) -> None:
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
        tree.border_title = label(f"Call tree · {one_line(root.qualname, 60)}")
        self._update_for(tree.cursor_node)
        self.apx.path_changed()

    def _retrace(self, cursor: Pos | None = None) -> None:
        """Trace the current entry again (profile change); open rows and the cursor survive."""
        assert self.session is not None
        tree = self.query_one("#tree", CallTree)
        expanded = tree.expanded_positions()
        root = self.session.retrace()
        tree.show_trace(self.session, root, expanded, cursor or tree.cursor_pos)
        self._update_for(tree.cursor_node)
        self.apx.path_changed()

    def _analysis_changed(self, analysis: PathAnalysis | None) -> None:
        """The background analysis moved on (progress, ready, failed): the highlighted row's details follow."""
        if self.map_shown:
            return  # the map view's details do not come from the analysis
        tree = self.query_one("#tree", CallTree)
        if isinstance(tree.cursor_node is not None and tree.cursor_node.data, StageRow):
            self._details(tree.cursor_node)  # type: ignore[arg-type]

    # -- the panes follow the cursor -----------------------------------------------------

    def _update_for(self, node: TreeNode[Row] | None) -> None:
        if self.session is None or node is None or node.data is None:
            return
        row = node.data
        source = self.query_one("#source", SourceView)
        details = self.query_one("#details", DetailsPane)
        note = ""
        if isinstance(row, StageRow):
            st = row.stage
            v = st.via
            if v is not None and v.file:
                source.show(v.file, v.line, f"call site of {one_line(st.name, 40)}")
            else:
                source.show(st.file, st.line, "definition")
            self._details(node)
        elif isinstance(row, DispatchRow | ArmRow):
            disp = row.dispatch
            source.show(disp.file, disp.line, f"{one_line(disp.construct, 20)} dispatch point")
            details.show(dispatch_details(disp, row.arm if isinstance(row, ArmRow) else None))
            chosen = next((a.label for a in disp.arms if a.selected), "")
            note = f"at ◆ {one_line(disp.construct, 20)} {one_line(disp.subject, 40)}" + (
                f" · ● {one_line(chosen, 50)}" if chosen else "")
        elif isinstance(row, MoreRow):
            details.show([("More rows", [("", f"{len(row.rest):,} more items at this level: enter shows them")])])
        self.query_one("#crumb", Breadcrumb).set_path(CallTree.stage_path(node), note)
        if node.tree is self.query_one("#tree", CallTree):  # the files of the rows around it, built while idle
            source.prefetch([row_file(r) for r in self.query_one("#tree", CallTree).rows_near(PREFETCH_SOURCES)])

    def _details(self, node: TreeNode[Row]) -> None:
        """Stage details now from what is known; the analysis of the row is fetched when it is not."""
        row = node.data
        assert isinstance(row, StageRow) and self.session is not None
        analysis: PathAnalysis | None = self.apx.analysis
        ann, pending, note = None, "analysing…", ""
        if analysis is not None and analysis.generation == self.session.generation:
            known, ann = analysis.cached(row.pos)
            pending = analysis.pending()
            note = analysis.summary.weights_note if analysis.summary is not None else ""
            if not known and analysis.ready:
                self._fetch(analysis, row.pos)
                return  # shown when it arrives (a moment): one repaint, not two
        self.query_one("#details", DetailsPane).show(stage_details(self.session, row.stage, ann, pending, note))

    @work(exclusive=True, group="details", exit_on_error=False)
    async def _fetch(self, analysis: PathAnalysis, pos: Pos) -> None:
        """The highlighted row's analysis, with the rows around it (so moving on finds them cached)."""
        tree = self.query_one("#tree", CallTree)
        await analysis.prefetch([pos, *tree.stage_positions_near(PREFETCH_ROWS)])
        # not once the map is shown: its row's details are in the pane (the tree row's would be stale there)
        if tree.cursor_pos == pos and self.apx.analysis is analysis and not self.map_shown:
            self._details(tree.cursor_node)  # type: ignore[arg-type]

    @on(CallTree.Follow)
    def _follow(self, event: CallTree.Follow) -> None:
        node = event.node
        tree = self.query_one("#tree", CallTree)
        self._remember()
        tree.ensure_populated(node)
        node.expand()
        assert isinstance(node.data, StageRow)
        st = node.data.stage
        source = self.query_one("#source", SourceView)
        if st.file:
            source.show(st.file, st.line, f"definition of {one_line(st.name, 40)}")
        else:
            self.notify(f"{one_line(st.qualname, 120)} has no definition in the checkout", severity="warning")

    # -- entries -------------------------------------------------------------------------

    @on(EntryList.Chosen)
    def _entry_chosen(self, event: EntryList.Chosen) -> None:
        self.set_entry(event.node)
        self.query_one("#tree", CallTree).focus()
        if self.narrow_pane == "entries":
            self.narrow_pane = "source"

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

    def action_filter(self) -> None:
        self.narrow_pane = "entries"
        box = self.query_one("#entry-filter", Input)
        box.disabled = False
        box.add_class("-show")
        box.focus()

    # -- jumps ---------------------------------------------------------------------------

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
        pos = self.query_one("#tree", CallTree).cursor_pos
        if pos:
            self.history.append(pos)
            del self.history[:-HISTORY]

    def action_back(self) -> None:
        tree = self.query_one("#tree", CallTree)
        while self.history:
            mark = self.history.pop()
            if isinstance(mark, MapMark):
                self._map_goal = mark.key
                self.map_shown = True
                return
            row = tree.find(mark)
            if row is not None:
                tree.move_cursor(row)
                tree.scroll_to_node(row)
                tree.focus()
                return
        self.notify("Nothing to go back to.", timeout=2)

    @on(CallTree.FindDevice)
    def _find_device(self, event: CallTree.FindDevice) -> None:
        """Presses queue up: each search starts where the one before it left the cursor."""
        self._finds.append(event.step)
        if not self._finding:
            self._finding = True
            self._drain_finds()

    @work(group="find-device", exit_on_error=False)
    async def _drain_finds(self) -> None:
        try:
            while self._finds:
                step = self._finds.popleft()
                await self._search_device(self.query_one("#tree", CallTree).cursor_pos, step)
        finally:
            self._finds.clear()
            self._finding = False

    async def _search_device(self, pos: Pos, step: int) -> None:
        """``n``/``N``: ask the analysis (it has the whole path); before it is ready, search the trace in slices."""
        if self.session is None or not pos:
            return
        tree = self.query_one("#tree", CallTree)
        analysis: PathAnalysis | None = self.apx.analysis
        if analysis is not None and analysis.generation == self.session.generation and analysis.ready:
            found = await analysis.device(pos, step)
            if found is not None:
                if found == ():
                    self.notify(f"No kernel launch or library call {'after' if step > 0 else 'before'} this row "
                                "on the chosen arms.", timeout=3)
                elif tree.reveal(found) is None:
                    self.notify("That kernel is not reachable in the tree (trace budget).", timeout=3)
                return
        if step < 0:
            self._previous_built(pos)
        else:
            await self._next_in_slices(pos)

    async def _next_in_slices(self, pos: Pos) -> None:
        assert self.session is not None
        tree = self.query_one("#tree", CallTree)
        builds = [0]
        session = self.session

        def expand(stage: Stage, path: tuple[str, ...]) -> list[Stage | Dispatch]:
            if not stage.expanded:
                builds[0] += 1
            return session.expand(stage, path)

        assert session.root is not None
        t0 = time.perf_counter()
        last: Pos = pos
        for i, (p, item) in enumerate(positions_after(session.root, pos, expand)):
            last = p
            if isinstance(item, Stage) and is_device(item, session):
                tree.reveal(p)
                return
            if i >= SEARCH_ROWS or builds[0] >= SEARCH_BUILDS:
                self.notify(f"No kernel or library call in the next {i:,} rows; press n again to go on.", timeout=4)
                tree.reveal(last)
                return
            if time.perf_counter() - t0 > SLICE:
                await asyncio.sleep(0)  # let keys and repaints through
                t0 = time.perf_counter()
        self.notify("No kernel launch or library call after this row on the chosen arms.", timeout=3)

    def _previous_built(self, pos: Pos) -> None:
        tree = self.query_one("#tree", CallTree)
        assert self.session is not None
        prev = None
        stack = [tree.root]
        while stack:
            n = stack.pop()
            if tree.pos_of(n) == pos:
                break
            if isinstance(n.data, StageRow) and is_device(n.data.stage, self.session):
                prev = n
            if not (isinstance(n.data, ArmRow) and n.data.arm.selected is False):
                stack.extend(reversed(n.children))
        if prev is None:
            self.notify("No kernel launch or library call before this row.", timeout=3)
        else:
            tree.reveal(tree.pos_of(prev))

    # -- arms ----------------------------------------------------------------------------

    @staticmethod
    def _dispatch_row(node: TreeNode[Row] | None) -> TreeNode[Row] | None:
        """The dispatch for ``[``/``]``: the ◆ row itself, an arm's, or the one a stage directly sits in."""
        if node is not None and isinstance(node.data, StageRow):
            node = node.parent
        while node is not None and isinstance(node.data, ArmRow | DispatchRow):
            if isinstance(node.data, DispatchRow):
                return node
            node = node.parent
        return None

    def action_arm(self, step: int) -> None:
        """Choose the next/previous arm at once: rows change in place (no re-trace); the analysis follows."""
        if self.session is None:
            return
        if self.map_shown:
            self._map_arm(step)
            return
        tree = self.query_one("#tree", CallTree)
        row = self._dispatch_row(tree.cursor_node)
        if row is None:
            self.notify("Not at a dispatch point: move to a ◆ row or one of its arms (J/K jump between them).",
                        severity="warning", timeout=4)
            return
        assert isinstance(row.data, DispatchRow)
        disp = row.data.dispatch
        on_arm = tree.cursor_node is not row
        changed = self.session.choose(disp, step)
        tree.refresh_dispatches(changed)
        chosen = self.session.choices[disp.key]
        if on_arm:
            arm_row = tree.find((*row.data.pos, f"a:{chosen}"))
            if arm_row is not None:
                tree._settle(arm_row)
        self._update_for(tree.cursor_node)  # the details and the breadcrumb name the chosen arm (no toast: cheap)
        self.apx.path_changed()

    # -- the map view --------------------------------------------------------------------

    def action_toggle_map(self) -> None:
        self.map_shown = not self.map_shown

    def watch_map_shown(self, shown: bool) -> None:
        self.query_one("#left").set_class(shown, "-map")
        self.call_after_refresh(self.refresh_bindings)
        view = self.query_one("#map", MapView)
        tree = self.query_one("#tree", CallTree)
        if shown:
            self.call_after_refresh(view.focus)  # shown once the class applies
            at = stage_keys(tree.cursor_pos)
            if self._map_goal is None and at and at != self._tree_left_at:
                self._map_goal = at  # the tree moved since: the map follows it (its operation's row)
            if self.session is not None and (self._map is None or self._map[0] != self.session.generation):
                self._schedule_map(0.0)
            else:
                goal, self._map_goal = self._map_goal, None
                if goal is not None:
                    view.select_key(goal)
                if view.cursor_node is not None:
                    self._update_for_map(view.cursor_node)
        else:
            self._tree_left_at = stage_keys(tree.cursor_pos)
            self.call_after_refresh(tree.focus)
            self._update_for(tree.cursor_node)

    def _path_version(self) -> None:
        """The traced path changed (entry, arm, profile): the map follows when it is shown."""
        if self.map_shown:
            self._schedule_map(ANALYSE_AFTER)

    def _schedule_map(self, delay: float) -> None:
        if self._map_timer is not None:
            self._map_timer.stop()
        view = self.query_one("#map", MapView)
        view.loading = self._map is None
        if self._map is not None:  # the rows stay (keys keep working) until the new map arrives
            view.border_subtitle = label("updating for the new choices…")
        self._map_timer = self.set_timer(delay, self._build_map) if delay else None
        if delay:  # said in the status bar, and busy() (tests, benchmarks) waits for it
            self.apx.set_activity("map-wait", "map: waiting for keys to settle…")
        else:
            self._build_map()

    @work(exclusive=True, group="map", exit_on_error=False)
    async def _build_map(self) -> None:
        self._map_timer = None
        self.apx.set_activity("map-wait", "")
        if self.session is None or self.session.entry is None:
            return
        gen = self.session.generation
        view = self.query_one("#map", MapView)
        try:
            m = await self._map_for(self.session)
        finally:
            view.loading = False
        if self.session.generation != gen:
            return  # a newer path is being mapped
        self._map = (gen, m)
        keep, self._map_goal = self._map_goal, None
        if keep is None and view.cursor_row is not None:
            keep = view.cursor_row.key
        view.show_map(m, keep, self._chosen_rows())
        view.border_title = label(f"Execution map · {one_line(m.entry, 60)}")
        view.border_subtitle = label(f"{sum(len(t.rows) for t in m.phases)} rows · m: tree")
        if self.map_shown and not isinstance(self.focused, Input):
            view.focus()
        self.call_after_refresh(self._map_cursor_changed)

    async def _map_for(self, session: Session) -> ExecutionMap:
        """The map of the session's path: asked of the map job serving this entry and profile (it re-traces
        only what the new choices change), else from a new one."""
        choices = dict(session.choices)
        for fresh in (False, True):
            job, m = await self._map_server(session, fresh)
            try:
                return m if choices == self._map_basis_choices else await job.request(choices)
            except JobFailed:
                if fresh or job.serving:  # the request failed, not the job: said, not retried
                    raise
        raise AssertionError("unreachable")

    async def _map_server(self, session: Session, fresh: bool = False) -> tuple[Job, ExecutionMap]:
        """The map job serving the session's entry and profile (started when there is none, or ``fresh``), once
        it has built its first map (the map of ``self._map_basis_choices``)."""
        basis = (session.entry, session.resolved)
        job, first = self._map_job, self._map_first
        if not fresh and job is not None and first is not None and not job.cancelled and self._map_basis == basis:
            try:
                return job, await asyncio.shield(first)  # a press while the first map is built waits for it
            except JobFailed:
                pass  # the server is gone: start again
        job = self._map_job = self.apx.background.start("map", map_server, session)
        self._map_basis, self._map_basis_choices = basis, dict(session.choices)
        first = self._map_first = asyncio.get_running_loop().create_future()
        self._read_map_job(job, first)
        return job, await asyncio.shield(first)

    @work(exclusive=True, group="map-server", exit_on_error=False)
    async def _read_map_job(self, job: Job, first: asyncio.Future[ExecutionMap]) -> None:
        """Read the map job until it ends (it serves until replaced or cancelled); its first map → ``first``
        once the job serves (:func:`serve_first`)."""
        try:
            await serve_first(job, first, self._map_job_note, lambda msg: not isinstance(msg, Progress))
        finally:
            self.apx.set_activity("map", "")

    def _map_job_note(self, msg: Any) -> None:
        self.apx.set_activity("map", msg.text if isinstance(msg, Progress) else "")

    def _chosen_rows(self) -> dict[KeyChain, str]:
        """Map row key → the arm chosen there with ``[``/``]`` (its condition), for the rows' marks."""
        out: dict[KeyChain, str] = {}
        if self.session is None:
            return out
        for key, choice in self._row_choices.items():
            dispatch, alts = arm_cycle(choice)
            arm = self.session.choices.get(dispatch)
            alt = next((a for a in alts if a.arm == arm), None)
            if alt is not None:
                out[key] = alt.condition
        return out

    def _map_cursor_changed(self) -> None:
        view = self.query_one("#map", MapView)
        if self.map_shown and view.cursor_node is not None:
            self._update_for_map(view.cursor_node)

    def _update_for_map(self, node: TreeNode[MapItem]) -> None:
        if self.session is None or node.data is None:
            return
        item = node.data
        source = self.query_one("#source", SourceView)
        details = self.query_one("#details", DetailsPane)
        crumb = self.query_one("#crumb", Breadcrumb)
        if isinstance(item, RowItem):
            row = item.row
            source.show(row.site.file, row.site.line, f"call site of {one_line(row.op, 40)}")
            details.show(map_row_details(row))
            inside = " › ".join(one_line(f.name, 30) for f in row.context[-3:])
            crumb.set_path([], f"map · {row.phase.value} › {inside + ' › ' if inside else ''}{one_line(row.op, 50)}")
        elif isinstance(item, FrameItem):
            source.show(item.frame.site.file, item.frame.site.line, f"call of {one_line(item.frame.name, 40)}")
            details.show(map_frame_details(item.frame))
            crumb.set_path([], f"map · {one_line(item.frame.qualname, 80)}")
        elif isinstance(item, PhaseItem) and self._map is not None:
            details.show(map_phase_details(item.table, self._map[1]))
            crumb.set_path([], f"map · {item.table.phase.value}: {one_line(item.table.frequency, 80)}")
        elif isinstance(item, RefItem):
            details.show([("Folded block", [("call", item.ref.frame.name), ("site", str(item.ref.frame.site)),
                                            ("same as", item.ref.same_as), ("rows", str(len(item.ref.rows)))])])

    @on(MapView.Jump)
    def _map_jump(self, event: MapView.Jump) -> None:
        """``enter`` on a map row: its call site in the call tree (rows opened down to it)."""
        assert self.session is not None and self.session.root is not None
        pos = find_keys(self.session.root, event.row.key, self.session.expand)
        if pos is None:
            self.notify(f"{one_line(event.row.op, 60)}: not in the call tree under the current choices "
                        "(a cut, or the map followed an arm the tree has not opened).", severity="warning", timeout=5)
            return
        self.history.append(MapMark(event.row.key))
        del self.history[:-HISTORY]
        self.map_shown = False
        tree = self.query_one("#tree", CallTree)
        tree.reveal(pos)
        tree.focus()

    def _map_arm(self, step: int) -> None:
        """``[``/``]`` on a map row: the next / previous alternative of its first choice (:func:`arm_cycle`)."""
        assert self.session is not None
        row = self.query_one("#map", MapView).cursor_row
        choice = first_choice(row) if row is not None else None
        if row is not None and choice is not None:
            self._row_choices[row.key] = choice  # a choice made here folds the row to one arm: cycle on from it
        elif row is not None:
            choice = self._row_choices.get(row.key)
        if choice is None:
            self.notify("No alternatives on this row: move to a row marked ◆ (its device work has alternatives).",
                        severity="warning", timeout=4)
            return
        dispatch, alts = arm_cycle(choice)
        selected = next((a.arm for a in alts if a.chosen), None)
        changed = self.session.step_choice(dispatch, [a.arm for a in alts], step, selected)
        self.query_one("#tree", CallTree).refresh_dispatches(changed)
        self.apx.path_changed()
        chosen = next(a for a in alts if a.arm == self.session.choices[dispatch])
        self.query_one("#map", MapView).mark_cursor(chosen.condition)  # at once; the rebuilt map follows
        self.notify(f"● {one_line(chosen.condition, 60)} → {one_line(chosen.name, 60)}",
                    title=f"{one_line(choice.construct, 20)} {one_line(choice.subject, 40)}", timeout=3)

    def _cursor_keys(self) -> tuple[str, ...] | None:
        """The stage-key chain the report's ``Path:`` follows: the map row, or the tree row, under the cursor."""
        if self.map_shown:
            row = self.query_one("#map", MapView).cursor_row
            return row.key if row is not None else None
        return stage_keys(self.query_one("#tree", CallTree).cursor_pos) or None

    # -- other actions -------------------------------------------------------------------

    def action_problems(self) -> None:
        if self.session is None:
            return
        self.app.push_screen(ProblemsScreen(self.session.index))

    def action_maximize_pane(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused)

    def watch_narrow_pane(self, pane: str) -> None:
        for p in self.NARROW_PANES:
            self.set_class(p == pane, f"-pane-{p}")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cycle_pane":  # only a narrow layout has panes to cycle (the footer shows it there)
            return self.has_class("-narrow")
        if action == "back":  # the map's own moves are enter and n/N; ⌫ leads back from the tree
            return not self.map_shown
        return True

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_bindings)  # the breakpoint class may have changed

    def action_cycle_pane(self) -> None:
        panes = self.NARROW_PANES
        self.narrow_pane = panes[(panes.index(self.narrow_pane) + 1) % len(panes)]

    def action_focus_pane(self, pane: str) -> None:
        if self.map_shown and (pane == "tree" or pane == "entries" and self.has_class("-wide")):
            self.map_shown = False  # the wide map takes the entries' place too
        if pane in self.NARROW_PANES:
            self.narrow_pane = pane
        self.query_one(f"#{pane}").focus()

    def action_export(self) -> None:
        if self.session is None or self.session.entry is None:
            self.notify("Nothing to export yet.", severity="warning")
            return
        self._export()

    @work(exclusive=True, group="export", exit_on_error=False)
    async def _export(self) -> None:
        assert self.session is not None
        t0 = time.perf_counter()
        row = self._cursor_keys()  # the report's Path: follows the cursor
        path = await self._report(ReportRequest(dict(self.session.choices), row, True, bool(self.apx.demo)))
        self.notify(str(path), title=f"Report written ({time.perf_counter() - t0:.1f} s)", timeout=8)

    async def _report(self, req: ReportRequest) -> Any:
        """The report of the current path (``req``), from the map job's builder (the map of the path is not
        built again; the job is started when there is none); progress in the status bar."""
        assert self.session is not None
        group = "export" if req.write else "copy"
        for fresh in (False, True):
            self.apx.set_activity(group, f"{group}: waiting for the execution map of the path…")
            try:
                job, _m = await self._map_server(self.session, fresh)
                self.apx.set_activity(group, f"{group}: rendering the report" + (" and writing it…" if req.write
                                                                                 else "…"))
                try:
                    return await job.request(req)
                except JobFailed:
                    if fresh or job.serving:  # the request failed, not the job: said, not retried
                        raise
            finally:
                self.apx.set_activity(group, "")
        raise AssertionError("unreachable")

    def action_copy(self) -> None:
        if self.session is None or self.session.entry is None:
            self.notify("Nothing to copy yet.", severity="warning")
            return
        self._copy()

    @work(exclusive=True, group="copy", exit_on_error=False)
    async def _copy(self) -> None:
        assert self.session is not None
        row = self._cursor_keys()
        text = await self._report(ReportRequest(dict(self.session.choices), row, write=False))
        self.app.copy_to_clipboard(text)
        size = len(text.encode())
        warn = " (large: some terminals cap OSC 52; `e` writes a file)" if size > 74_000 else ""
        self.notify(f"Copied {size / 1024:.0f} KB of Markdown{warn}", title="Report copied (OSC 52)", timeout=5)
