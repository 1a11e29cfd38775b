"""Calls not drawn (``Resolved(drop=True)``): their reasons grouped into a few categories.

A dropped call's reason (``how``) names the receiver text and its type (``std method;
`x.iter()`: Vec<…>``), so a big checkout has thousands of distinct reasons.  ``index``
shows the counts per :func:`category` (kept in the stored summary) and a bounded sample with
``path:line``; the full reason → count map is summed from the files' link records on request
(``index --json --all-dropped``).

The sample is stored per file (its first dropped call of each category: the ``drops``
table), so a re-link rewrites only the re-linked files' rows.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from typing import Any

#: (pattern on the reason, category): the first that matches names the category; otherwise the
#: reason with its quoted code (`` `…` ``) and what follows a ``:`` left out.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), c) for p, c in (
    (r"^std method;", "std method on a receiver typed outside the checkout"),
    (r" has no method \S+ in the checkout$", "the receiver's type has no method of that name in the checkout"),
    (r"\(trait object\): no impl of the method in the checkout$",
     "trait object: no impl of the method in the checkout"),
    (r"^generic \S+: .*: no impl of the method in the checkout$", "generic: no impl of the method in the checkout"),
    (r": an unbounded generic$", "unbounded generic"),
    (r"^unknown type `", "unknown type of the receiver"),
    (r"^vendored code:", "vendored code: only exact links are kept"),
))

#: Sampled calls per category.
SAMPLE_PER_CATEGORY = 3


def category(how: str) -> str:
    """The category of a dropped call's reason (a short, fixed-vocabulary string)."""
    for pat, cat in _RULES:
        if pat.search(how):
            return cat
    if "`" in how:
        how = re.sub(r"`[^`]*`", "`…`", how)
    return how


def by_category(dropped: Mapping[str, int]) -> dict[str, int]:
    """Reason → count folded into category → count, most calls first."""
    out: dict[str, int] = {}
    for how, n in dropped.items():
        c = category(how)
        out[c] = out.get(c, 0) + n
    return sorted_categories(out)


def sorted_categories(counts: Mapping[str, int]) -> dict[str, int]:
    """Category → count, most calls first, zeros left out."""
    return dict(sorted(((c, n) for c, n in counts.items() if n), key=lambda kv: (-kv[1], kv[0])))


def first_per_category(drops: list[tuple[int, str]]) -> list[tuple[str, int, str]]:
    """One file's ``(line, how)`` dropped calls → its first ``(category, line, how)`` of each category."""
    first: dict[str, tuple[int, str]] = {}
    for line, how in drops:
        cat = category(how)
        if cat not in first or (line, how) < first[cat]:
            first[cat] = (line, how)
    return [(cat, line, how) for cat, (line, how) in sorted(first.items())]


def drop_rows(rank: int, rel: str, info: Mapping[str, Any]) -> list[tuple[str, int, str, int, str]]:
    """The ``drops`` rows of one file's link record."""
    return [(cat, rank, rel, line, how) for cat, line, how in info.get("dropped_at", ())]


def sample(conn: sqlite3.Connection, per_category: int = SAMPLE_PER_CATEGORY) -> dict[str, list[dict[str, Any]]]:
    """Category → its first ``per_category`` files' first dropped call, in file order."""
    out: dict[str, list[dict[str, Any]]] = {}
    cats = [c for (c,) in conn.execute("SELECT DISTINCT cat FROM drops ORDER BY cat")]
    for cat in cats:
        rows = conn.execute("SELECT rel, line, how FROM drops WHERE cat=? ORDER BY rank LIMIT ?",
                            (cat, per_category)).fetchall()
        out[cat] = [{"file": rel, "line": line, "reason": how} for rel, line, how in rows]
    return out


__all__ = ["category", "by_category", "sorted_categories", "first_per_category", "drop_rows", "sample",
           "SAMPLE_PER_CATEGORY"]
