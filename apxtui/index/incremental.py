"""Re-linking only what a change can affect, inside the stored generation.

When a few project files changed (none added or removed, vendored trees untouched):

* when their re-extracted facts equal the stored ones but for the content hash and line count
  (an edit in a comment or in white space), nothing is re-linked: only their keys, parse-cache
  rows, table contributions and module-level caller node (its last line) are rewritten
  (``_same_facts``);
* the changed files are re-extracted and re-linked against the *stored* symbol tables
  (:class:`~apxtui.index.stored_tables.StoredTables`, their own rows replaced by their new
  contributions), reading only the keys their calls look up;
* when a changed file's interface (``interface.py``) differs, every file whose words
  (``factstore.words_of``: the names its linking can depend on) meet the names in the
  difference is re-linked too, as is every file with an edge into a definition that is gone;
* edges of the other files into the changed files' definitions are carried over to the
  definitions' new node ids (line numbers move), and the shared nodes (externals,
  vendor APIs, included files) are re-derived from the files that reference them;
* the rows of the re-linked files, their table contributions and the summary are
  rewritten in one transaction.

Whatever this cannot prove equivalent to a full link — too many files, a change in the
names that decide which vendored files are indexed, a definition claimed by two files —
returns False and the caller links everything.  ``tests/test_incremental.py`` compares
the result with a full link.
"""

from __future__ import annotations

import marshal
import pickle
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from apxtui.facts import FileFacts
from apxtui.index.dropped import by_category, drop_rows, sorted_categories
from apxtui.index.expanded import base_key, expand_records
from apxtui.index.factstore import (
    Record,
    contribution_rows_of,
    load_facts,
    load_iface,
    load_iface_flagged,
    macro_names_of,
)
from apxtui.index.generation import FACTS_KEEP_S, KEEP_STORED, set_meta, sorted_counts
from apxtui.index.includes import files_by_base, resolve_include
from apxtui.index.interface import from_plain, interface_facts, interface_key, to_plain
from apxtui.index.store import SHARED, add_counts, candidates_key, last_segment, node_file, pack, unpack
from apxtui.index.stored_tables import StoredTables, contribution
from apxtui.index.tables import Tables, node_id
from apxtui.vocab import GRAPH_NODE_KINDS, module_node_id

if TYPE_CHECKING:
    from apxtui.index.build import _Build
    from apxtui.index.linkjob import FileLink, LinkContext

#: Names too common to tell which files an interface change reaches (they are in every file).
_COMMON = {"self", "Self", "crate", "super", "pub", "mut", "const", "ref", "dyn", "impl", "fn", "str", "bool",
           "usize", "isize", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64", "char", "void",
           "int", "float", "double", "unsigned", "auto", "None", "Result", "Option", "Vec", "String", "Box", "Arc"}
_WORD = re.compile(r"[A-Za-z_]\w*")
#: Interface attributes naming types, traits or members: their words are what other files may name.
_TYPE_ATTRS = {"variant_types", "variant_fields", "variants", "type_path", "trait_path", "aliased", "supertraits",
               "methods", "bases", "trait_qualname"}


#: More changed files than this: a full re-link is as quick and surely right.
MAX_INCREMENTAL = 32
#: Changed entries of the Rust resolver's indexes past which a re-link stores them whole again
#: (below: only the change, beside the indexes as a full build stored them; megabytes not rewritten).
MAX_PATCH = 3000


def link_file(f: FileFacts, ctx: LinkContext) -> FileLink:
    """``linkjob.link_file``, imported when a file is re-linked (not for an edit that leaves the facts as stored)."""
    from apxtui.index.linkjob import link_file as link  # lazy: start-up (the linker and its resolvers)

    return link(f, ctx)


class Abandon(Exception):
    """The change cannot be applied incrementally: link everything."""


def _def_words(d: tuple[Any, ...]) -> set[str]:
    kind, name, qualname, container, trait, symbol = d[:6]
    fields = d[13]
    words = {name, container, trait, symbol, *qualname.replace(".", "::").split("::")[-2:]}
    words |= {k for k, _ in fields}
    for k, v in d[14]:
        if k in _TYPE_ATTRS and v != "None":
            words |= set(_WORD.findall(v))
    return words


def _import_words(item: tuple[Any, ...]) -> set[str]:
    kind, path, alias = item[:3]
    if kind == "use" and alias == "*":
        raise Abandon("a glob import changed")  # the names it brings in are not written anywhere
    return {alias, re.split(r"::|\.|/", path)[-1]}


