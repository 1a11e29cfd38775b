"""Entry points of a checkout, grouped for the entries pane (pure: no Textual)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx

GROUPS = ("Python", "PyO3 bindings", "Rust", "Examples & binaries")
_SCRIPT_DIRS = re.compile(r"(^|/)(examples?|bin|scripts|tools|benches)/")
_TEST = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$")
_MODEL_CRATE = re.compile(r"(^|/)crates/[^/]*(model|runtime)[^/]*/src/")


@dataclass(frozen=True)
class Entry:
    node: str
    group: str
    qualname: str
    kind: str
    file: str
    line: int


def _private(qualname: str) -> bool:
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__"))
               for p in re.split(r"::|\.", qualname) if p)


def group_of(d: dict[str, Any]) -> str | None:
    """The entry group of a graph node's attributes, or None when it is not an entry point."""
    kind, file, qual = d.get("kind", ""), d.get("file", ""), d.get("qualname", "")
    if d.get("vendored") or not file or _TEST.search(file):
        return None
    is_script_file = bool(_SCRIPT_DIRS.search(file)) or file.endswith("src/main.rs") or "/src/bin/" in file
    if d.get("lang") == "python" and qual.endswith(".<module>"):
        mod = qual[: -len(".<module>")]
        return "Examples & binaries" if is_script_file or "." not in mod else None
    if kind in ("python_fn", "python_class"):
        if is_script_file:
            return "Examples & binaries" if d.get("name") == "main" else None
        if qual.endswith(".__init__") or _private(qual):
            return None
        return "Python"
    if kind == "pyo3_binding":
        return "PyO3 bindings"
    if kind == "rust_fn":
        if is_script_file or file.endswith("build.rs"):
            return "Examples & binaries" if d.get("name") == "main" else None
        if d.get("visibility") == "pub" and _MODEL_CRATE.search(file):
            return "Rust"
    return None


def entry_points(graph: nx.MultiDiGraph[str]) -> list[Entry]:
    """Every entry point, grouped in :data:`GROUPS` order and sorted by qualified name."""
    out = []
    for n, d in graph.nodes(data=True):
        g = group_of(d)
        if g:
            out.append(Entry(n, g, d.get("qualname", n), d.get("kind", ""), d.get("file", ""), int(d.get("line") or 0)))
    out.sort(key=lambda e: (GROUPS.index(e.group), e.qualname.lower(), e.file, e.line))
    return out


def default_entry(entries: list[Entry], graph: nx.MultiDiGraph[str] | None = None) -> Entry | None:
    """A sensible first entry: a Python ``…Policy.infer`` (the one with most calls), else any ``infer``,
    else the first Python entry, else the first entry."""
    if not entries:
        return None
    preds: tuple[Callable[[Entry], bool], ...] = (
        lambda e: e.group == "Python" and e.qualname.endswith("Policy.infer"),
        lambda e: e.group == "Python" and e.qualname.endswith(".infer"),
        lambda e: e.group == "Python")
    for pred in preds:
        hits = [e for e in entries if pred(e)]
        if hits:
            return max(hits, key=lambda e: graph.out_degree(e.node) if graph is not None else 0)
    return entries[0]


def filter_entries(entries: list[Entry], text: str) -> list[Entry]:
    """Entries whose qualified name contains every whitespace-separated word of ``text`` (case-insensitive)."""
    words = text.lower().split()
    return [e for e in entries if all(w in e.qualname.lower() for w in words)]
