"""Writing one generation of the stored index: every file's rows, the tables' rows and the summary.

A full build writes a whole generation in one transaction (:func:`write_generation`); a
re-link rewrites some files' rows (``incremental.py``).  Either ends with :func:`set_meta`:
the state key the generation stands for, its number, the vendored trees' signature and the
summary ``index`` prints without reading the graph.
"""

from __future__ import annotations

import marshal
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from apxtui.index.dropped import by_category, drop_rows
from apxtui.index.factstore import Record, contribution_rows_of
from apxtui.index.store import SHARED, add_counts, last_segment, pack, unpack

if TYPE_CHECKING:
    from apxtui.index.build import _Build
    from apxtui.index.linkjob import FileLink

#: Parse-cache versions no generation uses are dropped once older than this (seconds).
FACTS_KEEP_S = 3600


def write_generation(b: _Build, order: list[str], recs: dict[str, Record], links: dict[str, FileLink],
                     vendored_indexed: list[str]) -> None:
    """Replace the stored generation with ``links`` (one transaction)."""
    rank = {rel: i for i, rel in enumerate(order)}
    shared: dict[str, tuple[int, int, dict[str, Any]]] = {}  # id → (creator rank, position, attrs)
    owned_rows: dict[str, list[Any]] = {}
    for rel in order:
        r = rank[rel]
        for i, (nid, kind, last, attrs, out) in enumerate(links[rel].nodes):
            if nid in owned_rows:  # two files make the same node (a duplicated PyO3 name): merge as networkx would
                prev = owned_rows[nid]
                merged = {**unpack(prev[5]), **unpack(attrs)}
                prev[3], prev[5], prev[6] = merged.get("kind", ""), pack(merged), pack(unpack(prev[6]) + unpack(out))
                continue
            owned_rows[nid] = [nid, rel, (r << 20) | i, kind, last, attrs, out]
        for j, (nid, sattrs) in enumerate(links[rel].shared.items()):
            if nid not in shared:
                shared[nid] = (r, j, sattrs)
    shared_rows = [(nid, SHARED, (r << 20) | (1 << 19) | j, sa.get("kind", ""), _last(sa), pack(sa), pack([]))
                   for nid, (r, j, sa) in shared.items() if nid not in owned_rows]
    now = int(time.time())
    with b.db.write() as c:
        for table in ("nodes", "rev", "tabs", "files", "drops"):
            c.execute(f"DELETE FROM {table}")
        c.executemany("INSERT OR IGNORE INTO facts VALUES (?, ?, ?, ?, ?, ?, ?)",
                      [(*recs[rel], now) for rel in order])
        c.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?)", owned_rows.values())
        c.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?)", shared_rows)
        c.executemany("INSERT OR IGNORE INTO rev VALUES (?, ?)", (p for rel in order for p in links[rel].rev))
        c.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)",
                      ((rel, rank[rel], recs[rel][1], int(b.sources[rel].vendored), pack(links[rel].info),
                        marshal.dumps(links[rel].shared)) for rel in order))
        c.executemany("INSERT INTO tabs VALUES (?, ?, ?, ?)",
                      ((tab, key, rank[rel], value) for rel in order
                       for tab, key, value in contribution_rows_of(recs[rel])))
        c.executemany("INSERT INTO drops VALUES (?, ?, ?, ?, ?)",
                      (row for rel in order for row in drop_rows(rank[rel], rel, links[rel].info)))
        c.executemany("INSERT OR REPLACE INTO stat VALUES (?, ?, ?, ?, ?, ?)", b.stat_rows)
        c.execute("DELETE FROM facts WHERE added < ? AND NOT EXISTS (SELECT 1 FROM files WHERE files.rel = facts.rel "
                  "AND (files.key = facts.key OR files.key LIKE facts.key || '+%'))",  # expanded: keep the parse too
                  (now - FACTS_KEEP_S,))
        summary = recount(c)
        summary["vendored_indexed"] = vendored_indexed
        set_meta(c, b.state, b.shared_signature(), summary, b.rust_indexes)


#: ``set_meta``'s ``rust_indexes`` for "as stored" (a re-link that did not change them: megabytes not rewritten).
KEEP_STORED = b""


def set_meta(c: sqlite3.Connection, state: str, vendored: str, summary: dict[str, Any],
             rust_indexes: bytes | None, rust_patch: bytes | None = None) -> None:
    """The generation's identity and summary, and the Rust resolver's indexes (a re-link patches them;
    :data:`KEEP_STORED`: left as stored, with ``rust_patch``, when given, as the change to them
    (``rust_indexes.diff``: it replaces the one stored); new indexes drop the stored change)."""
    gen = c.execute("SELECT value FROM meta WHERE key='gen'").fetchone()
    c.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                  [("state", state), ("gen", (gen[0] if gen else 0) + 1), ("vendored", vendored),
                   ("summary", pack(summary))])
    if rust_indexes == KEEP_STORED:
        if rust_patch is not None:
            c.execute("INSERT OR REPLACE INTO meta VALUES ('rust_indexes_patch', ?)", (rust_patch,))
        return
    c.execute("DELETE FROM meta WHERE key='rust_indexes_patch'")
    if rust_indexes is None:
        c.execute("DELETE FROM meta WHERE key='rust_indexes'")
    else:
        c.execute("INSERT OR REPLACE INTO meta VALUES ('rust_indexes', ?)", (rust_indexes,))


def _last(attrs: dict[str, Any]) -> str:
    return last_segment(attrs.get("qualname", ""))


def sorted_counts(edges: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {k: dict(sorted(edges[k].items())) for k in sorted(edges)}


def recount(w: sqlite3.Connection) -> dict[str, Any]:
    """The summary of the stored generation, from the per-file link records."""
    edges: dict[str, dict[str, int]] = {}
    dropped: dict[str, int] = {}
    issues: list[tuple[Any, ...]] = []
    for (blob,) in w.execute("SELECT link FROM files ORDER BY rank"):
        info = unpack(blob)
        add_counts(edges, info["edges"])
        for k, n in info["dropped"].items():
            dropped[k] = dropped.get(k, 0) + n
        issues += [tuple(i) for i in info["issues"]]
    symbols = dict(w.execute("SELECT kind, count(*) FROM nodes GROUP BY kind ORDER BY kind"))
    old = w.execute("SELECT value FROM meta WHERE key='summary'").fetchone()
    vendored_indexed = unpack(old[0]).get("vendored_indexed", []) if old else []
    return {"symbols": symbols, "edges": sorted_counts(edges), "dropped": by_category(dropped),
            "nodes": w.execute("SELECT count(*) FROM nodes").fetchone()[0],
            "edge_count": sum(n for by in edges.values() for n in by.values()), "file_issues": issues,
            "vendored_indexed": vendored_indexed}
