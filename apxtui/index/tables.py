"""Symbol tables built from all files' facts: the look-up side of linking.

Nothing here creates graph edges; the resolvers (``resolve_*.py``) query these
tables and ``link.py`` turns their answers into edges.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from apxtui.facts import Binding, Definition, FileFacts, Import
from apxtui.vocab import node_id as vocab_node_id

_GENERIC_RE = re.compile(r"<.*>$")


def node_id(d: Definition) -> str:
    """Graph node id of a definition: readable and unique (cfg alternatives differ by line)."""
    return vocab_node_id(d.qualname, d.file, d.line)


def short_type(text: str) -> str:
    """``&mut apxinf::Block<B>`` → ``Block``; ``Vec<Block<B>>`` stays ``Vec``."""
    t = text.strip()
    for prefix in ("&", "mut ", "dyn ", "impl ", "*const ", "*mut ", "const "):
        while t.startswith(prefix):
            t = t[len(prefix) :].strip()
    t = re.sub(r"^'\w+\s+", "", t)
    t = _GENERIC_RE.sub("", t) if "<" in t else t
    return t.split("::")[-1].split(".")[-1].strip()


def _dd_list() -> defaultdict[str, list[Any]]:
    return defaultdict(list)


@dataclass
class Tables:
    defs: dict[str, Definition] = field(default_factory=dict)  # node id → def
    by_qual: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_name: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    # Rust
    methods: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))  # (Type, m)
    trait_methods: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    containers: set[str] = field(default_factory=set)  # Rust types with at least one method
    methods_by_name: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # m → ids
    trait_impls: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # trait → types
    types: dict[str, list[Definition]] = field(default_factory=lambda: defaultdict(list))  # short → defs
    uses: dict[str, dict[str, list[Import]]] = field(default_factory=lambda: defaultdict(_dd_list))
    globs: dict[str, list[Import]] = field(default_factory=lambda: defaultdict(list))
    modules: set[str] = field(default_factory=set)
    crates: set[str] = field(default_factory=set)
    symbols: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # C ABI symbol → ids
    # C/C++
    file_of: dict[str, FileFacts] = field(default_factory=dict)
    typedefs: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # file → alias → type
    # Python
    py_imports: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # file → alias → path
    py_modules: dict[str, str] = field(default_factory=dict)  # dotted module → file
    # PyO3
    bindings: list[Binding] = field(default_factory=list)
    pymodules: dict[str, Binding] = field(default_factory=dict)  # python module name → module binding
    pyclass_module: dict[str, str] = field(default_factory=dict)  # rust type → python module
    pyclasses: dict[str, Binding] = field(default_factory=dict)  # rust type → class binding

    def add_file(self, f: FileFacts) -> None:
        self.file_of[f.file] = f
        if f.lang == "rust" and f.module:
            self.modules.add(f.module)
            self.crates.add(f.module.split("::")[0])
        if f.lang == "python" and f.module:
            self.py_modules[f.module] = f.file
        for d in f.defs:
            nid = node_id(d)
            self.defs[nid] = d
            self.by_qual[d.qualname].append(nid)
            self.by_name[(d.lang, d.name)].append(nid)
            if d.lang == "rust":
                if d.kind == "rust_type":
                    self.types[d.name].append(d)
                elif d.container:
                    self.methods_by_name[d.name].append(nid)
                    self.containers.add(d.container)
                    if d.attrs.get("trait_decl") or d.attrs.get("trait_default"):
                        self.trait_methods[(d.container, d.name)].append(nid)
                    else:
                        self.methods[(d.container, d.name)].append(nid)
                        if d.trait:
                            self.trait_impls[short_type(d.trait)].add(d.container)
                if d.symbol and (d.kind == "rust_fn"):
                    self.symbols[d.symbol].append(nid)
            elif d.lang == "cuda" and d.kind == "abi_fn" and not d.attrs.get("decl_only"):
                self.symbols[d.symbol or d.name].append(nid)
        for imp in f.imports:
            if imp.kind == "use":
                if imp.alias == "*":
                    self.globs[imp.scope or f.module].append(imp)
                else:
                    self.uses[imp.scope or f.module][imp.alias].append(imp)
            elif imp.kind == "mod":
                self.modules.add(imp.path)
            elif imp.kind == "typedef":
                self.typedefs[f.file][imp.alias] = imp.path
            elif imp.kind == "import":
                self.py_imports[f.file][imp.alias] = imp.path
        for b in f.bindings:
            self.bindings.append(b)
            if b.kind == "module":
                self.pymodules[b.python_name] = b
            elif b.kind == "class":
                self.pyclasses[b.rust_type or b.rust_qualname.split("::")[-1]] = b

    def finish(self) -> None:
        """Derive cross-file facts once every file is added (PyO3 module membership,
        2018-edition relative `use` paths: `use ops::norm` inside crate `k` is `k::ops::norm`)."""
        external = {"std", "core", "alloc", "crate", "self", "super"}
        every = [imp for m in self.uses.values() for imps in m.values() for imp in imps]
        every += [imp for imps in self.globs.values() for imp in imps]
        if every:
                for imp in every:
                    first = imp.path.split("::")[0]
                    f = self.file_of.get(imp.file)
                    if f is None or first in self.crates or first in external:
                        continue
                    mod = f.module
                    if f"{mod}::{first}" in self.modules or self.by_qual.get(f"{mod}::{first}"):
                        imp.path = f"{mod}::{imp.path}"
        for b in self.bindings:
            if b.kind == "module_member" and b.attrs.get("what", "class") == "class":
                self.pyclass_module[b.rust_qualname.split("::")[-1]] = b.python_module
        if len(self.pymodules) == 1:  # a single native module: unregistered classes belong to it
            (only,) = self.pymodules
            for t in self.pyclasses:
                self.pyclass_module.setdefault(t, only)

    def live(self, ids: list[str]) -> list[str]:
        """Drop declaration-only entries when a real definition exists."""
        real = [i for i in ids if not self.defs[i].attrs.get("decl_only")]
        return real or ids
