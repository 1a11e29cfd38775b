"""The indexer: scan → hash → parse cache → symbol tables → link → a stored generation → :class:`Index`.

* **Hashing** trusts a file's cached content hash while its size, mtime, ctime and inode
  are unchanged (and the change is not too recent to tell), else reads it.
* **Warm start**: when the state key (every project file's path and fact key, the
  vendored trees' listing) equals the stored generation's, nothing is read but that
  key: the :class:`Index` is a lazy view (:class:`~apxtui.index.store.StoredGraph`)
  of the generation, inside one database snapshot.
* **Incremental** (``incremental.py``): a few changed files are re-linked, with the
  files whose links their interface change could affect, against the stored tables.
* **Full**: files missing from the parse cache are parsed over worker processes;
  vendored trees are parsed lazily (only the vendored files that project code
  ``#include``s, or that define a name project code calls or launches but does not
  define); the symbol tables are built from every file's interface; then files are
  linked in parallel (workers forked after the tables exist) and the generation is
  written in one transaction.

Without the cache (``use_cache=False``, or an unwritable cache directory) the same
happens in a private temporary database, removed when the build ends.  The cyclic
garbage collector is off during a build: it only makes acyclic records.
"""

from __future__ import annotations

import gc
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apxtui.errors import InputFileError
from apxtui.facts import Definition, FileFacts, Issue
from apxtui.index.db import CacheUnavailable, Database, db_path, stamp
from apxtui.index.factstore import Job, Record, fact_key, load_facts, load_iface, load_iface_flagged, parse_jobs
from apxtui.index.gcpause import gc_paused
from apxtui.index.generation import write_generation
from apxtui.index.store import StoredGraph, summary_of, unpack
from apxtui.index.stored_tables import StoredTables
from apxtui.index.tables import Tables, node_id
from apxtui.inputs import read_limited
from apxtui.parse import content_hash
from apxtui.scan import DEFAULT_VENDORED, EXTENSIONS, MAX_BYTES, ScanResult, SourceFile, checkout_dir, scan

if TYPE_CHECKING:  # the linker (and networkx) load only when something is linked
    import networkx as nx

    from apxtui.index.linkjob import FileLink, LinkContext

#: Unresolved names never worth a search through vendored trees.
LAZY_SKIP = {"dim3", "make_float2", "make_float4", "make_int2", "min", "max", "swap", "move", "forward"}

Progress = Callable[[int, int, str], None]  # (done, total, current file)


#: Batches at least this big go to worker processes (when there is more than one).
PARALLEL_MIN_FILES = 32
#: A cached content hash is trusted only for files last changed longer ago than this.
RACY_NS = 2_000_000_000


@dataclass
class Index:
    """The result of indexing: the linked graph plus the per-file facts behind it.

    ``graph`` is a :class:`StoredGraph` (a lazy view of the stored generation) or, for
    graphs built in memory, a networkx ``MultiDiGraph``; ``facts`` maps each indexed
    file to its facts, read on first access.
    """

    root: Path
    scan: ScanResult
    facts: Mapping[str, FileFacts]
    graph: Any
    issues: list[Issue] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    parsed: list[str] = field(default_factory=list)  # files parsed in this run (cache misses)
    vendored_indexed: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    db: Database | None = None
    _defs_by_file: dict[str, dict[tuple[str, int], Definition]] = field(default_factory=dict, repr=False)

    @property
    def tables(self) -> Any:
        """The linker's symbol tables (stored ones are read key by key)."""
        if self.db is not None:
            return StoredTables(self.db.conn)
        t = Tables()
        for f in self.facts.values():
            t.add_file(f)
        t.finish()
        return t

    def definition(self, node_id: str) -> Definition | None:
        """The extracted Definition behind a graph node (None for bindings/vendor/external)."""
        d = self.graph.nodes.get(node_id)
        if not d or not d.get("file") or d.get("file") not in self.facts:
            return None
        by = self._defs_by_file.get(d["file"])
        if by is None:
            by = {}
            for df in self.facts[d["file"]].defs:
                by.setdefault((df.qualname, df.line), df)
            self._defs_by_file[d["file"]] = by
        return by.get((d.get("qualname"), d.get("line")))

    def summary(self) -> dict[str, Any]:
        """Counts: ``symbols`` by kind, ``edges`` by kind and resolution, ``dropped`` calls by category of reason."""
        if isinstance(self.graph, StoredGraph):
            return self.graph.counts()
        return summary_of(self.graph)

    def dropped_sample(self) -> dict[str, list[dict[str, Any]]]:
        """Category → a few dropped calls with ``file``/``line``/``reason`` (stored index only)."""
        if self.db is None:
            return {}
        from apxtui.index.dropped import sample  # lazy: only `index` shows it

        with self.db.lock:
            return sample(self.db.conn)

    def full_graph(self) -> nx.MultiDiGraph[str]:
        """The whole graph as a networkx ``MultiDiGraph`` (loads every row of a stored one)."""
        return self.graph.to_networkx() if isinstance(self.graph, StoredGraph) else self.graph

    def close(self) -> None:
        if self.db is not None:
            self.db.close()


