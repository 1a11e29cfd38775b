"""The weight join: code name patterns ↔ checkpoint tensors.

:func:`join` matches every pattern from :mod:`apxtui.checkpoint.patterns` against the
checkpoint's tensor names (wildcards: ``{*}`` one segment, ``{**}`` one or more) and
reports matched tensors, tensors no pattern claims, patterns that match nothing
(``prefix`` when they only name a prefix of tensors), and tensors claimed by more
than one pattern.  An empty side is a status of its own, never a clean join.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apxtui.checkpoint.model import Checkpoint, TensorInfo
from apxtui.checkpoint.names import pattern as collapse
from apxtui.checkpoint.patterns import NamePattern

EMPTY_HEADER, EMPTY_PATTERNS, CLEAN, PARTIAL, NO_OVERLAP = (
    "empty_header", "empty_patterns", "clean", "partial", "no_overlap")


@dataclass
class PatternMatch:
    pattern: NamePattern
    tensors: list[TensorInfo] = field(default_factory=list)
    status: str = "unmatched"  # matched / prefix / unmatched

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)


@dataclass
class JoinResult:
    status: str
    matches: list[PatternMatch]
    unclaimed: list[TensorInfo]
    duplicates: dict[str, list[str]]  # tensor -> pattern texts
    ignored_patterns: int = 0  # name-like strings outside loaders that match nothing
    too_generic: int = 0  # patterns of mostly wildcards, not used as claims
    skipped: dict[str, int] = field(default_factory=dict)
    tensors: int = 0

    @property
    def matched(self) -> list[PatternMatch]:
        return [m for m in self.matches if m.status == "matched"]

    @property
    def unmatched(self) -> list[PatternMatch]:
        return [m for m in self.matches if m.status == "unmatched"]

    @property
    def prefixes(self) -> list[PatternMatch]:
        return [m for m in self.matches if m.status == "prefix"]

    @property
    def claimed(self) -> int:
        return self.tensors - len(self.unclaimed)

    def by_text(self) -> dict[str, PatternMatch]:
        return {m.pattern.text: m for m in self.matches}


def join(patterns: list[NamePattern], ckpt: Checkpoint) -> JoinResult:
    """Match ``patterns`` against ``ckpt``'s tensors (headers only)."""
    tensors = list(ckpt.tensors)
    by_last: dict[str, list[TensorInfo]] = {}
    for t in tensors:
        by_last.setdefault(t.name.rsplit(".", 1)[-1], []).append(t)
    claims: dict[str, list[str]] = {}
    matches: list[PatternMatch] = []
    ignored = 0
    generic = 0
    for p in patterns:
        if _too_generic(p):
            generic += 1
            continue
        rx = p.regex()
        last = p.text.rsplit(".", 1)[-1]
        pool = by_last.get(last, []) if "{" not in last else tensors
        hit = [t for t in pool if rx.match(t.name)]
        m = PatternMatch(p, hit, "matched" if hit else "unmatched")
        if not hit:
            if _is_prefix(p, tensors):
                m.status = "prefix"
            elif not p.loaderish:
                ignored += 1
                continue
        for t in hit:
            claims.setdefault(t.name, []).append(p.text)
        matches.append(m)
    dup = {n: ps for n, ps in claims.items() if len(ps) > 1}
    unclaimed = [t for t in tensors if t.name not in claims]
    if not tensors:
        status = EMPTY_HEADER
    elif not any(m.status != "prefix" for m in matches):
        status = EMPTY_PATTERNS
    elif not claims:
        status = NO_OVERLAP
    elif unclaimed or dup or any(m.status == "unmatched" for m in matches):
        status = PARTIAL
    else:
        status = CLEAN
    matches.sort(key=lambda m: (m.status != "matched", *((m.pattern.sources[0].file, m.pattern.sources[0].line)
                                                           if m.pattern.sources else ("", 0))))
    res = JoinResult(status, matches, unclaimed, dup, ignored, tensors=len(tensors))
    res.too_generic = generic
    return res


