"""One file's parse-cache record: everything a build needs from parsing it, made once.

A record is keyed by the file's path and :func:`fact_key` (content hash, language and
module path — the module comes from ``Cargo.toml`` names and ``__init__.py`` markers, so
renaming a crate or removing a package marker re-extracts).  It holds the full facts
(pickled, compressed: read again only to link or show that file), the interface (what
other files' linking sees, plain marshal data), the file's symbol-table contribution
rows, the words its linking can depend on (:func:`words_of`) and the C/C++ callees the
lazy vendored search looks for.  Parse workers build records; the main process stores
the bytes as they are (no second pickling).
"""

from __future__ import annotations

import hashlib
import marshal
import pickle
import re
import zlib
from dataclasses import dataclass

from apxtui.facts import FileFacts
from apxtui.index.interface import from_plain, interface_facts, to_plain
from apxtui.index.stored_tables import contribution_rows

_WORD = re.compile(r"[A-Za-z_]\w*")

#: A parse-cache record as stored and passed around: (rel, key, facts, iface, contrib, words).
Record = tuple[str, str, bytes, bytes, bytes, bytes]
#: A parse job: (rel, data, lang, module, key, lean).
Job = tuple[str, bytes, str, str, str, bool]


def fact_key(sha: str, lang: str, module: str) -> str:
    return hashlib.blake2b(f"{sha}\0{lang}\0{module}".encode(), digest_size=16).hexdigest()


def pack_facts(f: FileFacts) -> bytes:
    return zlib.compress(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL), 1)


def load_facts(blob: bytes) -> FileFacts:
    f: FileFacts = pickle.loads(zlib.decompress(blob))
    return f


def words_of(f: FileFacts) -> set[str]:
    """Identifiers a file's linking can depend on: every name in its calls, definitions
    (signatures, fields, locals, bounds), imports and bindings.  Another file's interface
    change whose names miss this set cannot change this file's links."""
    text: list[str] = [f.module]
    for c in f.calls:
        text += (c.callee, c.receiver, *c.path, *c.args, *c.template_args)
    for d in f.defs:
        text += (d.qualname, d.container, d.trait, d.return_type, d.symbol, *d.template_params,
                 *(p.type for p in d.params), *d.fields, *d.fields.values(), *d.locals.values())
        for k, v in d.generic_bounds.items():
            text += (k, *v)
        if d.attrs.get("bases"):
            text += [str(b) for b in d.attrs["bases"]]
    for i in f.imports:
        text += (i.path, i.alias, i.scope)
    for b in f.bindings:
        text += (b.python_name, b.rust_qualname, b.python_class, b.rust_type, b.python_module)
    return set(_WORD.findall(" ".join(t for t in text if t)))


def _callees(f: FileFacts) -> list[tuple[str, str]]:
    """C/C++ calls and launches (kind, callee): what the lazy vendored search asks about."""
    if f.lang != "cuda":
        return []
    return sorted({(c.kind, c.callee) for c in f.calls if c.kind in ("call", "launch")})


@dataclass
class FactRecord:
    rel: str
    key: str
    facts: bytes  # pack_facts
    iface: bytes  # marshal of to_plain(interface) + "callees"
    contrib: bytes  # marshal list of (table, key, value: see stored_tables)
    words: bytes  # marshal sorted list

    def to_tuple(self) -> Record:
        return (self.rel, self.key, self.facts, self.iface, self.contrib, self.words)


def make_record(f: FileFacts, key: str, lean: bool = False) -> FactRecord:
    """``lean``: without the table rows and words only a later re-link reads (an index that
    is not kept: ``--no-cache``)."""
    iface = interface_facts(f)
    plain = to_plain(iface)
    plain["callees"] = _callees(f)
    # a Rust file: the macro names its item-level invocations use (what their expansion reads)
    plain["macros"] = rust_item_macros(f) if f.lang == "rust" else has_macro_invocations(f)
    contrib = [] if lean else contribution_rows(iface)
    words = [] if lean else sorted(words_of(f))
    return FactRecord(f.file, key, pack_facts(f), marshal.dumps(plain), marshal.dumps(contrib), marshal.dumps(words))


def contribution_rows_of(rec: Record) -> list[tuple[str, str, bytes]]:
    """The table contribution rows of a record tuple."""
    rows: list[tuple[str, str, bytes]] = marshal.loads(rec[4])
    return rows


def has_macro_invocations(f: FileFacts) -> bool:
    """Does linking expand macro invocations of ``f`` (``apxtui/index/macros.py``)?"""
    return f.lang in ("cuda", "rust") and any("macro_call" in c.attrs or c.attrs.get("item_level") for c in f.calls)


def rust_item_macros(f: FileFacts) -> list[str]:
    """Names of the ``macro_rules!`` a Rust file's item-level invocations use, sorted."""
    return sorted({c.callee.split("::")[-1].rstrip("!") for c in f.calls
                   if c.kind == "macro" and c.attrs.get("item_level")})


def macro_names_of(rec: Record) -> list[str]:
    """The Rust item-level macro names of a record tuple (empty for other languages)."""
    got = marshal.loads(rec[3]).get("macros")
    return list(got) if isinstance(got, list) else []


def load_iface(blob: bytes) -> tuple[FileFacts, list[tuple[str, str]]]:
    f, callees, _ = load_iface_flagged(blob)
    return f, callees


def load_iface_flagged(blob: bytes) -> tuple[FileFacts, list[tuple[str, str]], bool]:
    """The interface, the C/C++ callees and whether the file has macro invocations to expand."""
    plain = marshal.loads(blob)
    callees = [(c[0], c[1]) for c in plain.pop("callees", [])]
    macros = bool(plain.pop("macros", False))
    return from_plain(plain), callees, macros


def parse_jobs(jobs: list[Job], collect: bool = True) -> list[Record]:
    """Worker: ``(rel, data, lang, module, key, lean)`` → record tuples.  The automatic collector is
    off (records are acyclic); the cycles an extraction leaves behind (syntax-tree wrappers,
    context chains) are collected after each file from the youngest generation only, which
    holds just that file's objects; ``collect=False`` leaves them (a one-file re-index in the main
    process, whose youngest generation holds every object made since its collector was turned off)."""
    import gc

    from apxtui.parse import extract_file  # lazy: grammars load on the first parse

    was = gc.isenabled()
    gc.disable()
    out = []
    try:
        for rel, data, lang, module, key, lean in jobs:
            out.append(make_record(extract_file(rel, data, lang, module), key, lean).to_tuple())
            if collect:
                gc.collect(0)
    finally:
        if was:
            gc.enable()
    return out


__all__ = ["FactRecord", "fact_key", "make_record", "load_facts", "load_iface", "pack_facts", "parse_jobs",
           "words_of"]