class LazyFacts(Mapping[str, FileFacts]):
    """Per-file facts of a stored generation, read (in its snapshot) on first access."""

    def __init__(self, db: Database, keys: dict[str, str]):
        self.db = db
        self.fact_keys = keys  # file → its parse-cache key in this generation
        self._loaded: dict[str, FileFacts] = {}

    def __getitem__(self, rel: str) -> FileFacts:
        if rel not in self.fact_keys:
            raise KeyError(rel)
        if rel not in self._loaded:
            with self.db.lock:
                row = self.db.conn.execute("SELECT facts FROM facts WHERE rel=? AND key=?",
                                           (rel, self.fact_keys[rel])).fetchone()
            if row is None:
                raise KeyError(f"{rel}: facts missing from the cache")
            self._loaded[rel] = load_facts(row[0])
        return self._loaded[rel]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fact_keys)

    def __len__(self) -> int:
        return len(self.fact_keys)


def _read(root: Path, sf: SourceFile) -> tuple[bytes | None, Issue | None]:
    """The file's bytes, bounded like the scan (it may have grown or become a FIFO since)."""
    try:
        return read_limited(root / sf.rel, MAX_BYTES, sf.rel), None
    except InputFileError as e:
        return None, Issue(sf.rel, "unreadable", str(e).removeprefix(f"{sf.rel}: "))


def open_database(root: Path, use_cache: bool, queries: str) -> tuple[Database, list[str]]:
    """The checkout's cache database, or a private temporary one (no cache / unusable cache)."""
    notices: list[str] = []
    st = stamp(queries)
    if use_cache:
        try:
            db = Database(db_path(root), st)
            return db, db.notices
        except CacheUnavailable as e:
            notices.append(str(e))
    db = Database(None, st, temporary=True)
    return db, notices + db.notices


def compile_ahead(db: Database, root: Path) -> None:
    """Compile, beside the scan, the queries of the languages of the indexed project files that are
    likely to be parsed: those whose stat signature differs from the one stored with their content
    hash, or that have none stored (changed too recently to trust one: ``RACY_NS``)."""
    from apxtui.parse.languages import compile_ahead as start  # lazy: start-up (tree-sitter)

    if db.temporary:
        return
    langs = set()
    for rel, size, mtime, ctime, ino in db.conn.execute(
            "SELECT f.rel, s.size, s.mtime, s.ctime, s.ino FROM files f LEFT JOIN stat s ON s.rel = f.rel "
            "WHERE NOT f.lazy"):
        lang = EXTENSIONS.get(os.path.splitext(rel)[1].lower())
        if lang is None or lang in langs:
            continue
        if size is None:
            langs.add(lang)
            continue
        try:
            st = os.stat(f"{root}/{rel}")
        except OSError:
            continue
        if (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) != (size, mtime, ctime, ino):
            langs.add(lang)
    start(langs)


