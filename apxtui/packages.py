"""Package boundaries: which code a file can call, read from Cargo.toml and pyproject.toml.

A call can only reach code its crate depends on.  Cargo decides that: a package's
targets (lib, bins, tests, examples, benches, build script) see the package's lib and
its dependencies — ``[dependencies]`` for every target (``[target.'cfg(..)'.dependencies]``
too), ``[dev-dependencies]`` only for tests, examples and benches, ``[build-dependencies]``
only for ``build.rs`` — and, transitively, the ``[dependencies]`` of those.  Optional
dependencies count (they are in the closure when their feature is on; without a
profile every configuration is considered), ``workspace = true`` takes the entry
from ``[workspace.dependencies]``, and ``package = "..."`` renames: the name used in
code is the dependency's key, the crate is the named package's lib.  A dependency is
local when its ``path`` leads to a package of the checkout, or, without a ``path``, when
the checkout holds a package of that name (a registry or git version of a crate the
checkout contains is read as that crate's source); any other is external (crates.io,
git): code reached through it is not in the checkout.

Test, example and bench targets (and Python ``tests/`` / ``examples/`` code) are
*units* of their own: nothing outside them can call into them.

Python: a distribution is the directory of a ``pyproject.toml`` (``setup.py`` /
``setup.cfg``); it sees itself and the local distributions its
``[project] dependencies`` and optional dependencies name.  Python files outside any
distribution, or in one whose dependencies are not declared there (``setup.py``), are
unrestricted.

Everything here is plain data built once per scan; ``fingerprint`` hashes the
manifests so caches derived from the boundaries are keyed on them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from apxtui.errors import InputFileError
from apxtui.inputs import MANIFEST_MAX, confine, parse_toml, read_limited

#: Cargo's auto-discovered target folders beside ``src/`` (each file / sub-folder is a crate).
TARGET_DIRS = {"tests": "test", "examples": "example", "benches": "bench"}
#: Target kinds that see ``[dev-dependencies]`` and that nothing else can call into.
DEV_KINDS = frozenset({"test", "example", "bench"})
#: Crate names that are always outside the checkout.
STD_CRATES = frozenset({"std", "core", "alloc", "proc_macro", "test"})
_PY_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
_REQ_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def ident(name: str) -> str:
    """The Rust identifier of a crate name (``candle-core`` → ``candle_core``)."""
    return name.replace("-", "_").replace(".", "_")


def _norm_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class Unit(NamedTuple):
    """One compilation unit: a package's lib, or one of its bin/test/example/bench/build targets."""

    package: str  # package directory ("" for the checkout root)
    kind: str  # lib | bin | test | example | bench | build | python
    target: str = ""  # target name for non-lib targets


@dataclass
class Dep:
    key: str  # the name code uses (the dependency table key, as an identifier)
    package: str  # the package name it refers to (after `package = ...`)
    kind: str  # normal | dev | build
    optional: bool = False
    local: str | None = None  # package directory when the dependency is in the checkout


@dataclass
class Package:
    dir: str
    name: str
    lib: str  # crate identifier of the lib target
    deps: list[Dep] = field(default_factory=list)
    has_lib: bool = True
    # explicit [[bin]]/[[test]]/[[example]]/[[bench]] paths → (kind, name)
    targets: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass
class PyDist:
    dir: str
    name: str
    deps: set[str] = field(default_factory=set)  # normalised distribution names
    declared: bool = False  # dependencies read from a [project] table (setup.py / setup.cfg: not read)


