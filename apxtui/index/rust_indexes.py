"""The Rust resolver's stored indexes (``resolve_rust.STORED_INDEXES``), unpacked on demand.

A re-link of one file looks up a few hundred of the ~3,000 type qualnames of a big checkout;
unpickling every type's definitions took most of the indexes' load time.  So the type index
is stored as one pickle per qualname (:class:`LazyTypes` unpickles an entry when it is first
looked up) and the other indexes as one compressed pickle.  :func:`pack` of indexes whose
type index is a :class:`LazyTypes` reuses the stored entries it did not unpickle.
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

from apxtui.facts import Definition

_TYPES = "types_by_qual"


def _dumps(value: Any) -> bytes:
    """A pickle, zlib-compressed when long (a pickle starts with 0x80, zlib with 0x78)."""
    raw = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return zlib.compress(raw, 1) if len(raw) > 512 else raw


def _loads(blob: bytes) -> Any:
    return pickle.loads(zlib.decompress(blob) if blob[:1] == b"x" else blob)


class LazyTypes(Mapping[str, list[Definition]]):
    """Type qualname → its definitions (cfg alternatives first to last), each entry unpickled on
    first look-up.  Read-only: a re-index that changes the types builds a plain dict."""

    def __init__(self, blobs: dict[str, bytes]):
        self.blobs = blobs
        self.memo: dict[str, list[Definition]] = {}

    def __getitem__(self, q: str) -> list[Definition]:
        got = self.memo.get(q)
        if got is None:
            got = self.memo[q] = _loads(self.blobs[q])
        return got

    def __contains__(self, q: object) -> bool:
        return q in self.blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self.blobs)

    def __len__(self) -> int:
        return len(self.blobs)


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
    types = indexes[_TYPES]
    blobs = types.blobs if isinstance(types, LazyTypes) else {q: _dumps(ds) for q, ds in types.items()}
    rest = {k: v for k, v in indexes.items() if k != _TYPES}
    return pickle.dumps((zlib.compress(pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL), 1), blobs),
                        protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> dict[str, Any]:
    """The stored indexes, the type index as a :class:`LazyTypes`."""
    rest, blobs = pickle.loads(blob)
    out: dict[str, Any] = pickle.loads(zlib.decompress(rest))
    out[_TYPES] = LazyTypes(blobs)
    return out


__all__ = ["LazyTypes", "FirstTypes", "SharedQualnames", "pack", "unpack"]
