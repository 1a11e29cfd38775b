"""``#include "path"`` → the checkout file it names."""

from __future__ import annotations

import posixpath
from collections import defaultdict


def files_by_base(all_files: set[str]) -> dict[str, list[str]]:
    """Checkout files by base name, for :func:`resolve_include`."""
    out: dict[str, list[str]] = defaultdict(list)
    for f in sorted(all_files):  # sorted: ties between candidates break the same way every run
        out[posixpath.basename(f)].append(f)
    return out


def resolve_include(path: str, from_file: str, all_files: set[str], by_base: dict[str, list[str]]) -> str | None:
    """The checkout file an ``#include "path"`` names: relative to the includer, else by suffix."""
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(from_file), path))
    if rel in all_files:
        return rel
    cands = [f for f in by_base.get(posixpath.basename(path), []) if f == path or f.endswith("/" + path)]
    if len(cands) == 1:
        return cands[0]
    if cands:  # prefer the candidate sharing the longest directory prefix with the includer
        return max(cands, key=lambda f: len(posixpath.commonprefix([f, from_file])))
    return None
