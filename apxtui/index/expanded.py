"""Parse-cache records of files with their macro invocations expanded (:mod:`apxtui.index.macros`).

Expansion reads other files: a C/C++ file's invocations use the ``#define``s of the files it
includes (transitively), a Rust item-level invocation the checkout's ``macro_rules!`` of its name.
So an expanded record cannot be keyed on the file's own content: its key is the file's
parse key, ``+``, a hash of what the expansion read (:func:`macro_signature`: the
function-like ``#define``s of the include closure, in order, with their lines and
conditions; or the checkout's ``macro_rules!`` of the names the file's item-level
invocations use, so a macro moved elsewhere re-expands only its users).  The expanded record
replaces the extracted one for everything after parsing (symbol tables, linking, the facts an
:class:`~apxtui.index.build.Index` shows); the extracted one stays in the parse cache.
"""

from __future__ import annotations

import hashlib
from collections import ChainMap
from collections.abc import Mapping
from typing import TYPE_CHECKING

from apxtui.facts import FileFacts
from apxtui.index.factstore import Record, load_facts, macro_names_of, make_record
from apxtui.index.tables import MacroRule

if TYPE_CHECKING:
    from apxtui.index.macros import Visible


def base_key(key: str) -> str:
    """The parse key of a (possibly expanded) record key."""
    return key.split("+", 1)[0]


def macro_signature(rel: str, lang: str, vis: Visible, names: list[str] | None = None) -> str:
    """A hash of every definition expanding ``rel``'s invocations can read: for Rust, the
    ``macro_rules!`` of the ``names`` its item-level invocations use (every definition of each
    name: the lookup picks among them), for C/C++ the function-like ``#define``s of its include
    closure."""
    h = hashlib.blake2b(digest_size=12)
    if lang == "rust":
        table = vis.rust_macros().table()
        for name in sorted(names or ()):
            h.update(repr((name, table.get(name, []))).encode())
    else:
        for inc in vis.closure(rel):
            f = vis.facts.get(inc)
            rows = [(i.alias, i.path, i.line, tuple(i.cfg)) for i in f.imports if i.kind == "macro"] if f else []
            h.update(repr((inc, rows)).encode())
    return h.hexdigest()


def expanded_key(rel: str, key: str, lang: str, vis: Visible, names: list[str] | None = None) -> str:
    return f"{base_key(key)}+{macro_signature(rel, lang, vis, names)}"


def expand_records(db_conn: object, recs: Mapping[str, Record], todo: list[str], ifaces: Mapping[str, FileFacts],
                   all_files: set[str], vendored: set[str], workers: int = 1,
                   lean: bool = False, rust_table: Mapping[str, list[MacroRule]] | None = None
                   ) -> dict[str, Record]:
    """Expanded records of the ``todo`` files (their records in ``recs``), read from the parse
    cache when stored under the same expanded key, else expanded now.  ``ifaces``: every indexed
    file's interface (what expansion reads of the other files; read on demand); ``rust_table``:
    the checkout's ``macro_rules!`` (``Tables.macro_rules``; else gathered from ``ifaces``)."""
    from apxtui.index.macros import Visible, expand_encoded  # lazy: start-up (a re-link of a file without macros)

    vis = Visible(ifaces, all_files, rust_table)
    keys = {rel: expanded_key(rel, recs[rel][1], ifaces[rel].lang, vis,
                              macro_names_of(recs[rel]) if ifaces[rel].lang == "rust" else None) for rel in todo}
    out: dict[str, Record] = {}
    missing = []
    for rel in todo:
        row = db_conn.execute("SELECT facts, iface, contrib, words FROM facts WHERE rel=? AND key=?",  # type: ignore[attr-defined]
                              (rel, keys[rel])).fetchone()
        if row is not None:
            out[rel] = (rel, keys[rel], *row)
        else:
            missing.append(rel)
    if missing:
        full = {rel: load_facts(recs[rel][2]) for rel in missing}

        def encode(f: FileFacts) -> Record:  # runs in the (forked) workers: only the record comes back
            return make_record(f, keys[f.file], lean).to_tuple()

        done = expand_encoded(ChainMap(full, ifaces), all_files, vendored, encode,  # type: ignore[arg-type]
                              only=set(missing), workers=workers, rust_table=rust_table)
        for rel in missing:  # unchanged by expansion: the parse record's bytes, re-keyed
            out[rel] = done[rel] if rel in done else (rel, keys[rel], *recs[rel][2:])
    return out


__all__ = ["base_key", "expand_records", "expanded_key", "macro_signature"]
