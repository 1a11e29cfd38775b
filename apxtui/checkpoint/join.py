"""The weight join: code name patterns ↔ checkpoint tensors.

:func:`join` matches every pattern from :mod:`apxtui.checkpoint.patterns` against the
checkpoint's tensor names (wildcards: ``{*}`` one segment, ``{**}`` one or more) and
reports matched tensors, tensors no pattern claims, patterns that match nothing
(``prefix`` when they only name a prefix of tensors), and tensors claimed by more
than one pattern.  An empty side is a status of its own, never a clean join.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from apxtui.checkpoint.claims import ALTERNATIVE, OPTIONAL
from apxtui.checkpoint.model import Checkpoint, TensorInfo
from apxtui.checkpoint.names import pattern as collapse
from apxtui.checkpoint.patterns import NamePattern, collect_patterns

EMPTY_HEADER, EMPTY_PATTERNS, CLEAN, PARTIAL, NO_OVERLAP = (
    "empty_header", "empty_patterns", "clean", "partial", "no_overlap")
#: Pattern statuses: ``unmatched`` is a name the code needs that the checkpoint lacks; the others are not.
MATCHED, PREFIX, UNMATCHED, NOT_APPLICABLE, OPTIONAL_ABSENT, ALTERNATIVE_UNUSED = (
    "matched", "prefix", "unmatched", "not_applicable", "optional_absent", "alternative_unused")
_ROOTISH = {"src", "lib", "python", "pkg", "include", ""}
_BOUND_AT = re.compile(r"← `.*` at (\S+):\d+$")


def family_of(path: str) -> str:
    """The loader family of a source file: its directory (``crates/m/src/pi05``), or the file itself
    when it sits directly in a source root (``crates/loader/src/gguf``)."""
    parts = path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    parent = parts[:-1]
    if not parent or parent[-1] in _ROOTISH:
        return "/".join([*parent, stem])
    return "/".join(parent)


def pattern_families(p: NamePattern) -> set[str]:
    """Families a pattern belongs to: where its names are bound (the outermost caller that filled a
    helper's parameter), else where the string is."""
    bound = [m.group(1) for h in p.how if (m := _BOUND_AT.search(h))]
    return {family_of(f) for f in (bound or [s.file for s in p.sources])} or {""}


@dataclass
class PatternMatch:
    pattern: NamePattern
    tensors: list[TensorInfo] = field(default_factory=list)
    status: str = UNMATCHED  # matched / prefix / unmatched / not_applicable / optional_absent / alternative_unused
    families: set[str] = field(default_factory=set)

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
    families: list[dict[str, Any]] = field(default_factory=list)
    static_analysis: ClassVar[str] = ("Static: names collected from string facts of the source; not the loader's "
                                      "runtime behaviour.")

    def _with(self, status: str) -> list[PatternMatch]:
        return [m for m in self.matches if m.status == status]

    @property
    def matched(self) -> list[PatternMatch]:
        return self._with(MATCHED)

    @property
    def unmatched(self) -> list[PatternMatch]:
        """Names the code needs that the checkpoint lacks (in a loader family that applies)."""
        return self._with(UNMATCHED)

    @property
    def prefixes(self) -> list[PatternMatch]:
        return self._with(PREFIX)

    @property
    def not_applicable(self) -> list[PatternMatch]:
        return self._with(NOT_APPLICABLE)

    @property
    def optional_absent(self) -> list[PatternMatch]:
        return self._with(OPTIONAL_ABSENT)

    @property
    def alternatives_unused(self) -> list[PatternMatch]:
        return self._with(ALTERNATIVE_UNUSED)

    @property
    def claimed(self) -> int:
        return self.tensors - len(self.unclaimed)

    def by_text(self) -> dict[str, PatternMatch]:
        return {m.pattern.text: m for m in self.matches}

    def status_text(self) -> str:
        """The status line (:func:`status_text`)."""
        return status_text(self)

    def unclaimed_groups(self) -> dict[str, list[TensorInfo]]:
        """The unclaimed tensors by name pattern (layer indices collapsed), in checkpoint order."""
        out: dict[str, list[TensorInfo]] = {}
        for t in self.unclaimed:
            out.setdefault(collapse(t.name), []).append(t)
        return out


def join(patterns: list[NamePattern], ckpt: Checkpoint) -> JoinResult:
    """Match ``patterns`` against ``ckpt``'s tensors (headers only).

    Patterns are grouped by loader family (:func:`family_of`); families none of whose patterns
    claims a tensor do not apply to this checkpoint, and their names are ``not_applicable``
    rather than missing.  In a family that applies, a name read only under a condition is
    ``optional_absent`` when absent, and an alternative is ``alternative_unused`` when another
    of its group matched.
    """
    tensors = list(ckpt.tensors)
    by_last: dict[str, list[TensorInfo]] = {}
    for t in tensors:
        by_last.setdefault(t.name.rsplit(".", 1)[-1], []).append(t)
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
        m = PatternMatch(p, hit, MATCHED if hit else UNMATCHED, pattern_families(p))
        if not hit:
            if _is_prefix(p, tensors):
                m.status = PREFIX
            elif not p.loaderish:
                ignored += 1
                continue
        matches.append(m)
    fams: dict[str, dict[str, Any]] = {}
    for m in matches:
        for f in m.families:
            rec = fams.setdefault(f, {"family": f, "patterns": 0, "matched": 0, "tensors": set()})
            rec["patterns"] += 1
            rec["matched"] += m.status == MATCHED
            rec["tensors"] |= {t.name for t in m.tensors}
    applicable = {f for f, r in fams.items() if r["tensors"]}
    groups_hit = {m.pattern.group for m in matches if m.status == MATCHED and m.pattern.group}
    for m in matches:
        if m.status != UNMATCHED:
            continue
        if applicable and not (m.families & applicable):
            m.status = NOT_APPLICABLE
        elif m.pattern.claim == OPTIONAL:
            m.status = OPTIONAL_ABSENT
        elif m.pattern.claim == ALTERNATIVE and m.pattern.group in groups_hit:
            m.status = ALTERNATIVE_UNUSED
    claims: dict[str, list[str]] = {}
    for m in matches:
        for t in m.tensors:
            claims.setdefault(t.name, []).append(m.pattern.text)
    dup = {n: ps for n, ps in claims.items() if len(ps) > 1}
    unclaimed = [t for t in tensors if t.name not in claims]
    if not tensors:
        status = EMPTY_HEADER
    elif not any(m.status != PREFIX for m in matches):
        status = EMPTY_PATTERNS
    elif not claims:
        status = NO_OVERLAP
    elif unclaimed or dup or any(m.status == UNMATCHED for m in matches):
        status = PARTIAL
    else:
        status = CLEAN
    matches.sort(key=lambda m: (m.status != MATCHED, *((m.pattern.sources[0].file, m.pattern.sources[0].line)
                                                         if m.pattern.sources else ("", 0))))
    res = JoinResult(status, matches, unclaimed, dup, ignored, tensors=len(tensors))
    res.too_generic = generic
    res.families = sorted(({"family": f, "patterns": r["patterns"], "matched_patterns": r["matched"],
                            "tensors": len(r["tensors"]), "applies": f in applicable} for f, r in fams.items()),
                          key=lambda r: (-r["tensors"], r["family"]))
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
    CLEAN: "clean: every tensor claimed by exactly one pattern, every needed pattern matched",
}


