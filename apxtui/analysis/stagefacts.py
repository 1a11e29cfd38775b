"""What the analyses established about one stage of a trace, as typed records.

:class:`StageFacts` is what :meth:`apxtui.analysis.annotate.Annotations.stage` returns; ``to_dict`` is
its report form (the ``frequency``, ``launches``, ``dtypes`` and ``capture`` fields of a stage in the
trace document and the explorer's per-row annotations).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apxtui.analysis.capturefacts import CapturedBuffer, CapturedConstant, Hazard
from apxtui.analysis.dtypefacts import DtypeFacts
from apxtui.analysis.launches import Count
from apxtui.analysis.loops import LoopCount
from apxtui.vocab import Evidence


@dataclass(frozen=True)
class Frequency:
    """How often one call of the stage runs per call of the entry."""

    label: str  # ``per call of X × per layer`` (and the phase when not eager)
    phase: str  # a :class:`apxtui.vocab.Phase` value
    loops: tuple[LoopCount, ...]  # the loops from the entry down to the call, its own included
    alternative: bool  # under a dispatch point with no selection
    status: Evidence  # heuristic when a loop is symbolic or the stage is one alternative

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "phase": self.phase, "loops": [m.label for m in self.loops],
                "alternative": self.alternative, "status": self.status.value}


@dataclass(frozen=True)
class Launches:
    """Device work of one call of the stage: its own (``own``) and its subtree's, per phase."""

    device: str  # launches of one call, own included, phases summed (``n`` or ``lo .. hi``)
    library: str  # library calls, likewise
    own: str | None  # what the call itself submits (:func:`apxtui.analysis.launches.own_kind`)
    loops: tuple[LoopCount, ...]  # the call site's own loops
    subtree: dict[str, Count]  # phase → counts of the subtree (own call not included)
    scope: str

    @property
    def multiplier(self) -> str:
        """The call site's own loops: ``×28 (layers) × steps`` ("" outside a loop)."""
        return " × ".join(_mult_label(m) for m in self.loops)

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "library": self.library, "self": self.own,
                "multiplier": self.multiplier,
                "multiplier_detail": [m.to_dict() for m in self.loops],
                "subtree": {ph: c.to_dict() for ph, c in self.subtree.items()}, "scope": self.scope}


@dataclass(frozen=True)
class CaptureFacts:
    """The stage's part in CUDA Graph capture: in a region's body or a lifecycle call (``region``/``role``
    None when neither), and a captured launch's constants and buffers, the hazards at its site."""

    region: str | None = None
    role: str | None = None
    constants: tuple[CapturedConstant, ...] | None = None
    buffers: tuple[CapturedBuffer, ...] | None = None
    hazards: tuple[Hazard, ...] | None = None

    @property
    def shown(self) -> bool:
        """Whether the report form has any field (a region, constants, buffers or hazards)."""
        return self.region is not None or any(x is not None for x in (self.constants, self.buffers, self.hazards))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.region is not None:
            out.update(region=self.region, role=self.role)
        for k, v in (("constants", self.constants), ("buffers", self.buffers), ("hazards", self.hazards)):
            if v is not None:
                out[k] = [x.to_dict() for x in v]
        return out


@dataclass(frozen=True)
class StageFacts:
    """Everything the analyses say about one stage."""

    frequency: Frequency
    launches: Launches
    dtypes: DtypeFacts | None = None  # :class:`apxtui.analysis.dtypes.DtypeAnalysis` kernel/library/operator facts
    capture: CaptureFacts | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"frequency": self.frequency.to_dict(), "launches": self.launches.to_dict()}
        if self.dtypes is not None:
            out["dtypes"] = self.dtypes.to_dict()
        if self.capture is not None:
            out["capture"] = self.capture.to_dict()
        return out


def _mult_label(m: LoopCount) -> str:
    return f"×{m.value} ({m.label})" if m.value is not None else f"× {m.label}"
