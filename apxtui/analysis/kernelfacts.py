"""``apxtui kernels`` as typed records (what :func:`apxtui.analysis.checkout.kernels_report` returns).

:class:`KernelsReport` lists every kernel (:class:`KernelInfo`: its launch sites with their dtypes, the
entries a call path reaches it from) and the kernels and adapters no project path reaches.  The text
renderer (``commands/kernels.py``) reads fields; ``to_dict`` is the ``--json`` document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apxtui.analysis.capturefacts import STATIC_NOTE
from apxtui.analysis.dtypefacts import KernelDtypes

KERNELS_NOTE = (
    "entries: functions with no caller in the index (public APIs, bindings, scripts) from which a "
    "call path reaches the kernel; alternatives (cfg, ambiguous calls) are not filtered. "
    "unreached: kernels no edge of any kind reaches (and adapters nothing calls); "
    "reached_by_name_pattern_only: kernels only a name pattern links (kernel_name::<T>, format!): "
    "heuristic; no_entry: launched or called, but from code no entry point reaches")


@dataclass(frozen=True)
class LaunchSite:
    """A launch of the kernel: its caller, template arguments, conditions, loops and dtypes."""

    caller: str
    at: str
    template_args: tuple[str, ...]
    vendored: bool  # the launching function is third-party code
    conditions: tuple[str, ...]
    loops: tuple[str, ...]
    dtypes: KernelDtypes

    def to_dict(self) -> dict[str, Any]:
        k = self.dtypes
        return {"caller": self.caller, "at": self.at, "template_args": list(self.template_args),
                "vendored": self.vendored, "conditions": list(self.conditions), "loops": list(self.loops),
                "dtypes": {"storage": k.storage.to_dict(), "input": k.input.to_dict(), "output": k.output.to_dict(),
                           "accumulator": k.accumulator.to_dict()},
                "conversions": [c.to_dict() for c in k.conversions]}


@dataclass(frozen=True)
class EntryPath:
    """An entry point (no caller in the index) and the shortest call path from it down to the kernel."""

    entry: str
    path: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"entry": self.entry, "path": list(self.path)}


@dataclass(frozen=True)
class KernelInfo:
    """One ``__global__`` kernel (``by_name_pattern_only``: only a name pattern links its callers)."""

    kernel: str
    node: str
    definition: str  # path:line
    template_params: tuple[str, ...]
    params: tuple[str, ...]
    vendored: bool
    launch_sites: tuple[LaunchSite, ...]
    entries: tuple[EntryPath, ...]
    by_name_pattern_only: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kernel": self.kernel, "node": self.node, "definition": self.definition,
                               "template_params": list(self.template_params), "params": list(self.params),
                               "vendored": self.vendored, "launch_sites": [s.to_dict() for s in self.launch_sites],
                               "entries": [e.to_dict() for e in self.entries]}
        if self.by_name_pattern_only:
            out["by_name_pattern_only"] = True
        return out


@dataclass(frozen=True)
class UnreachedItem:
    """A kernel or C ABI adapter no project path reaches (``patterns``/``at``: the name patterns that
    alone link a kernel, and where)."""

    kind: str
    name: str
    definition: str
    launched: bool
    patterns: tuple[str, ...] | None = None
    at: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "definition": self.definition,
                               "launched": self.launched}
        if self.patterns is not None:
            out.update(patterns=list(self.patterns), at=list(self.at or ()))
        return out


@dataclass(frozen=True)
class KernelsReport:
    """Every kernel, and the kernels and adapters no project path reaches (three ways)."""

    kernels: tuple[KernelInfo, ...]
    unreached: tuple[UnreachedItem, ...]
    reached_by_name_pattern_only: tuple[UnreachedItem, ...]
    no_entry: tuple[UnreachedItem, ...]
    static_analysis: str = STATIC_NOTE
    note: str = KERNELS_NOTE

    def to_dict(self) -> dict[str, Any]:
        return {"static_analysis": self.static_analysis, "kernels": [k.to_dict() for k in self.kernels],
                "unreached": [u.to_dict() for u in self.unreached],
                "reached_by_name_pattern_only": [u.to_dict() for u in self.reached_by_name_pattern_only],
                "no_entry": [u.to_dict() for u in self.no_entry], "note": self.note}
