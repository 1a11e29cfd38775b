"""The Rust resolver's stored indexes (``resolve_rust.STORED_INDEXES``), unpacked on demand.

A re-link of one file looks up a few hundred of the ~3,000 type qualnames of a big checkout;
unpickling every type's definitions took most of the indexes' load time.  So the type index
is stored as one pickle per qualname with the files defining it (:class:`LazyTypes` unpickles
an entry when it is first looked up, and a file's re-index remakes only the entries of that
file) and the other indexes as one pickle (uncompressed: about 3 MB on mistral.rs, where
compressing and decompressing them cost more than reading them).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator, Mapping
from typing import Any

from apxtui.facts import Definition

_TYPES = "types_by_qual"


def _dumps(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


class LazyTypes(Mapping[str, list[Definition]]):
    """Type qualname → its definitions (cfg alternatives first to last), each entry unpickled on
    first look-up; ``files``: qualname → the files defining it (which entries a file's re-index
    changes).  Read-only: :meth:`replace_files` makes a new one."""

    def __init__(self, blobs: dict[str, bytes], files: dict[str, tuple[str, ...]]):
        self.blobs = blobs
        self.files = files
        self.memo: dict[str, list[Definition]] = {}

    @classmethod
    def of(cls, types: Mapping[str, list[Definition]]) -> LazyTypes:
        if isinstance(types, LazyTypes):
            return types
        return cls({q: _dumps(ds) for q, ds in types.items()},
                   {q: tuple(sorted({d.file for d in ds})) for q, ds in types.items()})

    def __getitem__(self, q: str) -> list[Definition]:
        got = self.memo.get(q)
        if got is None:
            got = self.memo[q] = pickle.loads(self.blobs[q])
        return got

    def __contains__(self, q: object) -> bool:
        return q in self.blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self.blobs)

    def __len__(self) -> int:
        return len(self.blobs)

    def replace_files(self, gone: set[str], added: list[Definition], rank: Mapping[str, int]) -> LazyTypes:
        """These types with the definitions of the files ``gone`` dropped and ``added`` (those files'
        new type definitions, in file order) appended; an entry that gains one is ordered by ``rank``
        of its files (stably), as a full build would list it.  Only the entries those files touch
        are unpickled and made again."""
        blobs, files = dict(self.blobs), dict(self.files)
        out = LazyTypes(blobs, files)
        out.memo = dict(self.memo)
        touched = {q for q, fs in self.files.items() if not gone.isdisjoint(fs)}
        new: dict[str, list[Definition]] = {}
        for d in added:
            new.setdefault(d.qualname, []).append(d)
        for q in touched | set(new):
            ds = [d for d in (self[q] if q in self.blobs else []) if d.file not in gone] + new.get(q, [])
            if q in new:
                ds.sort(key=lambda d: rank.get(d.file, 1 << 30))
            out.memo.pop(q, None)
            if ds:
                blobs[q], files[q] = _dumps(ds), tuple(sorted({d.file for d in ds}))
                out.memo[q] = ds
            else:
                del blobs[q], files[q]
        return out


class FirstTypes(Mapping[str, Definition]):
    """Qualname → its first type definition (``RustResolver.type_defs``) over a :class:`LazyTypes`."""

    def __init__(self, types: LazyTypes):
        self.types = types

    def __getitem__(self, q: str) -> Definition:
        return self.types[q][0]

    def __contains__(self, q: object) -> bool:
        return q in self.types

    def __iter__(self) -> Iterator[str]:
        return iter(self.types)

    def __len__(self) -> int:
        return len(self.types)


class SharedQualnames(Mapping[str, list[Definition]]):
    """Qualnames several type definitions share → those definitions (``RustResolver._same_qual``)."""

    def __init__(self, types: LazyTypes):
        self.types = types

    def __getitem__(self, q: str) -> list[Definition]:
        ds = self.types[q]
        if len(ds) < 2:
            raise KeyError(q)
        return ds

    def __contains__(self, q: object) -> bool:
        return isinstance(q, str) and q in self.types and len(self.types[q]) > 1

    def __iter__(self) -> Iterator[str]:
        return (q for q in self.types if len(self.types[q]) > 1)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def pack(indexes: Mapping[str, Any]) -> bytes:
    """The indexes as stored with a generation."""
    types = LazyTypes.of(indexes[_TYPES])
    rest = {k: v for k, v in indexes.items() if k != _TYPES}
    return pickle.dumps((_dumps(rest), types.blobs, types.files), protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes, patch: bytes | None = None) -> dict[str, Any]:
    """The stored indexes, the type index as a :class:`LazyTypes`; with the ``patch`` (:func:`diff`) applied."""
    rest, blobs, files = pickle.loads(blob)
    out: dict[str, Any] = pickle.loads(rest)
    out[_TYPES] = LazyTypes(blobs, files)
    return out if patch is None else patched(out, pickle.loads(patch))


#: A patch entry of a key the base has and the patched indexes do not.
_GONE = None


def _changes(base: Mapping[Any, Any], now: Mapping[Any, Any]) -> dict[Any, Any]:
    """The entries of ``now`` that differ from ``base`` (in ``now``'s order), and ``_GONE`` for its missing keys."""
    out = {k: v for k, v in now.items() if base.get(k, _GONE) != v}
    out.update({k: _GONE for k in base if k not in now})
    return out


def _apply(base: dict[Any, Any], changes: Mapping[Any, Any]) -> Any:
    out = copy.copy(base)  # a defaultdict stays one
    for k, v in changes.items():
        if v is _GONE:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def diff(base: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """What turns the indexes ``base`` into ``now`` (for :func:`patched`): per index, the changed entries
    (the type index: its changed pickles and file lists).  A re-link stores this beside the stored
    indexes instead of writing them all again."""
    out: dict[str, Any] = {}
    for name, value in now.items():
        if name == _TYPES:
            b, n = LazyTypes.of(base[name]), LazyTypes.of(value)
            out[name] = (_changes(b.blobs, n.blobs), _changes(b.files, n.files))
        elif isinstance(value, dict):
            out[name] = _changes(base[name], value)
        else:  # a set (test_only): whole, when it changed
            out[name] = value if value != base[name] else _GONE
    return out


def patched(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with :func:`diff`'s ``patch`` applied (``base`` is left as it is)."""
    out = dict(base)
    for name, changes in patch.items():
        if name == _TYPES:
            b = LazyTypes.of(base[name])
            out[name] = LazyTypes(_apply(b.blobs, changes[0]), _apply(b.files, changes[1]))
        elif isinstance(base[name], dict):
            out[name] = _apply(base[name], changes)
        elif changes is not _GONE:
            out[name] = changes
    return out


def patch_size(patch: Mapping[str, Any]) -> int:
    """Entries in a :func:`diff` (a set counts one)."""
    return sum(len(c[0]) if n == _TYPES else len(c) if isinstance(c, dict) else 1 for n, c in patch.items()
               if c is not _GONE)


def pack_patch(patch: Mapping[str, Any]) -> bytes:
    return pickle.dumps(dict(patch), protocol=pickle.HIGHEST_PROTOCOL)


__all__ = ["LazyTypes", "FirstTypes", "SharedQualnames", "pack", "unpack", "diff", "patched", "pack_patch",
           "patch_size"]
