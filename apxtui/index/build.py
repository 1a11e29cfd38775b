"""The indexer: scan → read + hash → cached or freshly parsed facts → link → :class:`Index`.

Cold parsing fans out over worker processes (both cores); a warm start re-parses
only files whose content hash changed.  Vendored trees are parsed lazily: only the
vendored files that project code ``#include``s, or that define a name project code
calls or launches but does not define, are parsed, then everything is re-linked.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import pickle
import re
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from apxtui.facts import LANGS, Definition, FileFacts, Issue
from apxtui.index.cache import FactCache
from apxtui.index.gcpause import gc_paused
from apxtui.index.incremental import from_plain, interface_facts, relink, to_plain
from apxtui.index.link import Linker, link
from apxtui.index.macros import LazyExpansion, expand_macros
from apxtui.index.resolve_cuda import _RUNTIME_RE, CPP_STD
from apxtui.index.tables import Tables
from apxtui.inputs import InputFileError, read_limited
from apxtui.packages import Packages
from apxtui.parse import content_hash, extract_file, languages
from apxtui.parse import prepare as prepare_extractors
from apxtui.parse.languages import queries_fingerprint
from apxtui.scan import DEFAULT_VENDORED, MAX_BYTES, ScanResult, SourceFile, scan

#: More changed files than this: a full re-link is as quick and surely right.
MAX_INCREMENTAL = 32

#: Unresolved names never worth a search through vendored trees.
LAZY_SKIP = {"dim3", "make_float2", "make_float4", "make_int2", "min", "max", "swap", "move", "forward"}

Progress = Callable[[int, int, str], None]  # (done, total, current file)

#: Batches at least this big go to worker processes (workers > 1) and are frozen out of the GC after.
FREEZE_MIN_FILES = 32


@dataclass
class Index:
    """The result of indexing: the linked graph plus the per-file facts behind it.

    ``facts`` may be a :class:`LazyFacts` (warm start): files are unpickled on first
    access.  ``tables`` (the linker's symbol tables) are rebuilt on first use.
    """

    root: Path
    scan: ScanResult
    facts: Mapping[str, FileFacts]
    graph: nx.MultiDiGraph[str]
    linker: Linker | None = None
    issues: list[Issue] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    parsed: list[str] = field(default_factory=list)  # files parsed in this run (cache misses)
    vendored_indexed: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def tables(self) -> Tables:
        if self.linker is None:
            self.linker = Linker(dict(self.facts), set(self.scan.by_rel()), set(), packages=self.scan.packages)
        return self.linker.t

    def definition(self, node_id: str) -> Definition | None:
        """The extracted Definition behind a graph node (None for bindings/vendor/external)."""
        d = self.graph.nodes.get(node_id)
        if not d or not d.get("file") or d.get("file") not in self.facts:
            return None
        for df in self.facts[d["file"]].defs:
            if df.qualname == d.get("qualname") and df.line == d.get("line"):
                return df
        return None


class LazyFacts(Mapping[str, FileFacts]):
    """Per-file facts read from the cache database on first access (warm starts).

    With ``sources``, a C/C++ file's facts come with its macro invocations expanded, as
    linking saw them (:mod:`apxtui.index.macros`; the cache holds them as extracted).
    """

    def __init__(self, db: Path, shas: dict[str, str], sources: dict[str, SourceFile] | None = None):
        self.db = db
        self.shas = shas
        self._loaded: dict[str, FileFacts] = {}
        self._expand = None
        if sources is not None:
            self._expand = LazyExpansion(_Raw(self), set(sources), {r for r, sf in sources.items() if sf.vendored})

    def raw(self, rel: str) -> FileFacts:
        """The facts as extracted (no macro expansion)."""
        if rel not in self.shas:
            raise KeyError(rel)
        if rel not in self._loaded:
            got = FactCache.read_one(self.db, rel, self.shas[rel])
            if got is None:
                raise KeyError(f"{rel}: facts missing from the cache")
            self._loaded[rel] = got
        return self._loaded[rel]

    def __getitem__(self, rel: str) -> FileFacts:
        f = self.raw(rel)
        return self._expand(f) if self._expand is not None else f

    def __iter__(self) -> Iterator[str]:
        return iter(self.shas)

    def __len__(self) -> int:
        return len(self.shas)


class _Raw(Mapping[str, FileFacts]):
    """A :class:`LazyFacts` seen without macro expansion (what expansion itself reads)."""

    def __init__(self, lazy: LazyFacts):
        self.lazy = lazy

    def __getitem__(self, rel: str) -> FileFacts:
        return self.lazy.raw(rel)

    def __iter__(self) -> Iterator[str]:
        return iter(self.lazy.shas)

    def __len__(self) -> int:
        return len(self.lazy.shas)


def _read(root: Path, sf: SourceFile) -> tuple[bytes | None, Issue | None]:
    """The file's bytes, bounded like the scan (it may have grown or become a FIFO since)."""
    try:
        return read_limited(root / sf.rel, MAX_BYTES, sf.rel), None
    except InputFileError as e:
        return None, Issue(sf.rel, "unreadable", str(e).removeprefix(f"{sf.rel}: "))


def _extract_job(job: tuple[str, bytes, str, str]) -> FileFacts:
    rel, data, lang, module = job
    return extract_file(rel, data, lang, module)


def _extract_chunk(jobs: list[tuple[str, bytes, str, str]]) -> list[FileFacts]:
    with gc_paused():
        return [_extract_job(j) for j in jobs]


def _parse_all(jobs: list[tuple[str, bytes, str, str]], workers: int, progress: Progress | None) -> list[FileFacts]:
    """Facts of ``jobs``, over ``workers`` processes for big batches.

    After a big batch the process's objects (the new facts above all) are moved to the
    GC's permanent generation (``gc.freeze``): they are acyclic and live as long as the
    index, and otherwise every later full collection during caching and linking walks
    them all again (on mistral.rs that costs several seconds).  Refcounting still frees them.
    """
    with gc_paused():
        out = _parse_all_gc_paused(jobs, workers, progress)
    if len(jobs) >= FREEZE_MIN_FILES:
        gc.freeze()
    return out


def _parse_all_gc_paused(jobs: list[tuple[str, bytes, str, str]], workers: int,
                         progress: Progress | None) -> list[FileFacts]:
    total = len(jobs)
    out: list[FileFacts] = []
    if workers <= 1 or total < FREEZE_MIN_FILES:
        for i, j in enumerate(jobs):
            if progress:
                progress(i, total, j[0])
            out.append(_extract_job(j))
        if progress:
            progress(total, total, "")
        return out
    # Balanced chunks, big files first so no worker ends up with the long tail.
    jobs = sorted(jobs, key=lambda j: -len(j[1]))
    nchunks = max(workers * 8, 1)
    chunks: list[list[tuple[str, bytes, str, str]]] = [[] for _ in range(nchunks)]
    for i, j in enumerate(jobs):
        chunks[i % nchunks].append(j)
    done = 0
    prepare_extractors()  # compiled once here, inherited by the forked workers
    with ProcessPoolExecutor(max_workers=workers) as ex:
        for res in ex.map(_extract_chunk, [c for c in chunks if c]):
            out.extend(res)
            done += len(res)
            if progress:
                progress(done, total, res[-1].file if res else "")
    return out


def _unresolved_names(facts: dict[str, FileFacts], linker: Linker) -> set[str]:
    """Names project C/C++ code calls or launches, and C symbols Rust declares, that no
    indexed definition provides: what a vendored tree might define.  Tables only, no linking."""
    t = linker.t
    names: set[str] = set()
    for f in facts.values():
        if f.lang != "cuda" or f.file in linker.vendored:
            continue
        for c in f.calls:
            if c.kind not in ("call", "launch"):
                continue
            name = c.callee.split("::")[-1]
            if (not name or name.startswith("__") or _RUNTIME_RE.match(name) or name in CPP_STD
                    or c.callee.startswith("std::")):
                continue
            kinds = ("kernel",) if c.kind == "launch" else ("host_fn", "abi_fn", "device_fn", "kernel")
            if any(t.defs[i].kind in kinds and not t.defs[i].attrs.get("decl_only")
                   for i in t.by_name.get(("cuda", name), ())):
                continue
            names.add(name)
    for d in t.defs.values():
        sym = d.symbol or d.name
        if d.kind == "ffi_decl" and d.file not in linker.vendored and not t.symbols.get(sym) \
                and not _RUNTIME_RE.match(sym):
            names.add(sym)
    return names


def _lazy_vendored(idx_files: dict[str, FileFacts], linker: Linker, sources: dict[str, SourceFile],
                   root: Path, cache: FactCache | None) -> set[str]:
    """Vendored files a path leads into: included by indexed code, or defining an unresolved name."""
    linker._includes()  # resolves #include paths (and notes included vendored files not parsed)
    wanted = {f for f in linker.pending_includes if f in sources and sources[f].vendored}
    names = _unresolved_names(idx_files, linker)
    names = {n for n in names if re.fullmatch(r"[A-Za-z_]\w{2,}", n) and n not in LAZY_SKIP}
    if names:
        # a definition of one of the names: `name(params) {` (calls end in `;`, so they do not match)
        pat = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names))
                         + rb")\s*\([^;{}]*\)\s*(?:const\s*|noexcept\s*|override\s*)*\{")
        needles = [n.encode() for n in names]
        key = "lazy:" + content_hash("\n".join(sorted(names)).encode() + b"|" + "\n".join(
            f"{r}:{s.size}" for r, s in sorted(sources.items()) if s.vendored).encode())
        hit = cache.get_blob(key) if cache else None
        if hit is not None:
            wanted |= set(hit.decode().split("\n")) - {""}
        else:
            found = set()
            for rel, sf in sources.items():
                if sf.vendored and sf.lang == "cuda" and rel not in idx_files:
                    data, _ = _read(root, sf)
                    if data and any(n in data for n in needles) and pat.search(data):
                        found.add(rel)
            if cache:
                cache.put_blob(key, "\n".join(sorted(found)).encode())
            wanted |= found
    return wanted - set(idx_files)


