"""What the explorer computes in the background (run as :mod:`apxtui.tui.jobs` generators; no Textual).

Each function here runs in a forked child, reads the session as it was when the job
started, and yields small picklable messages.  The path analysis ends by *serving*: it
keeps its full trace and annotations in the child and answers per-row questions
(:class:`PathServer`), so the parent never unpickles 20,000 stage annotations.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from apxtui.analysis.launches import own_kind
from apxtui.trace import Stage
from apxtui.tui.entries import entry_points
from apxtui.tui.jobs import Serve, in_child
from apxtui.tui.positions import Pos, walk_positions
from apxtui.tui.session import Session
from apxtui.vocab import CALL_EDGE_KINDS

if TYPE_CHECKING:
    from apxtui.analysis.path import AnalysedPath, PathStage
    from apxtui.analysis.pathfacts import PathFacts
    from apxtui.analysis.stagefacts import StageFacts
    from apxtui.checkpoint.weights import StageWeights
    from apxtui.map.model import ExecutionMap


@dataclass
class Progress:
    """A phase of a job, for the status bar (``done``/``total`` when countable)."""

    text: str
    done: int = 0
    total: int = 0


@dataclass
class PathSummary:
    """What every screen needs of the analysed path (small): totals, device work, capture rows."""

    stages: int
    device: list[tuple[str, str]]  # (stage kind, qualname | library:api) of device work, execution order
    capture_rows: list[tuple[str, str, str, str]]
    capture_regions: int
    host_transfers: int
    cuts: dict[str, int] = field(default_factory=dict)  # cut reason → stages not expanded
    weights_note: str = ""


@dataclass(frozen=True)
class StageRecord:
    """One stage's analysis as the path server sends it (picklable records): what the analyses say about
    it and the stored weights its call reads (None: no checkpoint, or no argument names a weight)."""

    facts: StageFacts
    weights: StageWeights | None = None


def _own(session: Session) -> Session:
    """The session as this job may use it (in a forked child: with fresh locks)."""
    return session.after_fork() if in_child() else session


def capture_rows(path: PathFacts) -> list[tuple[str, str, str, str]]:
    """Rows (item, what, at, note) of the capture regions and host transfers of an analysed path."""
    rows: list[tuple[str, str, str, str]] = []
    for i, r in enumerate(path.capture_regions, 1):
        rows.append((f"region {i}", r.function, r.begin.at if r.begin else "",
                     f"{r.status}; ends {r.end.at if r.end else '?'}"
                     + "".join(f"; failure-path end {e.at} ({e.condition or ''})" for e in r.failure_ends)))
        for c in r.body_calls:
            rows.append(("  body", c.call, c.at, c.target))
        for c in r.instantiate:
            rows.append(("  instantiate", c.call, c.at, " → ".join(c.through or ())))
        for c in r.replay_after_capture:
            rows.append(("  replay", c.call, c.at, "after capture, same function"))
        for m in r.replay:
            rows.append(("  replay", m.method, m.at, m.how))
        launches = r.launches
        for k, la in enumerate(launches):
            flagged = sum(1 for c in la.constants if c.flagged)
            group = la.alternative_group
            if group is not None and group != k:
                continue  # shown with the first of its alternatives
            if group is not None:  # if / else if / else: one launch, its alternatives named
                alts = [x for x in launches if x.alternative_group == group]
                rows.append(("  launch", " | ".join(x.kernel for x in alts), la.at,
                             f"one of {len(alts)} alternatives ({'; '.join(x.arms[-1] for x in alts)}); "
                             f"{len(la.constants)} scalar args baked in, {flagged} flagged"))
                continue
            rows.append(("  launch", la.kernel, la.at, f"{len(la.constants)} scalar args baked in, {flagged} flagged"))
        for lib in r.library_calls:
            rows.append(("  library", lib.api, lib.at, ""))
        for h in r.hazards:
            guard = f"conditional under {' | '.join(h.guards)}; " if h.conditional else ""
            rows.append(("  HAZARD", f"{h.api} {h.direction or ''}".strip(), h.at,
                         f"{guard}{h.paths} path(s); {h.detail}"))
    for t in path.host_transfers:
        where = "in capture" if t.in_capture else t.phase
        rows.append(("transfer", f"{t.api} {t.direction_or_kind}".strip(), t.at, f"{where}; {t.frequency}"))
    return rows


class PathServer:
    """The analysed path, kept in the child: per-row annotations and next/previous device work."""

    def __init__(self, order: list[Pos], per_stage: dict[Pos, StageRecord], device_at: list[int]) -> None:
        self.order = order  # every stage, dispatch and arm on the chosen path, execution order
        self.index = {p: i for i, p in enumerate(order)}
        self.per_stage = per_stage
        self.device_at = device_at  # indices into ``order`` of device work, ascending

    def __call__(self, request: tuple[Any, ...]) -> Any:
        what = request[0]
        if what == "stages":  # ("stages", [pos, …]): the annotations of several rows at once
            return {p: self.per_stage.get(p) for p in request[1]}
        if what == "device":  # ("device", pos, step): the next (step 1) or previous (-1) device row, or None
            i = self.index.get(request[1])
            if i is None:
                return None
            if request[2] > 0:
                j = bisect_right(self.device_at, i)
                return self.order[self.device_at[j]] if j < len(self.device_at) else ()
            j = bisect_left(self.device_at, i) - 1
            return self.order[self.device_at[j]] if j >= 0 else ()
        raise ValueError(f"unknown request {what!r}")


def analyse_path(session: Session) -> Iterator[Any]:
    """Trace the current entry whole under the session's choices and profile, annotate it, then serve."""
    session = _own(session)
    from apxtui.analysis.annotate import annotate  # lazy: first paint (runs in a background job)
    from apxtui.analysis.path import PathStage  # lazy: first paint (runs in a background job)

    assert session.entry is not None
    yield Progress("analysis: tracing the path…")
    root = session.tracer().trace(session.entry)
    order: list[Pos] = []
    stages: list[tuple[Pos, Stage, int]] = []
    depth_of: dict[Pos, int] = {}
    for pos, item, _arms in walk_positions(root):
        order.append(pos)
        if isinstance(item, Stage):
            depth = len([p for p in pos if p.startswith("s:")]) - 1
            depth_of[pos] = depth
            stages.append((pos, item, len(order) - 1))
    g = session.index.graph
    device_at = [i for _p, st, i in stages if own_kind(st, g) in ("device", "library")]
    device = [(st.kind, st.node.removeprefix("vendor:") if st.kind == "vendor_api" else st.qualname)
              for _p, st, _i in stages if st.kind in ("kernel", "vendor_api")]
    cuts: dict[str, int] = {}
    for _p, st, _i in stages:
        if st.cut:
            cuts[st.cut] = cuts.get(st.cut, 0) + 1
    yield Progress(f"analysis: annotating {len(stages):,} stages…", 0, len(stages))
    ann = annotate(session.index, root)
    path = [PathStage(depth_of[pos], st, ann.stage(st)) for pos, st, _i in stages]
    per_stage = {pos: StageRecord(ps.facts) for (pos, _st, _i), ps in zip(stages, path, strict=True) if ps.facts}
    note = ""
    if session.checkpoint is None:
        note = "no checkpoint given (--checkpoint PATH)"
    else:
        yield Progress("analysis: joining the checkpoint…")
        note = _add_weights(session, stages, path, per_stage)
    yield PathSummary(len(stages), device, capture_rows(ann.path), len(ann.path.capture_regions),
                      len(ann.path.host_transfers), cuts, note)
    yield Serve(PathServer(order, per_stage, device_at))


