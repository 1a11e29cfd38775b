"""Path-level facts of an analysed path: the host-transfer audit beside the launch totals, dtype boundaries
and capture regions.

:class:`PathFacts` is what :meth:`apxtui.analysis.annotate.Annotations.path` holds and
:attr:`apxtui.analysis.path.AnalysedPath.summary` carries; the Markdown / text renderers and the TUI read its
fields, and ``to_dict`` is used only where the trace document is serialised (``--format json``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apxtui.analysis.capturefacts import CaptureRegion


@dataclass(frozen=True)
class HostTransfer:
    """One host-side runtime call on the path (copy, sync, alloc, free, memset) or a call into host compute.

    ``direction``/``size``/``blocking`` are set for the kinds they apply to (``None`` otherwise);
    ``status``/``reason`` for host compute (named by its module or backend, heuristic)."""

    kind: str
    api: str
    at: str  # the call site, path:line
    via: tuple[str, ...]  # up to three enclosing functions, innermost first
    phase: str
    in_capture: str | None  # the capture region the call is recorded in (None outside capture)
    frequency: str
    arms: tuple[str, ...]
    alternative: bool
    direction: str | None = None
    size: str | None = None
    blocking: bool | None = None
    status: str | None = None
    reason: str | None = None

    @property
    def direction_or_kind(self) -> str:
        return self.direction if self.direction is not None else self.kind

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "api": self.api}
        for k in ("direction", "size", "blocking", "status", "reason"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        out.update({"at": self.at, "via": list(self.via), "phase": self.phase, "in_capture": self.in_capture,
                    "frequency": self.frequency, "arms": list(self.arms), "alternative": self.alternative})
        return out


@dataclass(frozen=True)
class DtypeBoundary:
    """A dtype change on the path: ``source`` → ``to`` at a kernel or library call (``kind``: accumulate,
    compute, round, quantize, or an input that differs from the previous output)."""

    stage: str  # the qualname of the kernel or library call
    at: str  # its call site, path:line
    arms: tuple[str, ...]
    alternative: bool  # under a dispatch point with no selection
    phase: str
    source: str  # the dtype before (``from`` in the trace document)
    to: str
    kind: str
    status: str
    evidence: tuple[str, ...] | None = None  # where the change is established (None: not recorded)

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """Consecutive boundaries with one key are shown once."""
        return self.stage, self.source, self.to, self.kind, self.at

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stage": self.stage, "at": self.at, "arms": list(self.arms),
                               "alternative": self.alternative, "phase": self.phase, "from": self.source,
                               "to": self.to, "kind": self.kind, "status": self.status}
        if self.evidence is not None:
            out["evidence"] = list(self.evidence)
        return out


@dataclass(frozen=True)
class KindCount:
    """How many of one kind (device launches, library calls, …) a call submits: ``min``/``max`` rendered
    (``2 + 13 × [for layer in &self.layers]``), ``exact`` when they agree, ``terms`` the max as
    (count, symbolic loops) pairs."""

    min: str
    max: str
    exact: bool
    terms: tuple[tuple[int, tuple[str, ...]], ...]

    @property
    def range_text(self) -> str:
        """``max`` when exact, else ``min .. max``."""
        return self.max if self.exact else f"{self.min} .. {self.max}"

    def to_dict(self) -> dict[str, Any]:
        return {"min": self.min, "max": self.max, "exact": self.exact,
                "terms": [{"count": n, "per": list(per)} for n, per in self.terms]}


#: phase → kind → count
PhaseCounts = dict[str, dict[str, KindCount]]


def counts_dict(counts: PhaseCounts) -> dict[str, Any]:
    return {ph: {k: c.to_dict() for k, c in kinds.items()} for ph, kinds in counts.items()}


@dataclass(frozen=True)
class ArmCounts:
    """One arm of a dispatch point and the counts below it."""

    label: str
    counts: PhaseCounts


@dataclass(frozen=True)
class DispatchCounts:
    """A dispatch point with no selection whose arms submit different work (the totals are min .. max)."""

    dispatch: str  # the dispatch point's key
    construct: str
    subject: str
    at: str
    arms: tuple[ArmCounts, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"dispatch": self.dispatch, "construct": self.construct, "subject": self.subject, "at": self.at,
                "arms": [{"label": a.label, "counts": counts_dict(a.counts)} for a in self.arms]}


@dataclass(frozen=True)
class LaunchTotals:
    """Static counts per call of the entry, by phase, and the dispatch points that make them ranges."""

    scope: str
    by_phase: PhaseCounts
    alternatives: tuple[DispatchCounts, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "by_phase": counts_dict(self.by_phase),
                "alternatives": [a.to_dict() for a in self.alternatives]}


@dataclass(frozen=True)
class PathFacts:
    """The path-level analyses of one traced path."""

    launch_totals: LaunchTotals | None = None
    dtype_boundaries: tuple[DtypeBoundary, ...] = ()
    host_transfers: tuple[HostTransfer, ...] = ()
    capture_regions: tuple[CaptureRegion, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The trace document's ``launch_totals``, ``dtype_boundaries``, ``host_transfers``, ``capture_regions``."""
        return {"launch_totals": self.launch_totals.to_dict() if self.launch_totals is not None else {},
                "dtype_boundaries": [b.to_dict() for b in self.dtype_boundaries],
                "host_transfers": [t.to_dict() for t in self.host_transfers],
                "capture_regions": [r.to_dict() for r in self.capture_regions]}
