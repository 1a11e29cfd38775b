"""Re-linking only the files that changed, when their interface did not.

A file's *interface* is what other files' resolution can see: its definitions (names,
kinds, containers, signatures, fields, cfg — not line numbers or bodies), its imports
and its PyO3 bindings.  When only bodies changed, the rest of the graph is still
right: the changed files' nodes and outgoing edges are rebuilt against symbol tables
made from every file's interface, and edges from other files into the changed files'
definitions are carried over to the new node ids (line numbers may have moved).

Anything this cannot prove equivalent to a full link — an interface change, an added
or removed file, a definition that cannot be matched, a change in the names that
decide which vendored files are indexed — returns ``None`` and the caller re-links
everything.  ``tests/test_incremental.py`` compares the result with a full link.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

import networkx as nx

from apxtui.facts import Binding, Context, Definition, FileFacts, Import, Issue, Param
from apxtui.index.link import Linker
from apxtui.index.macros import expand_macros
from apxtui.index.tables import node_id
from apxtui.packages import Packages
from apxtui.vocab import GRAPH_NODE_KINDS

#: Definition.attrs keys the resolvers and linker read (everything else is body detail).
_IFACE_ATTRS = ("decl_only", "trait_decl", "trait_default", "bases", "extern_c", "host", "trait_qualname", "kind",
                "variant_types", "variant_fields", "variants", "type_path", "trait_path", "aliased", "supertraits",
                "nested_in", "methods",
                # read from another file's definition: a picker's returns / chosen functions, TORCH_LIBRARY blocks
                "returns", "tail", "fn_values", "macro_like")
_OWNED_KINDS = GRAPH_NODE_KINDS | {"pyo3_binding", "cpp_binding"}


def _def_key(d: Definition) -> tuple[Any, ...]:
    return (d.kind, d.name, d.qualname, d.container, d.trait, d.symbol, d.visibility, d.return_type,
            tuple((p.name, p.type) for p in d.params), tuple(d.template_params),
            tuple(sorted((k, tuple(v)) for k, v in d.generic_bounds.items())), tuple(d.cfg),
            tuple(c.text for c in d.pp), tuple(sorted(d.fields.items())),
            tuple((k, repr(d.attrs.get(k))) for k in _IFACE_ATTRS))


def interface_key(f: FileFacts) -> tuple[Any, ...]:
    """What other files' linking depends on; line numbers and bodies excluded."""
    return (
        f.module, f.lang,
        tuple(_def_key(d) for d in f.defs),
        tuple((i.kind, i.path, i.alias, i.scope, i.public, i.system, tuple(i.cfg)) for i in f.imports),
        tuple((b.kind, b.python_name, b.rust_qualname, b.python_class, b.rust_type, b.python_module,
               repr(sorted(b.attrs.items()))) for b in f.bindings),
    )


def interface_facts(f: FileFacts) -> FileFacts:
    """A light copy of ``f`` holding only what symbol tables need (no calls, no locals)."""
    defs = [replace(d, locals={}, attrs={k: d.attrs[k] for k in _IFACE_ATTRS if k in d.attrs}) for d in f.defs]
    return replace(f, defs=defs, calls=[], strings=[], env_reads=[])


def to_plain(f: FileFacts) -> dict[str, Any]:
    """Interface facts as marshal-able plain data (fast to store and load)."""
    defs = []
    for d in f.defs:
        dd = dict(vars(d))
        dd["params"] = [dict(vars(p)) for p in d.params]
        dd["pp"] = [dict(vars(c)) for c in d.pp]
        defs.append(dd)
    return {
        "file": f.file, "lang": f.lang, "sha": f.sha, "module": f.module, "lines": f.lines, "defs": defs,
        "imports": [dict(vars(i)) for i in f.imports], "bindings": [dict(vars(b)) for b in f.bindings],
        "issues": [dict(vars(i)) for i in f.issues],
    }