def _add_weights(session: Session, stages: list[tuple[Pos, Stage, int]], path: list[PathStage],
                 per_stage: dict[Pos, StageRecord]) -> str:
    """Each stage's stored weights (checkpoint) and the compute dtypes below it (``path``: the stages
    analysed, in the order of ``stages``); returns why not, or ""."""
    from apxtui.checkpoint.weights import stage_weights  # lazy: first paint (runs in a background job)

    try:
        j = session.weight_join()
        ckpt = session.read_checkpoint()
    except Exception as e:  # noqa: BLE001 - a bad checkpoint must not take the analysis down
        return f"checkpoint not joined: {type(e).__name__}: {e}"
    assert ckpt is not None and j is not None  # called only when the session has a checkpoint
    if not ckpt.tensors:
        return "checkpoint not joined: " + ("; ".join(str(p) for p in ckpt.errors[:2])
                                            or "EMPTY HEADER: the checkpoint declares no tensor")
    for i, w in stage_weights(path, j).items():
        pos = stages[i][0]
        per_stage[pos] = replace(per_stage[pos], weights=w)
    return ""


@dataclass(frozen=True)
class ReportRequest:
    """Asks the map job for the Markdown report of its path under ``choices`` (``Path:`` to ``row``):
    written to its file (``write``: the reply is the absolute path; ``demo`` picks the directory) or the text."""

    choices: dict[str, int]
    row: tuple[str, ...] | None = None
    write: bool = True
    demo: bool = False


