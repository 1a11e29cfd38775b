"""The operator layer: where a model operation becomes a row of the execution map.

Rule (from the graph): a *boundary function* is a function of the checkout with a direct edge to
device work or to C: a kernel launch, a vendor library call, or a call to an ``extern "C"``
declaration.  A function's *package* is its Rust crate (the first segment of its qualified name),
its top-level Python package, or for C/C++/CUDA the directory above its file.  The operator layer
is every package that holds a boundary function.  Walking down from the entry, the first call into
an operator-layer function is a row; everything it reaches folds into that row.  When the entry is
itself in the operator layer, each of its direct calls is a row.

Override: a list of prefixes (of a file path relative to the checkout, or of a qualified name) in
``[map] operators = [...]`` of the checkout's ``.apxtui.toml`` or ``$XDG_CONFIG_HOME/apxtui/profiles.toml``
(the checkout's wins), or ``build_map(..., operators=[...])`` / ``trace --operators``.  With an
override, exactly the functions matching a prefix are the operator layer.
"""

from __future__ import annotations

import tomllib
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apxtui.profile.named import config_files
from apxtui.vocab import EdgeKind, NodeKind

_BOUNDARY_EDGES = {EdgeKind.LAUNCH.value, EdgeKind.VENDOR.value}
_FN = {NodeKind.RUST_FN.value, NodeKind.PYTHON_FN.value, NodeKind.HOST_FN.value, NodeKind.ABI_FN.value,
       NodeKind.FFI_DECL.value, NodeKind.DEVICE_FN.value, NodeKind.KERNEL.value}


class OperatorConfigError(ValueError):
    pass


def package(d: dict[str, Any]) -> str:
    """The package of a graph node (its attribute dict): crate, Python package or C/C++ directory."""
    lang: str = d.get("lang", "")
    q: str = d.get("qualname", "")
    f: str = d.get("file", "")
    if lang == "rust" and "::" in q:
        return q.split("::", 1)[0]
    if lang == "python" and "." in q:
        return q.split(".", 1)[0]
    return f.rsplit("/", 2)[0] if f.count("/") >= 2 else (f.rsplit("/", 1)[0] if "/" in f else f)


@dataclass
class OperatorLayer:
    """Which graph nodes are operator-layer functions (see the module docstring for the rule)."""

    packages: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    rule: str = ""
    _memo: dict[str, bool] = field(default_factory=dict)

    def contains(self, g: Any, node: str) -> bool:
        hit = self._memo.get(node)
        if hit is None:
            d = g.nodes[node] if node in g else {}
            if d.get("kind") not in _FN:
                hit = False
            elif self.prefixes:
                hit = any(d.get("file", "").startswith(p) or d.get("qualname", "").startswith(p)
                          for p in self.prefixes)
            else:
                hit = package(d) in self.packages
            self._memo[node] = hit
        return hit


_DISCOVERED: weakref.WeakKeyDictionary[object, OperatorLayer] = weakref.WeakKeyDictionary()


def discover(g: Any) -> OperatorLayer:
    """The operator layer from the graph's boundary functions (memoised per graph)."""
    got = _DISCOVERED.get(g)
    if got is None:
        got = _DISCOVERED[g] = _discover(g)
    return got


def _discover(g: Any) -> OperatorLayer:
    pkgs: dict[str, int] = {}
    if hasattr(g, "derived"):  # a stored graph: the counts stored beside its generation (made once)
        from apxtui.index.store import code_stamp  # lazy: only for a stored graph

        pkgs = dict(g.derived("operator-layer", code_stamp(__file__), lambda: list(_stored_counts(g).items())))
    else:
        for u, v, k in g.edges(data="kind"):
            du = g.nodes[u]
            if du.get("kind") in _FN and not du.get("vendored") and _boundary(
                    k, k == EdgeKind.CALL.value and g.nodes[v].get("kind") == NodeKind.FFI_DECL.value):
                p = package(du)
                pkgs[p] = pkgs.get(p, 0) + 1
    names = ", ".join(f"{p} ({n})" for p, n in sorted(pkgs.items(), key=lambda x: -x[1])[:6])
    return OperatorLayer(frozenset(pkgs), (), "packages with launch / vendor / extern \"C\" edges: "
                         + (names or "none (each call from the entry is a row)"))


def _stored_counts(g: Any) -> dict[str, int]:
    """Boundary edges per package of a stored graph, in graph order: only function rows' edges read,
    attributes on a hit."""
    pkgs: dict[str, int] = {}
    ffi = g.ids_of_kind(NodeKind.FFI_DECL.value)
    for u, out in g.out_edges_of_kinds(_FN):
        n = sum(1 for v, _, d in out if _boundary(d.get("kind"), v in ffi))
        du = g.nodes[u] if n else {}
        if n and du.get("kind") in _FN and not du.get("vendored"):
            p = package(du)
            pkgs[p] = pkgs.get(p, 0) + n
    return pkgs


def _boundary(edge_kind: str | None, to_ffi_decl: bool) -> bool:
    """A direct edge to device work or to C: a launch, a vendor call, a call to an ``extern "C"`` declaration."""
    return edge_kind in _BOUNDARY_EDGES or edge_kind == EdgeKind.CALL.value and to_ffi_decl


def configured(root: Path | None) -> list[str] | None:
    """``[map] operators`` from the checkout's .apxtui.toml or the user's profiles.toml (None: not set)."""
    for f in config_files(root):
        if not f.is_file():
            continue
        try:
            data = tomllib.loads(f.read_text("utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise OperatorConfigError(f"{f}: {e}") from None
        ops = (data.get("map") or {}).get("operators")
        if ops is None:
            continue
        if not isinstance(ops, list) or not all(isinstance(x, str) and x for x in ops):
            raise OperatorConfigError(f"{f}: [map] operators must be a list of non-empty strings")
        return ops
    return None


def operator_layer(g: Any, root: Path | None = None, override: list[str] | None = None) -> OperatorLayer:
    """The override (argument, then config file) or the layer discovered from the graph."""
    prefixes = override if override else configured(root)
    if prefixes:
        return OperatorLayer(frozenset(), tuple(prefixes), "configured: functions under " + ", ".join(prefixes))
    return discover(g)
