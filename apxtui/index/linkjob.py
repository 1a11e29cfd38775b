"""Linking one file against the symbol tables of all files, into its stored rows.

Each file is linked by its own :class:`~apxtui.index.link.Linker` on a fresh graph that
holds only what the file makes: its definitions' nodes and out-edges, its PyO3 binding
nodes, its module-level node, its ``file:`` node, and the shared nodes it points at
(externals, vendor APIs, included files), with the attributes this file would give
them.  Other files' nodes are known only by id and kind (``known``).  Files are
independent here, which is what lets a cold build link them in parallel and a re-link
redo just some of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apxtui.facts import FileFacts
from apxtui.index.dropped import first_per_category
from apxtui.index.factstore import load_facts
from apxtui.index.link import Linker
from apxtui.index.scratch import ScratchGraph
from apxtui.index.store import SHARED, Attrs, candidates_key, count_edges, last_segment, node_file, pack
from apxtui.packages import Packages

_SHARED_KINDS = ("external", "vendor_api")


@dataclass
class LinkContext:
    """What linking any one file needs about all the others."""

    tables: Any  # Tables or StoredTables
    known: Mapping[str, str]  # node id → kind, every file's definition and binding nodes
    includes: Mapping[str, set[str]]  # file → files it includes
    all_files: set[str]
    vendored: set[str]
    by_base: dict[str, list[str]] | None = None
    indexed: set[str] | None = None  # files with facts
    packages: Packages = field(default_factory=Packages)  # package boundaries (which file may call which)


@dataclass
class FileLink:
    """One file's rows: owned nodes ``(id, kind, last, attrs, out)`` packed, in creation order."""

    rel: str
    nodes: list[tuple[str, str, str, bytes, bytes]] = field(default_factory=list)
    shared: dict[str, Attrs] = field(default_factory=dict)  # id → attrs as this file would create it
    rev: list[tuple[str, str]] = field(default_factory=list)  # (target, source) pairs
    info: dict[str, Any] = field(default_factory=dict)  # dropped, issues, names, counts, shared

    def to_tuple(self) -> tuple[Any, ...]:
        return (self.rel, self.nodes, self.shared, self.rev, self.info)

    @classmethod
    def from_tuple(cls, t: tuple[Any, ...]) -> FileLink:
        return cls(*t)


def owner_of(node: str, d: Attrs, files: set[str]) -> str | None:
    """The file owning ``node`` among ``files``, SHARED, or None (another file's node)."""
    if not d:
        return None  # created by an edge towards another file's node
    kind = d.get("kind")
    if kind in _SHARED_KINDS:
        if node.startswith("ambiguous:"):
            return node_file(node)
        return SHARED
    if kind == "file":
        return d["file"] if d["file"] in files else SHARED
    return d.get("file") if d.get("file") in files else None


def link_file(f: FileFacts, ctx: LinkContext) -> FileLink:
    """Link ``f`` (full facts) and cut the result into its rows."""
    g = ScratchGraph()
    linker = Linker({f.file: f}, ctx.all_files, ctx.vendored, only={f.file}, graph=g, tables=ctx.tables,
                    known=ctx.known, includes=ctx.includes, by_base=ctx.by_base, indexed=ctx.indexed,
                    packages=ctx.packages, expand=False)  # expanded before the tables (``expanded.py``)
    linker.link()
    own = {f.file}
    out = FileLink(f.file)
    edges: list[Attrs] = []
    kinds: dict[str, int] = {}
    names: set[tuple[str, str]] = set()
    for n, d in g.nodes(data=True):
        owner = owner_of(n, d, own)
        if owner is None:
            continue
        if owner == SHARED:
            out.shared[n] = dict(d)
            continue
        outs = [(v, k, e) for _, v, k, e in g.out_edges(n, keys=True, data=True)]
        out.nodes.append((n, d.get("kind", ""), last_segment(d.get("qualname", "")), pack(d), pack(outs)))
        kinds[d.get("kind", "")] = kinds.get(d.get("kind", ""), 0) + 1
        for v, _, e in outs:
            edges.append(e)
            if e.get("kind") not in ("call", "launch", "ffi"):
                continue
            vd = g.nodes[v]
            vkind = vd.get("kind") or ctx.known.get(v, "")
            if vkind == "external" or (vd.get("vendored") if vd else node_file(v) in ctx.vendored):
                names.add((e.get("callee", ""), vkind))
        out.rev += sorted({(v, n) for v, _, _ in outs})
        out.rev += sorted({(candidates_key(node_file(c)), n) for c in d.get("candidates", ())})
    out.info = {
        "dropped": dict(linker.dropped.get(f.file, {})),
        "dropped_at": first_per_category(linker.dropped_lines.get(f.file, [])),
        "issues": [(i.file, i.kind, i.message, i.line, i.end_line) for i in f.issues],
        "names": sorted(names),
        "nodes": kinds,
        "edges": count_edges(edges),
        "shared": sorted(out.shared),
    }
    return out


# -- worker processes (forked after the context is built; they inherit it) ------------------

_CTX: LinkContext | None = None


def set_context(ctx: LinkContext | None) -> None:
    global _CTX
    _CTX = ctx


def link_blobs(jobs: list[tuple[str, bytes]]) -> list[tuple[Any, ...]]:
    """Worker: link each ``(rel, packed facts)`` against the inherited context."""
    import gc

    gc.disable()
    assert _CTX is not None
    out = []
    for _rel, blob in jobs:
        out.append(link_file(load_facts(blob), _CTX).to_tuple())
        gc.collect(0)  # the file's scratch graph and linker (cycles), from the youngest generation only
    return out


__all__ = ["LinkContext", "FileLink", "link_file", "set_context", "link_blobs", "owner_of"]
