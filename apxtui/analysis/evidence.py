"""Result records shared by the analyses: a value with its status, reason and source locations."""

from __future__ import annotations

import re
from typing import Any

from apxtui.vocab import Evidence

EXACT, HEURISTIC, UNKNOWN = Evidence.EXACT.value, Evidence.HEURISTIC.value, Evidence.UNKNOWN.value
_IDENT = re.compile(r"(?<![.\w:])([A-Za-z_]\w*)\b")


def loc(file: str, line: int | str) -> str:
    return f"{file}:{line}" if file else ""


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