def status_text(j: JoinResult) -> str:
    """The status line, with the counts that make a join partial."""
    if j.status != PARTIAL:
        return STATUS_TEXT[j.status]
    parts = [f"{len(j.unclaimed):,} tensor(s) read by no pattern" if j.unclaimed else "",
             f"{len(j.unmatched):,} needed name(s) missing from the checkpoint" if j.unmatched else
             "nothing the applicable loaders need is missing",
             f"{len(j.duplicates):,} tensor(s) claimed twice" if j.duplicates else ""]
    return "partial: " + "; ".join(p for p in parts if p)


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
            "how": m.pattern.how[:8], "claim": m.pattern.claim, "condition": m.pattern.condition,
            "group": m.pattern.group, "claim_how": m.pattern.claim_how[:4], "families": sorted(m.families),
        }

    unclaimed_rows = j.unclaimed_groups()
    return {
        "status": j.status,
        "status_text": status_text(j),
        "counts": {
            "tensors": j.tensors,
            "claimed": j.claimed,
            "unclaimed": len(j.unclaimed),
            "patterns": len(j.matches),
            "matched_patterns": len(j.matched),
            "unmatched_patterns": len(j.unmatched),
            "prefix_patterns": len(j.prefixes),
            "not_applicable_patterns": len(j.not_applicable),
            "optional_absent": len(j.optional_absent),
            "alternatives_unused": len(j.alternatives_unused),
            "duplicate_claims": len(j.duplicates),
            "ignored_non_loader_strings": j.ignored_patterns,
            "too_generic_patterns": j.too_generic,
            **{f"skipped_{k}": v for k, v in j.skipped.items()},
        },
        "families": j.families,
        "matched": [pat(m) for m in j.matched[:limit]],
        "unmatched": [pat(m) for m in j.unmatched[:limit]],
        "prefixes": [pat(m) for m in j.prefixes[:limit]],
        "optional_absent": [pat(m) for m in j.optional_absent[:limit]],
        "alternatives_unused": [pat(m) for m in j.alternatives_unused[:limit]],
        "not_applicable": [pat(m) for m in j.not_applicable[:limit]],
        "unclaimed": [
            {
                "pattern": k,
                "count": len(v),
                "dtypes": sorted({t.dtype for t in v}),
                "bytes": sum(t.nbytes for t in v),
                "example": v[0].name,
            }
            for k, v in list(unclaimed_rows.items())[:limit]
        ],
        "duplicates": [{"tensor": n, "patterns": ps} for n, ps in list(j.duplicates.items())[:limit]],
        "static_analysis": j.static_analysis,
    }


def join_index(index: Any, ckpt: Checkpoint, under: list[str] | None = None) -> JoinResult:
    """Collect patterns from an indexed checkout and join them with ``ckpt``."""
    pats, skipped = collect_patterns(index.facts, index.graph, index.root, under or ())
    j = join(pats, ckpt)
    j.skipped = skipped
    return j
