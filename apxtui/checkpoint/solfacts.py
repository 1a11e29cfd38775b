"""The speed-of-light result as typed records (:func:`apxtui.checkpoint.sol.speed_of_light` returns a
:class:`SpeedOfLight`); each ``to_dict`` is its report form (the trace document's ``speed_of_light``).

A figure that cannot be established has status ``INSUFFICIENT_EVIDENCE`` and names what is missing;
its report form then carries only ``status`` and ``missing``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apxtui.vocab import FigureStatus

IE, OK, PARTIAL = FigureStatus.INSUFFICIENT.value, FigureStatus.OK.value, FigureStatus.PARTIAL.value


@dataclass(frozen=True)
class Figure:
    """A device figure (GB/s, TFLOPS, µs) with its source."""

    value: float
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source}


def _fig(f: Figure | None) -> dict[str, Any] | None:
    return f.to_dict() if f is not None else None


@dataclass
class Work:
    """What one stage of the path demands (mutable while it is collected; see ``missing``)."""

    stage: str
    at: str
    kind: str  # weight (then gemm / embedding / elementwise) or attention
    mult: int
    flops: float = 0.0
    dtype: str | None = None  # compute dtype of the FLOPs
    weight_bytes: float = 0.0
    act_bytes: float = 0.0
    kv_bytes: float = 0.0
    launches: int = 0
    weight: str = ""
    missing: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.act_bytes + self.kv_bytes

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "at": self.at, "kind": self.kind, "weight": self.weight, "mult": self.mult,
                "flops": self.flops, "dtype": self.dtype, "bytes": self.bytes, "launches": self.launches,
                "missing": self.missing}


@dataclass(frozen=True)
class SolInputs:
    batch: int
    seq: int
    context: int
    tokens: int
    context_note: str
    bind: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"batch": self.batch, "seq": self.seq, "context": self.context, "tokens": self.tokens,
                "context_note": self.context_note, "bind": self.bind}


@dataclass(frozen=True)
class SolFigures:
    """The device figures used, each with its source (None: not in the device table / not given)."""

    memory_bandwidth_GBps: Figure | None
    peaks_tflops: dict[str, Figure | None]  # by compute dtype of the counted FLOPs
    launch_floor_us: Figure | None

    def to_dict(self) -> dict[str, Any]:
        return {"memory_bandwidth_GBps": _fig(self.memory_bandwidth_GBps),
                "peaks_tflops": {k: _fig(v) for k, v in self.peaks_tflops.items()},
                "launch_floor_us": _fig(self.launch_floor_us)}


@dataclass(frozen=True)
class Anchor:
    """A weight pattern's reads on the path against the checkpoint's tensors for it."""

    pattern: str
    checkpoint_tensors: int
    reads_on_path: int
    consistent: bool

    def to_dict(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "checkpoint_tensors": self.checkpoint_tensors,
                "reads_on_path": self.reads_on_path, "consistent": self.consistent}


@dataclass(frozen=True)
class Demand:
    """Bytes and FLOPs of one call of the entry over the priced stages."""

    weight_bytes: float
    activation_bytes: float
    kv_bytes: float
    flops_by_dtype: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"weight_bytes": self.weight_bytes, "activation_bytes": self.activation_bytes,
                "kv_bytes": self.kv_bytes, "flops_by_dtype": self.flops_by_dtype}


@dataclass(frozen=True)
class Bound:
    """The conditional bound: max over resources of demand / peak rate (``seconds`` None when ``IE``)."""

    status: str  # a :class:`apxtui.vocab.FigureStatus` value
    missing: tuple[str, ...] = ()
    seconds: float | None = None
    limiter: str | None = None
    terms: dict[str, float] = field(default_factory=dict)  # resource -> seconds
    meaning: str = ""

    def to_dict(self) -> dict[str, Any]:
        if self.status == IE:
            return {"status": self.status, "missing": list(self.missing)}
        return {"status": self.status, "seconds": self.seconds, "limiter": self.limiter, "terms": self.terms,
                "missing": list(self.missing), "meaning": self.meaning}


@dataclass(frozen=True)
class StageTime:
    """One priced stage in the serial estimate: its compute, memory and launch times (seconds)."""

    stage: str
    at: str
    compute_s: float
    memory_s: float
    launch_s: float
    limiter: str
    mult: int

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "at": self.at, "compute_s": self.compute_s, "memory_s": self.memory_s,
                "launch_s": self.launch_s, "limiter": self.limiter, "mult": self.mult}


@dataclass(frozen=True)
class Estimate:
    """The serial estimate: Σ stages max(compute, memory, launches × floor) plus the other launches."""

    status: str  # a :class:`apxtui.vocab.FigureStatus` value (ok or INSUFFICIENT_EVIDENCE)
    missing: tuple[str, ...] = ()
    seconds: float | None = None
    per_stage: tuple[StageTime, ...] = ()
    other_launches: int = 0
    other_launches_s: float = 0.0
    meaning: str = ""

    def to_dict(self) -> dict[str, Any]:
        if self.status == IE:
            return {"status": self.status, "missing": list(self.missing)}
        return {"status": self.status, "seconds": self.seconds, "per_stage": [p.to_dict() for p in self.per_stage],
                "other_launches": self.other_launches, "other_launches_s": self.other_launches_s,
                "meaning": self.meaning}


@dataclass(frozen=True)
class KvCache:
    """KV cache size from the config (``fields``: dimension -> the config field it was read from)."""

    status: str  # a :class:`apxtui.vocab.FigureStatus` value (ok or INSUFFICIENT_EVIDENCE)
    missing: tuple[str, ...] = ()
    bytes_per_token: int = 0
    bytes_at_context: int = 0
    formula: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    context: int = 0
    batch: int = 0

    def to_dict(self) -> dict[str, Any]:
        if self.status == IE:
            return {"status": self.status, "missing": list(self.missing)}
        return {"status": self.status, "bytes_per_token": self.bytes_per_token,
                "bytes_at_context": self.bytes_at_context, "formula": self.formula, "fields": self.fields,
                "context": self.context, "batch": self.batch}


@dataclass(frozen=True)
class SpeedOfLight:
    """Bound and estimate for one call of the traced entry on one device, with what they rest on."""

    device: str
    device_table: str  # the file the device's figures came from
    inputs: SolInputs
    figures: SolFigures
    anchors: tuple[Anchor, ...]
    demand: Demand
    bound: Bound
    estimate: Estimate
    kv_cache: KvCache
    stages: tuple[Work, ...]
    excluded: tuple[str, ...]  # stages not priced, with the reason
    static_analysis: str  # the note that these are static figures

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "device_table": self.device_table, "inputs": self.inputs.to_dict(),
                "figures": self.figures.to_dict(), "anchors": [a.to_dict() for a in self.anchors],
                "demand": self.demand.to_dict(), "bound": self.bound.to_dict(), "estimate": self.estimate.to_dict(),
                "kv_cache": self.kv_cache.to_dict(), "stages": [w.to_dict() for w in self.stages],
                "excluded": list(self.excluded), "static_analysis": self.static_analysis}