def _too_generic(p: NamePattern) -> bool:
    """Mostly wildcards (``{**}.layers.{**}.{**}``): claims anything, so it is no evidence."""
    segs = [s for s in p.segments if not s.isdigit()]
    return p.wildcards > 0 and (len(segs) < p.wildcards or sum(len(s) for s in segs) < 6)


def _is_prefix(p: NamePattern, tensors: list[TensorInfo]) -> bool:
    import re

    rx = re.compile(p.regex().pattern.removesuffix(r"\Z") + r"\.")
    return any(rx.match(t.name) for t in tensors)


STATUS_TEXT = {
    EMPTY_HEADER: "EMPTY HEADER: the checkpoint declares no tensor; nothing was joined",
    EMPTY_PATTERNS: "NO PATTERNS: the code asks for no tensor name that could be found; nothing was joined",
    NO_OVERLAP: "NO OVERLAP: no code pattern matches any checkpoint tensor",
    PARTIAL: "partial: see unclaimed tensors, unmatched patterns and duplicate claims",
    CLEAN: "clean: every tensor claimed by exactly one pattern, every pattern matched",
}


def join_dict(j: JoinResult, limit: int = 200) -> dict[str, Any]:
    """JSON form (lists capped at ``limit`` entries each; counts are complete)."""

    def pat(m: PatternMatch) -> dict[str, Any]:
        ts = m.tensors
        return {
            "pattern": m.pattern.text, "status": m.status, "tensors": len(ts), "bytes": m.nbytes,
            "dtypes": sorted({t.dtype for t in ts}), "shapes": sorted({list(t.shape).__repr__() for t in ts})[:4],
            "examples": [t.name for t in ts[:3]],
            "sources": [{"at": s.at, "caller": s.caller, "written": s.written, "origin": s.origin,
                         "field": s.field} for s in m.pattern.sources],
            "how": m.pattern.how[:8],
        }

    unclaimed_rows: dict[str, list[TensorInfo]] = {}
    for t in j.unclaimed:
        unclaimed_rows.setdefault(collapse(t.name), []).append(t)
    return {
        "status": j.status, "status_text": STATUS_TEXT[j.status],
        "counts": {"tensors": j.tensors, "claimed": j.claimed, "unclaimed": len(j.unclaimed),
                   "patterns": len(j.matches), "matched_patterns": len(j.matched),
                   "unmatched_patterns": len(j.unmatched), "prefix_patterns": len(j.prefixes),
                   "duplicate_claims": len(j.duplicates), "ignored_non_loader_strings": j.ignored_patterns,
                   "too_generic_patterns": j.too_generic,
                   **{f"skipped_{k}": v for k, v in j.skipped.items()}},
        "matched": [pat(m) for m in j.matched[:limit]],
        "unmatched": [pat(m) for m in j.unmatched[:limit]],
        "prefixes": [pat(m) for m in j.prefixes[:limit]],
        "unclaimed": [{"pattern": k, "count": len(v), "dtypes": sorted({t.dtype for t in v}),
                       "bytes": sum(t.nbytes for t in v), "example": v[0].name}
                      for k, v in list(unclaimed_rows.items())[:limit]],
        "duplicates": [{"tensor": n, "patterns": ps} for n, ps in list(j.duplicates.items())[:limit]],
        "static_analysis": "Static: names collected from string facts of the source; not the loader's runtime behaviour.",
    }


def join_index(index: Any, ckpt: Checkpoint, under: list[str] | None = None) -> JoinResult:
    """Collect patterns from an indexed checkout and join them with ``ckpt``."""
    from apxtui.checkpoint.patterns import collect_patterns

    pats, skipped = collect_patterns(index.facts, index.graph, index.root, under or ())
    j = join(pats, ckpt)
    j.skipped = skipped
    return j
