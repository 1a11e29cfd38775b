"""The linked graph as per-file rows, and :class:`StoredGraph`, a lazy read-only view of it.

A node row holds the node's attributes and its out-edges (in networkx order), packed
with marshal (zlib for long edge lists); ``owner`` is the file whose linking made it
('' for the nodes several files share: externals, vendor APIs, included files), ``seq``
its place in the graph's node order, ``last`` the last segment of its qualified name.
``rev`` lists (target, source) pairs for in-edges.  :class:`StoredGraph` answers the
part of the networkx ``MultiDiGraph`` API that the trace, the analyses and the explorer
use by reading only the rows they touch (memoised), all inside the database snapshot
the index was opened in; :meth:`StoredGraph.to_networkx` loads the whole graph (for
``graph`` export and graph algorithms).
"""

from __future__ import annotations

import hashlib
import marshal
import pickle
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apxtui.index.db import Database
from apxtui.index.dropped import by_category
from apxtui.vocab import node_file

if TYPE_CHECKING:
    import networkx as nx

ZIP_MIN = 400  # bytes of packed edges above which they are compressed
SHARED = ""  # owner of a node several files reference
_SEG = re.compile(r"::|\.")

Attrs = dict[str, Any]  # a node's or an edge's attributes
EdgeRow = tuple[str, Any, Attrs]  # (target, key, attributes) of one out-edge


def pack(value: Any) -> bytes:
    """marshal (zlib-compressed when long); pickle for what marshal refuses."""
    try:
        raw = marshal.dumps(value)
    except ValueError:
        return b"P" + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    if len(raw) >= ZIP_MIN:
        return b"Z" + zlib.compress(raw, 1)
    return b"M" + raw


def unpack(blob: bytes) -> Any:
    tag, body = blob[:1], blob[1:]
    if tag == b"M":
        return marshal.loads(body)
    if tag == b"Z":
        return marshal.loads(zlib.decompress(body))
    return pickle.loads(body)