def build_index(
    root: str | Path,
    *,
    use_cache: bool = True,
    workers: int | None = None,
    progress: Progress | None = None,
    vendored: tuple[str, ...] = DEFAULT_VENDORED,
) -> Index:
    """Index ``root``; see the module docstring.  Raises ``ScanError`` for a bad root."""
    from apxtui.parse.languages import queries_fingerprint  # lazy: start-up (tree-sitter)

    t0 = time.perf_counter()
    with gc_paused():
        top = checkout_dir(root)
        db, notices = open_database(top, use_cache, queries_fingerprint())
        compile_ahead(db, top)
        t1 = time.perf_counter()
        sr = scan(top, vendored)
        scanned = time.perf_counter() - t1
        for attempt in range(3):
            b = _Build(sr, db, _worker_count(workers), progress, notices)
            b.timings["scan"] = scanned
            try:
                idx = b.run(t0)
            except CacheUnavailable as e:  # the cache cannot be written: carry on without it
                if db.temporary:
                    raise RuntimeError(f"cannot write the index even to a temporary file: {e}") from None
                db.close()
                db = Database(None, db.stamp, temporary=True)
                notices.append(str(e))
                continue
            if idx is not None:
                return idx
            notices.append("another apxtui process stored a different state of this checkout meanwhile; "
                           "indexing again")
            t1 = time.perf_counter()
            sr = scan(root, vendored)
            scanned = time.perf_counter() - t1
            if attempt == 1:  # still racing: index in a private database this time
                db.close()
                db = Database(None, db.stamp, temporary=True)
        raise RuntimeError("the checkout keeps changing while it is indexed")


def _worker_count(requested: int | None) -> int:
    cores = os.cpu_count() or 1
    return max(1, min(requested or cores, cores, 8))