def _binding_words(item: tuple[Any, ...]) -> set[str]:
    kind, python_name, rust_qualname, python_class, rust_type = item[:5]
    if kind == "module":  # the number of native modules decides every class's module
        raise Abandon("a PyO3 module changed")
    return {python_name, python_class, rust_type, rust_qualname.split("::")[-1]}


def changed_words(old: FileFacts, new: FileFacts) -> set[str]:
    """Names in the difference between two interfaces of one file: another file whose
    words miss them all links the same either way.  (Include changes are followed by the
    include graph instead; a changed glob import raises :class:`Abandon`.)"""
    a, b = interface_key(old), interface_key(new)
    words: set[str] = set()
    if a[0] != b[0]:  # the module path itself (a renamed crate, a removed __init__.py)
        words |= set(_WORD.findall(f"{a[0]} {b[0]}"))
    if a[5] != b[5]:  # the Python names bound to C++ functions (TORCH_LIBRARY, pybind11)
        raise Abandon("a registration block changed")
    for i, part in ((2, _def_words), (3, _import_words), (4, _binding_words)):
        old_items, new_items = list(a[i]), list(b[i])
        for item in old_items:
            if item in new_items:
                new_items.remove(item)
            else:
                words |= part(item)
        for item in new_items:
            words |= part(item)
    return {w for w in words if w and w not in _COMMON}


def _includes_differ(old: FileFacts, new: FileFacts) -> bool:
    return [i.path for i in old.imports if i.kind == "include"] != [i.path for i in new.imports if i.kind == "include"]


class _Known(Mapping[str, str]):
    """Node id → kind in the generation being updated: the re-linked files' new nodes,
    the stored nodes of the others."""

    def __init__(self, conn: sqlite3.Connection, changed: set[str], added: dict[str, str], pyo3: set[str],
                 cpp: Mapping[str, str] | None = None):
        self.conn = conn
        self.changed = changed
        self.added = added
        self.pyo3 = pyo3
        self.cpp = cpp or {}  # C++ functions' binding nodes (TORCH_LIBRARY, pybind11), from the tables
        self.memo: dict[str, str | None] = {}

    def _kind(self, n: str) -> str | None:
        if n in self.added:
            return self.added[n]
        if n in self.cpp:
            return self.cpp[n]
        if n.startswith("pyo3:"):
            return "pyo3_binding" if n in self.pyo3 else None
        if node_file(n) in self.changed:
            return None
        if n not in self.memo:
            row = self.conn.execute("SELECT kind FROM nodes WHERE id=?", (n,)).fetchone()
            self.memo[n] = row[0] if row and row[0] in GRAPH_NODE_KINDS else None
        return self.memo[n]

    def __getitem__(self, n: str) -> str:
        k = self._kind(n)
        if k is None:
            raise KeyError(n)
        return k

    def __contains__(self, n: object) -> bool:
        return isinstance(n, str) and self._kind(n) is not None

    def get(self, n: str, default: Any = None) -> Any:
        k = self._kind(n)
        return default if k is None else k

    def __iter__(self) -> Iterator[str]:
        raise TypeError("stored node kinds are looked up, not listed")

    def __len__(self) -> int:
        raise TypeError("stored node kinds are looked up, not listed")


class _Includes(Mapping[str, set[str]]):
    """File → files it includes, from the (stored or overlaid) interfaces, on demand."""

    def __init__(self, tables: StoredTables, all_files: set[str], by_base: dict[str, list[str]]):
        self.tables = tables
        self.all_files = all_files
        self.by_base = by_base
        self.memo: dict[str, set[str]] = {}

    def __getitem__(self, rel: str) -> set[str]:
        if rel not in self.memo:
            f = self.tables.file_of.get(rel)
            out = set()
            for imp in f.imports if f is not None else ():
                if imp.kind == "include":
                    t = resolve_include(imp.path, rel, self.all_files, self.by_base)
                    if t is not None:
                        out.add(t)
            self.memo[rel] = out
        return self.memo[rel]

    def get(self, rel: str, default: Any = None) -> Any:
        return self[rel]

    def __iter__(self) -> Iterator[str]:
        raise TypeError("looked up, not listed")

    def __len__(self) -> int:
        raise TypeError("looked up, not listed")


