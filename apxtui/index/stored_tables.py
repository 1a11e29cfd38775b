"""The symbol tables, persisted as per-file contributions and read back key by key.

:class:`~apxtui.index.tables.Tables` is built by adding files one by one; what one
file adds to each table (its *contribution*) is stored as rows ``(table, key, rank,
value)``, ``rank`` being the file's place in the index's file order.  A look-up merges
the rows of one key in rank order exactly as adding the files in that order would
(lists concatenate, sets unite, nested dicts merge, a later scalar wins), so
:class:`StoredTables` answers like the eager tables of the same files while reading
only the keys a re-link asks for.  The cross-file facts ``Tables.finish`` derives
(absolute `use` paths, PyO3 module membership) are derived on access with the same
functions.  A re-link of some files passes their new contributions as an overlay that
replaces their stored rows.
"""

from __future__ import annotations

import pickle
import sqlite3
import zlib
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from apxtui.facts import FileFacts
from apxtui.index.tables import Tables, absolute_use, pyclass_modules

#: Tables derived by ``Tables.finish`` (not stored; computed on access).
DERIVED = ("pyclass_module",)


def _shape() -> dict[str, type]:
    empty = Tables()
    return {f.name: type(getattr(empty, f.name)) for f in fields(Tables) if f.name not in DERIVED}


SHAPE = _shape()


def enc(key: Any) -> str:
    return repr(key)


def contribution(f: FileFacts) -> Tables:
    """The tables of ``f`` alone (what adding ``f`` adds)."""
    t = Tables()
    t.add_file(f)
    return t


def _dumps(value: Any) -> bytes:
    """A pickled value, zlib-compressed when long (a pickle starts with 0x80, zlib with 0x78)."""
    raw = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return zlib.compress(raw, 1) if len(raw) > 256 else raw


def _loads(blob: bytes) -> Any:
    return pickle.loads(zlib.decompress(blob) if blob[:1] == b"x" else blob)


def contribution_rows(f: FileFacts) -> list[tuple[str, str, bytes]]:
    """``(table, key, value)`` rows of ``f``'s contribution (sets: one row per member)."""
    t = contribution(f)
    rows: list[tuple[str, str, bytes]] = []
    for name, kind in SHAPE.items():
        value = getattr(t, name)
        if not value:
            continue
        if issubclass(kind, dict):
            rows += [(name, enc(k), _dumps(v)) for k, v in value.items()]
        elif issubclass(kind, set):
            rows += [(name, enc(m), b"") for m in value]
        else:
            rows.append((name, "", _dumps(value)))
    return rows


def merge(values: list[Any]) -> Any:
    """Merge one key's per-file values in file order, as ``Tables.add_file`` accumulates them."""
    first = values[0]
    if len(values) == 1:
        return first
    if isinstance(first, list):
        return [x for v in values for x in v]
    if isinstance(first, set):
        return set().union(*values)
    if isinstance(first, dict):
        out: dict[Any, Any] = {}
        for v in values:
            for k, x in v.items():
                out[k] = merge([out[k], x]) if k in out and isinstance(x, (list, set, dict)) else x
        return out
    return values[-1]


