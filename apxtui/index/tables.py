"""Symbol tables built from all files' facts: the look-up side of linking.

Nothing here creates graph edges; the resolvers (``resolve_*.py``) query these
tables and ``link.py`` turns their answers into edges.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from apxtui.facts import Binding, Definition, FileFacts, Import
from apxtui.vocab import node_id as vocab_node_id

#: A ``macro_rules!`` as expansion reads it: (file, crate, line, text).
MacroRule = tuple[str, str, int, str]

_GENERIC_RE = re.compile(r"<.*>$")
_EXTERNAL_ROOTS = {"std", "core", "alloc", "crate", "self", "super"}


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


#: A typedef whose ``#if`` arms (or scopes) of one file disagree: ``one of: A | B`` (its type is unknown).
ALIAS_ARMS = "one of: "


def alias_arms(have: str, new: str) -> str:
    """The typedef table's entry for an alias defined again (``have`` then ``new``): every
    arm is kept; when they disagree the entry says which types it may be."""
    arms = have.removeprefix(ALIAS_ARMS).split(" | ") if have.startswith(ALIAS_ARMS) else [have]
    if new not in arms:
        arms.append(new)
    return arms[0] if len(arms) == 1 else ALIAS_ARMS + " | ".join(arms)


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
    kernels: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # kernel link name → ids
    # C/C++
    file_of: dict[str, FileFacts] = field(default_factory=dict)
    # file → alias → type (``Scope::alias`` for a class's or function's own; ``one of: A | B`` when arms disagree)
    typedefs: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    enumerators: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # name → ["Enum=value"]
    # Python
    py_imports: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # file → alias → path
    py_modules: dict[str, str] = field(default_factory=dict)  # dotted module → file
    # PyO3
    bindings: list[Binding] = field(default_factory=list)
    pymodules: dict[str, Binding] = field(default_factory=dict)  # python module name → module binding
    pyclass_module: dict[str, str] = field(default_factory=dict)  # rust type → python module
    pyclasses: dict[str, Binding] = field(default_factory=dict)  # rust type → class binding
    # Rust macro_rules! at module level: name → (file, crate, line, text), what expansion reads (rust_macros.py)
    macro_rules: dict[str, list[MacroRule]] = field(default_factory=lambda: defaultdict(list))

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
            elif d.kind == "kernel" and not d.attrs.get("decl_only"):  # what a name-loading call can load
                self.kernels[d.symbol or d.name].append(nid)
        for imp in f.imports:
            if imp.kind == "use":
                if imp.alias == "*":
                    self.globs[imp.scope or f.module].append(imp)
                else:
                    self.uses[imp.scope or f.module][imp.alias].append(imp)
            elif imp.kind == "mod":
                self.modules.add(imp.path)
            elif imp.kind == "typedef":
                key = f"{imp.scope}::{imp.alias}" if imp.scope else imp.alias  # a class's or function's own
                have = self.typedefs[f.file].get(key)
                self.typedefs[f.file][key] = imp.path if have is None else alias_arms(have, imp.path)
            elif imp.kind == "enumerator":
                self.enumerators[imp.alias].append(imp.path)
            elif imp.kind == "import":
                self.py_imports[f.file][imp.alias] = imp.path
        if f.lang == "rust":
            for name, row in module_macro_rules(f):
                self.macro_rules[name].append(row)
        for b in f.bindings:
            self.bindings.append(b)
            if b.kind == "module":
                self.pymodules[b.python_name] = b
            elif b.kind == "class":
                self.pyclasses[b.rust_type or b.rust_qualname.split("::")[-1]] = b

    def finish(self) -> None:
        """Derive cross-file facts once every file is added (PyO3 module membership,
        2018-edition relative `use` paths: `use ops::norm` inside crate `k` is `k::ops::norm`).

        A rewritten `use` is a copy in the tables: the file's own :class:`Import` stays as
        extracted, so a re-extracted unchanged file still equals its stored interface.
        Stored tables (``stored_tables.py``) derive the same facts on access, with
        :func:`absolute_use` and :func:`pyclass_modules`."""
        for table in (*self.uses.values(), self.globs):
            for key, imps in table.items():
                table[key] = [absolute_use(self, imp) for imp in imps]
        self.pyclass_module.update(pyclass_modules(self.bindings, self.pymodules, self.pyclasses))

    def live(self, ids: list[str]) -> list[str]:
        """Drop declaration-only entries when a real definition exists."""
        real = [i for i in ids if not self.defs[i].attrs.get("decl_only")]
        return real or ids


def macro_candidates(rows: Iterable[MacroRule], file: str, same_crate: Callable[[MacroRule], bool],
                     visible: Callable[[MacroRule], bool] = lambda r: True) -> list[MacroRule]:
    """The ``macro_rules!`` a macro name written in ``file`` may be: the file's own, else its crate's, else
    those ``file`` can see — all of them at that level, in table order (cfg alternatives, several
    definitions alike): never one picked silently."""
    rows = list(rows)
    for pick in ([r for r in rows if r[0] == file], [r for r in rows if same_crate(r)],
                 [r for r in rows if visible(r)]):
        if pick:
            return pick
    return []


def module_macro_rules(f: FileFacts) -> list[tuple[str, MacroRule]]:
    """``(name, (file, crate, line, text))`` of each module-level ``macro_rules!`` of a Rust file
    (one local to a function is not visible to other items)."""
    fns = None
    out = []
    for imp in f.imports:
        if imp.kind != "macro_rules":
            continue
        if fns is None:
            fns = {d.qualname for d in f.defs if d.kind == "rust_fn"}
        if imp.scope not in fns:
            out.append((imp.alias, (f.file, imp.scope.split("::")[0], imp.line, imp.path)))
    return out


def absolute_use(t: Tables, imp: Import) -> Import:
    """``imp`` with a 2018-edition relative path made absolute (a copy), or ``imp`` itself."""
    first = imp.path.split("::")[0]
    f = t.file_of.get(imp.file)
    if f is None or first in t.crates or first in _EXTERNAL_ROOTS:
        return imp
    mod = f.module
    if f"{mod}::{first}" in t.modules or t.by_qual.get(f"{mod}::{first}"):
        return replace(imp, path=f"{mod}::{imp.path}")
    return imp


def pyclass_modules(bindings: list[Binding], pymodules: dict[str, Binding],
                    pyclasses: dict[str, Binding]) -> dict[str, str]:
    """Rust type → the Python module its ``#[pyclass]`` is registered in (a single native
    module claims the unregistered classes)."""
    out: dict[str, str] = {}
    for b in bindings:
        if b.kind == "module_member" and b.attrs.get("what", "class") == "class":
            out[b.rust_qualname.split("::")[-1]] = b.python_module
    if len(pymodules) == 1:
        (only,) = pymodules
        for t in pyclasses:
            out.setdefault(t, only)
    return out