def _in(w: sqlite3.Connection, sql: str, values: Iterable[Any], chunk: int = 500) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` (one ``IN ({})`` placeholder list) for all ``values``, a few hundred at a time."""
    values = list(values)
    out: list[tuple[Any, ...]] = []
    for i in range(0, len(values), chunk):
        part = values[i:i + chunk]
        out += w.execute(sql.format(",".join("?" * len(part))), part).fetchall()
    return out


def _ids_by_name(f: FileFacts) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for d in sorted(f.defs, key=lambda d: d.line):
        out[(f.file, d.qualname)].append(node_id(d))
    return out


def relink_changed(b: _Build) -> bool:
    """Apply a few changed files to the stored generation; False: link everything instead."""
    db = b.db
    if db.temporary:
        return False
    c = db.conn
    db.begin_read()
    try:
        gen0 = db.meta("gen")
        if db.meta("state") is None or db.meta("vendored") != b.shared_signature():
            return False
        old = {rel: (rank, key, lazy) for rel, rank, key, lazy in c.execute("SELECT rel, rank, key, lazy FROM files")}
    finally:
        db.end_read()
    if {r for r, v in old.items() if not v[2]} != set(b.keys):
        return False  # files added or removed
    changed = sorted(r for r in b.keys if base_key(old[r][1]) != b.keys[r])
    if not changed or len(changed) > MAX_INCREMENTAL:
        return False
    recs = b.records(changed, {r: b.keys[r] for r in changed})
    if set(recs) != set(changed):
        return False
    try:
        with db.write() as w:
            if w.execute("SELECT value FROM meta WHERE key='gen'").fetchone()[0] != gen0:
                raise Abandon("another process stored a generation meanwhile")
            _apply(b, w, old, changed, recs, MAX_INCREMENTAL)
    except Abandon:
        return False
    return True


def _apply(b: _Build, w: sqlite3.Connection, old: dict[str, tuple[Any, ...]], changed: list[str],
           recs: dict[str, Record], limit: int) -> None:
    rank = {rel: v[0] for rel, v in old.items()}
    recs = _expand_changed(b, w, old, changed, recs)
    new_full = {r: load_facts(recs[r][2]) for r in changed}
    if _same_facts(w, old, new_full):
        _write_keys(b, w, rank, changed, recs, new_full)
        return
    new_iface = {r: load_iface(recs[r][3])[0] for r in changed}
    old_iface = {}
    for r in changed:
        row = w.execute("SELECT iface FROM facts WHERE rel=? AND key=?", (r, old[r][1])).fetchone()
        if row is None:
            raise Abandon(f"{r}: stored interface missing")
        old_iface[r] = load_iface(row[0])[0]
    changed_set = set(changed)
    relink = set(changed)
    # definitions whose node ids move: (file, qualname, ordinal) pairs old → new
    remap: dict[str, str] = {}
    gone: set[str] = set()
    for r in changed:
        olds, news = _ids_by_name(old_iface[r]), _ids_by_name(new_iface[r])
        for key, ids in olds.items():
            nids = news.get(key, [])
            remap.update(zip(ids, nids, strict=False))
            gone |= set(ids[len(nids):])
    words: set[str] = set()
    for r in changed:
        if interface_key(old_iface[r]) != interface_key(new_iface[r]):
            words |= changed_words(old_iface[r], new_iface[r])
    todo = [r for r in changed if _includes_differ(old_iface[r], new_iface[r])]
    seen = set(todo)
    while todo:  # files including a file whose includes changed see other definitions now
        for (owner,) in w.execute("SELECT DISTINCT n.owner FROM rev r JOIN nodes n ON n.id = r.src WHERE r.dst=?",
                                  (f"file:{todo.pop()}",)):
            if owner and owner not in seen:
                seen.add(owner)
                todo.append(owner)
    relink |= seen
    if words:
        for rel, blob in w.execute("SELECT f.rel, x.words FROM files f JOIN facts x "
                                   "ON x.rel = f.rel AND x.key = f.key"):
            if rel not in relink and not words.isdisjoint(marshal.loads(blob)):
                relink.add(rel)
    # files with an edge into a definition that is gone
    relink |= {o for (o,) in _in(w, "SELECT DISTINCT n.owner FROM rev r JOIN nodes n ON n.id = r.src "
                                    "WHERE r.dst IN ({})", sorted(gone)) if o}
    if len(relink) > max(limit, len(old) // 10):
        raise Abandon("too many files to re-link")
    # the generation's tables with the changed files' new contributions
    modules = {rel: b.sources[rel].module for rel in old if rel in b.sources}  # as the stored facts were keyed
    tables = StoredTables(w, {rank[r]: contribution(new_iface[r]) for r in changed}, modules)
    all_files = set(b.sources)
    vendored = {rel for rel, sf in b.sources.items() if sf.vendored}
    by_base = files_by_base(all_files)
    includes = _Includes(tables, all_files, by_base)
    for r in changed:  # a new #include of a vendored file not indexed yet: the full build would index it
        if any(t in vendored and t not in old for t in includes[r]):
            raise Abandon("a newly included vendored file")
    _rust_indexes(b, w, tables, old, relink, new_iface, rank, old_iface)
    from apxtui.index.link import cpp_binding_ids, makes_node, pyo3_names  # lazy: start-up (the linker)
    from apxtui.index.linkjob import LinkContext  # lazy: start-up (the linker)

    added = {node_id(d): d.kind for r in changed for d in new_iface[r].defs if makes_node(d)}
    pyo3 = {f"pyo3:{dotted}" for _, dotted in pyo3_names(cast(Tables, tables))}
    cpp = cpp_binding_ids(cast(Tables, tables))
    ctx = LinkContext(tables, _Known(w, changed_set, added, pyo3, cpp), includes, all_files, vendored, by_base,
                      set(old), b.sr.packages)
    links: dict[str, FileLink] = {}
    for rel in sorted(relink, key=rank.__getitem__):
        if rel in new_full:
            f = new_full[rel]
        else:
            row = w.execute("SELECT facts FROM facts WHERE rel=? AND key=?", (rel, old[rel][1])).fetchone()
            if row is None:
                raise Abandon(f"{rel}: stored facts missing")
            f = load_facts(row[0])
        links[rel] = link_file(f, ctx)
    old_link = {rel: (unpack(blob), marshal.loads(sh)) for rel, blob, sh in _in(
        w, "SELECT rel, link, shared FROM files WHERE rel IN ({})", sorted(relink))}
    for rel, fl in links.items():
        if sorted(map(tuple, old_link[rel][0].get("names", []))) != sorted(map(tuple, fl.info["names"])):
            raise Abandon("names that decide the lazily indexed vendored files changed")
    _write(b, w, rank, links, old_link, remap, changed, new_iface, recs)


def _same_facts(w: sqlite3.Connection, old: dict[str, tuple[Any, ...]], new_full: dict[str, FileFacts]) -> bool:
    """Do the changed files' new facts (macro expansions included) equal their stored ones but for
    the content hash and the line count (an edit in a comment or in white space that moves no line)?
    Then every link, table and count is as stored: a link is a function of the files' facts, the
    manifests and the vendored listing, and of the line count only through the module-level caller
    node's ``end_line`` (patched by :func:`_write_keys`).  Build scripts (whose syntax tree is kept
    beside the facts, outside their equality) always re-link."""
    for r, f in new_full.items():
        row = w.execute("SELECT facts FROM facts WHERE rel=? AND key=?", (r, old[r][1])).fetchone()
        if row is None:
            return False
        o = load_facts(row[0])
        if f.syntax is not None or o.syntax is not None or replace(f, sha=o.sha, lines=o.lines) != o:
            return False
        if f.lines != o.lines:
            nid = module_node_id(f.module, f.file)
            node = w.execute("SELECT attrs FROM nodes WHERE id=? AND owner=?", (nid, r)).fetchone()
            if node is not None and unpack(node[0]).get("end_line") != o.lines:
                return False  # not the node link.py makes: re-link
    return True


def _write_keys(b: _Build, w: sqlite3.Connection, rank: dict[str, int], changed: list[str],
                recs: dict[str, Record], new_full: dict[str, FileFacts]) -> None:
    """The generation as stored with the changed files' new keys (their facts are the stored ones but
    for the content hash and the line count, which a module-level caller node ends at)."""
    for r in changed:
        w.execute("INSERT OR IGNORE INTO facts VALUES (?, ?, ?, ?, ?, ?, strftime('%s','now'))", recs[r])
        w.execute("DELETE FROM facts WHERE rel=? AND key NOT IN (?, ?) AND added < strftime('%s','now') - ?",
                  (r, recs[r][1], base_key(recs[r][1]), FACTS_KEEP_S))
        w.execute("UPDATE files SET key=? WHERE rel=?", (recs[r][1], r))
        w.execute("DELETE FROM tabs WHERE rank=?", (rank[r],))  # the same but for the interface's hash and length
        w.executemany("INSERT INTO tabs VALUES (?, ?, ?, ?)",
                      ((tab, key, rank[r], value) for tab, key, value in contribution_rows_of(recs[r])))
        nid = module_node_id(new_full[r].module, r)
        node = w.execute("SELECT attrs FROM nodes WHERE id=? AND owner=?", (nid, r)).fetchone()
        if node is not None:
            attrs = unpack(node[0])
            attrs["end_line"] = new_full[r].lines
            w.execute("UPDATE nodes SET attrs=? WHERE id=?", (pack(attrs), nid))
    w.executemany("INSERT OR REPLACE INTO stat VALUES (?, ?, ?, ?, ?, ?)", b.stat_rows)
    b.rust_indexes = KEEP_STORED
    set_meta(w, b.state, b.shared_signature(), unpack(w.execute("SELECT value FROM meta WHERE key='summary'")
                                                      .fetchone()[0]), b.rust_indexes)


def _macro_rows(f: FileFacts) -> list[tuple[str, str, str, int, tuple[str, ...]]]:
    """What other files' macro expansion reads of ``f``: its macro definitions and its includes."""
    return [(i.kind, i.alias, i.path, 0 if i.kind == "include" else i.line, tuple(i.cfg)) for i in f.imports
            if i.kind in ("macro", "macro_rules", "include")]  # a definition's line is cited by the expansions


class _StoredIfaces(Mapping[str, FileFacts]):
    """Every indexed file's interface (the stored one, or the changed files' new one), read on demand."""

    def __init__(self, w: sqlite3.Connection, old: dict[str, tuple[Any, ...]], new: dict[str, FileFacts]):
        self.w = w
        self.old = old
        self.new = new
        self.memo: dict[str, FileFacts] = {}

    def __getitem__(self, rel: str) -> FileFacts:
        if rel in self.new:
            return self.new[rel]
        if rel not in self.old:
            raise KeyError(rel)
        if rel not in self.memo:
            row = self.w.execute("SELECT iface FROM facts WHERE rel=? AND key=?", (rel, self.old[rel][1])).fetchone()
            if row is None:
                raise Abandon(f"{rel}: stored interface missing")
            self.memo[rel] = load_iface(row[0])[0]
        return self.memo[rel]

    def __iter__(self) -> Iterator[str]:
        return iter(self.old)

    def __len__(self) -> int:
        return len(self.old)


def _expand_changed(b: _Build, w: sqlite3.Connection, old: dict[str, tuple[Any, ...]], changed: list[str],
                    recs: dict[str, Record]) -> dict[str, Record]:
    """The changed files' records with their macro invocations expanded (``expanded.py``), as a full
    build makes them.  A change to what other files' expansions read (macro definitions, includes)
    while other files are expanded: :class:`Abandon` (their expansions would be stale)."""
    new_iface: dict[str, FileFacts] = {}
    flagged: list[str] = []
    for r in changed:
        new_iface[r], _, flag = load_iface_flagged(recs[r][3])
        if flag and not b.sources[r].vendored:
            flagged.append(r)
    expanded = [rel for rel, v in old.items() if rel not in new_iface and "+" in v[1]]
    if expanded:
        stored = _StoredIfaces(w, old, {})
        moved = [row for r in changed for row in set(_macro_rows(stored[r])) ^ set(_macro_rows(new_iface[r]))]
        if any(row[0] != "macro_rules" for row in moved):
            raise Abandon("#defines or includes other files' expansions read changed")
        _check_rust_macro_users(w, old, expanded, {row[1] for row in moved})
    if not flagged:
        return recs
    vendored = {rel for rel, sf in b.sources.items() if sf.vendored}
    ifaces = _StoredIfaces(w, old, new_iface)
    rank = {rel: v[0] for rel, v in old.items()}
    macro_rules = StoredTables(w, {rank[r]: contribution(new_iface[r]) for r in changed}).macro_rules  # as stored
    return {**recs, **expand_records(w, recs, flagged, ifaces, set(b.sources), vendored, rust_table=macro_rules)}


def _check_rust_macro_users(w: sqlite3.Connection, old: dict[str, tuple[Any, ...]], expanded: list[str],
                            names: set[str]) -> None:
    """:class:`Abandon` when an expanded file's item-level invocations use a ``macro_rules!`` name whose
    definitions changed (their lines and text are in its expansion key: ``expanded.macro_signature``);
    a change to macros no other file invokes (a line moved in the file defining them) re-links that
    file alone."""
    if not names:
        return
    for rel in expanded:
        row = w.execute("SELECT iface FROM facts WHERE rel=? AND key=?", (rel, base_key(old[rel][1]))).fetchone()
        if row is None:
            raise Abandon(f"{rel}: stored parse record missing")
        if not names.isdisjoint(macro_names_of((rel, old[rel][1], b"", row[0], b"", b""))):
            raise Abandon(f"{rel}'s expansion reads macro_rules! that changed")


def _rust_indexes(b: _Build, w: sqlite3.Connection, tables: StoredTables, old: dict[str, tuple[Any, ...]],
                  relink: set[str], new_iface: dict[str, FileFacts], rank: dict[str, int],
                  old_iface: dict[str, FileFacts]) -> None:
    """The Rust resolver's indexes for the re-link (shared by its resolvers through ``tables``) and
    for the new generation: the stored ones with the re-linked files' entries made again — or the
    stored ones as they are when the changed files' definitions and imports are all unchanged
    (line numbers included: node ids), as after an edit inside a body that moves no definition."""
    from apxtui.index import rust_indexes  # lazy: start-up
    from apxtui.index.resolve_rust import RustResolver, pack_indexes  # lazy: start-up

    stored = dict(w.execute("SELECT key, value FROM meta WHERE key IN ('rust_indexes', 'rust_indexes_patch')"))
    if "rust_indexes" not in stored:  # (an index stored without them): made from every file's stored tables
        r = RustResolver(cast(Tables, tables), b.sr.packages)
    elif all(old_iface[f].defs == new_iface[f].defs and old_iface[f].imports == new_iface[f].imports
             for f in new_iface):  # the other re-linked files' interfaces are the stored ones
        RustResolver(cast(Tables, tables), b.sr.packages,  # shared via tables
                     indexes=rust_indexes.unpack(stored["rust_indexes"], stored.get("rust_indexes_patch")))
        b.rust_indexes = KEEP_STORED
        return
    else:
        ifaces = {}
        for rel in relink:
            if rel in new_iface:
                ifaces[rel] = new_iface[rel]
                continue
            got = w.execute("SELECT iface FROM facts WHERE rel=? AND key=?", (rel, old[rel][1])).fetchone()
            if got is None:
                raise Abandon(f"{rel}: stored interface missing")
            ifaces[rel] = load_iface(got[0])[0]
        base = rust_indexes.unpack(stored["rust_indexes"])
        patch = stored.get("rust_indexes_patch")
        r = RustResolver(cast(Tables, tables), b.sr.packages,
                         indexes=base if patch is None else rust_indexes.patched(base, pickle.loads(patch)))
        r.replace_files(ifaces, rank)
        change = rust_indexes.diff(base, r.stored_indexes())
        if rust_indexes.patch_size(change) <= MAX_PATCH:  # the stored indexes stay, beside what changed
            b.rust_indexes, b.rust_patch = KEEP_STORED, rust_indexes.pack_patch(change)
            return
    b.rust_indexes = pack_indexes(r.stored_indexes())


def _write(b: _Build, w: sqlite3.Connection, rank: dict[str, int], links: dict[str, FileLink],
           old_link: dict[str, tuple[Any, ...]], remap: dict[str, str], changed: list[str],
           new_iface: dict[str, FileFacts], recs: dict[str, Record]) -> None:
    relink = sorted(links, key=rank.__getitem__)
    old_rows = _in(w, "SELECT id, out, attrs FROM nodes WHERE owner IN ({})", relink)
    old_owned = [n for n, _, _ in old_rows]
    old_owned_set = set(old_owned)
    old_pairs = {(v, n) for n, out, _ in old_rows for v, _, _ in unpack(out)}
    old_pairs |= {(candidates_key(node_file(c)), n) for n, _, attrs in old_rows
                  for c in unpack(attrs).get("candidates", ())}
    # edges of the other files into moved definitions: carried over to the new ids
    moved = [o for o, n in remap.items() if o != n]
    incoming: dict[str, list[str]] = defaultdict(list)
    targets = moved + [candidates_key(r) for r in changed] if moved else []
    for dst, src in _in(w, "SELECT dst, src FROM rev WHERE dst IN ({})", targets):
        if src not in old_owned_set:
            incoming[src].append(dst)
    # every node row this write can add, drop or re-kind: counted before and after (the summary's counts)
    touched = sorted(old_owned_set | {t[0] for fl in links.values() for t in fl.nodes} | _shared_affected(
        links, old_link, old_owned))
    kinds_before = _kind_counts(w, touched)
    w.executemany("DELETE FROM rev WHERE dst=? AND src=?", sorted(old_pairs))
    w.executemany("DELETE FROM nodes WHERE owner=?", [(r,) for r in relink])
    for rel in relink:
        fl = links[rel]
        for i, (nid, kind, last, attrs, out) in enumerate(fl.nodes):
            row = w.execute("SELECT owner FROM nodes WHERE id=?", (nid,)).fetchone()
            if row is not None and row[0] != SHARED:
                raise Abandon(f"{nid} is made by two files")
            w.execute("INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (nid, rel, (rank[rel] << 20) | i, kind, last, attrs, out))
        w.executemany("INSERT OR IGNORE INTO rev VALUES (?, ?)", fl.rev)
    for src, dsts in incoming.items():
        row = w.execute("SELECT attrs, out FROM nodes WHERE id=?", (src,)).fetchone()
        if row is None:
            continue
        node = unpack(row[0])
        edges = [(remap.get(v, v), k, d) for v, k, d in unpack(row[1])]
        if node.get("candidates"):
            node["candidates"] = sorted(remap.get(x, x) for x in node["candidates"])
        w.execute("UPDATE nodes SET attrs=?, out=? WHERE id=?", (pack(node), pack(edges), src))
        for dst in dsts:
            if dst in remap:
                w.execute("DELETE FROM rev WHERE dst=? AND src=?", (dst, src))
                w.execute("INSERT OR IGNORE INTO rev VALUES (?, ?)", (remap[dst], src))
    _shared(w, rank, links, old_link, old_owned)
    for rel in relink:
        fl = links[rel]
        key = recs[rel][1] if rel in recs else None
        shared = marshal.dumps({n: fl.shared[n] for n in fl.shared})
        w.execute("DELETE FROM drops WHERE rank=?", (rank[rel],))
        w.executemany("INSERT INTO drops VALUES (?, ?, ?, ?, ?)", drop_rows(rank[rel], rel, fl.info))
        if key is not None:
            w.execute("UPDATE files SET key=?, link=?, shared=? WHERE rel=?", (key, pack(fl.info), shared, rel))
        else:
            w.execute("UPDATE files SET link=?, shared=? WHERE rel=?", (pack(fl.info), shared, rel))
    for r in changed:  # older parse-cache versions of the file, once no reader can still want them
        w.execute("INSERT OR IGNORE INTO facts VALUES (?, ?, ?, ?, ?, ?, strftime('%s','now'))", recs[r])
        w.execute("DELETE FROM facts WHERE rel=? AND key NOT IN (?, ?) AND added < strftime('%s','now') - ?",
                  (r, recs[r][1], base_key(recs[r][1]), FACTS_KEEP_S))
        w.execute("DELETE FROM tabs WHERE rank=?", (rank[r],))
        w.executemany("INSERT INTO tabs VALUES (?, ?, ?, ?)",
                      ((tab, key, rank[r], value) for tab, key, value in contribution_rows_of(recs[r])))
    w.executemany("INSERT OR REPLACE INTO stat VALUES (?, ?, ?, ?, ?, ?)", b.stat_rows)
    set_meta(w, b.state, b.shared_signature(), recount_after(w, rank, old_link, links,
                                                            (kinds_before, _kind_counts(w, touched))), b.rust_indexes,
             b.rust_patch)


def _kind_counts(w: sqlite3.Connection, ids: list[str]) -> dict[str, int]:
    """Node rows per kind among ``ids``."""
    out: dict[str, int] = defaultdict(int)
    for kind, n in _in(w, "SELECT kind, count(*) FROM nodes WHERE id IN ({}) GROUP BY kind", ids):
        out[kind] += n
    return out


def _shared_affected(links: dict[str, FileLink], old_link: dict[str, tuple[Any, ...]],
                     old_owned: Iterable[str]) -> set[str]:
    """The shared nodes :func:`_shared` re-derives: those the re-linked files referenced or reference."""
    affected = {n for rel in links for n in old_link[rel][1]} | {n for fl in links.values() for n in fl.shared}
    return affected | {n for n in old_owned if n.startswith("file:")}


def _shared(w: sqlite3.Connection, rank: dict[str, int], links: dict[str, FileLink],
            old_link: dict[str, tuple[Any, ...]], old_owned: list[str]) -> None:
    """Re-derive the shared nodes the re-linked files referenced before or reference now: kept while
    a file references them, made with the attributes the first file (in file order) gives them."""
    affected_list = sorted(_shared_affected(links, old_link, old_owned))
    owners: dict[str, set[str]] = defaultdict(set)
    for dst, owner in _in(w, "SELECT r.dst, n.owner FROM rev r JOIN nodes n ON n.id = r.src WHERE r.dst IN ({})",
                          affected_list):
        if owner != SHARED:
            owners[dst].add(owner)
    existing = dict(_in(w, "SELECT id, owner FROM nodes WHERE id IN ({})", affected_list))
    creators = {n: min(owners[n], key=lambda o: rank.get(o, 1 << 30)) for n in affected_list if owners.get(n)}
    stored = {rel: marshal.loads(blob) for rel, blob in _in(w, "SELECT rel, shared FROM files WHERE rel IN ({})",
                                                            sorted({c for c in creators.values() if c not in links}))}
    order: dict[str, dict[str, int]] = {}  # creator → shared node → its position (the row-order tiebreak)
    for n in affected_list:
        if existing.get(n, SHARED) != SHARED:
            continue  # an owned file: node
        if n not in creators:
            w.execute("DELETE FROM nodes WHERE id=? AND owner=?", (n, SHARED))
            continue
        creator = creators[n]
        shared = links[creator].shared if creator in links else stored.get(creator, {})
        if n not in shared:
            continue
        attrs = shared[n]
        pos = order.get(creator)
        if pos is None:
            pos = order[creator] = {m: j for j, m in enumerate(shared)}
        w.execute("INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (n, SHARED, (rank[creator] << 20) | (1 << 19) | pos[n], attrs.get("kind", ""),
                   last_segment(attrs.get("qualname", "")), pack(attrs), pack([])))


def recount_after(w: sqlite3.Connection, rank: dict[str, int], old_link: dict[str, tuple[Any, ...]],
                  links: dict[str, FileLink],
                  kinds: tuple[dict[str, int], dict[str, int]] | None = None) -> dict[str, Any]:
    """The stored summary with the re-linked files' old counts replaced by their new ones; ``kinds``:
    the node rows per kind among every row the write touched, before and after it (else counted
    over all nodes)."""
    summary: dict[str, Any] = unpack(w.execute("SELECT value FROM meta WHERE key='summary'").fetchone()[0])
    edges, dropped = summary["edges"], summary["dropped"]
    for rel, fl in links.items():
        old = old_link[rel][0]
        add_counts(edges, {k: {r: -n for r, n in by.items()} for k, by in old["edges"].items()})
        add_counts(edges, fl.info["edges"])
        for k, n in by_category(old["dropped"]).items():
            dropped[k] = dropped.get(k, 0) - n
        for k, n in by_category(fl.info["dropped"]).items():
            dropped[k] = dropped.get(k, 0) + n
    summary["edges"] = sorted_counts({k: {r: n for r, n in by.items() if n} for k, by in edges.items()
                                       if any(by.values())})
    summary["dropped"] = sorted_categories(dropped)
    issues = [tuple(i) for i in summary["file_issues"] if i[0] not in links]
    issues += [tuple(i) for fl in links.values() for i in fl.info["issues"]]
    summary["file_issues"] = sorted(issues, key=lambda i: rank.get(i[0], 1 << 30))
    if kinds is None:
        summary["symbols"] = dict(w.execute("SELECT kind, count(*) FROM nodes GROUP BY kind ORDER BY kind"))
        summary["nodes"] = w.execute("SELECT count(*) FROM nodes").fetchone()[0]
    else:
        before, after = kinds
        symbols = dict(summary["symbols"])
        for k in set(before) | set(after):
            symbols[k] = symbols.get(k, 0) - before.get(k, 0) + after.get(k, 0)
        summary["symbols"] = {k: n for k, n in sorted(symbols.items()) if n}
        summary["nodes"] += sum(after.values()) - sum(before.values())
    summary["edge_count"] = sum(n for by in summary["edges"].values() for n in by.values())
    return summary


__all__ = ["interface_facts", "interface_key", "relink_changed", "to_plain", "from_plain", "changed_words"]
