"""Path-level facts of an analysed path: the host-transfer audit beside the launch totals, dtype boundaries
and capture regions.

:class:`PathFacts` is what :meth:`apxtui.analysis.annotate.Annotations.path` holds and
:attr:`apxtui.analysis.path.AnalysedPath.summary` carries; the Markdown / text renderers and the TUI read its
fields, and ``to_dict`` is used only where the trace document is serialised (``--format json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
class PathFacts:
    """The path-level analyses of one traced path."""

    launch_totals: dict[str, Any] = field(default_factory=dict)  # scope, by_phase, alternatives
    dtype_boundaries: list[dict[str, Any]] = field(default_factory=list)
    host_transfers: tuple[HostTransfer, ...] = ()
    capture_regions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The trace document's ``launch_totals``, ``dtype_boundaries``, ``host_transfers``, ``capture_regions``."""
        return {"launch_totals": self.launch_totals, "dtype_boundaries": self.dtype_boundaries,
                "host_transfers": [t.to_dict() for t in self.host_transfers],
                "capture_regions": self.capture_regions}