class _Field:
    """One table, read from the rows on demand (memoised)."""

    _MISSING = object()

    def __init__(self, owner: StoredTables, name: str):
        self.owner = owner
        self.name = name
        self.kind = SHAPE[name]
        self.memo: dict[Any, Any] = {}
        self.whole: dict[Any, Any] | None = None
        self.ranks: dict[str, list[int]] | None = None  # a set table's rows: encoded member → ranks

    # rows of one key, or all keys, merged with the overlay
    def _load(self, key: Any) -> Any:
        o = self.owner
        vals: list[tuple[int, Any]] = []
        for rank, blob in o.conn.execute("SELECT rank, value FROM tabs WHERE tab=? AND key=? ORDER BY rank",
                                         (self.name, enc(key))):
            if rank not in o.replaced:
                vals.append((rank, True if self.kind is set else _loads(blob)))
        return self._merged(key, vals)

    def _merged(self, key: Any, vals: list[tuple[int, Any]]) -> Any:
        """``key``'s stored ``(rank, value)`` pairs with the overlay's, merged in rank order."""
        for rank, t in self.owner.overlay.items():
            v = getattr(t, self.name)
            if key in v:
                vals.append((rank, True if self.kind is set else v[key]))
        if not vals:
            return self._MISSING
        vals.sort(key=lambda rv: rv[0])
        return merge([v for _, v in vals])

    def prefetch(self, keys: Iterable[Any]) -> None:
        """Read the rows of the ``keys`` not yet read in one query per 500 (a look-up each costs
        more than the rows); later look-ups answer from the memo.  Plain tables only (the
        subclasses rewrite what they read)."""
        if type(self) is not _Field or self.whole is not None:
            return
        need = {enc(k): k for k in keys if k not in self.memo}
        if len(need) < 2:
            return
        o = self.owner
        per: dict[str, list[tuple[int, Any]]] = {e: [] for e in need}
        encs = list(need)
        for i in range(0, len(encs), 500):
            chunk = encs[i:i + 500]
            for e, rank, blob in o.conn.execute(
                    f"SELECT key, rank, value FROM tabs WHERE tab=? AND key IN ({','.join('?' * len(chunk))})",
                    (self.name, *chunk)):
                if rank not in o.replaced:
                    per[e].append((rank, True if self.kind is set else _loads(blob)))
        for e, k in need.items():
            self.memo[k] = self._merged(k, per[e])

    def _load_all(self) -> dict[Any, Any]:
        if self.whole is None:
            o = self.owner
            per: dict[str, list[tuple[int, Any]]] = {}
            keys: dict[str, Any] = {}
            for key, rank, blob in o.conn.execute("SELECT key, rank, value FROM tabs WHERE tab=?", (self.name,)):
                if rank not in o.replaced:
                    per.setdefault(key, []).append((rank, True if self.kind is set else _loads(blob)))
            for rank, t in o.overlay.items():
                v = getattr(t, self.name)
                for k in v:
                    e = enc(k)
                    keys[e] = k
                    per.setdefault(e, []).append((rank, True if self.kind is set else v[k]))
            whole = {}
            for e, vals in per.items():
                vals.sort(key=lambda rv: rv[0])
                k = keys[e] if e in keys else _decode(e)
                whole[k] = merge([v for _, v in vals])
            self.whole = whole
            self.memo.update(whole)
        return self.whole

    def _get(self, key: Any) -> Any:
        if key in self.memo:
            return self.memo[key]
        if self.whole is not None:
            return self._MISSING
        v = self._member(key) if self.kind is set else self._load(key)
        self.memo[key] = v
        return v

    def _member(self, key: Any) -> Any:
        """A set table's look-up, from the ranks of all its rows read in one query on first use
        (the rows carry no value: cheaper than a query per member asked, as ``use`` paths ask)."""
        if self.ranks is None:
            o = self.owner
            ranks: dict[str, list[int]] = {}
            for e, rank in o.conn.execute("SELECT key, rank FROM tabs WHERE tab=?", (self.name,)):
                if rank not in o.replaced:
                    ranks.setdefault(e, []).append(rank)
            self.ranks = ranks
        return self._merged(key, [(rank, True) for rank in self.ranks.get(enc(key), ())])

    # the mapping / set API the resolvers use
    def get(self, key: Any, default: Any = None) -> Any:
        v = self._get(key)
        return default if v is self._MISSING else v

    def __getitem__(self, key: Any) -> Any:
        v = self._get(key)
        if v is self._MISSING:
            raise KeyError(key)
        return v

    def __contains__(self, key: Any) -> bool:
        return self._get(key) is not self._MISSING

    def items(self) -> ItemsView[Any, Any]:
        return self._load_all().items()

    def keys(self) -> KeysView[Any]:
        return self._load_all().keys()

    def values(self) -> ValuesView[Any]:
        return self._load_all().values()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._load_all())

    def __len__(self) -> int:
        return len(self._load_all())

    def __bool__(self) -> bool:
        return bool(self._load_all())


