"""Screen 4: the checkpoint's tensors with their join status, the loader patterns, config dims
and totals, shape checks, and the speed-of-light panel for the explorer's current path.

Reading, the join and the pricing run in workers; each state (no checkpoint, unreadable,
empty header, no patterns) is said as such.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static, TabbedContent, TabPane

from apxtui.checkpoint import CheckpointError, check_shapes, read_checkpoint, summarize
from apxtui.checkpoint.join import EMPTY_HEADER, STATUS_TEXT
from apxtui.checkpoint.model import Checkpoint
from apxtui.checkpoint.names import pattern
from apxtui.checkpoint.sol import find_device, load_devices, speed_of_light
from apxtui.checkpoint.view import (
    MULTI,
    UNCLAIMED,
    SolRequest,
    pattern_rows,
    sol_missing_sections,
    sol_sections,
    tensor_claims,
)
from apxtui.tui.screens.others import MAX_ROWS, lit
from apxtui.tui.session import Session
from apxtui.tui.text import one_line
from apxtui.tui.widgets.sol_panel import SolPanel

TABS = (("tensors", "t Tensors"), ("patterns", "p Patterns"), ("config", "c Config & totals"),
        ("checks", "f Shape checks"), ("sol", "s Speed of light"))
NO_CKPT = "No checkpoint given: start with --checkpoint PATH (a .safetensors file or a directory of shards)."


def _mb(n: int) -> str:
    return f"{n / 1e6:,.2f}"


def _params(n: int) -> str:
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:.2f}{unit}"
    return str(n)


def _shape(s: tuple[int, ...]) -> str:
    return "×".join(map(str, s)) or "scalar"


def _claim_cell(label: str) -> Text:
    """Matched plain; unclaimed bold; claimed by several patterns bold underlined; pending dim."""
    style = {"matched": "", "unclaimed": "bold", "joining…": "dim", "join failed": "dim"}.get(label, "bold underline")
    return Text(label, style=style)


class CheckpointScreen(Screen):
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

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.session: Session | None = None
        self.ckpt: Checkpoint | None = None
        self.summary = None
        self.findings: list = []
        self.join = None
        self.claims: dict = {}
        self.shown: list = []
        self.patterns: list = []
        self.read_error = ""
        self.join_error = ""
        self._joining = False
        self.sol_request: SolRequest | None = None
        # (generation, trace document with stored weights) for the speed of light
        self._doc: tuple[int, Any] | None = None
        self.sol_stale = True

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
                yield Input(placeholder="/ filter by name or status (unclaimed, claimed ×)", id="ckpt-filter",
                            compact=True)
                yield DataTable(cursor_type="row", zebra_stripes=True, id="tensor-table")
                yield Static("", id="tensor-detail", classes="panel ckpt-detail", markup=False)
            with TabPane(TABS[1][1], id="patterns"):
                yield DataTable(cursor_type="row", zebra_stripes=True, id="pattern-table")
                yield Static("", id="pattern-detail", classes="panel ckpt-detail", markup=False)
            with TabPane(TABS[2][1], id="config"):
                yield DataTable(cursor_type="row", zebra_stripes=True, id="config-table")
            with TabPane(TABS[3][1], id="checks"):
                yield DataTable(cursor_type="row", zebra_stripes=True, id="checks-table")
                yield Static("", id="checks-detail", classes="panel ckpt-detail", markup=False)
            with TabPane(TABS[4][1], id="sol"):
                yield SolPanel(devices, id="sol-panel")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#tensor-table", DataTable).add_columns("tensor", "join", "dtype", "shape", "MB")
        self.query_one("#pattern-table", DataTable).add_columns("status", "pattern", "tensors", "source")
        self.query_one("#config-table", DataTable).add_columns("what", "value", "name", "source")
        self.query_one("#checks-table", DataTable).add_columns("kind", "section", "tensor", "finding")
        path = getattr(self.app, "checkpoint", None)
        if path is None:
            self._no_checkpoint()
        else:
            self.query_one("#ckpt-summary", Static).update(f"reading {self.app.checkpoint_label()}…")  # type: ignore[attr-defined]
            for t in self._tables():
                t.loading = True
            self._read(path)
        self._show_sol_inputs()
        self.app.register_listener(self)  # type: ignore[attr-defined]

    def _tables(self) -> list[DataTable]:
        return list(self.query(DataTable))

    # -- reading and joining (workers) ---------------------------------------------------

    @work(thread=True, exclusive=True, group="checkpoint", exit_on_error=False)
    def _read(self, path) -> None:
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
        for t in self._tables():
            t.loading = False
        self.query_one("#ckpt-summary", Static).update(
            f"Checkpoint could not be read: {one_line(error, 300)}. The other screens work without it.")
        for tid, what in (("#tensor-table", "Tensors"), ("#pattern-table", "Patterns"), ("#config-table", "Config"),
                          ("#checks-table", "Shape checks")):
            self.query_one(tid, DataTable).border_title = f"{what}: checkpoint unreadable"
        self.query_one("#tensor-detail", Static).update(f"Unreadable checkpoint: {one_line(error, 300)}")
        self.notify(one_line(error, 300), title="Checkpoint not read", severity="error", timeout=10)
        self._show_sol_inputs()

    def _read_done(self, ckpt, summary, findings) -> None:
        empty = all(p.message.startswith("empty header") for p in ckpt.errors)
        if not ckpt.tensors and ckpt.errors and not empty:  # nothing usable: unreadable, not an empty header
            self._read_failed("; ".join(str(p) for p in ckpt.errors[:3]))
            return
        self.ckpt, self.summary, self.findings = ckpt, summary, findings
        for tid in ("#tensor-table", "#config-table", "#checks-table"):
            self.query_one(tid, DataTable).loading = False
        self._fill_tensors()
        self._fill_config()
        self._fill_checks()
        self._show_summary()
        self._maybe_join()

    def session_ready(self, session: Session) -> None:
        self.session = session
        self._maybe_join()
        self.refresh_rows()

    def _maybe_join(self) -> None:
        if self.session is None or self.ckpt is None or self.join is not None or self._joining:
            return
        self._joining = True
        self._join()

    @work(thread=True, exclusive=True, group="checkpoint-join", exit_on_error=False)
    def _join(self) -> None:
        assert self.session is not None
        try:
            j = self.session.weight_join()
            claims = tensor_claims(self.ckpt, j)  # type: ignore[arg-type]  # read before the join runs
        except Exception as e:  # noqa: BLE001 - shown, not raised
            self.app.call_from_thread(self._join_failed, f"{type(e).__name__}: {e}")
            return
        self.app.call_from_thread(self._join_done, j, claims)

    def _join_failed(self, error: str) -> None:
        self.join_error = error
        self.query_one("#pattern-table", DataTable).loading = False
        self.query_one("#pattern-table", DataTable).border_title = "Patterns: join failed"
        self.query_one("#pattern-detail", Static).update(f"The weight join failed: {one_line(error, 300)}")
        self._show_summary()

    def _join_done(self, j, claims) -> None:
        self.join, self.claims = j, claims
        self.patterns = pattern_rows(j)
        table = self.query_one("#pattern-table", DataTable)
        table.loading = False
        table.clear()
        table.add_rows([(Text(st, style="bold" if st != "matched" else ""), lit(p, 70), lit(n),
                         lit(src, 60)) for st, p, n, _b, src in self.patterns[:MAX_ROWS]])
        unmatched = sum(1 for r in self.patterns if r[0] != "matched")
        table.border_title = f"Patterns {len(self.patterns):,}: {unmatched:,} match nothing or only a prefix"
        self._pattern_detail(0)
        self._fill_tensors(self.query_one("#ckpt-filter", Input).value)
        self._show_summary()

    # -- the tables ----------------------------------------------------------------------

    def _no_checkpoint(self) -> None:
        self.query_one("#ckpt-summary", Static).update(NO_CKPT)
        for t in self._tables():
            t.border_title = "no checkpoint"
        for sid in ("#tensor-detail", "#pattern-detail", "#checks-detail"):
            self.query_one(sid, Static).update(NO_CKPT)

    def _show_summary(self) -> None:
        ck, s = self.ckpt, self.summary
        if ck is None or s is None:
            return
        label = self.app.checkpoint_label()
        dt = ", ".join(f"{t.key} ×{t.tensors}" for t in s.by_dtype)
        head = (
            f"{label}: {s.tensors:,} tensors, {s.shards} shard(s), {_params(s.params)} params, {_mb(s.bytes)} MB · {dt}"
        )
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
        checks = f"{bad} shape finding(s)"
        self.query_one("#ckpt-summary", Static).update(f"{head}\n{join} · {checks}")

    def _fill_tensors(self, text: str = "") -> None:
        if self.ckpt is None:
            return
        table = self.query_one("#tensor-table", DataTable)
        table.clear()
        words = text.lower().split()

        def status(t) -> str:
            c = self.claims.get(t.name)
            return c.label if c is not None else ("join failed" if self.join_error else "joining…")

        rows = [(t, status(t)) for t in self.ckpt.tensors]
        self.shown = [(t, st) for t, st in rows if all(w in f"{t.name} {st}".lower() for w in words)]
        table.add_rows([(lit(t.name, 70), _claim_cell(st), lit(t.dtype), lit(_shape(t.shape)), lit(_mb(t.nbytes)))
                        for t, st in self.shown[:MAX_ROWS]])
        n = len(self.ckpt.tensors)
        table.border_title = (f"Tensors {min(len(self.shown), MAX_ROWS):,} of {n:,}" if n else
                              "Tensors: EMPTY HEADER (no tensor declared)")
        self._tensor_detail(table.cursor_row if self.shown else -1)

    def _tensor_detail(self, i: int) -> None:
        box = self.query_one("#tensor-detail", Static)
        if not (0 <= i < len(self.shown)):
            box.update("No tensor matches the filter." if self.ckpt is not None and self.ckpt.tensors else
                       "The checkpoint declares no tensor: nothing to join." if self.ckpt is not None else "")
            return
        t, st = self.shown[i]
        out = Text()
        out.append(one_line(t.name, 120), style="bold")
        out.append(f"  {t.dtype} [{', '.join(map(str, t.shape))}] {t.nbytes:,} B in {one_line(t.shard, 60)}\n")
        c = self.claims.get(t.name)
        if c is None:
            out.append(f"join: {st}")
        elif c.status == UNCLAIMED:
            out.append("unclaimed: no loader pattern in the checkout names this tensor", style="bold")
        else:
            if c.status == MULTI:
                out.append(f"claimed by {len(c.patterns)} patterns (each may load it):\n", style="bold")
            for p, at in c.patterns[:4]:
                out.append("  ← " if c.status == MULTI else "matched by ")
                out.append(one_line(p, 80))
                out.append(f"  at {one_line(at, 80)}\n", style="dim")
        out.rstrip()
        box.update(out)

    def _pattern_detail(self, i: int) -> None:
        box = self.query_one("#pattern-detail", Static)
        if self.join is None:
            return
        if not self.patterns:
            box.update(STATUS_TEXT[self.join.status])
            return
        if not (0 <= i < len(self.patterns)):
            return
        m = sorted(self.join.matches, key=lambda m: {"unmatched": 0, "prefix": 1, "matched": 2}.get(m.status, 3))[i]
        out = Text()
        out.append(one_line(m.pattern.text, 120), style="bold")
        out.append(f"  {self.patterns[i][0]}; {len(m.tensors)} tensor(s), {m.nbytes:,} B\n")
        for s in m.pattern.sources[:3]:
            out.append(f"  {one_line(s.at, 80)}", style="dim")
            out.append(
                f"  {one_line(s.written, 80)}  ({s.origin}{', in ' + one_line(s.caller, 50) if s.caller else ''})\n"
            )
        if m.pattern.how:
            out.append("  how: " + one_line("; ".join(m.pattern.how[:3]), 200) + "\n", style="dim")
        out.rstrip()
        box.update(out)

    def _fill_config(self) -> None:
        assert self.ckpt is not None and self.summary is not None
        s = self.summary
        rows: list[tuple] = []
        for sec, dims in s.dims.items():
            for k, d in dims.items():
                val = str(d.value) if not isinstance(d.value, dict) else \
                    ", ".join(f"{a}={b}" for a, b in list(d.value.items())[:4])
                rows.append((f"dim [{sec}]", val, k,
                             d.source + (" (derived)" if d.derived and "derived" not in d.source else "")))
        if not s.dims:
            rows.append(("dim", "—", "—", "no config.json beside the checkpoint" if not self.ckpt.config_file
                         else f"{self.ckpt.config_file} states no model dimension"))
        for t in s.by_dtype:
            rows.append(("total dtype", f"{t.tensors:,} tensors, {_mb(t.bytes)} MB", t.key, f"{t.params:,} params"))
        for t in s.by_module:
            rows.append(("total module", f"{t.tensors:,} tensors, {_mb(t.bytes)} MB", t.key, f"{t.params:,} params"))
        for r in s.rows:
            if r.count > 1:
                rows.append(("repeated", f"×{r.count} ({' × '.join(r.indices)})", r.pattern,
                             f"{','.join(r.dtypes)} {' | '.join(_shape(x) for x in r.shapes[:2])}"))
        table = self.query_one("#config-table", DataTable)
        table.clear()
        table.add_rows([tuple(lit(c, 80) for c in r) for r in rows[:MAX_ROWS]])
        table.border_title = (f"Config {self.ckpt.config_file or '(none)'}: "
                              f"{sum(len(d) for d in s.dims.values())} dims; totals")

    def _fill_checks(self) -> None:
        table = self.query_one("#checks-table", DataTable)
        table.clear()
        shown = self._checks()
        oks = sum(1 for f in shown if f.kind == "ok")
        table.add_rows([(Text(f.kind, style="" if f.kind == "ok" else "bold"), lit(f.section), lit(
            (pattern(f.tensor) if f.count > 1 else f.tensor) if f.tensor else "-", 60), lit(f.message, 120))
            for f in shown[:MAX_ROWS]])
        table.border_title = f"Shape checks: {len(shown) - oks} finding(s) first, then {oks} passed"
        self._checks_detail(0)

    def _checks(self) -> list:
        """Findings first, passed checks after."""
        return sorted(self.findings, key=lambda f: f.kind == "ok")

    def _checks_detail(self, i: int) -> None:
        box = self.query_one("#checks-detail", Static)
        shown = self._checks()
        if not (0 <= i < len(shown)):
            box.update("No check could run: the checkpoint declares no tensor and its config no dimension."
                       if self.ckpt is not None else "")
            return
        f = shown[i]
        out = Text()
        out.append(f"{f.kind} [{f.section}] ", style="bold")
        out.append(one_line(f.message, 300) + "\n")
        if f.tensor:
            out.append(f"  shown by {one_line(f.tensor, 100)}" + (f" and {f.count - 1} more" if f.count > 1 else ""),
                       style="dim")
        if f.keys:
            out.append("\n  config keys: " + ", ".join(f.keys), style="dim")
        box.update(out)

    @on(Input.Changed, "#ckpt-filter")
    def _filtered(self, event: Input.Changed) -> None:
        self._fill_tensors(event.value)

    @on(Input.Submitted, "#ckpt-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self.query_one("#tensor-table", DataTable).focus()

    @on(DataTable.RowHighlighted)
    def _row(self, event: DataTable.RowHighlighted) -> None:
        tid = event.data_table.id
        if tid == "tensor-table":
            self._tensor_detail(event.cursor_row)
        elif tid == "pattern-table":
            self._pattern_detail(event.cursor_row)
        elif tid == "checks-table":
            self._checks_detail(event.cursor_row)

    # -- keys ----------------------------------------------------------------------------

    def _active_table(self) -> DataTable | None:
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
            self._compute_sol()
        else:
            table = self._active_table()
            if table is not None:
                table.focus()

    @on(TabbedContent.TabActivated, "#ckpt-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "sol":
            self._compute_sol()

    def action_filter(self) -> None:
        self.query_one("#ckpt-tabs", TabbedContent).active = "tensors"
        self.query_one("#ckpt-filter", Input).focus()

    def action_leave_input(self) -> None:
        tab = self.query_one("#ckpt-tabs", TabbedContent).active
        if tab == "sol":
            self.query_one("#sol-result").focus()
        else:
            self._focus_tab(tab)

    def on_screen_resume(self) -> None:
        self.refresh_rows()

    # -- speed of light ------------------------------------------------------------------

    def refresh_rows(self) -> None:
        """The explorer's path changed (entry, arm, profile): price it again when the panel is shown."""
        self._show_sol_inputs()
        if self.is_current and self.query_one("#ckpt-tabs", TabbedContent).active == "sol":
            self._compute_sol()

    def profile_changed(self) -> None:
        self.refresh_rows()

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
        if getattr(self.app, "checkpoint", None) is None:
            panel.show([], "INSUFFICIENT_EVIDENCE: no checkpoint given — the speed of light needs the weights' "
                           "shapes and dtypes (--checkpoint PATH).")
        elif self.read_error:
            panel.show(
                [], f"INSUFFICIENT_EVIDENCE: the checkpoint could not be read ({one_line(self.read_error, 200)})."
            )
        elif self.devices_error:
            panel.show([], f"Device table unreadable: {one_line(self.devices_error, 300)}")

    def _compute_sol(self) -> None:
        panel = self.query_one("#sol-panel", SolPanel)
        panel.set_path(self._path_text())
        if getattr(self.app, "checkpoint", None) is None or self.read_error or self.devices_error:
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
        self._price(req, self.session.generation)

    @work(thread=True, exclusive=True, group="sol", exit_on_error=False)
    def _price(self, req: SolRequest, gen: int) -> None:
        from apxtui.checkpoint.weights import bind_loops  # lazy: first paint

        assert self.session is not None
        try:
            cached = self._doc
            doc = cached[1] if cached is not None and cached[0] == gen else self.session.path_document()
            ckpt = self.session.read_checkpoint()
            d = dict(doc)
            bind_loops(d, ckpt, req.bind)
            sol = speed_of_light(d, ckpt, find_device(req.device or "", load_devices()), req.batch or 0,
                                 req.seq or 0, req.context, req.launch_floor_us, req.bind)
            sections = sol_sections(sol)
        except Exception as e:  # noqa: BLE001 - shown in the panel
            self.app.call_from_thread(self._priced, gen, None, [], f"Speed of light failed: {type(e).__name__}: {e}")
            return
        self.app.call_from_thread(self._priced, gen, doc, sections, "")

    def _priced(self, gen: int, doc, sections: list, error: str) -> None:
        if doc is not None:
            self._doc = (gen, doc)
        if self.session is not None and self.session.generation != gen:
            self._compute_sol()  # the path changed meanwhile
            return
        self.query_one("#sol-panel", SolPanel).show(sections, error)
