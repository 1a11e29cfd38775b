"""An analysed path: every stage of a trace's selected path in execution order, with its facts.

:func:`analyse` runs :func:`apxtui.analysis.annotate.annotate` over a traced tree and makes each
stage's :class:`~apxtui.analysis.stagefacts.StageFacts`.  The checkpoint facts (stored weights per
stage, loop bounds, the speed of light) and the report's trace document read this record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apxtui.analysis.annotate import annotate
from apxtui.analysis.pathfacts import PathFacts
from apxtui.analysis.stagefacts import StageFacts
from apxtui.trace import Stage, walk


@dataclass(frozen=True)
class PathStage:
    """One stage of the path: its depth below the entry, the stage, and what the analyses say (None when
    the analyses failed before reaching it)."""

    depth: int
    stage: Stage
    facts: StageFacts | None = None


@dataclass
class AnalysedPath:
    """The selected path of a traced tree with every stage's facts and the path-level analyses
    (``launch_totals``, ``dtype_boundaries``, ``host_transfers``, ``capture_regions``)."""

    root: Stage
    stages: list[PathStage]
    summary: PathFacts = field(default_factory=PathFacts)
    error: str = ""  # why the analyses failed ("" when they did not)


def analyse(index: Any, root: Stage) -> AnalysedPath:
    """The analysed path below ``root``; an analysis failure is recorded (``error``), never raised: the
    stages analysed before it keep their facts."""
    order = [(depth, st) for depth, st, _arms in walk(root)]
    facts: list[StageFacts] = []
    try:
        ann = annotate(index, root)
        for _depth, st in order:
            facts.append(ann.stage(st))  # each stage's facts are made here, on request
    except Exception as e:  # noqa: BLE001 - an analysis failure must not lose the trace
        stages = [PathStage(d, st, facts[i] if i < len(facts) else None) for i, (d, st) in enumerate(order)]
        return AnalysedPath(root, stages, error=f"{type(e).__name__}: {e}")
    return AnalysedPath(root, [PathStage(d, st, f) for (d, st), f in zip(order, facts, strict=True)], ann.path)
