"""The indexer: scan → read + hash → cached or freshly parsed facts → link → :class:`Index`.

Cold parsing fans out over worker processes (both cores); a warm start re-parses
only files whose content hash changed.  Vendored trees are parsed lazily: only the
vendored files that project code ``#include``s, or that define a name project code
calls or launches but does not define, are parsed, then everything is re-linked.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from apxtui.facts import LANGS, FileFacts, Issue
from apxtui.index.cache import FactCache
from apxtui.index.link import Linker, link
from apxtui.parse import content_hash, extract_file, languages
from apxtui.parse.languages import queries_fingerprint
from apxtui.scan import DEFAULT_VENDORED, ScanResult, SourceFile, scan

Progress = Callable[[int, int, str], None]  # (done, total, current file)


@dataclass
class Index:
    root: Path
    scan: ScanResult
    facts: dict[str, FileFacts]
    graph: nx.MultiDiGraph
    linker: Linker
    issues: list[Issue] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    parsed: list[str] = field(default_factory=list)  # files parsed in this run (cache misses)
    vendored_indexed: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def tables(self):
        return self.linker.t


def _read(root: Path, sf: SourceFile) -> tuple[bytes | None, Issue | None]:
    try:
        with open(root / sf.rel, "rb") as fh:
            return fh.read(), None
    except OSError as e:
        return None, Issue(sf.rel, "unreadable", f"cannot read: {e.strerror or e}")


def _extract_job(job: tuple[str, bytes, str, str]) -> FileFacts:
    rel, data, lang, module = job
    return extract_file(rel, data, lang, module)


def _extract_chunk(jobs: list[tuple[str, bytes, str, str]]) -> list[FileFacts]:
    return [_extract_job(j) for j in jobs]


def _parse_all(jobs: list[tuple[str, bytes, str, str]], workers: int, progress: Progress | None) -> list[FileFacts]:
    total = len(jobs)
    if workers <= 1 or total < 32:
        out = []
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
    chunks: list[list] = [[] for _ in range(nchunks)]
    for i, j in enumerate(jobs):
        chunks[i % nchunks].append(j)
    out: list[FileFacts] = []
    done = 0
    with ProcessPoolExecutor(max_workers=workers) as ex:
        for res in ex.map(_extract_chunk, [c for c in chunks if c]):
            out.extend(res)
            done += len(res)
            if progress:
                progress(done, total, res[-1].file if res else "")
    return out


def _lazy_vendored(idx_files: dict[str, FileFacts], linker: Linker, sources: dict[str, SourceFile],
                   root: Path) -> set[str]:
    """Vendored files a path leads into: included by indexed code, or defining an unresolved name."""
    wanted = {f for f in linker.pending_includes if f in sources and sources[f].vendored}
    names = {d["qualname"].split("::")[-1] for n, d in linker.g.nodes(data=True)
             if d.get("kind") == "external" and d.get("lang") == "cuda"}
    names = {n for n in names if re.fullmatch(r"[A-Za-z_]\w{2,}", n) and not n.startswith(("cuda", "cu", "__"))}
    if names:
        pat = re.compile(rb"\b(" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\s*(<[^;{()]*>)?\s*\(")
        for rel, sf in sources.items():
            if sf.vendored and sf.lang == "cuda" and rel not in idx_files and rel not in wanted:
                data, _ = _read(root, sf)
                if data and pat.search(data):
                    wanted.add(rel)
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
    workers = workers or min(os.cpu_count() or 1, 8)

    def load(files: list[SourceFile]) -> tuple[dict[str, FileFacts], list[str]]:
        data_by: dict[str, bytes] = {}
        hashes: dict[str, str] = {}
        for sf in files:
            data, err = _read(root, sf)
            if err is not None:
                issues.append(err)
                continue
            data_by[sf.rel] = data
            hashes[sf.rel] = content_hash(data)
        got = cache.load(hashes) if cache else {}
        jobs = [(rel, data, sources[rel].lang, sources[rel].module) for rel, data in data_by.items() if rel not in got]
        fresh = _parse_all(jobs, workers, progress)
        if cache:
            cache.store(fresh)
        got.update({f.file: f for f in fresh})
        return got, [j[0] for j in jobs]

    t1 = time.perf_counter()
    facts, parsed = load([sf for sf in sr.files if not sf.vendored])
    timings["parse"] = time.perf_counter() - t1
    all_files = set(sources)
    vendored_set = {rel for rel, sf in sources.items() if sf.vendored}
    t2 = time.perf_counter()
    graph, linker = link(facts, all_files, vendored_set)
    extra = _lazy_vendored(facts, linker, sources, root)
    vendored_indexed: list[str] = []
    if extra:
        more, parsed_more = load([sources[r] for r in sorted(extra)])
        facts.update(more)
        parsed += parsed_more
        vendored_indexed = sorted(more)
        graph, linker = link(facts, all_files, vendored_set)
    timings["link"] = time.perf_counter() - t2
    for f in facts.values():
        issues.extend(f.issues)
    timings["total"] = time.perf_counter() - t0
    notices = list(cache.notices) if cache else []
    if cache:
        cache.close()
    return Index(root, sr, facts, graph, linker, issues, timings, parsed, vendored_indexed, notices)
