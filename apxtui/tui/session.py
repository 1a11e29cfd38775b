"""The explorer's state without Textual: entry, arm choices, the lazily traced tree, reports."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apxtui.checkpoint.join import join_index
from apxtui.checkpoint.reader import read_checkpoint
from apxtui.index.build import Index
from apxtui.profile.bind import resolve
from apxtui.profile.model import Profile, Resolved
from apxtui.profile.space import discover
from apxtui.trace import Arm, Dispatch, Stage, Tracer, stage_key, walk
from apxtui.vocab import CALL_EDGE_KINDS

TRACE_DEPTH = 40
__all__ = ["Analysis", "Session", "TRACE_DEPTH", "stage_key"]


@dataclass
class Analysis:
    """Per-stage annotations keyed by the chain of :func:`stage_key` from the entry, plus path summaries."""

    generation: int
    per_stage: dict[tuple, dict]
    path: dict
    error: str = ""
    device: list[tuple[str, str]] = field(default_factory=list)  # (kind, qualname | library:api) on the path
    stages: list[tuple[tuple, dict]] = field(default_factory=list)  # (key chain, report-style stage dict), walk order
    weights_note: str = ""  # why per-stage weights are absent (no checkpoint, join failed), "" once added


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
    generation: int = 0  # bumped on every entry/arm change; stale analyses are dropped
    analysis: Analysis | None = None
    profile: Profile | None = None  # None: no profile, every configuration shown
    resolved: Resolved | None = None  # ``profile`` bound to the checkout's configuration space
    _space: Any = field(default=None, repr=False)
    _ckpt: Any = field(default=None, repr=False)
    _join: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _join_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- the profile ---------------------------------------------------------------------

    def config_space(self):
        """The checkout's configuration space (discovered once; slow on big checkouts: call from a worker)."""
        with self._lock:
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

    def profile_text(self) -> str:
        from apxtui.report.model import NO_PROFILE  # lazy: first paint

        return self.resolved.describe() if self.resolved is not None else NO_PROFILE

    def tracer(self, depth: int = TRACE_DEPTH) -> Tracer:
        return Tracer(self.index.graph, choices=dict(self.choices), depth=depth, profile=self.resolved)

    # -- the tree ------------------------------------------------------------------------

    def set_entry(self, node: str) -> Stage:
        """Trace from ``node`` (one level expanded); arm choices are kept across entries."""
        self.entry = node
        return self.retrace()

    def retrace(self) -> Stage:
        assert self.entry is not None
        self.generation += 1
        self.analysis = None
        self.lazy = Tracer(self.index.graph, choices=self.choices, depth=TRACE_DEPTH, profile=self.resolved)
        self.root = self.lazy.stage(self.entry)
        self.lazy.expand(self.root, (self.entry,), 0)
        return self.root

    def expand(self, stage: Stage, path: tuple[str, ...]) -> list[Stage | Dispatch]:
        """Children of ``stage`` reached along ``path`` (node ids from the entry to ``stage``)."""
        assert self.lazy is not None
        if not stage.cut:
            self.lazy.expand(stage, path, len(path) - 1)
        return stage.children

    def has_calls(self, stage: Stage) -> bool:
        if stage.cut or stage.node not in self.index.graph:
            return False
        if stage.expanded:
            return bool(stage.children)
        kinds: Iterable[tuple[str, str, str]] = self.index.graph.out_edges(stage.node, data="kind")
        return any(k in CALL_EDGE_KINDS for _, _, k in kinds)

    def choose(self, disp: Dispatch, step: int) -> int:
        """Move the choice at ``disp`` by ``step`` arms (wrapping); returns the chosen arm index.

        The caller re-traces: a choice applies to every occurrence of the dispatch point.
        """
        arms = [a.index for a in disp.arms]
        cur = self.choices.get(disp.key)
        if cur not in arms:
            cur = next((a.index for a in disp.arms if a.selected), None)
        if cur is None:
            pos = 0 if step > 0 else len(arms) - 1
        else:
            pos = (arms.index(cur) + step) % len(arms)
        self.choices[disp.key] = arms[pos]
        return arms[pos]

    def choose_arm(self, disp: Dispatch, arm: Arm) -> None:
        self.choices[disp.key] = arm.index

    # -- analyses ------------------------------------------------------------------------

    def analyse(self) -> Analysis:
        """Annotate a full trace of the current entry and choices (thread-safe: builds its own tracer)."""
        gen = self.generation
        assert self.entry is not None
        root = self.tracer().trace(self.entry)
        device = [(st.kind, st.node.removeprefix("vendor:") if st.kind == "vendor_api" else st.qualname)
                  for _, st, _ in walk(root) if st.kind in ("kernel", "vendor_api")]
        try:
            from apxtui.analysis.annotate import annotate  # lazy: first paint

            ann = annotate(self.index, root)
        except Exception as e:  # noqa: BLE001 - an analysis failure must not take the explorer down
            return Analysis(gen, {}, {}, f"{type(e).__name__}: {e}", device)
        from apxtui.report.model import stage_head  # lazy: first paint

        per: dict[tuple, dict] = {}
        flat: list[tuple[tuple, dict]] = []
        keys: list[str] = []
        for depth, st, _arms in walk(root):
            del keys[depth:]
            keys.append(stage_key(st))
            a = ann.stage(st)
            per.setdefault(tuple(keys), a)
            flat.append((tuple(keys), {**stage_head(st), "depth": depth, **a}))
        note = "" if self.checkpoint is not None else "no checkpoint given (--checkpoint PATH)"
        return Analysis(gen, per, ann.path, "", device, flat, note or "joining the checkpoint…")

    def add_weights(self, a: Analysis) -> Analysis:
        """``a`` with each stage's stored weights (checkpoint) and the compute dtypes below it (worker thread)."""
        from dataclasses import replace

        from apxtui.checkpoint.weights import stage_weights  # lazy: first paint

        if self.checkpoint is None or a.error:
            return a
        try:
            j = self.weight_join()
            ckpt = self.read_checkpoint()
        except Exception as e:  # noqa: BLE001 - a bad checkpoint must not take the explorer down
            return replace(a, weights_note=f"checkpoint not joined: {type(e).__name__}: {e}")
        if not ckpt.tensors:
            why = "; ".join(str(p) for p in ckpt.errors[:2]) or "EMPTY HEADER: the checkpoint declares no tensor"
            return replace(a, weights_note=f"checkpoint not joined: {why}")
        doc = {"stages": [dict(d) for _, d in a.stages]}
        stage_weights(doc, j)
        per = dict(a.per_stage)
        for (key, _), d in zip(a.stages, doc["stages"], strict=True):
            if "weights" in d and key in per and "weights" not in per[key]:
                per[key] = {**per[key], "weights": d["weights"], "weights_compute": d.get("weights_compute", [])}
        return replace(a, per_stage=per, weights_note="")

    def weight_join(self):
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

    def path_document(self) -> dict:
        """The trace document of the current path with stored weights per stage (for the speed of light)."""
        from apxtui.checkpoint.weights import stage_weights  # lazy: first paint
        from apxtui.report.model import trace_document  # lazy: first paint

        assert self.entry is not None
        doc = trace_document(self.index, self.tracer().trace(self.entry), [], TRACE_DEPTH, self.resolved,
                             choices=dict(self.choices))
        j = self.weight_join()
        if j is not None:
            stage_weights(doc, j)
        return doc

    # -- reports -------------------------------------------------------------------------

    def document(self) -> dict:
        """The trace document of the current entry and choices (a full, non-lazy trace)."""
        from apxtui.report.model import trace_document  # lazy: first paint

        assert self.entry is not None
        root = self.tracer().trace(self.entry)
        doc = trace_document(self.index, root, [], TRACE_DEPTH, self.resolved, choices=dict(self.choices))
        doc["checkpoint"] = str(self.checkpoint) if self.checkpoint else None
        try:
            ckpt = self.read_checkpoint()
        except Exception as e:  # noqa: BLE001 - CheckpointError: the report says so and is still written
            doc["checkpoint_error"] = f"{type(e).__name__}: {e}"
            ckpt = None
        if ckpt is not None:
            from apxtui.report.model import add_checkpoint_facts  # lazy: first paint

            try:
                add_checkpoint_facts(doc, self.index, ckpt)
            except Exception as e:  # noqa: BLE001 - the report is still worth writing
                doc["checkpoint_error"] = f"{type(e).__name__}: {e}"
        return doc

    def read_checkpoint(self):
        """The checkpoint (read once, headers only), or None."""
        if self.checkpoint is None:
            return None
        with self._lock:
            if self._ckpt is None:
                self._ckpt = read_checkpoint(self.checkpoint)
            return self._ckpt

    def map_report(self, path: tuple[str, ...] | None = None):
        """The execution map of the current entry and choices with its report header (worker thread);
        ``path``: the stage-key chain of the row the report's ``Path:`` follows (the cursor's row)."""
        from apxtui.checkpoint.ontrace import loop_binder  # lazy: first paint
        from apxtui.report.model import add_checkpoint_facts, map_report  # lazy: first paint

        assert self.entry is not None
        ckpt, err = None, ""
        try:
            ckpt = self.read_checkpoint()
        except Exception as e:  # noqa: BLE001 - CheckpointError: the report says so and is still written
            err = f"{type(e).__name__}: {e}"
        rep = map_report(self.index, self.entry, choices=dict(self.choices), profile=self.resolved, path=path,
                         detail=ckpt is not None, depth=TRACE_DEPTH, loop_bind=loop_binder(ckpt) if ckpt else None,
                         checkpoint=str(self.checkpoint) if self.checkpoint else None)
        if err:
            rep.trace = {"checkpoint": str(self.checkpoint), "checkpoint_error": err, "trace_cuts": {}}
        elif ckpt is not None and rep.trace is not None:
            rep.trace["checkpoint"] = str(self.checkpoint)
            try:
                add_checkpoint_facts(rep.trace, self.index, ckpt)
            except Exception as e:  # noqa: BLE001 - the report is still worth writing
                rep.trace["checkpoint_error"] = f"{type(e).__name__}: {e}"
        return rep

    def report(self, path: tuple[str, ...] | None = None) -> str:
        """The Markdown report (``e`` / ``y``): the execution map, ``Path:`` to ``path`` (default: the first
        device work), every arm choice in the header."""
        from apxtui.report.markdown import render_map_markdown  # lazy: first paint

        return render_map_markdown(self.map_report(path))

    def report_path(self, demo: bool = False) -> Path:
        """Where ``e`` writes: ``--export-dir``, else CHECKOUT/devlocal/<entry>/reports (the demo's under cwd)."""
        from apxtui.report.paths import default_report_path, unique_path  # lazy: first paint

        qual = self.index.graph.nodes[self.entry].get("qualname", self.entry) if self.entry else "entry"
        base = Path.cwd() if demo and not self.export_dir else self.index.root
        return unique_path(default_report_path(base, qual, self.export_dir))

    def write_report(self, demo: bool = False, row: tuple[str, ...] | None = None) -> Path:
        """Write :meth:`report` (``row``: the stage-key chain its ``Path:`` follows) and return where."""
        path = self.report_path(demo).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.report(row), encoding="utf-8")
        return path
