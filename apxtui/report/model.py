"""A trace as plain data: the tree, the flat stage list and the path's open questions.

Shared by the JSON and Markdown exporters and the TUI's export; no rendering here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from apxtui.index.build import Index
from apxtui.map import build_map, iter_calls, path_to
from apxtui.report.header import ReportHeader, header, report_header
from apxtui.trace import DEFAULT_BUDGET, Dispatch, Stage, Tracer, Via, cuts, dispatches, walk

if TYPE_CHECKING:
    from apxtui.analysis.path import AnalysedPath
    from apxtui.checkpoint.ontrace import CheckpointFacts


def via_dict(via: Via | None) -> dict[str, Any] | None:
    if via is None:
        return None
    return {
        "kind": via.kind,
        "file": via.file,
        "line": via.line,
        "callee": via.callee,
        "conditions": [c.text for c in via.conditions],
        "loops": list(via.loops),
        "resolution": via.resolution,
        "how": via.how,
        "template_args": list(via.template_args),
        "launch_config": list(via.launch_config),
        "args": list(via.args),
    }


def stage_head(st: Stage) -> dict[str, Any]:
    """One stage's own fields (no children)."""
    return {
        "node": st.node, "kind": st.kind, "name": st.name, "qualname": st.qualname, "lang": st.lang,
        "file": st.file, "line": st.line, "via": via_dict(st.via), "cut": st.cut,
    }


def stage_dict(st: Stage) -> dict[str, Any]:
    """A stage with its subtree, nested."""
    return {**stage_head(st), "children": [item_dict(c) for c in st.children]}


def item_dict(item: Stage | Dispatch) -> dict[str, Any]:
    if isinstance(item, Stage):
        return stage_dict(item)
    return {
        "dispatch": item.key, "construct": item.construct, "subject": item.subject,
        "file": item.file, "line": item.line,
        "arms": [
            {"label": a.label, "kind": a.kind, "selected": a.selected, "implicit": a.implicit,
             "children": [item_dict(c) for c in a.children]}
            for a in item.arms
        ],
    }


def flat_stages(root: Stage) -> list[dict[str, Any]]:
    """The selected path in execution order, one dict per stage (linear in the tree's size)."""
    return [{**stage_head(st), "depth": depth, "arms": list(arms)} for depth, st, arms in walk(root)]


def trace_document(index: Index, root: Stage, select: list[str], depth: int, profile: Any = None,
                   choices: dict[str, int] | None = None, budget: int | None = None,
                   path: AnalysedPath | None = None, cut: TraceCuts | None = None) -> dict[str, Any]:
    """The trace document of ``root`` with the analyses of its path (``path``: already analysed, else
    analysed here; ``cut``: its cuts, already listed, else listed here).  ``choices``: dispatch key → chosen
    arm index (the explorer's ``[``/``]``), kept in it."""
    if path is None:
        from apxtui.analysis.path import analyse  # lazy: start-up

        path = analyse(index, root)
    stages = flat_stages(root)
    disp = list(dispatches(root))
    return add_analyses(
        path,
        {
            **header(index, profile),
            "entry": {
                "node": root.node,
                "qualname": root.qualname,
                "kind": root.kind,
                "file": root.file,
                "line": root.line,
            },
            "select": list(select),
            "choices": dict(choices or {}),
            "depth": depth,
            "tree": stage_dict(root),
            "stages": stages,
            "dispatch_points": [
                {
                    "key": d.key,
                    "construct": d.construct,
                    "subject": d.subject,
                    "file": d.file,
                    "line": d.line,
                    "note": d.note,
                    "arms": [{"label": a.label, "selected": a.selected, "implicit": a.implicit} for a in d.arms],
                }
                for d in disp
            ],
            "unresolved": [s for s in stages if (s["via"] or {}).get("resolution") == "unresolved"],
            "ambiguous": [
                {
                    "key": d.key,
                    "callee": d.subject,
                    "file": d.file,
                    "line": d.line,
                    "candidates": [a.label for a in d.arms],
                }
                for d in disp
                if d.construct == "candidates"
            ],
            "trace_cuts": (cut if cut is not None else trace_cuts(root, budget)).to_dict(),
        },
    )


@dataclass(frozen=True)
class TraceCuts:
    """Subtrees of the call tree not expanded (``recursion``, ``depth``, ``budget``): how many by reason and
    the first few (each stage with its key chain from the entry)."""

    count: int
    budget: int | None
    by_reason: dict[str, int]
    first: tuple[tuple[Stage, tuple[str, ...]], ...]

    @staticmethod
    def site(st: Stage) -> str:
        """Where a cut stage is called (``:0`` for the entry)."""
        return st.via.at if st.via else ":0"

    def to_dict(self) -> dict[str, Any]:
        """The trace document's ``trace_cuts``."""
        return {"count": self.count, "budget": self.budget, "by_reason": self.by_reason,
                "first": [{"reason": st.cut, "qualname": st.qualname, "node": st.node,
                           "site": self.site(st), "key": list(k)} for st, k in self.first]}


def trace_cuts(root: Stage, budget: int | None = None, first: int = 12) -> TraceCuts:
    """The call tree's cuts below ``root`` and the first ``first`` of them."""
    cs = cuts(root)
    by: dict[str, int] = {}
    for st, _k in cs:
        by[st.cut] = by.get(st.cut, 0) + 1
    return TraceCuts(len(cs), budget, by, tuple(cs[:first]))


