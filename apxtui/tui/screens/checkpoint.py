"""Screen 4: the checkpoint's tensors with their join status, the loader patterns, config dims
and totals, shape checks, and the speed-of-light panel for the explorer's current path.

The tabs are widgets (:mod:`apxtui.tui.widgets.checkpoint`, :mod:`~apxtui.tui.widgets.sol_panel`);
this screen reads the checkpoint (a thread: headers only), takes the weight join from the app
(a background job) and prices the path in a serving job.  Each state (no checkpoint,
unreadable, empty header, no patterns) is said as such.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from apxtui.checkpoint import CheckpointError, check_shapes, read_checkpoint, summarize
from apxtui.checkpoint.join import EMPTY_HEADER, STATUS_TEXT
from apxtui.checkpoint.sol import load_devices
from apxtui.checkpoint.view import SolRequest, sol_missing_sections, tensor_claims
from apxtui.textsafe import one_line
from apxtui.tui.background import sol_server
from apxtui.tui.jobs import Job, JobFailed
from apxtui.tui.screens.base import ApxScreen
from apxtui.tui.session import Session
from apxtui.tui.widgets.checkpoint import ChecksTab, ConfigTab, PatternsTab, TensorsTab
from apxtui.tui.widgets.checkpoint.common import NO_CKPT, mb, params
from apxtui.tui.widgets.sol_panel import SolPanel

if TYPE_CHECKING:
    from apxtui.checkpoint.join import JoinResult
    from apxtui.checkpoint.model import Checkpoint
    from apxtui.checkpoint.shapes import Finding
    from apxtui.checkpoint.summary import Summary
    from apxtui.tui.app import JoinState

TABS = (("tensors", "t Tensors"), ("patterns", "p Patterns"), ("config", "c Config & totals"),
        ("checks", "f Shape checks"), ("sol", "s Speed of light"))


class CheckpointScreen(ApxScreen):
    """Tabs: tensors · patterns · config & totals · shape checks · speed of light."""

    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        Binding("j", "table('down')", "Down", show=False, id="checkpoint.down", tooltip="Next row"),
        Binding("k", "table('up')", "Up", show=False, id="checkpoint.up", tooltip="Previous row"),
        Binding("g", "table('top')", "Top", show=False, id="checkpoint.top", tooltip="First row"),
        Binding("G", "table('bottom')", "Bottom", show=False, id="checkpoint.bottom", tooltip="Last row"),
        Binding("slash", "filter", "Filter", key_display="/", id="checkpoint.filter",
                tooltip="Filter tensors by name or join status (unclaimed, claimed)"),
        Binding("t", "tab('tensors')", "Tensors", show=False, id="checkpoint.tensors", tooltip="Tab: tensors"),
        Binding("p", "tab('patterns')", "Patterns", show=False, id="checkpoint.patterns",
                tooltip="Tab: the loader's tensor-name patterns (those matching nothing first)"),
        Binding("c", "tab('config')", "Config", show=False, id="checkpoint.config",
                tooltip="Tab: config dims with their source keys, totals by dtype and module"),
        Binding("f", "tab('checks')", "Checks", show=False, id="checkpoint.checks",
                tooltip="Tab: shape checks (config against tensor shapes)"),
        Binding("s", "tab('sol')", "Speed of light", id="checkpoint.sol",
                tooltip="Tab: speed of light of the explorer's current path (device, batch, seq …)"),
        Binding("escape", "leave_input", "Leave input", show=False, id="checkpoint.leave_input",
                tooltip="Leave the input: back to the tab's table"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session: Session | None = None
        self.ckpt: Checkpoint | None = None
        self.summary: Summary | None = None
        self.findings: list[Finding] = []
        self.join: JoinResult | None = None
        self.read_error = ""
        self.join_error = ""
        self.sol_request: SolRequest | None = None
        self._sol: tuple[int, Job] | None = None  # (generation, serving job) pricing the current path

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        try:
            devices, self.devices_error = list(load_devices()), ""
        except ValueError as e:
            devices, self.devices_error = [], str(e)
        yield Static("4 · Checkpoint: tensors, join with the loader, speed of light", classes="screen-title",
                     markup=False)
        yield Static("", id="ckpt-summary", classes="note", markup=False)
        with TabbedContent(id="ckpt-tabs"):
            with TabPane(TABS[0][1], id="tensors"):
                yield TensorsTab(id="tensors-tab")
            with TabPane(TABS[1][1], id="patterns"):
                yield PatternsTab(id="patterns-tab")
            with TabPane(TABS[2][1], id="config"):
                yield ConfigTab(id="config-tab")
            with TabPane(TABS[3][1], id="checks"):
                yield ChecksTab(id="checks-tab")
            with TabPane(TABS[4][1], id="sol"):
                yield SolPanel(devices, id="sol-panel")
        yield Footer(compact=True)

    def _tabs(self) -> tuple[TensorsTab, PatternsTab, ConfigTab, ChecksTab]:
        return (self.query_one(TensorsTab), self.query_one(PatternsTab), self.query_one(ConfigTab),
                self.query_one(ChecksTab))

    def on_mount(self) -> None:
        path = self.apx.checkpoint
        if path is None:
            self.query_one("#ckpt-summary", Static).update(NO_CKPT)
            for tab in self._tabs():
                tab.no_checkpoint()
        else:
            self.query_one("#ckpt-summary", Static).update(f"reading {one_line(self.apx.checkpoint_label(), 200)}…")
            for tab in self._tabs():
                tab.set_loading(True)
            self._read(path)
        self._show_sol_inputs()
        self.watch(self.app, "session", self._session_ready)
        self.watch(self.app, "join_state", self._join_state)
        self.watch(self.app, "path_version", self._path_changed, init=False)

    # -- reading (a thread: headers only) ------------------------------------------------

    @work(thread=True, exclusive=True, group="checkpoint", exit_on_error=False)
    def _read(self, path: Path) -> None:
        try:
            ckpt = read_checkpoint(path)
            summary, findings = summarize(ckpt), check_shapes(ckpt)
        except CheckpointError as e:
            self.app.call_from_thread(self._read_failed, str(e))
            return
        except Exception as e:  # noqa: BLE001 - a reader bug must not take the app down
            self.app.call_from_thread(self._read_failed, f"{type(e).__name__}: {e}")
            return
        self.app.call_from_thread(self._read_done, ckpt, summary, findings)

    def _read_failed(self, error: str) -> None:
        self.read_error = error
        for tab in self._tabs():
            tab.read_failed(error)
        self.query_one("#ckpt-summary", Static).update(
            f"Checkpoint could not be read: {one_line(error, 300)}. The other screens work without it.")
        self.notify(one_line(error, 300), title="Checkpoint not read", severity="error", timeout=10)
        self._show_sol_inputs()

    def _read_done(self, ckpt: Checkpoint, summary: Summary, findings: list[Finding]) -> None:
        empty = all(p.message.startswith("empty header") for p in ckpt.errors)
        if not ckpt.tensors and ckpt.errors and not empty:  # nothing usable: unreadable, not an empty header
            self._read_failed("; ".join(str(p) for p in ckpt.errors[:3]))
            return
        self.ckpt, self.summary, self.findings = ckpt, summary, findings
        tensors, _patterns, config, checks = self._tabs()
        tensors.show_checkpoint(ckpt)
        config.show(ckpt, summary)
        checks.show(ckpt, findings)
        self._join_state(self.apx.join_state)
        self._show_summary()

    # -- the join (a background job of the app) ------------------------------------------

    def _session_ready(self, session: Session | None) -> None:
        if session is not None and self.session is not session:
            self.session = session
            self._show_summary()
            self._refresh_sol()

    def _join_state(self, state: JoinState) -> None:
        if self.ckpt is None or not state.done:
            return
        _tensors, patterns, _config, _checks = self._tabs()
        if state.error:
            self.join_error = state.error
            patterns.join_failed(state.error)
            self._tabs()[0].show_claims({}, state.error)
        elif self.join is not state.join:
            self.join = state.join
            patterns.show_join(state.join)
            self._tabs()[0].show_claims(tensor_claims(self.ckpt, state.join))
        self._show_summary()

    def _show_summary(self) -> None:
        ck, s = self.ckpt, self.summary
        if ck is None or s is None:
            return
        label = one_line(self.apx.checkpoint_label(), 200)
        dt = ", ".join(f"{one_line(t.key, 20)} ×{t.tensors}" for t in s.by_dtype)
        head = (f"{label}: {s.tensors:,} tensors, {s.shards} shard(s), {params(s.params)} params, "
                f"{mb(s.bytes)} MB · {dt}")
        if not ck.tensors:
            head = f"{label}: EMPTY HEADER — the checkpoint declares no tensor"
        if ck.problems:
            head += f"; {len(ck.problems)} problem(s): " + "; ".join(one_line(str(p), 100) for p in ck.problems[:2])
        if self.join_error:
            join = f"join failed: {one_line(self.join_error, 200)}"
        elif self.join is None:
            join = "join: waiting for the index…" if self.session is None else "join: matching the loader's names…"
        else:
            j = self.join
            join = (f"join {STATUS_TEXT[j.status].split(':')[0]}: {j.claimed:,} claimed · {len(j.unclaimed):,} "
                    f"unclaimed · {len(j.duplicates):,} claimed twice · {len(j.unmatched):,} of {len(j.matches):,} "
                    "patterns match nothing")
            if j.status == EMPTY_HEADER:
                join = "join: " + STATUS_TEXT[j.status]
        bad = sum(1 for f in self.findings if f.kind != "ok")
        self.query_one("#ckpt-summary", Static).update(f"{head}\n{join} · {bad} shape finding(s)")

    # -- keys ----------------------------------------------------------------------------

    def _active_table(self) -> DataTable[object] | None:
        pane = self.query_one("#ckpt-tabs", TabbedContent).active_pane
        return pane.query(DataTable).first() if pane is not None and pane.query(DataTable) else None

    def action_table(self, where: str) -> None:
        table = self._active_table()
        if table is None:
            return
        {"down": table.action_cursor_down, "up": table.action_cursor_up,
         "top": table.action_scroll_top, "bottom": table.action_scroll_bottom}[where]()

    def action_tab(self, tab: str) -> None:
        self.query_one("#ckpt-tabs", TabbedContent).active = tab
        self._focus_tab(tab)

    def _focus_tab(self, tab: str) -> None:
        if tab == "sol":
            self.query_one("#sol-device").focus()
            self._refresh_sol()
        else:
            table = self._active_table()
            if table is not None:
                table.focus()

    @on(TabbedContent.TabActivated, "#ckpt-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "sol":
            self._refresh_sol()

    def action_filter(self) -> None:
        self.query_one("#ckpt-tabs", TabbedContent).active = "tensors"
        self.query_one(TensorsTab).focus_filter()

    def action_leave_input(self) -> None:
        tab = self.query_one("#ckpt-tabs", TabbedContent).active
        if tab == "sol":
            self.query_one("#sol-result").focus()
        else:
            self._focus_tab(tab)

    def on_screen_resume(self) -> None:
        self._refresh_sol()

    # -- speed of light ------------------------------------------------------------------

    def _path_changed(self) -> None:
        """The explorer's path changed (entry, arm, profile): price it again when the panel is shown."""
        if self._sol is not None:
            self._sol[1].cancel()
            self._sol = None
        self._refresh_sol()

    def _refresh_sol(self) -> None:
        self._show_sol_inputs()
        if self.is_current and self.query_one("#ckpt-tabs", TabbedContent).active == "sol":
            self._compute_sol()

    def _path_text(self) -> str:
        s = self.session
        if s is None:
            return "Waiting for the index…"
        if s.entry is None:
            return "No path traced yet: choose an entry in the explorer (1)."
        entry = s.index.graph.nodes[s.entry].get("qualname", s.entry)
        return (f"Path from {one_line(entry, 70)} with the explorer's arm choices ({len(s.choices)} set); "
                f"profile: {one_line(s.profile_text(), 60)}. One call of the entry.")

    @on(SolPanel.InputsChanged)
    def _inputs_changed(self, event: SolPanel.InputsChanged) -> None:
        self.sol_request = event.request
        self._compute_sol()

    def _show_sol_inputs(self) -> None:
        """What can be said without pricing: the path, and why the figures are missing."""
        panel = self.query_one("#sol-panel", SolPanel)
        panel.set_path(self._path_text())
        if self.apx.checkpoint is None:
            panel.show([], "INSUFFICIENT_EVIDENCE: no checkpoint given — the speed of light needs the weights' "
                           "shapes and dtypes (--checkpoint PATH).")
        elif self.read_error:
            why = one_line(self.read_error, 200)
            panel.show([], f"INSUFFICIENT_EVIDENCE: the checkpoint could not be read ({why}).")
        elif self.devices_error:
            panel.show([], f"Device table unreadable: {one_line(self.devices_error, 300)}")

    def _compute_sol(self) -> None:
        panel = self.query_one("#sol-panel", SolPanel)
        panel.set_path(self._path_text())
        if self.apx.checkpoint is None or self.read_error or self.devices_error:
            self._show_sol_inputs()
            return
        req = self.sol_request or panel.request()
        if req.missing or req.errors:
            panel.show(sol_missing_sections(req))
            return
        if self.session is None or self.session.entry is None:
            panel.show([], "Waiting for a traced path (indexing, or no entry chosen yet)…")
            return
        panel.show([], "pricing the path…")
        self._price(req)

    @work(exclusive=True, group="sol", exit_on_error=False)
    async def _price(self, req: SolRequest) -> None:
        """Ask the serving job for this path (started once per path; inputs only re-price)."""
        assert self.session is not None
        gen = self.session.generation
        if self._sol is None or self._sol[0] != gen or self._sol[1].cancelled:
            job = self.apx.background.start("sol", sol_server, self.session)
            self._sol = (gen, job)
            self._serve_sol(job)
        job = self._sol[1]
        try:
            if not await job.wait_serving():
                raise JobFailed("the pricing job ended")
            sections = await job.request(req)
        except JobFailed as e:
            sections, error = [], f"Speed of light failed: {e}"
        else:
            error = ""
        if self.session is not None and self.session.generation == gen:
            self.query_one("#sol-panel", SolPanel).show(sections, error)

    @work(group="sol-serve", exit_on_error=False)
    async def _serve_sol(self, job: Job) -> None:
        """Keep the pricing job's messages flowing (progress in the status bar) while it serves."""
        try:
            await self.apx.follow("sol", job)
        except JobFailed as e:
            self.query_one("#sol-panel", SolPanel).show([], f"Speed of light failed: {e}")
