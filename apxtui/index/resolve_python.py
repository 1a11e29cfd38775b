"""Python name resolution: imports, module members, ``self`` methods and fields, PyO3 bindings.

A dotted callee is expanded through the file's imports (``import a.b as c``, ``from
a import f``), the module's own definitions, ``self``/``cls`` (methods and base
classes of the enclosing class) and the types of ``self`` fields and typed locals
(``self.runner = apxinf_py.ModelRunner(...)``).  The expanded name is looked up among
Python definitions and then among the PyO3 bindings (``module.Class.method``).
"""

from __future__ import annotations

import builtins

from apxtui.facts import CallSite, Definition
from apxtui.index.resolve import AMBIGUOUS, EXACT, HEURISTIC, Resolved
from apxtui.index.tables import Tables
from apxtui.packages import Packages

BUILTINS = set(dir(builtins)) | {"super"}
#: Methods of the builtin types (str, bytes, list, dict, set, tuple, files): with a receiver of
#: unknown type such a call is far likelier one of theirs than a project method of that name.
BUILTIN_METHODS = {m for t in (str, bytes, list, dict, set, tuple, int, float) for m in dir(t)
                   if not m.startswith("_")} | {"read", "write", "close", "readline", "readlines", "flush", "seek"}


class PythonResolver:
    def __init__(self, t: Tables, pyo3_ids: dict[str, str], packages: Packages | None = None):
        self.t = t
        self.packages = packages if packages is not None else Packages()
        self.pyo3 = pyo3_ids  # python-visible dotted name ("apxinf_py.ModelRunner.infer") → node id

    def _module(self, call: CallSite) -> str:
        f = self.t.file_of.get(call.file)
        return f.module if f else ""

    def _class_of(self, caller: Definition | None) -> Definition | None:
        if caller is None or not caller.container:
            return None
        cls_qual = caller.qualname.rsplit(".", 1)[0]
        for i in self.t.by_qual.get(cls_qual, []):
            if self.t.defs[i].kind == "python_class":
                return self.t.defs[i]
        return None

    def expand(self, dotted: str, call: CallSite, depth: int = 0) -> str:
        """Expand the first segment of ``dotted`` through the file's imports / module."""
        head, _, rest = dotted.partition(".")
        imports = self.t.py_imports.get(call.file, {})
        if dotted in imports:
            return imports[dotted]
        for alias, path in imports.items():  # `import a.b` binds "a.b" as written
            if "." in alias and (dotted == alias or dotted.startswith(alias + ".")):
                return path + dotted[len(alias) :]
        if head in imports:
            return imports[head] + ("." + rest if rest else "")
        mod = self._module(call)
        if f"{mod}.{head}" in self.t.by_qual:
            return f"{mod}.{dotted}"
        return dotted

    def lookup(self, full: str) -> tuple[list[str], str]:
        ids = self.t.by_qual.get(full, [])
        if ids and all(self.t.defs[i].file.endswith(".pyi") for i in ids) and self._pyo3(full):
            return [self._pyo3(full)], "pyo3 (the .pyi stub describes the native module)"
        if ids:
            d = self.t.defs[ids[0]]
            if d.kind == "python_class":  # calling a class runs its __init__ when defined
                init = self.t.by_qual.get(full + ".__init__")
                return (list(init) if init else list(ids)), "class"
            return list(ids), "python"
        pid = self._pyo3(full)
        if pid:
            return [pid], "pyo3"
        return [], ""

    def _pyo3(self, full: str) -> str:
        if full in self.pyo3:
            return self.pyo3[full]
        if full + ".__new__" in self.pyo3:
            return self.pyo3[full + ".__new__"]
        # the native module imported under a package prefix (pkg._native.Class → _native.Class)
        parts = full.split(".")
        for k in range(1, len(parts) - 1):
            tail = ".".join(parts[k:])
            if tail in self.pyo3 or tail + ".__new__" in self.pyo3:
                return self.pyo3.get(tail) or self.pyo3[tail + ".__new__"]
        return ""

    def _type_of_name(self, name: str, caller: Definition | None, call: CallSite) -> str:
        """Dotted type of ``self.x`` / a typed local or parameter, expanded through imports."""
        ty = ""
        if caller is not None:
            if name.startswith("self.") and name.count(".") == 1:
                cls = self._class_of(caller)
                if cls is not None:
                    ty = cls.fields.get(name[5:], "")
            elif name in caller.locals:
                ty = caller.locals[name]
            else:
                ty = next((p.type for p in caller.params if p.name == name and p.type), "")
        ty = ty.strip().strip("'\"")
        if not ty:
            return ""
        return self.expand(ty.split("[")[0], call)

    def resolve(self, call: CallSite, caller: Definition | None) -> Resolved:
        path = call.path or [call.callee]
        if len(path) == 1 and path[0] in BUILTINS and path[0] not in self.t.py_imports.get(call.file, {}):
            return Resolved(drop=True, how="builtin")
        head = path[0]
        if head in ("self", "cls") and caller is not None:
            cls = self._class_of(caller)
            if cls is not None and len(path) == 2:
                ids = self._method_in_class(cls, path[1])
                if ids:
                    return Resolved.of(ids, f"method of {cls.name}")
            if len(path) == 3:
                ty = self._type_of_name(f"self.{path[1]}", caller, call)
                if ty:
                    ids, how = self.lookup(f"{ty}.{path[2]}")
                    if ids:
                        return self._typed(ids, f"self.{path[1]} is {ty} ({how})", path[2])
                    return Resolved(status="unresolved", how=f"self.{path[1]} is {ty}, not defined in the checkout",
                                    external=f"{ty}.{path[2]}", external_kind="external")
        elif len(path) >= 2:
            recv = ".".join(path[:-1])
            ty = self._type_of_name(recv, caller, call)
            if ty:
                ids, how = self.lookup(f"{ty}.{path[-1]}")
                if ids:
                    return self._typed(ids, f"{recv} is {ty} ({how})", path[-1])
        full = self.expand(".".join(path), call)
        ids, how = self.lookup(full)
        if ids:
            return Resolved.of(ids, f"{how} {full}")
        if len(path) >= 2 and path[0] not in self.t.py_imports.get(call.file, {}):
            # unknown receiver: method name across project classes
            name = path[-1]
            if name in BUILTIN_METHODS:
                return Resolved(drop=True, how="builtin type's method (receiver type unknown)")
            cands = [i for i in self.t.by_name.get(("python", name), []) if self.t.defs[i].container]
            cands += [
                pid for dotted, pid in self.pyo3.items() if dotted.rsplit(".", 1)[-1] == name and dotted.count(".") >= 2
            ]
            cands = [c for c in cands if c not in self.t.defs or self.packages.visible(call.file, self.t.defs[c].file)]
            if cands:  # at most ambiguous, even with one candidate: a choice, not a path
                return Resolved(sorted(set(cands)), AMBIGUOUS,
                                f"by method name only (receiver `{'.'.join(path[:-1])}` type unknown)", name_only=True)
            return Resolved(drop=True, how="no method of that name in the caller's dependency closure")
        if full.split(".")[0] in self.t.py_imports.get(call.file, {}).values() or "." in full:
            return Resolved(
                status="unresolved",
                how="imported name not defined in the checkout",
                external=full,
                external_kind="external",
            )
        return Resolved(drop=True, how="not defined in the checkout")

    def _typed(self, ids: list[str], how: str, name: str) -> Resolved:
        """A method of a typed receiver; a ``typing.Protocol`` method (an interface, no body) stands for the
        classes that implement it structurally: PyO3 classes and non-test Python classes with that method."""
        if len(ids) != 1 or ids[0] not in self.t.defs:
            return Resolved.of(ids, how)
        cls = self._class_of(self.t.defs[ids[0]])
        if cls is None or not any(b.split("[")[0].rsplit(".", 1)[-1] == "Protocol" for b in cls.attrs.get("bases", [])):
            return Resolved.of(ids, how)
        impls = sorted({pid for dotted, pid in self.pyo3.items()
                        if dotted.count(".") >= 2 and dotted.rsplit(".", 1)[-1] == name})
        for i in self.t.by_name.get(("python", name), []):
            d = self.t.defs[i]
            owner = self._class_of(d) if d.container else None
            if owner is None or owner is cls or _is_test(d.file) or d.file.endswith(".pyi"):
                continue
            if not any(b.split("[")[0].rsplit(".", 1)[-1] == "Protocol" for b in owner.attrs.get("bases", [])):
                impls.append(i)
        if not impls:
            return Resolved.of(ids, how)
        return Resolved.of(impls, f"{how}; {cls.name} is a Protocol: its implementations "
                                  "(PyO3 and non-test classes with the method)", HEURISTIC)

    def _method_in_class(self, cls: Definition, name: str, depth: int = 0) -> list[str]:
        ids = self.t.by_qual.get(f"{cls.qualname}.{name}", [])
        if ids or depth > 5:
            return list(ids)
        for base in cls.attrs.get("bases", []):
            for i in self.t.by_qual.get(self._base_qual(cls, base), []):
                if self.t.defs[i].kind == "python_class":
                    found = self._method_in_class(self.t.defs[i], name, depth + 1)
                    if found:
                        return found
        return []

    def _base_qual(self, cls: Definition, base: str) -> str:
        fake = CallSite("call", base, base.split("."), "", cls.file, cls.line, 0)
        return self.expand(base, fake)


def _is_test(rel: str) -> bool:
    parts = rel.split("/")
    return (
        any(p in ("tests", "test") for p in parts[:-1]) or parts[-1].startswith("test_") or parts[-1] == "conftest.py"
    )


__all__ = ["PythonResolver", "EXACT"]
