"""Loop headers → multipliers (numeric for literal/const bounds, symbolic otherwise) and frequency labels."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from apxtui.analysis.evidence import Fact, loc
from apxtui.vocab import Evidence

_C_FOR = re.compile(
    r"^for\s*\(\s*(?:[\w:]+\s+)?(\w+)\s*=\s*([\w:]+)\s*;\s*\1\s*(<=?)\s*([\w:.]+)\s*;\s*"
    r"(?:\+\+\s*\1|\1\s*\+\+|\1\s*\+=\s*1)\s*\)")
_RUST_RANGE = re.compile(r"^for\s+\(?[\w\s,]+\)?\s+in\s+\(?\s*([\w:.]+)\s*\.\.(=?)\s*([\w:.]+)\s*\)?\s*$")
_PY_RANGE = re.compile(r"^for\s+\w+\s+in\s+range\(\s*(?:([\w.]+)\s*,\s*)?([\w.]+)\s*\)\s*:?\s*$")
_CLOSURE = re.compile(r"^(move\s+)?\||^\[[^\]]*\]\s*\(")

#: words in a loop header → the frequency unit it stands for (first match wins).
_UNITS = (
    (re.compile(r"\b(layer|layers|block|blocks|decoder_layer)\b|layers\b", re.I), "per layer"),
    (re.compile(r"\b(step|steps|token|tokens|decode|num_steps|t)\b", re.I), "per step"),
    (re.compile(r"\b(chunk|chunks)\b", re.I), "per chunk"),
    (re.compile(r"\b(expert|experts)\b", re.I), "per expert"),
    (re.compile(r"\b(head|heads)\b", re.I), "per head"),
    (re.compile(r"\b(split|splits)\b", re.I), "per split"),
    (re.compile(r"\b(request|requests|batch|seq|sequence)\b", re.I), "per request"),
)


def _int(text: str, consts: dict[str, tuple[str, str]]) -> tuple[int | None, list[str]]:
    """Integer value of a literal or of a visible constant/local (``(value, evidence)``)."""
    t = text.strip().rstrip("uUlL").replace("_", "")
    if re.fullmatch(r"\d+", t):
        return int(t), []
    if t in consts:
        value, where = consts[t]
        v = value.strip().rstrip("uUlL").replace("_", "")
        if re.fullmatch(r"\d+", v):
            return int(v), [where]
    return None, []


@dataclass(frozen=True)
class LoopCount(Fact[int | None]):
    """How many times one loop runs (``value`` None: symbolic); ``label`` is the loop header."""

    label: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "value": self.value, "status": self.status.value,
                "evidence": list(self.evidence), "reason": self.reason}


def multiplier(header: str, consts: dict[str, tuple[str, str]] | None = None) -> LoopCount:
    """How many times a loop runs (value None = symbolic), with the status, reason and evidence."""
    consts = consts or {}
    h = " ".join(header.split())
    if _CLOSURE.search(h):
        return LoopCount(None, Evidence.UNKNOWN, "inside a closure: how often the closure runs is not established",
                         label=h)
    lo_hi = None
    m = _C_FOR.match(h)
    if m:
        lo_hi = (m.group(2), m.group(4), m.group(3) == "<=")
    m = m or None
    if lo_hi is None and (m := _RUST_RANGE.match(h)):
        lo_hi = (m.group(1), m.group(3), m.group(2) == "=")
    if lo_hi is None and (m := _PY_RANGE.match(h)):
        lo_hi = (m.group(1) or "0", m.group(2), False)
    if lo_hi is not None:
        lo, ev1 = _int(lo_hi[0], consts)
        hi, ev2 = _int(lo_hi[1], consts)
        if lo is not None and hi is not None:
            n = max(0, hi - lo + (1 if lo_hi[2] else 0))
            via_const = bool(ev1 or ev2)
            return LoopCount(n, Evidence.EXACT, "constant loop bound" if via_const else "literal loop bounds",
                             (*ev1, *ev2), label=h)
        return LoopCount(None, Evidence.HEURISTIC, f"bound `{lo_hi[1]}` is not a visible constant (symbolic)",
                         label=h)
    return LoopCount(None, Evidence.HEURISTIC, "trip count not static (symbolic)", label=h)


def consts_of(defn: Any) -> dict[str, tuple[str, str]]:
    """Locals of a Definition assigned a literal (``const int n = 4;``, ``let n = 4;``)."""
    out: dict[str, tuple[str, str]] = {}
    if defn is None:
        return out
    for a in defn.attrs.get("assigns", []):
        if re.fullmatch(r"\s*\d[\d_]*[uUlL]*\s*", a.get("value", "")):
            if a["var"] in out:  # reassigned: not a constant
                out[a["var"]] = ("", "")
            else:
                out[a["var"]] = (a["value"], loc(defn.file, a["line"]))
    return {k: v for k, v in out.items() if v[0]}


def unit(m: LoopCount) -> str:
    """Frequency unit of one loop multiplier."""
    if m.value is not None:
        return f"×{m.value}"
    if m.status == Evidence.UNKNOWN:
        return "per closure call"
    for pat, name in _UNITS:
        if pat.search(m.label):
            return name
    return f"per iteration of `{m.label}`"


def frequency(mults: list[LoopCount], phase: str, entry: str, graph_key: bool = False) -> str:
    """Human label: ``per call of X × per step × per layer`` (+ the phase when not eager).

    ``prepare``: work under a first-call guard (a cache miss, a null check) runs on a first call only,
    or once per graph key when the preparation builds a CUDA Graph (``graph_key``)."""
    parts = [f"per call of {entry}"] + [unit(m) for m in mults]
    label = " × ".join(parts)
    if phase == "prepare":
        return ("once per graph key (cache miss; the preparation builds a CUDA Graph)" if graph_key
                else "first call (lazy initialisation under a cache-miss or null check)") + f" — at most {label}"
    if phase == "captured":
        label = f"recorded once per capture (graph-cache miss); replayed on every replay — {label}"
    elif phase == "load":
        label = f"once per load — {label}"
    elif phase == "capture":
        label = f"capture lifecycle — {label}"
    return label