def add_analyses(path: AnalysedPath, doc: dict[str, Any]) -> dict[str, Any]:
    """Per-stage ``frequency``/``launches``/``dtypes``/``capture`` (``doc["stages"]``, the same order as
    ``path.stages``) and the path-level ``launch_totals``, ``dtype_boundaries``, ``host_transfers``,
    ``capture_regions``; or ``analysis_error``."""
    for d, ps in zip(doc["stages"], path.stages, strict=True):
        if ps.facts is not None:
            d.update(ps.facts.to_dict())
    if path.error:
        doc["analysis_error"] = path.error
        return doc
    doc.update(path.summary.to_dict())
    return doc


def add_checkpoint_facts(doc: dict[str, Any], facts: CheckpointFacts) -> dict[str, Any]:
    """The checkpoint facts of the document's path (:func:`apxtui.checkpoint.ontrace.checkpoint_facts`) in
    the document: per-stage ``weights``/``weights_compute``, ``loop_bounds``, ``launch_totals_bound``,
    ``checkpoint``, ``checkpoint_join`` and, when priced, ``speed_of_light``."""
    stages = doc["stages"]
    for i, w in facts.weights.items():
        stages[i]["weights"] = [r.to_dict() for r in w.rows]
        stages[i]["weights_compute"] = [c.to_dict() for c in w.compute]
    doc["loop_bounds"] = [b.to_dict() for b in facts.bounds.loops]
    doc["launch_totals_bound"] = facts.bounds.totals
    ckpt = facts.checkpoint
    doc["checkpoint"] = str(ckpt.path)
    doc["checkpoint_join"] = {
        "path": str(ckpt.path), "tensors": len(ckpt.tensors), "bytes": ckpt.total_bytes,
        "config": ckpt.config_file, "problems": [str(p) for p in ckpt.problems][:20],
        "join": facts.join_summary, "stages_with_weights": len(facts.weights),
        "weights_note": facts.WEIGHTS_NOTE,
    }
    if facts.sol is not None:
        doc["speed_of_light"] = facts.sol.to_dict()
    return doc


# -- the execution map report ---------------------------------------------------------------------


@dataclass
class MapReport:
    """What the Markdown / text views of a trace show: the header, the execution map and the path
    to one row (``path_key``); ``trace`` is the full trace document (``--detail full``, JSON); ``analysed`` and
    ``checkpoint_facts`` are the typed facts the Markdown and text views read."""

    header: ReportHeader
    map: Any  # apxtui.map.ExecutionMap
    path_key: tuple[str, ...]
    path: list[Any]  # apxtui.map.PathStep
    trace: dict[str, Any] | None = None
    analysed: AnalysedPath | None = None  # the analysed path of ``trace``
    checkpoint_error: str = ""  # why the checkpoint could not be read or joined ("" when it could, or none given)
    checkpoint_facts: CheckpointFacts | None = None  # the checkpoint's facts on ``analysed`` (when joined)
    cuts: TraceCuts | None = None  # the cuts of ``analysed``'s call tree (with ``trace``)


def default_path(m: Any) -> tuple[str, ...]:
    """The key of the first device work of the first table (the first row when none)."""
    for t in m.phases:
        for r in t.rows:
            for c in iter_calls(r.work):
                return c.key
    return next((r.key for r in m.rows()), ())


def map_report(index: Index, entry: str, *, select: list[str] | None = None, choices: dict[str, int] | None = None,
               profile: Any = None, path: tuple[str, ...] | None = None, detail: bool = False, depth: int = 40,
               budget: int | None = None, loop_bind: Any = None, operators: list[str] | None = None,
               checkpoint: str | None = None, built: Any = None) -> MapReport:
    """The execution map of ``entry`` with its report header; ``path``: the key chain of the row the report's
    ``Path:`` follows (the explorer's cursor), default the first device work.  ``detail``: also the full
    trace document (all stages, per-call annotations: slow on a big engine).  ``built``: the map of ``entry``
    under these arguments, already built (the explorer's map job keeps one); else it is built here."""
    m = built if built is not None else build_map(index, entry, select=select, choices=choices, profile=profile,
                                                  loop_bind=loop_bind, operators=operators)
    key = tuple(path) if path else default_path(m)
    g = index.graph
    head = report_header(index, entry, profile, select=select, choices=choices, depth=depth, checkpoint=checkpoint)
    trace, analysed, cut = None, None, None
    if detail:
        kw = {"budget": budget} if budget else {}
        from apxtui.analysis.path import analyse  # lazy: start-up

        root = Tracer(g, select=select, choices=choices, depth=depth, profile=profile, **kw).trace(entry)
        analysed = analyse(index, root)
        cut = trace_cuts(root, budget or DEFAULT_BUDGET)
        trace = trace_document(index, root, list(select or []), depth, profile, choices=choices,
                               budget=budget or DEFAULT_BUDGET, path=analysed, cut=cut)
        trace["execution_map"] = m.to_dict()
    return MapReport(head, m, key, path_to(g, key), trace, analysed, cuts=cut)