def build_index(
    root: str | Path,
    *,
    use_cache: bool = True,
    workers: int | None = None,
    progress: Progress | None = None,
    vendored: tuple[str, ...] = DEFAULT_VENDORED,
) -> Index:
    """Index ``root``; see the module docstring.  Raises ``ScanError`` for a bad root."""
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    for lang in LANGS:  # a broken user query is one clear error, before any work
        languages.query(lang)
    sr = scan(root, vendored)
    timings["scan"] = time.perf_counter() - t0
    root = sr.root
    sources = sr.by_rel()
    issues: list[Issue] = list(sr.skipped)
    cache = FactCache(root, queries_fingerprint()) if use_cache else None
    workers = min(workers or 8, os.cpu_count() or 1)  # never more processes than cores (callers say so)

    parsed_log: list[str] = []  # every file parsed in this run (an abandoned incremental try included)

    def read_hash(files: list[SourceFile]) -> tuple[dict[str, bytes], dict[str, str]]:
        data_by: dict[str, bytes] = {}
        hashes: dict[str, str] = {}
        for sf in files:
            data, err = _read(root, sf)
            if data is None:
                issues.extend([err] if err is not None else [])
                continue
            data_by[sf.rel] = data
            hashes[sf.rel] = content_hash(data)
        return data_by, hashes

    def load(data_by: dict[str, bytes], hashes: dict[str, str]) -> tuple[dict[str, FileFacts], list[str]]:
        got = cache.load(hashes) if cache else {}
        jobs = [(rel, data, sources[rel].lang, sources[rel].module) for rel, data in data_by.items() if rel not in got]
        fresh = _parse_all(jobs, workers, progress)
        if cache:
            cache.store(fresh)
        got.update({f.file: f for f in fresh})
        parsed_log.extend(j[0] for j in jobs)
        return got, [j[0] for j in jobs]

    t1 = time.perf_counter()
    data_by, hashes = read_hash([sf for sf in sr.files if not sf.vendored])
    state = _state_key(hashes, sources, sr.packages.fingerprint)
    snap = _load_snapshot(cache, state, root, sources) if cache else None
    if snap is not None:  # warm start: nothing changed since the last run
        lazy, graph, linker, vendored_indexed = snap
        timings["snapshot"] = time.perf_counter() - t1
        return _finish(root, sr, lazy, graph, linker, issues, timings, [], vendored_indexed, cache, t0)
    if cache:  # a few files changed: re-link only them when their interfaces did not change
        inc = _incremental(cache, root, sources, data_by, hashes, load, sr.packages)
        if inc is not None:
            lazy, graph, vendored_indexed, iface = inc
            timings["incremental"] = time.perf_counter() - t1
            index = _finish(root, sr, lazy, graph, None, issues, timings, list(parsed_log), vendored_indexed,
                            cache, t0)
            cache = FactCache(root, queries_fingerprint())
            _store_snapshot(cache, state, {r: iface[r] for r in lazy}, graph, vendored_indexed,
                            {r: lazy.shas[r] for r in lazy})
            cache.close()
            return index
    facts, _ = load(data_by, hashes)
    timings["parse"] = time.perf_counter() - t1
    all_files = set(sources)
    vendored_set = {rel for rel, sf in sources.items() if sf.vendored}
    t3 = time.perf_counter()
    extra = _lazy_vendored(facts, Linker(facts, all_files, vendored_set, expand=False), sources, root, cache)
    timings["vendored_search"] = time.perf_counter() - t3
    vendored_indexed = []
    if extra:
        t4 = time.perf_counter()
        more, _ = load(*read_hash([sources[r] for r in sorted(extra)]))
        facts.update(more)
        vendored_indexed = sorted(more)
        timings["vendored_parse"] = time.perf_counter() - t4
    t5 = time.perf_counter()
    facts = expand_macros(facts, all_files, vendored_set, workers=workers)
    timings["macros"] = time.perf_counter() - t5
    t5 = time.perf_counter()
    graph, linker = link(facts, all_files, vendored_set, sr.packages, expand=False)
    timings["link"] = time.perf_counter() - t5
    index = _finish(root, sr, facts, graph, linker, issues, timings, list(dict.fromkeys(parsed_log)),
                    vendored_indexed, cache, t0)
    if use_cache:
        cache = FactCache(root, queries_fingerprint())
        _store_snapshot(cache, state, {r: interface_facts(f) for r, f in facts.items()}, graph, vendored_indexed,
                        {rel: f.sha for rel, f in facts.items()})
        cache.close()
    return index