class _ListField(_Field):
    """``bindings``: one row per file, concatenated in file order."""

    def __init__(self, owner: StoredTables, name: str):
        super().__init__(owner, name)
        self.items_list: list[Any] | None = None

    def _list(self) -> list[Any]:
        if self.items_list is None:
            o = self.owner
            vals = [(rank, _loads(blob)) for rank, blob in o.conn.execute(
                "SELECT rank, value FROM tabs WHERE tab=? AND key=''", (self.name,)) if rank not in o.replaced]
            vals += [(rank, getattr(t, self.name)) for rank, t in o.overlay.items() if getattr(t, self.name)]
            vals.sort(key=lambda rv: rv[0])
            self.items_list = [x for _, v in vals for x in v]
        return self.items_list

    def __iter__(self) -> Iterator[Any]:
        return iter(self._list())

    def __len__(self) -> int:
        return len(self._list())

    def __bool__(self) -> bool:
        return bool(self._list())

    def __getitem__(self, i: Any) -> Any:
        return self._list()[i]


def _decode(e: str) -> Any:
    import ast

    return ast.literal_eval(e)


class _UsesField(_Field):
    """``uses`` / ``globs``: relative `use` paths made absolute on access (what ``finish`` does)."""

    def _get(self, key: Any) -> Any:
        if key in self.memo:
            return self.memo[key]
        v = self._load(key)
        if v is not self._MISSING:
            t = self.owner
            if isinstance(v, dict):
                v = {alias: [absolute_use(t, imp) for imp in imps] for alias, imps in v.items()}  # type: ignore[arg-type]
            else:
                v = [absolute_use(t, imp) for imp in v]  # type: ignore[arg-type]
        self.memo[key] = v
        return v


class _StoredFile:
    """A stored file's interface whose module path is known (from the scan): ``file`` and ``module``
    without reading it, any other attribute read from its row on first use."""

    def __init__(self, field: _Field, file: str, module: str):
        self.file = file
        self.module = module
        self._field = field
        self._facts: FileFacts | None = None

    def __getattr__(self, name: str) -> Any:  # only attributes not set above
        if self._facts is None:
            self._facts = self._field._load(self.file)
            if self._facts is _Field._MISSING:
                raise RuntimeError(f"{self.file}: stored interface missing")
        return getattr(self._facts, name)


class _FileOfField(_Field):
    """``file_of``: the resolvers mostly ask a file's module path; the stored interface is read
    only when they ask more (``StoredTables.module_of``: the stored files' module paths)."""

    def _get(self, key: Any) -> Any:
        if key in self.memo:
            return self.memo[key]
        o = self.owner
        module = o.module_of.get(key)
        if module is None or self.whole is not None or any(key in t.file_of for t in o.overlay.values()):
            return super()._get(key)
        v = self.memo[key] = _StoredFile(self, key, module)
        return v


class StoredTables:
    """:class:`Tables` of a stored index generation, with ``overlay`` (rank → contribution)
    replacing the stored rows of those ranks (files being re-linked).  ``module_of``: the module
    path of every file the generation holds (as scanned), so ``file_of`` answers it unread."""

    def __init__(self, conn: sqlite3.Connection, overlay: dict[int, Tables] | None = None,
                 module_of: Mapping[str, str] | None = None):
        self.conn = conn
        self.overlay = dict(sorted((overlay or {}).items()))
        self.replaced = set(self.overlay)
        self.module_of = module_of or {}
        for name, kind in SHAPE.items():
            cls = (_UsesField if name in ("uses", "globs") else _FileOfField if name == "file_of"
                   else _ListField if kind is list else _Field)
            setattr(self, name, cls(self, name))
        self._pyclass_module: dict[str, str] | None = None

    if TYPE_CHECKING:  # the tables are set per name in __init__ (the fields of Tables)
        def __getattr__(self, name: str) -> Any: ...

    @property
    def pyclass_module(self) -> dict[str, str]:
        if self._pyclass_module is None:
            self._pyclass_module = pyclass_modules(list(self.bindings), dict(self.pymodules.items()),
                                                   dict(self.pyclasses.items()))
        return self._pyclass_module

    def live(self, ids: list[str]) -> list[str]:
        """Drop declaration-only entries when a real definition exists (as ``Tables.live``)."""
        real = [i for i in ids if not self.defs[i].attrs.get("decl_only")]
        return real or ids


__all__ = ["StoredTables", "contribution", "contribution_rows", "merge", "enc"]