class _Build:
    """One attempt at making the database hold the checkout's current state."""

    def __init__(self, sr: ScanResult, db: Database, workers: int, progress: Progress | None, notices: list[str]):
        self.sr = sr
        self.root = sr.root
        self.db = db
        self.workers = workers
        self.progress = progress
        self.notices = notices
        self.sources = sr.by_rel()
        self.issues: list[Issue] = list(sr.skipped)
        self.timings: dict[str, float] = {}
        self.parsed: list[str] = []
        self.data: dict[str, bytes] = {}
        self.stat_rows: list[tuple[str, int, int, int, int, str]] = []
        self.rust_indexes: bytes | None = None  # the Rust resolver's indexes of the generation written
        self.rust_patch: bytes | None = None  # with KEEP_STORED: the change to the stored ones (a re-link)

    # -- what the checkout is now ----------------------------------------------------------

    def hash_files(self, files: list[SourceFile]) -> dict[str, str]:
        """Content hash per file: the cached one while the stat signature is unchanged."""
        cached = {r[0]: r[1:] for r in self.db.conn.execute("SELECT rel, size, mtime, ctime, ino, sha FROM stat")}
        now = time.time_ns()
        out: dict[str, str] = {}
        for sf in files:
            c = cached.get(sf.rel)
            if c is not None and tuple(c[:4]) == sf.stat and sf.stat[1]:
                out[sf.rel] = c[4]
                continue
            data, err = _read(self.root, sf)
            if err is not None:
                self.issues.append(err)
                continue
            assert data is not None
            self.data[sf.rel] = data
            out[sf.rel] = content_hash(data)
            if sf.stat[1] and now - max(sf.stat[1], sf.stat[2]) > RACY_NS:
                self.stat_rows.append((sf.rel, *sf.stat, out[sf.rel]))
        return out

    def vendored_listing(self) -> list[tuple[str, int, int]]:
        return [(r, sf.stat[0], sf.stat[1]) for r, sf in sorted(self.sources.items()) if sf.vendored]

    def shared_signature(self) -> str:
        """What every file's links depend on beyond the files' own facts: the vendored trees'
        listing and the package manifests (which crate may call which).  A change re-links all."""
        h = hashlib.blake2b(digest_size=16)
        h.update(f"manifests\0{self.sr.packages.fingerprint}\n".encode())
        for rel, size, mtime in self.vendored_listing():
            h.update(f"{rel}\0{size}\0{mtime}\n".encode())
        return h.hexdigest()

    def state_key(self, keys: dict[str, str]) -> str:
        h = hashlib.blake2b(digest_size=16)
        for rel in sorted(keys):
            h.update(f"{rel}\0{keys[rel]}\n".encode())
        h.update(self.shared_signature().encode())
        return "index:" + h.hexdigest()

    # -- the attempt ---------------------------------------------------------------------

    def run(self, t0: float) -> Index | None:
        t1 = time.perf_counter()
        project = [sf for sf in self.sr.files if not sf.vendored]
        hashes = self.hash_files(project)
        self.keys = {rel: fact_key(sha, self.sources[rel].lang, self.sources[rel].module)
                     for rel, sha in hashes.items()}
        self.state = self.state_key(self.keys)
        self.timings["hash"] = time.perf_counter() - t1
        db = self.db
        db.begin_read()
        if db.meta("state") == self.state:
            self.timings["snapshot"] = time.perf_counter() - t1
            self._save_stats()
            db.begin_read()
            if db.meta("state") == self.state:
                return self._index(t0)
        db.end_read()
        from apxtui.index.incremental import relink_changed  # lazy: start-up (the linker, on a change only)

        t2 = time.perf_counter()
        done = relink_changed(self)
        if done:
            self.timings["incremental"] = time.perf_counter() - t2
        else:
            self.full()
        db.begin_read()
        if db.meta("state") != self.state:
            db.end_read()
            return None
        return self._index(t0)

    def _save_stats(self) -> None:
        """Remember new content hashes (a touched file); skipped when another process is writing."""
        if not self.stat_rows or self.db.temporary:
            return
        self.db.end_read()
        self.db.conn.execute("PRAGMA busy_timeout=50")
        try:
            with self.db.write() as c:
                c.executemany("INSERT OR REPLACE INTO stat VALUES (?, ?, ?, ?, ?, ?)", self.stat_rows)
        except Exception:  # noqa: BLE001 - only a speed-up for next time
            pass
        finally:
            self.db.conn.execute("PRAGMA busy_timeout=30000")

    def _index(self, t0: float) -> Index:
        """The Index of the generation now visible in the snapshot."""
        db = self.db
        summary = unpack(db.meta("summary"))
        keys = dict(db.conn.execute("SELECT rel, key FROM files"))
        self.issues += [Issue(*i) for i in summary.get("file_issues", [])]
        self.timings["total"] = time.perf_counter() - t0
        if db.temporary:
            db.detach_temporary()
        return Index(self.root, self.sr, LazyFacts(db, keys), StoredGraph(db, summary), issues=self.issues,
                     timings=self.timings, parsed=self.parsed,
                     vendored_indexed=list(summary.get("vendored_indexed", [])), notices=list(self.notices), db=db)

    # -- parse cache -----------------------------------------------------------------------

    def records(self, rels: list[str], keys: dict[str, str]) -> dict[str, Record]:
        """Parse-cache records ``(rel, key, facts, iface, contrib, words)`` of ``rels``: stored ones,
        and fresh ones for the rest (parsed over the workers, stored at once)."""
        got: dict[str, Record] = {}
        c = self.db.conn
        for rel in rels:
            row = c.execute("SELECT facts, iface, contrib, words FROM facts WHERE rel=? AND key=?",
                            (rel, keys[rel])).fetchone()
            if row is not None:
                got[rel] = (rel, keys[rel], *row)
        jobs = []
        for rel in rels:
            if rel in got:
                continue
            data = self.data.get(rel)
            if data is None:
                data, err = _read(self.root, self.sources[rel])
                if err is not None or data is None:
                    self.issues.append(err or Issue(rel, "unreadable", "cannot read"))
                    continue
            sf = self.sources[rel]
            jobs.append((rel, data, sf.lang, sf.module, keys[rel], self.db.temporary))
        if jobs:
            from apxtui.parse import languages  # lazy: grammars load on the first parse

            for lang in sorted({j[2] for j in jobs}):  # a broken user query: one clear error, before any work
                languages.query(lang)
            fresh = self._parse(jobs)
            now = int(time.time())
            try:  # stored now: an interrupted build keeps what it parsed
                with self.db.write() as w:
                    w.executemany("INSERT OR IGNORE INTO facts VALUES (?, ?, ?, ?, ?, ?, ?)",
                                  [(*r, now) for r in fresh])
            except Exception:  # noqa: BLE001 - kept in memory and stored with the generation
                pass
            for r in fresh:
                got[r[0]] = r
            self.parsed += [j[0] for j in jobs]
        for rel in rels:
            self.data.pop(rel, None)
        return got

    def _parse(self, jobs: list[Job]) -> list[Record]:
        total = len(jobs)
        progress = self.progress
        if self.workers <= 1 or total < PARALLEL_MIN_FILES:
            out = []
            for i, j in enumerate(jobs):
                if progress:
                    progress(i, total, j[0])
                out += parse_jobs([j], collect=total > 1)
            if progress:
                progress(total, total, "")
            return out
        from concurrent.futures import ProcessPoolExecutor

        from apxtui.parse import prepare  # lazy: grammars load on the first parse

        jobs = sorted(jobs, key=lambda j: -len(j[1]))  # big files first: no long tail on one worker
        nchunks = self.workers * 8
        chunks: list[list[Job]] = [jobs[i::nchunks] for i in range(nchunks)]
        out = []
        done = 0
        prepare()  # queries compiled once here, inherited by the forked workers
        with ProcessPoolExecutor(max_workers=self.workers) as ex:
            for res in ex.map(parse_jobs, [c for c in chunks if c]):
                out += res
                done += len(res)
                if progress:
                    progress(done, total, res[-1][0] if res else "")
        return out

    # -- a full build ------------------------------------------------------------------------

    def full(self) -> None:
        from apxtui.index.expanded import expand_records  # lazy: start-up (the linker)
        from apxtui.index.includes import files_by_base  # lazy: the linker
        from apxtui.index.link import cpp_binding_ids, makes_node, pyo3_names  # lazy: the linker
        from apxtui.index.linkjob import LinkContext  # lazy: start-up (the linker)

        t1 = time.perf_counter()
        project = sorted(self.keys)
        recs = self.records(project, self.keys)
        project = [r for r in project if r in recs]
        self.timings["parse"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        tables = Tables()
        ifaces: dict[str, FileFacts] = {}
        callees: dict[str, list[tuple[str, str]]] = {}
        flagged: dict[str, bool] = {}
        for rel in project:
            ifaces[rel], callees[rel], flagged[rel] = load_iface_flagged(recs[rel][3])
            tables.add_file(ifaces[rel])
        all_files = set(self.sources)
        vendored_set = {rel for rel, sf in self.sources.items() if sf.vendored}
        by_base = files_by_base(all_files)
        includes = includes_of(ifaces.values(), all_files, by_base)
        extra = self.lazy_vendored(ifaces, callees, tables, includes, vendored_set)
        self.timings["vendored_search"] = time.perf_counter() - t2
        vendored_indexed: list[str] = []
        if extra:
            t3 = time.perf_counter()
            vkeys = {}
            for rel in sorted(extra):
                data, err = _read(self.root, self.sources[rel])
                if data is None:
                    self.issues.append(err)  # type: ignore[arg-type]
                    continue
                self.data[rel] = data
                sf = self.sources[rel]
                vkeys[rel] = fact_key(content_hash(data), sf.lang, sf.module)
            more = self.records(sorted(vkeys), vkeys)
            vendored_indexed = sorted(more)
            for rel in vendored_indexed:
                ifaces[rel], _ = load_iface(more[rel][3])
                tables.add_file(ifaces[rel])
            recs.update(more)
            includes.update(includes_of((ifaces[r] for r in vendored_indexed), all_files, by_base))
            self.timings["vendored_parse"] = time.perf_counter() - t3
        order = project + vendored_indexed  # rank order: the order the tables were built in
        t4 = time.perf_counter()
        expand = [rel for rel in project if flagged.get(rel)]
        if expand:  # macro invocations expanded with every file's #defines, before the tables and the link
            recs.update(expand_records(self.db.conn, recs, expand, ifaces, all_files, vendored_set, self.workers,
                                       self.db.temporary, rust_table=tables.macro_rules))
            tables = Tables()
            for rel in order:
                if rel in expand:
                    ifaces[rel], _ = load_iface(recs[rel][3])
                tables.add_file(ifaces[rel])
        self.timings["macros"] = time.perf_counter() - t4
        tables.finish()
        t4 = time.perf_counter()
        known = {nid: d.kind for nid, d in tables.defs.items() if makes_node(d)}
        known.update({f"pyo3:{dotted}": "pyo3_binding" for _, dotted in pyo3_names(tables)})
        known.update(cpp_binding_ids(tables))
        ctx = LinkContext(tables, known, includes, all_files, vendored_set, by_base, set(order),
                          self.sr.packages)
        del ifaces
        links = self._link([(rel, recs[rel][2]) for rel in order], ctx)
        self.timings["link"] = time.perf_counter() - t4
        t5 = time.perf_counter()
        write_generation(self, order, recs, links, vendored_indexed)
        self.db.checkpoint()
        self.timings["store"] = time.perf_counter() - t5

    def _link(self, jobs: list[tuple[str, bytes]], ctx: LinkContext) -> dict[str, FileLink]:
        from apxtui.index.linkjob import FileLink, link_blobs, link_file, set_context  # lazy: start-up
        from apxtui.index.resolve_rust import RustResolver, pack_indexes  # lazy: start-up

        # its indexes over all files: built once, shared (inherited by the workers), stored with the generation
        self.rust_indexes = pack_indexes(RustResolver(ctx.tables, ctx.packages).stored_indexes())
        out: dict[str, FileLink] = {}
        if self.workers <= 1 or len(jobs) < PARALLEL_MIN_FILES:
            for rel, blob in jobs:
                out[rel] = link_file(load_facts(blob), ctx)
                gc.collect(0)  # the file's scratch graph and linker (cycles), youngest generation only
            return out
        from concurrent.futures import ProcessPoolExecutor

        big_first = sorted(jobs, key=lambda j: -len(j[1]))
        nchunks = self.workers * 8
        chunks = [big_first[i::nchunks] for i in range(nchunks)]
        set_context(ctx)  # inherited by the workers forked below
        try:
            with ProcessPoolExecutor(max_workers=self.workers) as ex:
                for res in ex.map(link_blobs, [c for c in chunks if c]):
                    for t in res:
                        fl = FileLink.from_tuple(t)
                        out[fl.rel] = fl
        finally:
            set_context(None)
        return out

    # -- lazily indexed vendored files -------------------------------------------------------

    def lazy_vendored(self, ifaces: dict[str, FileFacts], callees: dict[str, list[tuple[str, str]]], tables: Tables,
                      includes: dict[str, set[str]], vendored_set: set[str]) -> set[str]:
        """Vendored files a path leads into: included by indexed code, or defining an unresolved name."""
        wanted = {inc for incs in includes.values() for inc in incs
                  if inc in self.sources and self.sources[inc].vendored and inc not in ifaces}
        names = unresolved_names(callees, tables, vendored_set)
        names = {n for n in names if re.fullmatch(r"[A-Za-z_]\w{2,}", n) and n not in LAZY_SKIP}
        if names:
            wanted |= self._search_vendored(names, ifaces)
        return wanted - set(ifaces)

    def _search_vendored(self, names: set[str], ifaces: Mapping[str, FileFacts]) -> set[str]:
        # a definition of one of the names: `name(params) {` (calls end in `;`, so they do not match)
        pat = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names))
                         + rb")\s*\([^;{}]*\)\s*(?:const\s*|noexcept\s*|override\s*)*\{")
        needles = {n.encode() for n in names}
        key = "lazy:" + content_hash("\n".join(sorted(names)).encode() + b"|" + "\n".join(
            f"{r}:{s}:{m}" for r, s, m in self.vendored_listing()).encode())
        row = self.db.conn.execute("SELECT value FROM blobs WHERE key=?", (key,)).fetchone()
        if row is not None:
            return set(row[0].decode().split("\n")) - {""}
        todo = [sf for rel, sf in self.sources.items() if sf.vendored and sf.lang == "cuda" and rel not in ifaces]
        if self.workers > 1 and len(todo) >= PARALLEL_MIN_FILES * 4:  # reading and testing shared out
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            chunks = [todo[i::self.workers * 2] for i in range(self.workers * 2)]
            ctx = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx) as ex:
                found = set().union(*ex.map(_defining, [(self.root, c, pat, needles) for c in chunks]))
        else:
            found = _defining((self.root, todo, pat, needles))
        try:
            with self.db.write() as w:
                w.execute("DELETE FROM blobs WHERE key LIKE 'lazy:%'")
                w.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?)", (key, "\n".join(sorted(found)).encode()))
        except Exception:  # noqa: BLE001 - a cache of a search: redone next time
            pass
        return found