@cache
def code_stamp(*files: str | Path) -> str:
    """A short hash of these files' bytes: the code (and rules file) a derived value is made by, part of the
    name it is stored under (:meth:`StoredGraph.derived`), so a change to any of them makes it again."""
    h = hashlib.blake2b(digest_size=8)
    for f in files:
        h.update(Path(f).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def candidates_key(file: str) -> str:
    """The ``rev`` target under which a node listing candidates of ``file`` is found (one row per
    file, not per candidate: an ambiguous call can list hundreds)."""
    return "\0candidates:" + file


def last_segment(qualname: str) -> str:
    parts = [p for p in _SEG.split(qualname) if p]
    return parts[-1] if parts else qualname


def count_edges(edges: Iterable[Attrs]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter[str]] = {}
    for d in edges:
        out.setdefault(d.get("kind", "?"), Counter())[d.get("resolution", "?")] += 1
    return {k: dict(v) for k, v in out.items()}


def add_counts(total: dict[str, dict[str, int]], part: dict[str, dict[str, int]]) -> None:
    for kind, by_res in part.items():
        t = total.setdefault(kind, {})
        for res, n in by_res.items():
            t[res] = t.get(res, 0) + n


def summary_of(graph: nx.MultiDiGraph[str]) -> dict[str, Any]:
    """Counts of an in-memory graph, the same shape as a stored summary."""
    return {
        "symbols": dict(Counter(d.get("kind") for _, d in graph.nodes(data=True))),
        "edges": count_edges(d for _, _, d in graph.edges(data=True)),
        "dropped": by_category(graph.graph.get("dropped", {})),
        "nodes": graph.number_of_nodes(),
        "edge_count": graph.number_of_edges(),
    }


class _Nodes:
    """``graph.nodes``: ``nodes[n]``, ``nodes.get``, ``in``, iteration, ``nodes(data=True)``."""

    def __init__(self, g: StoredGraph):
        self._g = g

    def __getitem__(self, n: str) -> Attrs:
        d = self._g._node.get(n)
        if d is None:
            d = self._g._attrs(n)
            if d is None:
                raise KeyError(n)
        return d

    def get(self, n: str, default: Any = None) -> Any:
        d = self._g._node.get(n)
        if d is None:
            d = self._g._attrs(n)
        return default if d is None else d

    def __contains__(self, n: object) -> bool:
        return isinstance(n, str) and self._g._attrs(n) is not None

    def __iter__(self) -> Iterator[str]:
        return (n for n, _ in self._g._all_nodes())

    def __len__(self) -> int:
        return self._g.number_of_nodes()

    def __call__(self, data: bool | str = False, default: Any = None) -> Iterator[Any]:
        return self.data(data, default)

    def data(self, data: bool | str = True, default: Any = None) -> Iterator[Any]:
        if data is True:
            return iter(self._g._all_nodes())
        if data is False:
            return iter(self)
        return ((n, d.get(data, default)) for n, d in self._g._all_nodes())

    def items(self) -> list[tuple[str, Attrs]]:
        return self._g._all_nodes()


class StoredGraph:
    """Read-only, lazily loaded view of one stored index generation (see the module docstring)."""

    def __init__(self, db: Database, summary: dict[str, Any]):
        self._db = db
        self._summary = summary
        self._lock = db.lock
        self._node: dict[str, Attrs | None] = {}
        self._out: dict[str, list[EdgeRow]] = {}
        self._derived: dict[str, Any] = {}  # derived() values of this generation
        self._all: list[tuple[str, Attrs]] | None = None
        self._graph_attrs: dict[str, Any] | None = None
        self.nodes = _Nodes(self)

    # -- rows ----------------------------------------------------------------------------

    def _fetch(self, n: str) -> None:
        with self._lock:
            row = self._db.conn.execute("SELECT attrs, out FROM nodes WHERE id=?", (n,)).fetchone()
        if row is None:
            self._node[n] = None
            self._out[n] = []
            return
        self._node[n] = unpack(row[0])
        self._out[n] = [(v, k, d) for v, k, d in unpack(row[1])]

    def _attrs(self, n: str) -> Attrs | None:
        if n not in self._node:
            self._fetch(n)
        return self._node[n]

    def _edges_of(self, n: str) -> list[EdgeRow]:
        if n not in self._out:
            self._fetch(n)
        return self._out[n]

    def _all_nodes(self) -> list[tuple[str, Attrs]]:
        if self._all is None:
            with self._lock:
                rows = self._db.conn.execute("SELECT id, attrs FROM nodes ORDER BY seq").fetchall()
            out = []
            for n, blob in rows:
                d = self._node.get(n)
                if d is None:
                    d = unpack(blob)
                    self._node[n] = d
                out.append((n, d))
            self._all = out
        return self._all

    def nodes_named(self, last: str) -> list[tuple[str, Attrs]]:
        """Nodes whose qualified name ends in the segment ``last`` (an index look-up)."""
        with self._lock:
            rows = self._db.conn.execute("SELECT id FROM nodes WHERE last=? ORDER BY seq", (last,)).fetchall()
        return [(n, self.nodes[n]) for (n,) in rows]

    # -- the networkx API ------------------------------------------------------------------

    @property
    def graph(self) -> dict[str, Any]:
        """Graph attributes: ``dropped``, ``dropped_by_file``, ``file_issues``."""
        if self._graph_attrs is None:
            with self._lock:
                rows = self._db.conn.execute("SELECT rel, link FROM files ORDER BY rank").fetchall()
            by_file: dict[str, Attrs] = {}
            issues: list[tuple[Any, ...]] = []
            for rel, blob in rows:
                link = unpack(blob)
                if link.get("dropped"):
                    by_file[rel] = link["dropped"]
                issues += [tuple(i) for i in link.get("issues", [])]
            total: Counter[str] = Counter()
            for c in by_file.values():
                total.update(c)
            self._graph_attrs = {"dropped_by_file": by_file, "dropped": dict(total), "file_issues": issues}
        return self._graph_attrs

    def __contains__(self, n: object) -> bool:
        return n in self.nodes

    def has_node(self, n: str) -> bool:
        return n in self.nodes

    def __iter__(self) -> Iterator[str]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return self.number_of_nodes()

    def number_of_nodes(self) -> int:
        return int(self._summary.get("nodes", 0))

    def number_of_edges(self) -> int:
        return int(self._summary.get("edge_count", 0))

    def is_directed(self) -> bool:
        return True

    def is_multigraph(self) -> bool:
        return True

    def out_edges(self, nbunch: str | Iterable[str] | None = None, data: bool | str = False, keys: bool = False,
                  default: Any = None) -> list[tuple[Any, ...]]:
        if isinstance(nbunch, str):  # the common case, kept lean: one node's edges
            u = nbunch
            out = self._out.get(u)
            if out is None:
                out = self._edges_of(u)
            if data is True:
                return [(u, v, k, d) for v, k, d in out] if keys else [(u, v, d) for v, k, d in out]
            if data is False:
                return [(u, v, k) for v, k, _ in out] if keys else [(u, v) for v, _, _ in out]
            if keys:
                return [(u, v, k, d.get(data, default)) for v, k, d in out]
            return [(u, v, d.get(data, default)) for v, _, d in out]
        if nbunch is None:
            self._load_all_edges()
        nodes = [n for n, _ in self._all_nodes()] if nbunch is None else list(nbunch)
        return list(self._edge_tuples(((u, v, k, d) for u in nodes for v, k, d in self._edges_of(u)),
                                      data, keys, default))

    def _load_all_edges(self) -> None:
        """Every node's edges in one pass (a whole-graph question), not one query per node."""
        if self._all is not None and all(n in self._out for n, _ in self._all):
            return
        with self._lock:
            rows = self._db.conn.execute("SELECT id, attrs, out FROM nodes ORDER BY seq").fetchall()
        out = []
        for n, attrs, edges in rows:
            d = self._node.get(n)
            if d is None:
                d = self._node[n] = unpack(attrs)
            if n not in self._out:
                self._out[n] = [(v, k, e) for v, k, e in unpack(edges)]
            out.append((n, d))
        self._all = out

    edges = out_edges

    def out_edges_of_kinds(self, kinds: Iterable[str]) -> Iterator[tuple[str, list[EdgeRow]]]:
        """``(node, out-edges)`` of the nodes whose kind is one of ``kinds``, in graph order: one query,
        only those rows' edges read (a whole-graph question about a few kinds of node)."""
        ks = sorted(kinds)
        with self._lock:
            rows = self._db.conn.execute(f"SELECT id, out FROM nodes WHERE kind IN ({','.join('?' * len(ks))}) "
                                         "ORDER BY seq", ks).fetchall()
        for n, blob in rows:
            out = self._out.get(n)
            if out is None:
                out = self._out[n] = [(v, k, e) for v, k, e in unpack(blob)]
            yield n, out

    def derived(self, name: str, code: str, make: Callable[[], Any]) -> Any:
        """A value derived from this generation alone, made by the code hashed in ``code``
        (:func:`code_stamp`): kept in memory, and read from beside the generation when stored for this very
        generation (its ``state`` and ``gen``) and code, else ``make()`` and stored, replacing what is
        stored under ``name`` for another generation or code.  The caller must not mutate it."""
        memo = f"{name}:{code}"
        if memo in self._derived:
            return self._derived[memo]
        with self._lock:
            key = f"derived:{name}:{code}:{self._db.meta('state')}/{self._db.meta('gen')}"
            row = self._db.conn.execute("SELECT value FROM blobs WHERE key=?", (key,)).fetchone()
        if row is not None:
            value = unpack(row[0])
        else:
            value = make()
            self._db.store_beside(key, pack(value), f"derived:{name}:")
        self._derived[memo] = value
        return value

    def ids_of_kind(self, kind: str) -> set[str]:
        """Every node of ``kind`` (an index look-up; attributes not read)."""
        with self._lock:
            return {n for (n,) in self._db.conn.execute("SELECT id FROM nodes WHERE kind=?", (kind,))}

    def in_edges(self, nbunch: str | Iterable[str], data: bool | str = False, keys: bool = False,
                 default: Any = None) -> list[tuple[Any, ...]]:
        nodes = [nbunch] if isinstance(nbunch, str) else list(nbunch)
        out = []
        for v in nodes:
            out += [(u, v, k, d) for u in self.predecessors(v) for w, k, d in self._edges_of(u) if w == v]
        return list(self._edge_tuples(out, data, keys, default))

    @staticmethod
    def _edge_tuples(edges: Iterable[tuple[str, str, Any, Attrs]], data: bool | str, keys: bool,
                     default: Any) -> Iterator[tuple[Any, ...]]:
        for u, v, k, d in edges:
            tail = (k,) if keys else ()
            if data is True:
                yield (u, v, *tail, d)
            elif data is False:
                yield (u, v, *tail)
            else:
                yield (u, v, *tail, d.get(data, default))

    def successors(self, n: str) -> Iterator[str]:
        return iter(dict.fromkeys(v for v, _, _ in self._edges_of(n)))

    neighbors = successors

    def predecessors(self, n: str) -> Iterator[str]:
        with self._lock:
            rows = self._db.conn.execute("SELECT r.src FROM rev r JOIN nodes n ON n.id = r.src WHERE r.dst=? "
                                         "ORDER BY n.seq", (n,)).fetchall()
        return iter([u for (u,) in rows if any(v == n for v, _, _ in self._edges_of(u))])

    def out_degree(self, n: str) -> int:
        return len(self._edges_of(n))

    def in_degree(self, n: str) -> int:
        return len(self.in_edges(n))

    def get_edge_data(self, u: str, v: str, key: str | None = None, default: Any = None) -> Any:
        found = {k: d for w, k, d in self._edges_of(u) if w == v}
        if key is not None:
            return found.get(key, default)
        return found or default

    def to_networkx(self) -> nx.MultiDiGraph[str]:
        """The whole graph in memory (node and edge order as linked)."""
        import networkx as nx  # lazy: start-up

        g: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        g.graph.update(self.graph)
        with self._lock:
            rows = self._db.conn.execute("SELECT id, attrs, out FROM nodes ORDER BY seq").fetchall()
        edges = []
        for n, attrs, out in rows:
            g.add_node(n, **(self._node.get(n) or unpack(attrs)))
            edges += [(n, v, k, d) for v, k, d in unpack(out)]
        for u, v, k, d in edges:
            g.add_edge(u, v, key=k, **d)
        return g

    def counts(self) -> dict[str, Any]:
        return self._summary


__all__ = ["StoredGraph", "pack", "unpack", "summary_of", "last_segment", "node_file", "candidates_key", "SHARED"]
