"""A minimal multigraph for linking one file: the part of networkx's ``MultiDiGraph`` the
linker writes through, with the same node, edge and key order (so rows cut from it equal
what a networkx graph would give) — without importing networkx for a one-file re-link.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class _NodeView:
    def __init__(self, g: ScratchGraph):
        self._g = g

    def __getitem__(self, n: str) -> dict[str, Any]:
        return self._g._node[n]

    def get(self, n: str, default: Any = None) -> Any:
        return self._g._node.get(n, default)

    def __contains__(self, n: object) -> bool:
        return n in self._g._node

    def __iter__(self) -> Iterator[str]:
        return iter(self._g._node)

    def __len__(self) -> int:
        return len(self._g._node)

    def __call__(self, data: bool = False) -> Iterator[Any]:
        return iter(self._g._node.items()) if data else iter(self._g._node)


class ScratchGraph:
    """Nodes with attribute dicts; edges ``u → v`` keyed like networkx (given key, else 0, 1, …)."""

    def __init__(self) -> None:
        self._node: dict[str, dict[str, Any]] = {}
        self._succ: dict[str, dict[str, dict[Any, dict[str, Any]]]] = {}
        self.graph: dict[str, Any] = {}
        self.nodes = _NodeView(self)

    def __contains__(self, n: object) -> bool:
        return n in self._node

    def add_node(self, n: str, **attrs: Any) -> None:
        if n not in self._node:
            self._node[n] = {}
            self._succ[n] = {}
        self._node[n].update(attrs)

    def add_edge(self, u: str, v: str, key: Any = None, **attrs: Any) -> Any:
        for n in (u, v):
            if n not in self._node:
                self._node[n] = {}
                self._succ[n] = {}
        keys = self._succ[u].setdefault(v, {})
        if key is None:
            key = len(keys)
            while key in keys:
                key += 1
        if key in keys:
            keys[key].update(attrs)
        else:
            keys[key] = dict(attrs)
        return key

    def out_edges(self, n: str, data: bool = False, keys: bool = False) -> Iterator[tuple[Any, ...]]:
        for v, kd in self._succ.get(n, {}).items():
            for k, d in kd.items():
                yield (n, v, *((k,) if keys else ()), *((d,) if data else ()))

    def number_of_nodes(self) -> int:
        return len(self._node)
