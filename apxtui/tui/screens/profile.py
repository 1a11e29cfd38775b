"""Screen 5: the configuration space and the active profile; edits re-trace at once."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from apxtui.profile.buildscript import arch_number
from apxtui.profile.model import Profile, Resolved
from apxtui.textsafe import one_line
from apxtui.tui import profile_rows as pr
from apxtui.tui.path_analysis import PathAnalysis
from apxtui.tui.screens.base import ApxScreen
from apxtui.tui.screens.others import MAX_ROWS, TableNav, lit
from apxtui.tui.screens.prompt import Prompt
from apxtui.tui.session import Session
from apxtui.tui.widgets.profile_bar import ProfileBar

KEYS = "space toggle · enter set value · a arch · D default features · x no profile"


class ProfileScreen(TableNav, ApxScreen):
    """Rows of :mod:`apxtui.tui.profile_rows`; the explorer re-traces on every change."""

    AUTO_FOCUS = "DataTable"
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # 24 rows: the table keeps a dozen rows
    BINDINGS = [
        *TableNav.BINDINGS,
        Binding("space", "toggle", "Toggle", id="profile.toggle",
                tooltip="cfg name: on (--cfg) → off (--cfg-off) → as derived; feature on/off; arch: target/none"),
        # priority: the focused table's own (hidden) enter would otherwise hide "⏎ Set" from the footer, so
        # the footer showed it or not depending on whether the table had taken focus yet
        Binding("enter", "set_value", "Set", id="profile.set", priority=True,
                tooltip="env: type its value (empty: unset); arch: make it the target; others: toggle"),
        Binding("a", "arch", "Arch", id="profile.arch", tooltip="Type the target architecture (sm_90; empty: none)"),
        Binding("D", "default_features", "Defaults", show=False, id="profile.default_features",
                tooltip="Toggle --no-default-features"),
        Binding("x", "clear", "No profile", id="profile.clear",
                tooltip="Drop the profile: every configuration is shown again"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session: Session | None = None
        self.rows: list[pr.Row] = []

    def compose(self) -> ComposeResult:
        yield Static("5 · Profile: the build/run configuration the trace follows", classes="screen-title",
                     markup=False)
        yield ProfileBar(id="profile-bar")
        yield Static(KEYS, classes="note", id="profile-keys", markup=False)
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Static("", id="profile-detail", classes="panel", markup=False)
        yield Static("", id="profile-path", classes="note", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).loading = True
        self.watch(self.app, "session", self._session_ready)
        self.watch(self.app, "profile_version", self._profile_changed, init=False)
        self.watch(self.app, "analysis", self._path_summary)

    # -- state ---------------------------------------------------------------------------

    def _session_ready(self, session: Session | None) -> None:
        if session is not None and self.session is not session:
            self.session = session
            self._discover()

    @work(thread=True, exclusive=True, group="profile", exit_on_error=False)
    def _discover(self) -> None:
        assert self.session is not None
        space = self.session.config_space()
        rows = pr.rows(space, self.session.resolved)
        self.app.call_from_thread(self._show, rows)

    def _profile_changed(self) -> None:
        if self.session is not None:
            self._discover()

    def _show(self, rows: list[pr.Row]) -> None:
        assert self.session is not None
        table = self.query_one(DataTable)
        keep = table.cursor_row
        self.rows = rows
        table.loading = False
        table.clear(columns=True)  # widths follow the new states
        for label, width in (("kind", 7), ("name", max((len(r.name) for r in rows), default=4)),
                             ("state", max((len(r.state) for r in rows), default=5)), ("where", None)):
            table.add_column(label, width=min(width, 44) if width else None)
        table.add_rows([
            (lit(r.kind), lit(r.name, 60), Text(one_line(r.state, 80), style="bold" if r.undecided else ""),
             lit(r.where, 60)) for r in rows[:MAX_ROWS]
        ])
        und = sum(1 for r in rows if r.undecided)
        table.border_title = f"Configuration space: {len(rows)} rows" + (f", {und} undecided" if und else "")
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))
        if self.focused is None:  # AUTO_FOCUS passes over the table while it is loading
            table.focus()
        self.refresh_bindings()  # the footer's keys follow the loaded, focused table
        bar = self.query_one("#profile-bar", ProfileBar)
        bar.hint = "x: drop it" if self.session.resolved is not None else "space/enter on a row: set one"
        bar.set_profile(self.session.profile_text(), self.session.resolved is not None)
        self._detail(table.cursor_row)
        self._path_summary(self.apx.analysis)

    def _path_summary(self, a: PathAnalysis | None) -> None:
        """The path summary under the profile (from the background analysis of the explorer's entry)."""
        box = self.query_one("#profile-path", Static)
        if a is None:
            box.update("No entry traced yet (choose one in the explorer).")
            return
        entry = a.entry
        if a.summary is None:
            box.update(f"Path from {one_line(entry, 80)}: {one_line(a.pending(), 120)}")
            return
        kernels = list(dict.fromkeys(q for k, q in a.summary.device if k == "kernel"))
        libs = list(dict.fromkeys(q for k, q in a.summary.device if k == "vendor_api"))
        by_lib: dict[str, list[str]] = {}
        for x in libs:
            lib, _, api = x.partition(":")
            by_lib.setdefault(lib, []).append(api)
        text = (
            f"Path from {one_line(entry, 80)} (explorer's arm choices): {len(kernels)} kernel(s)"
            + (": " + ", ".join(one_line(k.rpartition("::")[2], 40) for k in kernels[:8]) if kernels else "")
            + (" …" if len(kernels) > 8 else "")
            + "; library calls: "
            + (
                "; ".join(
                    f"{lib} "
                    + ", ".join(one_line(a, 30) for a in apis[:2])
                    + (f" +{len(apis) - 2}" if len(apis) > 2 else "")
                    for lib, apis in by_lib.items()
                )
                or "none"
            )
        )
        box.update(text)

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_set_value()  # a click on a row (enter is this screen's priority binding)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)

    def _detail(self, i: int) -> None:
        box = self.query_one("#profile-detail", Static)
        if not (0 <= i < len(self.rows)):
            box.update("")
            return
        r = self.rows[i]
        t = Text()
        t.append(f"{r.kind} {one_line(r.name, 80)}", style="bold")
        t.append(f"  {one_line(r.state, 100)}\n")
        for line in r.detail[:10]:
            t.append(f"  {one_line(line, 300)}\n")
        if len(r.detail) > 10:
            t.append(f"  … {len(r.detail) - 10} more\n", style="dim")
        t.rstrip()
        box.update(t)

    def _current(self) -> pr.Row | None:
        i = self.query_one(DataTable).cursor_row
        return self.rows[i] if 0 <= i < len(self.rows) else None

    # -- edits ---------------------------------------------------------------------------

    def _apply(self, profile: Profile | None) -> None:
        if self.session is None:
            return
        self.query_one("#profile-path", Static).update("re-tracing…")
        self._bind(profile)

    @work(thread=True, exclusive=True, group="profile-bind", exit_on_error=False)
    def _bind(self, profile: Profile | None) -> None:
        assert self.session is not None
        rp = self.session.bind(profile)
        self.app.call_from_thread(self._applied, profile, rp)

    def _applied(self, profile: Profile | None, rp: Resolved | None) -> None:
        assert self.session is not None
        self.apx.set_profile(profile, rp)
        self.notify(one_line(self.session.profile_text(), 200), title="Profile", timeout=3)

    def action_toggle(self) -> None:  # type: ignore[override]  # this screen's own toggle (space)
        r = self._current()
        if r is None or self.session is None:
            return
        p = self.session.profile
        if r.kind == "feature" and r.state == "on (default)" and r.name not in (p.features if p else []):
            self.notify("On by default: D turns the crates' default features off.", timeout=4)
            return
        if r.kind == "env":
            self.action_set_value()
            return
        self._apply(pr.toggle(p, r))

    def action_set_value(self) -> None:
        r = self._current()
        if r is None or self.session is None:
            return
        p = self.session.profile
        if r.kind == "env":
            cur = (p.env.get(r.name, "") if p else "")
            hint = "; ".join(d for d in r.detail if d.startswith("default/use")) or "empty: unset"
            self.app.push_screen(Prompt(f"Value of {r.name} (empty: unset)", cur, hint),
                                 lambda v: None if v is None else self._apply(
                                     pr.set_env(self.session.profile, r.name, v or None)))
        elif r.kind == "arch":
            self._apply(pr.set_arch(p, r.name))
        else:
            self.action_toggle()

    def action_arch(self) -> None:
        if self.session is None:
            return
        p = self.session.profile

        def done(v: str | None) -> None:
            if v is None:
                return
            v = v.strip()
            if v and v.isdigit():
                v = f"sm_{v}"
            if v and arch_number(v) is None:
                self.notify(f"{v!r}: expected sm_XX (sm_80, sm_90, sm_100a)", severity="error", timeout=5)
                return
            self._apply(pr.set_arch(self.session.profile if self.session else None, v or None))

        self.app.push_screen(Prompt("Target architecture (sm_XX; empty: none)", (p.arch or "") if p else ""), done)

    def action_default_features(self) -> None:
        if self.session is not None:
            self._apply(pr.toggle_default_features(self.session.profile))

    def action_clear(self) -> None:
        if self.session is not None:
            self._apply(None)