def _defining(job: tuple[Path, list[SourceFile], re.Pattern[bytes], set[bytes]]) -> set[str]:
    """The files of ``job`` that define one of the names: a substring test first (cheap), then the pattern."""
    root, files, pat, needles = job
    found = set()
    for sf in files:
        data, _ = _read(root, sf)
        if data and any(n in data for n in needles) and pat.search(data):
            found.add(sf.rel)
    return found


def includes_of(ifaces: Iterable[FileFacts], all_files: set[str], by_base: dict[str, list[str]]) -> dict[str, set[str]]:
    """File → the checkout files its ``#include "…"`` lines name."""
    from apxtui.index.link import resolve_include  # lazy: start-up (the linker)

    out: dict[str, set[str]] = {}
    for f in ifaces:
        for imp in f.imports:
            if imp.kind == "include":
                target = resolve_include(imp.path, f.file, all_files, by_base)
                if target is not None:
                    out.setdefault(f.file, set()).add(target)
    return out


def unresolved_names(callees: dict[str, list[tuple[str, str]]], t: Tables, vendored: set[str]) -> set[str]:
    """Names project C/C++ code calls or launches, and C symbols Rust declares, that no
    indexed definition provides: what a vendored tree might define.  Tables only, no linking."""
    from apxtui.index.resolve_cuda import _RUNTIME_RE, CPP_STD  # lazy: start-up (the linker)

    names: set[str] = set()
    for rel, calls in callees.items():
        if rel in vendored:
            continue
        for kind, callee in calls:
            name = callee.split("::")[-1]
            if (not name or name.startswith("__") or _RUNTIME_RE.match(name) or name in CPP_STD
                    or callee.startswith("std::")):
                continue
            kinds = ("kernel",) if kind == "launch" else ("host_fn", "abi_fn", "device_fn", "kernel")
            if any(t.defs[i].kind in kinds and not t.defs[i].attrs.get("decl_only")
                   for i in t.by_name.get(("cuda", name), ())):
                continue
            names.add(name)
    for d in t.defs.values():
        sym = d.symbol or d.name
        if d.kind == "ffi_decl" and d.file not in vendored and not t.symbols.get(sym) \
                and not _RUNTIME_RE.match(sym):
            names.add(sym)
    return names


__all__ = ["Index", "LazyFacts", "build_index", "node_id", "open_database"]