def _finish(root: Path, sr: ScanResult, facts: Mapping[str, FileFacts], graph: nx.MultiDiGraph[str],
            linker: Linker | None, issues: list[Issue], timings: dict[str, float], parsed: list[str],
            vendored_indexed: list[str], cache: FactCache | None, t0: float) -> Index:
    if isinstance(facts, LazyFacts):
        issues.extend(Issue(*i) for i in graph.graph.get("file_issues", []))
    else:
        for f in facts.values():
            issues.extend(f.issues)
        graph.graph["file_issues"] = [(i.file, i.kind, i.message, i.line, i.end_line) for f in facts.values()
                                      for i in f.issues]
    timings["total"] = time.perf_counter() - t0
    notices = list(cache.notices) if cache else []
    if cache:
        cache.close()
    return Index(root, sr, facts, graph, linker, issues, timings, parsed, vendored_indexed, notices)


def _state_key(hashes: dict[str, str], sources: dict[str, SourceFile], manifests: str = "") -> str:
    """Identity of the project's indexable state: every file's path and content hash, the
    listing of the vendored trees (lazily indexed files are re-checked separately) and the
    package manifests (they decide which crate may call which)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"manifests\0{manifests}\n".encode())
    for rel in sorted(hashes):
        h.update(f"{rel}\0{hashes[rel]}\n".encode())
    for rel, sf in sorted(sources.items()):
        if sf.vendored:
            h.update(f"v{rel}\n".encode())
    return "index:" + h.hexdigest()


def _store_snapshot(cache: FactCache, state: str, iface: dict[str, FileFacts], graph: nx.MultiDiGraph[str],
                    vendored_indexed: list[str],
                    shas: dict[str, str]) -> None:
    """Graph as marshal-able lists (fast to load) + which facts back it (loaded lazily), and,
    apart, every file's interface facts for the next incremental re-link."""
    payload = (graph.graph, list(graph.nodes(data=True)), list(graph.edges(keys=True, data=True)),
               shas, vendored_indexed)
    try:
        blob = b"M" + marshal.dumps(payload)
    except ValueError:  # an attribute marshal cannot hold: fall back to pickle
        blob = b"P" + pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    cache.put_blob(state, zlib.compress(blob, 1))
    plain = {rel: f if isinstance(f, dict) else to_plain(f) for rel, f in iface.items()}
    try:
        cache.put_blob("iface:" + state, zlib.compress(marshal.dumps(plain), 1))
    except ValueError:  # not marshal-able (unexpected attrs): no incremental next time
        pass
    cache.prune_blobs(prefix="index:", keep=state)
    cache.prune_blobs(prefix="iface:", keep="iface:" + state)


