"""Screens 2 and 3: kernels and capture (screen 4 is in checkpoint.py, 5 in profile.py).

Analyses that other issues deliver (dtypes, launches, capture, profiles, the weight
join) are shown as "not analysed yet"; what the graph already knows is shown as raw evidence.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import ClassVar

import networkx as nx
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from apxtui.tui.entries import entry_points
from apxtui.tui.session import Session
from apxtui.tui.text import one_line
from apxtui.vocab import CALL_EDGE_KINDS

MAX_ROWS = 5000


def lit(s: object, limit: int = 100) -> Text:
    """A literal table cell (DataTable would read a plain str as markup)."""
    return Text(one_line(str(s), limit))


class TableNav:
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "table('down')", "Down", show=False, id="table.down", tooltip="Next row"),
        Binding("k", "table('up')", "Up", show=False, id="table.up", tooltip="Previous row"),
        Binding("g", "table('top')", "Top", show=False, id="table.top", tooltip="First row"),
        Binding("G", "table('bottom')", "Bottom", show=False, id="table.bottom", tooltip="Last row"),
    ]

    def action_table(self, where: str) -> None:
        table = self.query_one(DataTable)  # type: ignore[attr-defined]
        {"down": table.action_cursor_down, "up": table.action_cursor_up,
         "top": table.action_scroll_top, "bottom": table.action_scroll_bottom}[where]()


class KernelsScreen(TableNav, Screen):
    """Every kernel: where it is, who launches it, which entry points reach it, the unreached."""

    AUTO_FOCUS = "DataTable"
    BINDINGS = [*TableNav.BINDINGS,
                Binding("slash", "filter", "Filter", key_display="/", id="kernels.filter", tooltip="Filter kernels")]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.session: Session | None = None
        self.rows: list[tuple] = []
        self.reach: dict[str, list[str]] = {}

    def compose(self) -> ComposeResult:
        yield Static("2 · Kernels: every __global__ kernel, who launches it, which entry points reach it",
                     classes="screen-title", markup=False)
        yield Input(placeholder="/ filter kernels by name or file", id="table-filter")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Static("indexing…", id="kernel-detail", classes="panel", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("kernel", "defined", "launched by", "entries reaching", "status")
        self.app.register_listener(self)  # type: ignore[attr-defined]

    def session_ready(self, session: Session) -> None:
        self.session = session
        self._compute()

    @work(thread=True, exclusive=True, group="kernels", exit_on_error=False)
    def _compute(self) -> None:
        assert self.session is not None
        g = self.session.index.graph
        calls: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        calls.add_nodes_from(g.nodes)
        edge_kinds: Iterable[tuple[str, str, str]] = g.edges(data="kind")
        calls.add_edges_from((u, v) for u, v, k in edge_kinds if k in CALL_EDGE_KINDS)
        entries = entry_points(g)
        reach: dict[str, list[str]] = {}
        kernels = [(n, d) for n, d in g.nodes(data=True) if d.get("kind") == "kernel"]
        kernel_ids = {n for n, _ in kernels}
        for e in entries:  # BFS from each entry, recording the kernels it reaches
            seen = {e.node}
            todo = deque([e.node])
            while todo:
                u = todo.popleft()
                for v in calls.successors(u):
                    if v not in seen:
                        seen.add(v)
                        todo.append(v)
                        if v in kernel_ids:
                            reach.setdefault(v, []).append(e.qualname)
        rows = []
        for n, d in sorted(kernels, key=lambda x: x[1].get("qualname", "")):
            into: Iterable[tuple[str, str, str]] = g.in_edges(n, data="kind")
            launchers = sorted({g.nodes[u].get("qualname", u) for u, _, k in into if k == "launch"})
            r = reach.get(n, [])
            status = "reached" if r else ("launched, no entry reaches it" if launchers else "never launched")
            rows.append((n, d.get("qualname", ""), f"{d.get('file')}:{d.get('line')}", launchers, r, status))
        self.app.call_from_thread(self._show, rows, reach)

    def _show(self, rows: list[tuple], reach: dict[str, list[str]]) -> None:
        self.rows, self.reach = rows, reach
        self._fill("")
        unreached = sum(1 for r in rows if not r[4])
        self.query_one("#kernel-detail", Static).update(
            f"{len(rows)} kernels, {unreached} not reached from any entry point (every arm counted). "
            "Select a row for its launchers and entries.")

    def _fill(self, text: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        words = text.lower().split()
        shown = [r for r in self.rows if all(w in (r[1] + " " + r[2]).lower() for w in words)]
        table.add_rows([
            (lit(q, 50), lit(loc, 60), lit(", ".join(ls) if len(ls) <= 2 else f"{ls[0]} +{len(ls) - 1}", 50),
             lit(len(r)), lit(status))
            for _, q, loc, ls, r, status in shown[:MAX_ROWS]
        ])
        table.border_title = f"Kernels {len(shown)} of {len(self.rows)}"

    @on(Input.Changed, "#table-filter")
    def _filtered(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(DataTable.RowHighlighted)
    def _row(self, event: DataTable.RowHighlighted) -> None:
        table = self.query_one(DataTable)
        words = self.query_one("#table-filter", Input).value.lower().split()
        shown = [r for r in self.rows if all(w in (r[1] + " " + r[2]).lower() for w in words)]
        if event.cursor_row >= len(shown):
            return
        _, q, loc, ls, r, status = shown[event.cursor_row]
        t = Text()
        t.append(one_line(q, 80), style="bold")
        t.append(f"  {one_line(loc, 80)}  ({status})\n")
        t.append("launched by: ", style="dim")
        t.append((", ".join(one_line(x, 60) for x in ls[:8]) or "nothing in the checkout") + "\n")
        t.append("reached from: ", style="dim")
        t.append(
            ", ".join(one_line(x, 60) for x in r[:12]) + (f" +{len(r) - 12}" if len(r) > 12 else "") or "no entry point"
        )
        self.query_one("#kernel-detail", Static).update(t)
        del table

    def action_filter(self) -> None:
        self.query_one("#table-filter", Input).focus()


def capture_rows(path: dict) -> list[tuple[str, str, str, str]]:
    """Rows (item, what, at, note) of the capture regions and host transfers of an analysed path."""
    rows: list[tuple[str, str, str, str]] = []
    for i, r in enumerate(path.get("capture_regions") or [], 1):
        begin, end = r.get("begin") or {}, r.get("end") or {}
        errs = [e for e in r.get("ends") or [] if e.get("path") == "error"]
        rows.append((f"region {i}", r.get("function", ""), begin.get("at", ""),
                     f"{r.get('status', '')}; ends {end.get('at', '?')}"
                     + "".join(f"; failure-path end {e['at']} ({e.get('condition', '')})" for e in errs)))
        for c in r.get("body_calls") or []:
            rows.append(("  body", c.get("call", ""), c.get("at", ""), c.get("target", "")))
        for c in r.get("instantiate") or []:
            rows.append(("  instantiate", c.get("call", ""), c.get("at", ""), " → ".join(c.get("through", []))))
        for c in r.get("replay_after_capture") or []:
            rows.append(("  replay", c.get("call", ""), c.get("at", ""), "after capture, same function"))
        for m in r.get("replay") or []:
            rows.append(("  replay", m.get("method", ""), m.get("at", ""), m.get("how", "")))
        launches = r.get("launches") or []
        for k, la in enumerate(launches):
            consts = la.get("constants") or []
            flagged = sum(1 for c in consts if c.get("flagged"))
            group = la.get("alternative_group")
            if group is not None and group != k:
                continue  # shown with the first of its alternatives
            if group is not None:  # if / else if / else: one launch, its alternatives named
                alts = [x for x in launches if x.get("alternative_group") == group]
                rows.append(("  launch", " | ".join(x.get("kernel", "") for x in alts), la.get("at", ""),
                             f"one of {len(alts)} alternatives ({'; '.join(x['arms'][-1] for x in alts)}); "
                             f"{len(consts)} scalar args baked in, {flagged} flagged"))
                continue
            rows.append(("  launch", la.get("kernel", ""), la.get("at", ""),
                         f"{len(consts)} scalar args baked in, {flagged} flagged"))
        for lib in r.get("library_calls") or []:
            rows.append(("  library", str(lib.get("api") or lib.get("call") or lib), lib.get("at", ""), ""))
        for h in r.get("hazards") or []:
            guard = f"conditional under {' | '.join(h.get('guards', []))}; " if h.get("conditional") else ""
            rows.append(("  HAZARD", f"{h.get('api', '')} {h.get('direction', '')}".strip(), h.get("at", ""),
                         f"{guard}{h.get('paths', 1)} path(s); {h.get('detail', '')}"))
    for t in path.get("host_transfers") or []:
        where = "in capture" if t.get("in_capture") else t.get("phase", "")
        rows.append(("transfer", f"{t.get('api', '')} {t.get('direction', t.get('kind', ''))}".strip(), t.get("at", ""),
                     f"{where}; {t.get('frequency', '')}"))
    return rows


class CaptureScreen(TableNav, Screen):
    """Capture regions, bodies, constants and hazards of the explorer's current path (from the analysis)."""

    AUTO_FOCUS = "DataTable"
    BINDINGS = list(TableNav.BINDINGS)

    def compose(self) -> ComposeResult:
        yield Static(
            "3 · Capture: CUDA-graph regions, bodies, constants, hazards", classes="screen-title", markup=False
        )
        yield Static("indexing…", id="capture-note", classes="note", markup=False)
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("item", "what", "at", "note")
        self.app.register_listener(self)  # type: ignore[attr-defined]

    def session_ready(self, session: Session) -> None:
        self.refresh_rows()

    def on_screen_resume(self) -> None:
        self.refresh_rows()

    def refresh_rows(self) -> None:
        session: Session | None = getattr(self.app, "session", None)
        if session is None:
            return
        note = self.query_one("#capture-note", Static)
        table = self.query_one(DataTable)
        table.clear()
        a = session.analysis
        entry = session.index.graph.nodes[session.entry].get("qualname", "") if session.entry else ""
        if a is None or a.error:
            why = f"analysis failed: {a.error}" if a is not None else "analysing the current path…"
            note.update(f"Path from {entry}: {why} (static analysis, not runtime validation)")
            return
        rows = capture_rows(a.path)
        regions = len(a.path.get("capture_regions") or [])
        note.update(
            f"Path from {entry} with the explorer's arm choices: {regions} capture region(s), "
            f"{len(a.path.get('host_transfers') or [])} host transfer(s). Static analysis, not runtime validation."
        )
        table.add_rows([(lit(a1, 12), lit(b, 70), lit(c, 60), lit(d, 120)) for a1, b, c, d in rows[:MAX_ROWS]])
        table.border_title = f"{len(rows)} rows"