def map_server(session: Session) -> Iterator[Any]:
    """The execution map of the current path, then served again for new arm choices (``{key: arm}``): the
    builder keeps what a choice does not reach, so an arm change re-traces only what it changes.  A
    :class:`ReportRequest` is answered from the same builder (the export does not build the map again)."""
    from apxtui.map.build import map_of  # lazy: first paint (runs in a background job)

    session = _own(session)
    assert session.entry is not None
    entry = session.entry
    yield Progress("map: building the execution map…")
    b = session.map_builder()
    last = (dict(session.choices), map_of(b, entry))  # the builder's current choices and their map
    yield last[1]

    def mapped(choices: dict[str, int]) -> ExecutionMap:
        nonlocal last
        if choices != last[0]:
            b.set_choices(choices)
            last = (dict(choices), map_of(b, entry))
        return last[1]

    def serve(request: dict[str, int] | ReportRequest) -> Any:
        if not isinstance(request, ReportRequest):
            return mapped(request)
        m = mapped(request.choices)
        session.choices = dict(request.choices)  # this child's copy: the report header names them
        if request.write:
            return session.write_report(request.demo, request.row, m)
        return session.report(request.row, m)

    yield Serve(serve)


def sol_server(session: Session) -> Iterator[Any]:
    """The current path analysed with its stored weights, then priced per request (a ``SolRequest``)."""
    session = _own(session)
    yield Progress("speed of light: tracing and analysing the path…")
    path, weights = session.analysed_path()
    ckpt = session.read_checkpoint()
    yield Serve(lambda req: price(path, weights, ckpt, req))


def price(path: AnalysedPath, weights: dict[int, StageWeights], ckpt: Any, req: Any) -> list[tuple[str, list[Any]]]:
    """The speed-of-light sections of ``path`` (its stored ``weights``) for the panel's inputs ``req``."""
    from apxtui.checkpoint.sol import find_device, load_devices, speed_of_light  # lazy: first paint
    from apxtui.checkpoint.view import sol_sections  # lazy: first paint
    from apxtui.checkpoint.weights import bind_loops  # lazy: first paint

    sol = speed_of_light(path, weights, bind_loops(path, ckpt, req.bind), ckpt,
                         find_device(req.device or "", load_devices()), req.batch or 0, req.seq or 0,
                         req.context, req.launch_floor_us, req.bind)
    return sol_sections(sol)


def kernel_rows(session: Session) -> Iterator[Any]:
    """Screen 2's rows: every kernel, its launchers, the entry points reaching it (every arm counted)."""
    g = session.index.graph
    succ: dict[str, list[str]] = {}
    edges: Iterable[tuple[str, str, str]] = g.edges(data="kind")
    for u, v, k in edges:
        if k in CALL_EDGE_KINDS:
            succ.setdefault(u, []).append(v)
    kernel_ids = {n for n, d in g.nodes(data=True) if d.get("kind") == "kernel"}
    reach: dict[str, list[str]] = {}
    for e in entry_points(g):
        seen = {e.node}
        todo = deque([e.node])
        while todo:
            for v in succ.get(todo.popleft(), ()):
                if v not in seen:
                    seen.add(v)
                    todo.append(v)
                    if v in kernel_ids:
                        reach.setdefault(v, []).append(e.qualname)
    rows = []
    for n in sorted(kernel_ids, key=lambda n: g.nodes[n].get("qualname", "")):
        d = g.nodes[n]
        into: Iterable[tuple[str, str, str]] = g.in_edges(n, data="kind")
        launchers = sorted({g.nodes[u].get("qualname", u) for u, _, k in into if k == "launch"})
        r = reach.get(n, [])
        status = "reached" if r else ("launched, no entry reaches it" if launchers else "never launched")
        rows.append((n, d.get("qualname", ""), f"{d.get('file')}:{d.get('line')}", launchers, r, status))
    yield rows


def checkpoint_join(session: Session) -> Iterator[Any]:
    """The checkpoint read and joined with the loader's names (screen 4, stored weights)."""
    session = _own(session)
    yield Progress("checkpoint: joining the loader's names…")
    yield session.read_checkpoint(), session.weight_join()


