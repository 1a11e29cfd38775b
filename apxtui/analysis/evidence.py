"""Result records shared by the analyses: a value with its status, reason and source locations."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from apxtui.vocab import Evidence

T = TypeVar("T")

EXACT, HEURISTIC, UNKNOWN = Evidence.EXACT.value, Evidence.HEURISTIC.value, Evidence.UNKNOWN.value
_IDENT = re.compile(r"(?<![.\w:])([A-Za-z_]\w*)\b")


def loc(file: str, line: int | str) -> str:
    return f"{file}:{line}" if file else ""


@dataclass(frozen=True)
class Fact(Generic[T]):
    """One established (or not) fact: its value, how it was established, why, and the source locations
    (``path:line``) it rests on.  An ``unknown`` value always carries the reason."""

    value: T
    status: Evidence
    reason: str
    evidence: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The report's form (see :func:`fact`)."""
        return {"value": self.value, "status": self.status.value, "reason": self.reason,
                "evidence": list(self.evidence)}


def fact(value: Any, status: str, reason: str, evidence: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """One established (or not) fact: ``unknown`` values always carry the reason."""
    return {"value": value, "status": status, "reason": reason, "evidence": [e for e in (evidence or []) if e], **extra}


def identifiers(expr: str) -> list[str]:
    """Bare identifiers of an expression (no field names after ``.``, no path tails after ``::``)."""
    return _IDENT.findall(expr or "")


def worst(statuses: list[str]) -> str:
    """The weakest status of several (unknown < heuristic < exact)."""
    if not statuses or UNKNOWN in statuses:
        return UNKNOWN
    return HEURISTIC if HEURISTIC in statuses else EXACT
