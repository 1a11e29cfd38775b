"""The dtype facts of one stage as typed records (what :class:`apxtui.analysis.dtypes.DtypeAnalysis`
returns for a kernel launch, a library call or a Rust ``DType`` dispatch); each ``to_dict`` is the
report form (a stage's ``dtypes`` in the trace document and the explorer's annotations).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from apxtui.analysis.evidence import Fact
from apxtui.vocab import DtypeKind, Evidence

T = TypeVar("T")


@dataclass(frozen=True)
class AccumulationSite:
    """A floating-point accumulation (``acc += …``, ``x = f(x)``) in the kernel or a helper it calls."""

    var: str
    type: str | None  # declared type, template parameters substituted
    dtype: str | None
    op: str
    value: str  # the accumulated expression
    function: str
    where: str  # path:line
    reduction: bool  # a warp/block reduction or atomic in the expression

    def to_dict(self) -> dict[str, Any]:
        return {"var": self.var, "type": self.type, "dtype": self.dtype, "op": self.op, "value": self.value,
                "function": self.function, "where": self.where, "reduction": self.reduction}


@dataclass(frozen=True)
class DtypeFact(Fact[T]):
    """A :class:`~apxtui.analysis.evidence.Fact` about dtypes, with what some rules add: the
    ``alternatives`` a condition chooses between, the accumulation ``sites``, the dispatch ``arms``."""

    alternatives: dict[str, Any] | None = None
    sites: tuple[AccumulationSite, ...] | None = None
    arms: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.sites is not None:
            out["sites"] = [s.to_dict() for s in self.sites]
        if self.arms is not None:
            out["arms"] = list(self.arms)
        if self.alternatives is not None:
            out["alternatives"] = self.alternatives
        return out


def dfact(value: T, status: str, reason: str, evidence: list[str] | None = None, *,
          alternatives: dict[str, Any] | None = None, sites: tuple[AccumulationSite, ...] | None = None,
          arms: tuple[str, ...] | None = None) -> DtypeFact[T]:
    """A dtype fact (``status`` an :class:`~apxtui.vocab.Evidence` value; empty evidence locations dropped)."""
    return DtypeFact(value, Evidence(status), reason, tuple(e for e in (evidence or []) if e), alternatives, sites,
                     arms)


@dataclass(frozen=True)
class PointerParam:
    """A kernel's pointer parameter: its type after template substitution, dtype and role."""

    name: str
    type: str
    dtype: str | None
    role: str  # input (const pointer, read) or output (written)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "dtype": self.dtype, "role": self.role}


@dataclass(frozen=True)
class Conversion:
    """A dtype conversion in the kernel or a helper (an intrinsic, a ``static_cast`` or an implicit store)."""

    source: str | None  # ``from`` in the report form
    to: str
    kind: str  # round (narrows) or widen
    call: str
    function: str
    where: str
    how: str
    status: str  # an :class:`apxtui.vocab.Evidence` value

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.to, "kind": self.kind, "call": self.call, "function": self.function,
                "where": self.where, "how": self.how, "status": self.status}


@dataclass(frozen=True)
class KernelDtypes:
    """Storage, input, accumulator and output dtypes of a kernel launch, and its conversions."""

    kind: ClassVar[str] = DtypeKind.KERNEL.value
    template_bindings: dict[str, str]
    params: tuple[PointerParam, ...]
    storage: DtypeFact[list[str]]
    input: DtypeFact[list[str]]
    output: DtypeFact[list[str]]
    accumulator: DtypeFact[list[str]]
    conversions: tuple[Conversion, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "template_bindings": self.template_bindings,
                "params": [p.to_dict() for p in self.params], "storage": self.storage.to_dict(),
                "input": self.input.to_dict(), "output": self.output.to_dict(),
                "accumulator": self.accumulator.to_dict(), "conversions": [c.to_dict() for c in self.conversions]}


@dataclass(frozen=True)
class LibraryDtypes:
    """Operand (A/B/C/D, or a CUTLASS ``element``), compute and scale dtypes of a library call."""

    kind: ClassVar[str] = DtypeKind.LIBRARY.value
    api: str
    operands: DtypeFact[dict[str, str | None]]
    compute: DtypeFact[str | None] | None = None
    scale: DtypeFact[str] | None = None
    algorithm: DtypeFact[str | None] | None = None  # cuBLAS GEMM algorithm argument
    operator_type: str | None = None  # a CUTLASS operator's type

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "api": self.api}
        if self.operator_type is not None:
            out["operator_type"] = self.operator_type
        out["operands"] = self.operands.to_dict()
        for k, f in (("compute", self.compute), ("scale", self.scale), ("algorithm", self.algorithm)):
            if f is not None:
                out[k] = f.to_dict()
        return out


@dataclass(frozen=True)
class OperatorDtypes:
    """The ``DType`` arm of a Rust operator's ``match x.dtype()`` dispatch (chosen, or the alternatives)."""

    kind: ClassVar[str] = DtypeKind.OPERATOR.value
    dtype_arm: DtypeFact[list[str] | None]
    at: str  # path:line of the match

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "dtype_arm": self.dtype_arm.to_dict(), "at": self.at}


DtypeFacts = KernelDtypes | LibraryDtypes | OperatorDtypes