def from_plain(d: dict[str, Any]) -> FileFacts:
    defs = []
    for dd in d["defs"]:
        dd = dict(dd)
        dd["params"] = [Param(**p) for p in dd["params"]]
        dd["pp"] = [Context(**c) for c in dd["pp"]]
        defs.append(Definition(**dd))
    return FileFacts(file=d["file"], lang=d["lang"], sha=d["sha"], module=d["module"], lines=d["lines"], defs=defs,
                     imports=[Import(**i) for i in d["imports"]], bindings=[Binding(**b) for b in d["bindings"]],
                     issues=[Issue(**i) for i in d["issues"]])


def _lazy_names(g: nx.MultiDiGraph[str], nodes: list[str]) -> set[tuple[str, str]]:
    """Callee names out of ``nodes`` that decide the lazily indexed vendored files."""
    out = set()
    for n in nodes:
        for _, v, d in g.out_edges(n, data=True):
            vd = g.nodes[v]
            if d.get("kind") in ("call", "launch", "ffi") and (vd.get("kind") == "external" or vd.get("vendored")):
                out.add((d.get("callee", ""), vd.get("kind", "")))
    return out


def _owned(g: nx.MultiDiGraph[str], files: set[str]) -> list[str]:
    return [n for n, d in g.nodes(data=True)
            if d.get("file") in files and (d.get("kind") in _OWNED_KINDS or d.get("module_level"))
            or (n.startswith("ambiguous:") and n.rsplit("@", 1)[-1].rsplit(":", 1)[0] in files)]


def relink(graph: nx.MultiDiGraph[str], iface: dict[str, FileFacts], changed: dict[str, FileFacts],
           all_files: set[str], vendored: set[str], packages: Packages | None = None) -> nx.MultiDiGraph[str] | None:
    """Update ``graph`` (mutated) for ``changed`` files; None when a full link is needed."""
    files = set(changed)
    expanded = expand_macros({**iface, **changed}, all_files, vendored, only=files)  # as a full link does
    changed = {rel: expanded[rel] for rel in changed}
    if any(rel not in iface or interface_key(iface[rel]) != interface_key(f) for rel, f in changed.items()):
        return None
    owned = _owned(graph, files)
    owned_set = set(owned)
    old_names = _lazy_names(graph, owned)
    incoming = [(u, v, k, d) for v in owned for u, _, k, d in graph.in_edges(v, keys=True, data=True)
                if u not in owned_set]
    touched = {v for n in owned for _, v in graph.out_edges(n)} - owned_set
    graph.remove_nodes_from(owned)
    for rel in files:  # include edges leave from the file node, which other files keep
        fn = f"file:{rel}"
        if fn in graph:
            graph.remove_edges_from(list(graph.out_edges(fn, keys=True)))
    facts = dict(iface)
    facts.update(changed)
    Linker(facts, all_files, vendored, only=files, graph=graph, packages=packages, expand=False).link()
    # carry edges from other files over to the changed files' (possibly renumbered) nodes
    new_ids: dict[tuple[str, str], list[str]] = defaultdict(list)
    for f in changed.values():
        for d in sorted(f.defs, key=lambda d: d.line):
            new_ids[(f.file, d.qualname)].append(node_id(d))
    old_ids: dict[tuple[str, str], list[str]] = defaultdict(list)
    for f in (iface[r] for r in files):
        for d in sorted(f.defs, key=lambda d: d.line):
            old_ids[(f.file, d.qualname)].append(node_id(d))
    remap: dict[str, str] = {}
    for key, olds in old_ids.items():
        news = new_ids.get(key, [])
        if len(news) != len(olds):
            return None
        remap.update(zip(olds, news, strict=True))
    for u, v, k, attrs in incoming:
        target = remap.get(v, v)
        if target not in graph:
            return None
        graph.add_edge(u, target, key=k, **attrs)
    for v in touched:  # externals / vendor APIs that nothing calls any more
        if v in graph and graph.in_degree(v) == 0 and graph.nodes[v].get("kind") in ("external", "vendor_api"):
            graph.remove_node(v)
    if _lazy_names(graph, _owned(graph, files)) != old_names:
        return None
    issues = [i for i in graph.graph.get("file_issues", []) if i[0] not in files]
    issues += [(i.file, i.kind, i.message, i.line, i.end_line) for f in changed.values() for i in f.issues]
    graph.graph["file_issues"] = issues
    return graph


__all__ = ["interface_facts", "interface_key", "relink"]