def _incremental(cache: FactCache, root: Path, sources: dict[str, SourceFile], data_by: dict[str, bytes],
                 hashes: dict[str, str],
                 load: Callable[[dict[str, bytes], dict[str, str]], tuple[dict[str, FileFacts], list[str]]],
                 packages: Packages,
                 ) -> tuple[LazyFacts, nx.MultiDiGraph[str], list[str], dict[str, Any]] | None:
    """Re-link from the last snapshot when only a few project files changed (see incremental.py)."""
    hit = cache.latest_blob("index:")
    if hit is None:
        return None
    key, _ = hit
    snap = _load_snapshot(cache, key, root, sources)
    iface_blob = cache.get_blob("iface:" + key)
    if snap is None or iface_blob is None:
        return None
    old_facts, graph, _, vendored_indexed = snap
    if graph.graph.get("manifests", "") != packages.fingerprint:
        return None  # package boundaries changed: every edge may change
    old = {rel: sha for rel, sha in old_facts.shas.items() if rel not in set(vendored_indexed)}
    if set(old) != set(hashes) or any(sources[r].vendored for r in hashes):
        return None  # files added or removed: full link
    changed = [rel for rel in hashes if old[rel] != hashes[rel]]
    if not changed or len(changed) > MAX_INCREMENTAL:
        return None
    gc_was = gc.isenabled()
    gc.disable()  # many small objects: collection passes would dominate the load
    try:
        plain = marshal.loads(zlib.decompress(iface_blob))
        iface = {rel: from_plain(d) for rel, d in plain.items()}
    except Exception:  # noqa: BLE001 - unreadable: full link
        return None
    finally:
        if gc_was:
            gc.enable()
    new, _ = load({r: data_by[r] for r in changed}, {r: hashes[r] for r in changed})
    vendored_set = {rel for rel, sf in sources.items() if sf.vendored}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        if relink(graph, iface, new, set(sources), vendored_set, packages) is None:
            return None
    finally:
        if gc_was:
            gc.enable()
    for rel, f in new.items():
        plain[rel] = to_plain(interface_facts(f))
    shas = dict(old_facts.shas)
    shas.update({rel: f.sha for rel, f in new.items()})
    return LazyFacts(cache.path, shas, sources), graph, vendored_indexed, plain


