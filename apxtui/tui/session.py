"""The explorer's state without Textual: entry, arm choices, the lazily traced tree, reports.

Whole-path work (analysis, reports, the speed of light) runs in :mod:`apxtui.tui.background`
jobs, which see a copy of the session as it was when they started; ``generation`` tells a
result for an older entry, choice or profile from a current one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apxtui.checkpoint.join import join_index
from apxtui.checkpoint.reader import read_checkpoint
from apxtui.index.build import Index
from apxtui.profile.bind import resolve
from apxtui.profile.model import Profile, Resolved
from apxtui.profile.space import discover
from apxtui.trace import DEFAULT_BUDGET, Dispatch, Stage, Tracer, stage_key
from apxtui.vocab import CALL_EDGE_KINDS

if TYPE_CHECKING:
    from apxtui.analysis.path import AnalysedPath
    from apxtui.checkpoint.join import JoinResult
    from apxtui.checkpoint.model import Checkpoint
    from apxtui.checkpoint.weights import StageWeights
    from apxtui.map.build import MapBuilder
    from apxtui.map.model import ExecutionMap
    from apxtui.profile.space import ConfigSpace
    from apxtui.report.model import MapReport

TRACE_DEPTH = 40
__all__ = ["Session", "TRACE_DEPTH", "stage_key"]


@dataclass
class Session:
    """One checkout opened in the explorer.  ``choices`` maps a dispatch key to the chosen arm index."""

    index: Index
    checkpoint: Path | None = None
    checkpoint_label: str = ""  # how the UI names the checkpoint (the report gives the full path)
    export_dir: str | None = None
    entry: str | None = None
    choices: dict[str, int] = field(default_factory=dict)
    lazy: Tracer | None = None  # the explorer's lazily expanded trace
    root: Stage | None = None
    generation: int = 0  # bumped on every entry, arm or profile change; older results are dropped
    profile: Profile | None = None  # None: no profile, every configuration shown
    resolved: Resolved | None = None  # ``profile`` bound to the checkout's configuration space
    budget: int = DEFAULT_BUDGET  # stages a whole-path trace may create (tui.toml ``[trace] budget``)
    _space: ConfigSpace | None = field(default=None, repr=False)
    _ckpt: Checkpoint | None = field(default=None, repr=False)
    _join: JoinResult | None = field(default=None, repr=False)
    _space_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _ckpt_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _join_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _dispatches: dict[str, list[Dispatch]] = field(default_factory=dict, repr=False)  # built, by key

    _symbols: list[tuple[str, str, str]] | None = field(default=None, repr=False)

    def symbols(self) -> list[tuple[str, str, str]]:
        """``(qualname, node id, "kind · path:line")`` of every named symbol (the palette's list; built once)."""
        if self._symbols is None:
            out = []
            for n, d in self.index.graph.nodes(data=True):
                if d.get("kind") == "file" or not d.get("qualname"):
                    continue
                loc = f"{d.get('file')}:{d.get('line')}" if d.get("file") else d.get("kind", "")
                out.append((d["qualname"], n, f"{d.get('kind', '')} · {loc}"))
            self._symbols = out
        return self._symbols

    # -- the profile ---------------------------------------------------------------------

    def config_space(self) -> ConfigSpace:
        """The checkout's configuration space (discovered once; slow on big checkouts: call from a worker)."""
        with self._space_lock:
            if self._space is None:
                self._space = discover(self.index.root, self.index.facts)
            return self._space

    def bind(self, profile: Profile | None) -> Resolved | None:
        """``profile`` evaluated against the configuration space (worker thread); None/empty → None."""
        if profile is None or (profile.is_empty() and profile.assume_host):
            return None
        return resolve(profile, self.index, self.config_space())

    def set_profile(self, profile: Profile | None, resolved: Resolved | None) -> None:
        """Switch profile (``resolved`` from :meth:`bind`); the caller re-traces."""
        self.profile, self.resolved = (profile, resolved) if resolved is not None else (None, None)
        self.generation += 1

    def profile_text(self) -> str:
        from apxtui.report.header import NO_PROFILE  # lazy: first paint

        return self.resolved.describe() if self.resolved is not None else NO_PROFILE

    def tracer(self, depth: int = TRACE_DEPTH) -> Tracer:
        return Tracer(self.index.graph, choices=dict(self.choices), depth=depth, profile=self.resolved,
                      budget=self.budget)

    # -- the tree ------------------------------------------------------------------------

    def set_entry(self, node: str) -> Stage:
        """Trace from ``node`` (one level expanded); arm choices are kept across entries."""
        self.entry = node
        return self.retrace()

    def retrace(self) -> Stage:
        assert self.entry is not None
        self.generation += 1
        self._dispatches.clear()
        self.lazy = Tracer(self.index.graph, choices=self.choices, depth=TRACE_DEPTH, profile=self.resolved)
        self.root = self.lazy.stage(self.entry)
        self.expand(self.root, (self.entry,))
        return self.root

    def expand(self, stage: Stage, path: tuple[str, ...]) -> list[Stage | Dispatch]:
        """Children of ``stage`` reached along ``path`` (node ids from the entry to ``stage``)."""
        assert self.lazy is not None
        if not stage.cut and not stage.expanded:
            self.lazy.expand(stage, path, len(path) - 1)
            self._register(stage.children)
        return stage.children

    def _register(self, items: list[Stage | Dispatch]) -> None:
        for it in items:
            if isinstance(it, Dispatch):
                self._dispatches.setdefault(it.key, []).append(it)
                for arm in it.arms:
                    self._register(arm.children)

    def has_calls(self, stage: Stage) -> bool:
        if stage.cut or stage.node not in self.index.graph:
            return False
        if stage.expanded:
            return bool(stage.children)
        kinds: Iterable[tuple[str, str, str]] = self.index.graph.out_edges(stage.node, data="kind")
        return any(k in CALL_EDGE_KINDS for _, _, k in kinds)

    def choose(self, disp: Dispatch, step: int) -> list[Dispatch]:
        """Move the choice at ``disp`` by ``step`` arms (wrapping).  A choice applies to every occurrence
        of the dispatch point: the built ones change in place (nothing is re-traced) and are returned."""
        selected = next((a.index for a in disp.arms if a.selected), None)
        return self.step_choice(disp.key, [a.index for a in disp.arms], step, selected)

    def step_choice(self, key: str, arms: list[int], step: int, selected: int | None = None) -> list[Dispatch]:
        """Move the choice at dispatch point ``key`` (arm indices ``arms``, in order) by ``step`` (wrapping);
        with no choice yet, ``]`` takes the first arm and ``[`` the last.  See :meth:`set_choice`."""
        cur = self.choices.get(key)
        if cur not in arms:
            cur = selected if selected in arms else None
        if cur is None:
            pos = 0 if step > 0 else len(arms) - 1
        else:
            pos = (arms.index(cur) + step) % len(arms)
        return self.set_choice(key, arms[pos])

    def set_choice(self, key: str, arm: int) -> list[Dispatch]:
        """Choose arm ``arm`` at dispatch point ``key`` everywhere; returns the built occurrences changed."""
        self.choices[key] = arm
        if self.lazy is not None:
            self.lazy.choices[key] = arm  # occurrences expanded later
        self.generation += 1
        changed = self._dispatches.get(key, [])
        for d in changed:
            if any(a.index == arm for a in d.arms):
                for a in d.arms:
                    a.selected = a.index == arm
        return changed

    # -- whole-path work (run in background jobs) -----------------------------------------

    def after_fork(self) -> Session:
        """In a forked child: fresh locks (a parent thread may have held one at the fork)."""
        self._space_lock, self._ckpt_lock, self._join_lock = threading.Lock(), threading.Lock(), threading.Lock()
        return self

    def set_checkpoint_join(self, ckpt: Checkpoint | None, join: JoinResult | None) -> None:
        """The checkpoint and its weight join, computed by a background job: later jobs inherit them."""
        with self._ckpt_lock:
            self._ckpt = ckpt
        with self._join_lock:
            self._join = join

    def weight_join(self) -> JoinResult | None:
        """The checkpoint joined with the checkout's loader names (once; worker thread); None without a checkpoint.

        Raises ``CheckpointError`` when the checkpoint cannot be read.
        """
        ckpt = self.read_checkpoint()
        if ckpt is None:
            return None
        with self._join_lock:
            if self._join is None:
                self._join = join_index(self.index, ckpt)
            return self._join

    def analysed_path(self) -> tuple[AnalysedPath, dict[int, StageWeights]]:
        """The current path analysed, with the stored weights per stage (for the speed of light)."""
        from apxtui.analysis.path import analyse  # lazy: first paint
        from apxtui.checkpoint.weights import stage_weights  # lazy: first paint

        assert self.entry is not None
        path = analyse(self.index, self.tracer().trace(self.entry))
        j = self.weight_join()
        return path, stage_weights(path.stages, j) if j is not None else {}

    # -- reports -------------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        """The trace document of the current entry and choices (a full, non-lazy trace)."""
        from apxtui.analysis.path import analyse  # lazy: first paint
        from apxtui.report.model import trace_document  # lazy: first paint

        assert self.entry is not None
        root = self.tracer().trace(self.entry)
        path = analyse(self.index, root)
        doc = trace_document(self.index, root, [], TRACE_DEPTH, self.resolved, choices=dict(self.choices), path=path)
        doc["checkpoint"] = str(self.checkpoint) if self.checkpoint else None
        try:
            ckpt = self.read_checkpoint()
        except Exception as e:  # noqa: BLE001 - CheckpointError: the report says so and is still written
            doc["checkpoint_error"] = f"{type(e).__name__}: {e}"
            ckpt = None
        if ckpt is not None:
            from apxtui.checkpoint.ontrace import checkpoint_facts  # lazy: first paint
            from apxtui.report.model import add_checkpoint_facts  # lazy: first paint

            try:
                add_checkpoint_facts(doc, checkpoint_facts(path, self.index, ckpt))
            except Exception as e:  # noqa: BLE001 - the report is still worth writing
                doc["checkpoint_error"] = f"{type(e).__name__}: {e}"
        return doc

    def read_checkpoint(self) -> Checkpoint | None:
        """The checkpoint (read once, headers only), or None."""
        if self.checkpoint is None:
            return None
        with self._ckpt_lock:
            if self._ckpt is None:
                self._ckpt = read_checkpoint(self.checkpoint)
            return self._ckpt

    def map_builder(self) -> MapBuilder:
        """A builder of the execution map under the current choices and profile (a background job;
        :meth:`MapBuilder.set_choices` for new choices), loops bound to the checkpoint's config when one is open."""
        from apxtui.checkpoint.ontrace import loop_binder  # lazy: first paint
        from apxtui.map.build import map_builder  # lazy: first paint

        try:
            ckpt = self.read_checkpoint()
        except Exception:  # noqa: BLE001 - CheckpointError: the loops stay symbolic (screen 4 says why)
            ckpt = None
        return map_builder(self.index, choices=dict(self.choices), profile=self.resolved,
                           loop_bind=loop_binder(ckpt) if ckpt is not None else None)

    def map_report(self, path: tuple[str, ...] | None = None, built: ExecutionMap | None = None) -> MapReport:
        """The execution map of the current entry and choices with its report header (worker thread);
        ``path``: the stage-key chain of the row the report's ``Path:`` follows (the cursor's row); ``built``:
        that map when already built (by :meth:`map_builder`'s builder under the same choices)."""
        from apxtui.checkpoint.ontrace import checkpoint_facts, loop_binder  # lazy: first paint
        from apxtui.report.model import map_report  # lazy: first paint

        assert self.entry is not None
        ckpt, err = None, ""
        try:
            ckpt = self.read_checkpoint()
        except Exception as e:  # noqa: BLE001 - CheckpointError: the report says so and is still written
            err = f"{type(e).__name__}: {e}"
        rep = map_report(self.index, self.entry, choices=dict(self.choices), profile=self.resolved, path=path,
                         detail=ckpt is not None, depth=TRACE_DEPTH, loop_bind=loop_binder(ckpt) if ckpt else None,
                         checkpoint=str(self.checkpoint) if self.checkpoint else None, built=built)
        rep.checkpoint_error = err
        if ckpt is not None and rep.trace is not None:
            try:
                assert rep.analysed is not None  # analysed with the trace (detail)
                rep.checkpoint_facts = checkpoint_facts(rep.analysed, self.index, ckpt)
            except Exception as e:  # noqa: BLE001 - the report is still worth writing
                rep.checkpoint_error = f"{type(e).__name__}: {e}"
        return rep

    def report(self, path: tuple[str, ...] | None = None, built: ExecutionMap | None = None) -> str:
        """The Markdown report (``e`` / ``y``): the execution map (``built``: already built), ``Path:`` to
        ``path`` (default: the first device work), every arm choice in the header."""
        from apxtui.report.markdown import render_map_markdown  # lazy: first paint

        return render_map_markdown(self.map_report(path, built))

    def report_path(self, demo: bool = False) -> Path:
        """Where ``e`` writes: ``--export-dir``, else CHECKOUT/devlocal/<entry>/reports (the demo's under cwd)."""
        from apxtui.report.paths import default_report_path, unique_path  # lazy: first paint

        qual = self.index.graph.nodes[self.entry].get("qualname", self.entry) if self.entry else "entry"
        base = Path.cwd() if demo and not self.export_dir else self.index.root
        return unique_path(default_report_path(base, qual, self.export_dir))

    def write_report(self, demo: bool = False, row: tuple[str, ...] | None = None,
                     built: ExecutionMap | None = None) -> Path:
        """Write :meth:`report` (``row``: the stage-key chain its ``Path:`` follows) and return where."""
        text = self.report(row, built)
        path = self.report_path(demo).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path