class Packages:
    """The package boundaries of a checkout (see the module docstring)."""

    def __init__(self) -> None:
        self.files: set[str] = set()  # the checkout's files (targets with a main.rs, packages with a lib.rs)
        self.packages: dict[str, Package] = {}  # dir → package
        self.dists: dict[str, PyDist] = {}  # dir → python distribution
        self.fingerprint = ""
        self.problems: list[tuple[str, str]] = []  # (manifest path, message)
        self._unit: dict[str, Unit | None] = {}
        self._closure: dict[Unit, frozenset[str]] = {}
        self._visible: dict[tuple[Unit | None, Unit, bool], bool] = {}
        self._aliases: dict[Unit, dict[str, str]] = {}
        self._by_name: dict[str, str] = {}  # package name → dir
        self._dist_by_name: dict[str, str] = {}

    # -- reading ---------------------------------------------------------------------------

    @classmethod
    def read(cls, root: Path, manifests: list[str], files: set[str] | frozenset[str] = frozenset()) -> Packages:
        """Read every ``Cargo.toml`` / Python manifest listed (paths relative to ``root``); ``files``
        are the checkout's files (which targets have a ``main.rs``, which packages a ``src/lib.rs``)."""
        texts: dict[str, bytes] = {}
        problems = []
        for rel in sorted(manifests):
            try:  # confined to the checkout, bounded, regular files only
                texts[rel] = read_limited(confine(root, rel), MANIFEST_MAX, rel)
            except InputFileError as e:
                problems.append((rel, str(e)))
        self = cls.from_texts(dict(texts), files)
        self.problems[:0] = problems
        return self

    @classmethod
    def from_texts(cls, texts: Mapping[str, bytes | str], files: set[str] | frozenset[str] = frozenset()) -> Packages:
        """Boundaries from manifest contents by relative path (``{"nn/Cargo.toml": "..."}``)."""
        self = cls()
        self.files = set(files)
        h = hashlib.blake2b(digest_size=12)
        cargo: dict[str, dict[str, Any]] = {}
        for rel in sorted(texts):
            raw = texts[rel]
            data = raw.encode() if isinstance(raw, str) else raw
            h.update(rel.encode() + b"\0" + data + b"\0")
            base = PurePosixPath(rel).name
            d = str(PurePosixPath(rel).parent)
            d = "" if d == "." else d
            if base == "Cargo.toml":
                try:
                    cargo[d] = parse_toml(data, rel)
                except InputFileError as e:
                    self.problems.append((rel, str(e)))
            elif base in _PY_MANIFESTS:
                self._read_python(d, base, data)
        self.fingerprint = h.hexdigest()
        workspaces = {d: m.get("workspace", {}) for d, m in cargo.items() if "workspace" in m}
        for d, m in cargo.items():
            pkg = m.get("package")
            if not isinstance(pkg, dict) or not isinstance(pkg.get("name"), str):
                continue
            lib: dict[str, Any] = m["lib"] if isinstance(m.get("lib"), dict) else {}
            p = Package(d, pkg["name"], ident(str(lib.get("name") or pkg["name"])))
            p.has_lib = bool(lib) or _join(d, "src/lib.rs") in self.files
            ws = _workspace_of(d, workspaces)
            self._read_deps(p, m, ws)
            for kind in ("bin", "test", "example", "bench"):
                for t in m.get(kind, ()) if isinstance(m.get(kind), list) else ():
                    if isinstance(t, dict) and isinstance(t.get("path"), str) and isinstance(t.get("name"), str):
                        p.targets[_join(d, t["path"])] = (kind, ident(t["name"]))
            self.packages[d] = p
            self._by_name[p.name] = d
        for p in self.packages.values():  # path deps and same-named packages of the checkout
            for dep in p.deps:
                if dep.local is not None and dep.local not in self.packages:
                    dep.local = None
                if dep.local is None and dep.package in self._by_name:
                    dep.local = self._by_name[dep.package]
        for dist in self.dists.values():
            self._dist_by_name[_norm_dist(dist.name)] = dist.dir
        return self

    def _read_deps(self, p: Package, m: dict[str, Any], ws: tuple[str, dict[str, Any]] | None) -> None:
        tables: list[tuple[str, dict[str, Any]]] = []
        for key, kind in (("dependencies", "normal"), ("dev-dependencies", "dev"), ("build-dependencies", "build")):
            tables.append((kind, m.get(key, {})))
            for tcfg in (m.get("target", {}) or {}).values():  # [target.'cfg(..)'.dependencies]
                if isinstance(tcfg, dict):
                    tables.append((kind, tcfg.get(key, {})))
        wsdeps = ws[1].get("dependencies", {}) if ws else {}
        for kind, table in tables:
            if not isinstance(table, dict):
                continue
            for key, spec in table.items():
                spec = spec if isinstance(spec, dict) else {"version": spec}
                base_dir = p.dir
                if spec.get("workspace") is True and ws is not None:
                    wspec = wsdeps.get(key, {})
                    wspec = wspec if isinstance(wspec, dict) else {"version": wspec}
                    spec = {**wspec, **{k: v for k, v in spec.items() if k != "workspace"}}
                    base_dir = ws[0]
                name = str(spec["package"]) if isinstance(spec.get("package"), str) else key
                path = spec.get("path")
                local = _join(base_dir, path) if isinstance(path, str) else None
                p.deps.append(Dep(ident(key), name, kind, bool(spec.get("optional")), local))

    def _read_python(self, d: str, base: str, data: bytes) -> None:
        dist = self.dists.setdefault(d, PyDist(d, PurePosixPath(d).name or "."))
        if base != "pyproject.toml":
            return
        try:
            m = parse_toml(data, _join(d, base))
        except InputFileError as e:
            self.problems.append((_join(d, base), str(e)))
            return
        proj = m.get("project", {}) if isinstance(m.get("project"), dict) else {}
        dist.declared = dist.declared or "dependencies" in proj or "optional-dependencies" in proj
        if isinstance(proj.get("name"), str):
            dist.name = proj["name"]
        reqs = list(proj.get("dependencies", []) or [])
        for extra in (proj.get("optional-dependencies", {}) or {}).values():
            reqs += list(extra or [])
        for r in reqs:
            mm = _REQ_NAME_RE.match(str(r))
            if mm:
                dist.deps.add(_norm_dist(mm.group(1)))

    # -- queries -----------------------------------------------------------------------------

    def unit_of(self, rel: str) -> Unit | None:
        """The compilation unit a source file belongs to (None: outside every package)."""
        if rel in self._unit:
            return self._unit[rel]
        u = self._python_unit(rel) if rel.endswith((".py", ".pyi")) else self._rust_unit(rel)
        self._unit[rel] = u
        return u

    def _rust_unit(self, rel: str) -> Unit | None:
        if not rel.endswith(".rs"):
            return None
        p = PurePosixPath(rel)
        d = p.parent
        while True:
            key = "" if str(d) == "." else str(d)
            if key in self.packages:
                break
            if key == "":
                return None
            d = d.parent
        pkg = self.packages[key]
        inner = p.relative_to(key).parts if key else p.parts
        for path, (kind, name) in pkg.targets.items():  # explicit [[bin]] / [[example]] ... paths
            tp = PurePosixPath(path)
            if rel == path or (tp.name == "main.rs" and str(p).startswith(str(tp.parent) + "/")):
                return Unit(key, kind, name)
        if inner == ("build.rs",):
            return Unit(key, "build", "build")
        if len(inner) >= 2 and inner[0] in TARGET_DIRS:
            return Unit(key, TARGET_DIRS[inner[0]], self._target_name(key, inner[0], inner[1:]))
        if len(inner) >= 3 and inner[:2] == ("src", "bin"):
            return Unit(key, "bin", self._target_name(key, "src/bin", inner[2:]))
        if inner == ("src", "main.rs") or (not pkg.has_lib and inner[:1] == ("src",)):
            return Unit(key, "bin", ident(pkg.name))  # a package without a lib: src/ is the main binary's
        return Unit(key, "lib")

    def _target_name(self, pkg_dir: str, tdir: str, rest: tuple[str, ...]) -> str:
        """``tests/ops.rs`` → ``ops``; ``examples/llama/*.rs`` (with a main.rs) → ``llama``; a folder
        without main.rs (``tests/common/mod.rs``) is shared by the folder's targets: ``*``."""
        if len(rest) == 1:
            return ident(PurePosixPath(rest[0]).stem)
        sub = _join(pkg_dir, f"{tdir}/{rest[0]}")
        if f"{sub}/main.rs" in self.files:
            return ident(rest[0])
        return "*"

    def _python_unit(self, rel: str) -> Unit | None:
        parts = rel.split("/")
        kind = "python"
        if any(x in ("tests", "test") for x in parts[:-1]) or parts[-1].startswith("test_") \
                or parts[-1] == "conftest.py":
            kind = "test"
        elif any(x in ("examples", "benches", "benchmarks") for x in parts[:-1]):
            kind = "example"
        for k in range(len(parts) - 1, -1, -1):
            d = "/".join(parts[:k])
            if d in self.dists:
                return Unit(d, kind, d if kind != "python" else "")
        return Unit("", kind, "") if kind != "python" else None

    def crate_aliases(self, rel: str) -> dict[str, str]:
        """Names a Rust file can use for other crates → the crate identifier they name
        (``candle`` → ``candle_core``); an external dependency maps to ``""``."""
        u = self.unit_of(rel)
        if u is None or u.package not in self.packages:
            return {}
        hit = self._aliases.get(u)
        if hit is None:
            pkg = self.packages[u.package]
            hit = {}
            for dep in pkg.deps:
                if not _dep_applies(dep, u.kind):
                    continue
                target = self.packages.get(dep.local) if dep.local is not None else None
                hit.setdefault(dep.key, target.lib if target else "")
            if u.kind != "lib" and pkg.has_lib:
                hit.setdefault(pkg.lib, pkg.lib)
            self._aliases[u] = hit
        return hit

    def closure(self, u: Unit) -> frozenset[str]:
        """Package directories whose lib ``u`` can reach (its own included)."""
        hit = self._closure.get(u)
        if hit is not None:
            return hit
        seen: set[str] = set()
        if u.kind == "python":
            todo = [u.package]
            while todo:
                d = todo.pop()
                if d in seen or d not in self.dists:
                    continue
                seen.add(d)
                todo += [self._dist_by_name[n] for n in self.dists[d].deps if n in self._dist_by_name]
        else:
            pkg = self.packages.get(u.package)
            if u.kind != "lib" or pkg is None or pkg.has_lib:
                seen.add(u.package)
            todo = [dep.local for dep in (pkg.deps if pkg else ()) if dep.local is not None
                    and _dep_applies(dep, u.kind)]
            while todo:
                d = todo.pop()
                if d in seen:
                    continue
                seen.add(d)
                dp = self.packages.get(d)
                todo += [dep.local for dep in (dp.deps if dp else ()) if dep.local is not None and dep.kind == "normal"]
        out = frozenset(seen)
        self._closure[u] = out
        return out

    def visible(self, caller_file: str, target_file: str) -> bool:
        """Can code in ``caller_file`` call a definition in ``target_file`` (by the manifests)?"""
        tu = self.unit_of(target_file)
        if tu is None:
            return True
        cu = self.unit_of(caller_file)
        key = (cu, tu, caller_file.endswith((".py", ".pyi")))
        hit = self._visible.get(key)
        if hit is None:
            hit = self._visible[key] = self._unit_visible(cu, tu, key[2])
        return hit

    def _unit_visible(self, cu: Unit | None, tu: Unit, python_caller: bool) -> bool:
        if cu is None:
            return tu.kind not in DEV_KINDS
        if tu == cu or (tu.target == "*" and (cu.package, cu.kind) == (tu.package, tu.kind)):
            return True
        if tu.kind in DEV_KINDS or tu.kind in ("bin", "build"):
            return False  # a test/example/bench/bin/build target is its own crate: nothing depends on it
        if python_caller:
            if cu.package not in self.dists or not self.dists[cu.package].declared:
                return True  # dependencies unknown (no [project] table): not restricted
            return tu.package in self.closure(Unit(cu.package, "python"))
        return tu.package in self.closure(cu)


def _dep_applies(dep: Dep, kind: str) -> bool:
    if dep.kind == "normal":
        return kind != "build"
    if dep.kind == "dev":
        return kind in DEV_KINDS
    return kind == "build"


def _workspace_of(d: str, workspaces: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """The nearest workspace manifest at or above package dir ``d``."""
    p = PurePosixPath(d)
    while True:
        key = "" if str(p) == "." else str(p)
        if key in workspaces:
            return key, workspaces[key]
        if key == "":
            return None
        p = p.parent


def _join(base: str, path: str) -> str:
    import posixpath

    out = posixpath.normpath(posixpath.join(base, path)) if base else posixpath.normpath(path)
    return "" if out == "." else out


def is_manifest(rel: str) -> bool:
    """Is ``rel`` a manifest :meth:`Packages.read` reads?"""
    base = rel.rsplit("/", 1)[-1]
    return base == "Cargo.toml" or base in _PY_MANIFESTS