def _load_snapshot(cache: FactCache, state: str, root: Path, sources: dict[str, SourceFile],
                   ) -> tuple[LazyFacts, nx.MultiDiGraph[str], None, list[str]] | None:
    blob = cache.get_blob(state)
    if blob is None:
        return None
    gc_was = gc.isenabled()
    gc.disable()  # millions of small objects: collection passes would dominate the load
    try:
        raw = zlib.decompress(blob)
        payload = marshal.loads(raw[1:]) if raw[:1] == b"M" else pickle.loads(raw[1:])
        gattrs, nodes, edges, shas, vendored_indexed = payload
        graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        graph.graph.update(gattrs)
        graph.add_nodes_from(nodes)
        graph.add_edges_from(edges)
    except Exception as e:  # noqa: BLE001 - any failure here means: re-link
        cache.notices.append(f"cache snapshot unreadable ({type(e).__name__}); re-linking")
        return None
    finally:
        if gc_was:
            gc.enable()
    for rel in vendored_indexed:  # lazily indexed vendored files must be unchanged too
        sf = sources.get(rel)
        data, _ = _read(root, sf) if sf else (None, None)
        if data is None or content_hash(data) != shas.get(rel):
            return None
    return LazyFacts(cache.path, shas, sources), graph, None, list(vendored_indexed)
