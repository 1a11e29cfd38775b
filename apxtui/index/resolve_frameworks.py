"""Framework conventions applied while linking, from the models in ``queries/frameworks/*.toml``
(:mod:`apxtui.index.framework_models`).

* **Kernels by name** (``load_by_name``, ``name_pattern``): ``dev.get_or_load_func("ucopy_bf16",
  &kernels::UNARY)`` launches the ``extern "C" __global__`` kernel of that name in the module's
  ``.cu`` file (``unary.cu``): ``exact`` when the literal names one kernel.  A name built by a
  pattern — ``kernel_name::<T>("affine")`` (``affine_{dtype}``), ``format!("cast_{}_{}", …)``, a
  variable set from string literals in the function — is ``heuristic``, with every matching
  kernel linked (``by_name`` on the edge says the pattern).  A name passed in as a parameter
  is what the callers in the same file pass (heuristic, every matching kernel); inside a
  modelled loading function (``get_or_load_func`` itself) it is left to the callers' sites.
* **Custom ops** (``custom_op``): ``t.apply_op1(Sigmoid)`` runs ``Sigmoid``'s ``CustomOp1``
  ``cpu_fwd``/``cuda_fwd``/``metal_fwd``: one arm per device (a dispatch point; ``--select cuda``).
* **Map traits** (``map_trait``): ``Affine(m, a).map(&s, &dev, &l)`` on a type implementing
  ``Map1`` runs its ``f`` (otherwise taken for ``Iterator::map`` and dropped).
* **Library calls** (``library``): cudarc's ``cudarc::cublas::result::gemm_strided_batched_ex(…)``
  or ``blas.gemm(…)`` are cuBLAS calls (vendor nodes named by the C API where the model says).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from apxtui.facts import CallSite, Context, Definition, FileFacts
from apxtui.index import framework_models as fm
from apxtui.index.resolve import AMBIGUOUS, EXACT, HEURISTIC
from apxtui.index.resolve_rust import RustResolver
from apxtui.index.rust_types import members, short, strip_marks
from apxtui.index.tables import Tables
from apxtui.vocab import node_file

_STRING_RE = re.compile(r'^"((?:\\.|[^"\\])*)"$')
_TURBOFISH_CALL_RE = re.compile(r"^([\w:]+)\s*(?:::<([^()]*)>)?\s*\((.*)\)$", re.S)
_FORMAT_RE = re.compile(r'^format!\s*\(\s*"((?:\\.|[^"\\])*)"(.*)\)$', re.S)
_TYPE_VALUE_RE = re.compile(r"^(?:[\w:]*::)?([A-Z]\w*)\s*(?:::new\b.*|\(.*\)|\{.*\})?$", re.S)
_PEEL = ("&mut ", "&")
_SUFFIXES = (".as_str()", ".as_ref()", ".to_string()", ".clone()")


@dataclass
class Extra:
    """One more edge for a call site: its target, kind, status, rule and arm context (if any)."""

    target: str
    kind: str
    resolution: str
    how: str
    context: Context | None = None
    by_name: str = ""
    tag: str = ""


def _peel(expr: str) -> str:
    e = expr.strip()
    changed = True
    while changed:
        changed = False
        for p in _PEEL:
            if e.startswith(p):
                e, changed = e[len(p):].strip(), True
        for s in _SUFFIXES:
            if e.endswith(s):
                e, changed = e[: -len(s)].strip(), True
    return e


def _fmt_regex(fmt: str) -> str:
    """``"cast_{}_{dtype}"`` → ``cast_\\w+_\\w+``."""
    parts = re.split(r"\{[^{}]*\}", fmt)
    return r"\w+".join(re.escape(p) for p in parts)


class Frameworks:
    """The framework rules for one link (tables and resolvers of that link)."""

    def __init__(self, t: Tables, rust: RustResolver):
        self.t = t
        self.rust = rust
        self.by_name_methods = {e["method"]: e for e in fm.entries("load_by_name") if "method" in e}
        self.by_name_functions = {e["function"]: e for e in fm.entries("load_by_name") if "function" in e}
        self.patterns = {e["function"]: e for e in fm.entries("name_pattern") if "function" in e}
        self.suffixes = list(fm.merged("dtypes").get("suffixes", []))
        self.custom_ops = {a: e for e in fm.entries("custom_op") for a in e.get("apply", [])}
        self.map_methods: dict[str, tuple[set[str], str]] = {}
        for e in fm.entries("map_trait"):
            traits, target = set(e.get("traits", [])), e.get("target", "f")
            self.map_methods[e.get("method", "map")] = (traits | self.map_methods.get(e.get("method", "map"),
                                                                                        (set(), ""))[0], target)
        self.libraries = fm.entries("library")
        # which libraries a call can be of, in their order: by path prefix (calls), by method name (methods)
        self._prefixed_libraries = [lib for lib in self.libraries if lib.get("path_prefixes")]
        self._method_libraries: dict[str, list[dict[str, Any]]] = {}
        for lib in self.libraries:
            for m in dict.fromkeys(lib.get("methods", [])):
                self._method_libraries.setdefault(m, []).append(lib)
        self._kernels: list[tuple[str, str]] | None = None

    # -- kernels by name ---------------------------------------------------------------------

    def kernels(self) -> list[tuple[str, str]]:
        """(link name, node id) of every kernel defined (the ``kernels`` table only: a re-link reads
        no other definition)."""
        if self._kernels is None:
            self._kernels = [(name, i) for name, ids in self.t.kernels.items() for i in ids]
        return self._kernels

    def _module_kernels(self, module_expr: str) -> tuple[list[tuple[str, str]], str]:
        """Kernels of the ``.cu`` file a PTX module constant names (all kernels when it names none)."""
        name = _peel(module_expr).split("::")[-1]
        if name and re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
            stem = name.lower()
            ids = [k for k in self.kernels() if node_file(k[1]).rsplit("/", 1)[-1].rsplit(".", 1)[0].lower() == stem]
            if ids:
                return ids, f"module {name} ({node_file(ids[0][1])})"
        return self.kernels(), "any module"

    @staticmethod
    def _caller_strings(caller: Definition) -> list[str]:
        """Symbol-like string literals of the function (``"dequantize_block_q4_0_f32"``)."""
        return list(caller.attrs.get("ident_strings", []))

    def _name_regexes(self, expr: str, caller: Definition | None, depth: int = 0) -> tuple[list[str], bool, str]:
        """Regexes a kernel-name expression matches: (regexes, literal?, description); ([], …) when
        the name comes from outside the function (a parameter) or cannot be read."""
        e = _peel(expr)
        m = _STRING_RE.match(e)
        if m:
            return [re.escape(m.group(1))], True, f'"{m.group(1)}"'
        m = _FORMAT_RE.match(e)
        if m:
            return [_fmt_regex(m.group(1))], False, f'format!("{m.group(1)}", …)'
        m = _TURBOFISH_CALL_RE.match(e)
        if m and m.group(1).split("::")[-1] in self.patterns:
            pat = self.patterns[m.group(1).split("::")[-1]]
            args = [a.strip() for a in m.group(3).split(",")] if m.group(3).strip() else []
            roots: list[str] = []
            desc_root = args[0] if args else "?"
            lit = False
            if args:
                inner, lit, _ = self._name_regexes(args[0], caller, depth + 1) if depth < 3 else ([], False, "")
                roots = inner or [r"\w+"]
            concrete = (m.group(2) or "").strip().split("::")[-1]  # kernel_name::<f32>: that dtype only
            if concrete in self.suffixes:
                dtype = re.escape(concrete)
            else:
                lit = False
                dtype = "(?:" + "|".join(re.escape(s) for s in self.suffixes) + ")" if self.suffixes else r"\w+"
            out = []
            for r in roots:
                t = re.escape(pat.get("template", "{0}_{dtype}"))
                t = t.replace(re.escape("{0}"), f"(?:{r})").replace(re.escape("{dtype}"), dtype)
                out.append(t)
            return out, lit, f"{m.group(1)}::<{m.group(2) or '?'}>({desc_root}) = {pat.get('template')}"
        if caller is None or not re.fullmatch(r"\w+", e):
            return [], False, ""
        if any(p.name == e for p in caller.params):
            return [], False, ""  # a parameter: the callers name the kernel
        value = ""
        for a in caller.attrs.get("assigns", ()):
            if a.get("var") == e:
                value = a.get("value", "")
        if value and depth < 3 and not value.startswith("match"):
            got = self._name_regexes(value, caller, depth + 1)
            if got[0]:
                return got
        lits = self._caller_strings(caller)
        if lits:
            return [re.escape(s) for s in lits], False, f"`{e}`: the string literals of {caller.name}"
        return [], False, ""

    def _through_callers(self, name: str, caller: Definition, file: FileFacts | None) -> tuple[list[str], str]:
        """A kernel name that is parameter ``name`` of ``caller``: the regexes of what the callers in
        the same file pass for it (``launch_unary(dev, "ucopy_f32")``), and where (a private function
        has no other callers; a public one may: heuristic either way).  None when ``caller`` is itself
        a modelled loading function (``get_or_load_func``): its callers are linked at their sites."""
        if caller.name in self.by_name_methods or caller.name in self.by_name_functions or file is None:
            return [], ""
        params = [p.name for p in caller.params if p.name != "self"]
        if name not in params:
            return [], ""
        pos = params.index(name)
        defs = {d.qualname: d for d in file.defs}
        out: list[str] = []
        sites: list[str] = []
        method = bool(caller.params) and caller.params[0].name == "self"
        for c in file.calls:
            if c.caller == caller.qualname or c.callee.split("::")[-1] != caller.name or pos >= len(c.args):
                continue
            if method and not (c.kind == "method" and c.receiver == "self" or c.callee == f"Self::{caller.name}"):
                continue
            if not method and c.kind != "call":
                continue
            got, _, _ = self._name_regexes(c.args[pos], defs.get(c.caller), 1)
            if got:
                out += got
                sites.append(f"{c.file}:{c.line}")
        desc = f"`{name}`, a parameter of {caller.name}: what its callers in this file pass ({', '.join(sites)})"
        return list(dict.fromkeys(out)), desc

    def load_by_name(self, call: CallSite, caller: Definition | None, file: FileFacts | None = None) -> list[Extra]:
        """Launch edges of a kernel loaded by name at ``call`` (none when it is not such a call);
        ``file``: the facts of the call's file (for a name passed in by the callers)."""
        rule = None
        if call.kind == "method":
            rule = self.by_name_methods.get(call.callee)
        elif call.kind == "call":
            rule = self.by_name_functions.get(call.callee.split("::")[-1])
        if rule is None:
            return []
        i = int(rule.get("name_arg", 0))
        if i >= len(call.args):
            return []
        regexes, literal, desc = self._name_regexes(call.args[i], caller)
        if not regexes and caller is not None:
            regexes, desc = self._through_callers(_peel(call.args[i]), caller, file)
        if not regexes:
            return []
        mod_i = rule.get("module_arg")
        mod_expr = call.args[mod_i] if mod_i is not None and mod_i < len(call.args) else ""
        pool, where = self._module_kernels(mod_expr) if mod_expr else (self.kernels(), "any module")
        rx = re.compile("^(?:" + "|".join(regexes) + ")$")
        hits = [k for name, k in pool if rx.match(name)]
        if not hits and pool is not self.kernels():
            hits = [k for name, k in self.kernels() if rx.match(name)]
            where = "any module (none in the module named)"
        if not hits:
            if literal and len(regexes) == 1:  # a kernel named in the code but not in the checkout
                return [Extra("", "launch", "unresolved", f"kernel {desc} loaded by name ({rule['framework']} "
                              f"{call.callee}): no kernel of that name in {where}", tag="byname")]
            return []
        exact = literal and len(hits) == 1
        how = f"kernel loaded by name {desc} ({rule['framework']} {call.callee}) in {where}"
        return [Extra(k, "launch", EXACT if exact else HEURISTIC, how if exact else how + f"; {len(hits)} match",
                      by_name="" if exact else desc, tag="byname") for k in hits]

    # -- custom ops and map traits ---------------------------------------------------------------

    def _methods(self, expr: str, caller: Definition | None, call: CallSite,
                 method: str) -> tuple[list[str], str, bool]:
        """(methods ``method`` of the type of ``expr``, the type as shown, typed?).  Typed: the type
        resolved in the caller's scope (``super::Affine(..)``, ``Conv2D(..)`` imported, a typed
        variable) — its own impls only.  Else by the type's name: the type of that name in the
        caller's module, never another module's; else every type of that name."""
        e = _peel(expr)
        m = _TYPE_VALUE_RE.match(e)
        ref = ""
        if caller is not None:
            if m:
                path = re.match(r"[\w:]+", e)
                ref = self.rust.type_ref(path.group(0).removesuffix("::new"), self.rust.scope_of(caller)) \
                    if path else ""
            elif re.fullmatch(r"\w+", e):
                ref = self.rust.receiver_type(e, caller, call)
        if ref:
            r = strip_marks(ref)[0]
            refs = members(r) if r.startswith("U:") else [r]
            return [i for x in refs for i in self.rust.impl_methods.get((x, method), ())], short(ref), True
        if not m or not (self.t.types.get(m.group(1)) or m.group(1) in self.t.containers):
            return [], "", False
        name = m.group(1)
        ids = self.t.methods.get((name, method), [])
        f = self.t.file_of.get(call.file)
        here = [x for x in ids if f is not None and self.t.defs[x].qualname.rsplit("::", 2)[0] == f.module]
        return (here or ids), name, False

    def custom_op(self, call: CallSite, caller: Definition | None) -> list[Extra]:
        rule = self.custom_ops.get(call.callee) if call.kind == "method" else None
        if rule is None:
            return []
        i = int(rule.get("op_arg", 0))
        if i >= len(call.args):
            return []
        trait = rule.get("trait", "")
        out = []
        for arm, (device, method) in enumerate(sorted(rule.get("devices", {}).items())):
            found, ty, typed = self._methods(call.args[i], caller, call, method)
            ids = [x for x in found if not trait or self.t.defs[x].trait.split("<")[0].endswith(trait)]
            ctx = Context("match_arm", f"device {device}", call.line, f"op:{call.line}:{call.col}", arm,
                          subject=f"{call.receiver}.device()")
            for x in ids:
                out.append(Extra(x, "call", _evidence(len(ids), typed),
                                 f"{rule['framework']}: {call.callee}({ty}) runs {trait}::{method} "
                                 f"on a {device} tensor" + ("" if typed else " (type matched by name)"),
                                 ctx, tag=f"op{arm}"))
        return out

    def map_call(self, call: CallSite, caller: Definition | None) -> list[Extra]:
        rule = self.map_methods.get(call.callee) if call.kind == "method" else None
        if rule is None:
            return []
        traits, target = rule
        found, ty, typed = self._methods(call.receiver, caller, call, target)
        ids = [x for x in found if self.t.defs[x].trait.split("<")[0].split("::")[-1] in traits]
        how = f"{call.callee} on {ty} (impl {'/'.join(sorted(traits))}) runs {ty}::{target}" + (
            "" if typed else " (type matched by name)")
        # several candidates (a union of cfg alternatives, same-named types elsewhere): all kept, ambiguous
        return [Extra(x, "call", _evidence(len(ids), typed), how) for x in ids]

    # -- library calls -----------------------------------------------------------------------------

    def library(self, call: CallSite) -> tuple[str, str, dict[str, Any]] | None:
        """(library, API name, attrs) when ``call`` is a call of a modelled library's API."""
        name = call.callee.split("::")[-1]
        libs = (self._prefixed_libraries if call.kind == "call"
                else self._method_libraries.get(name, []) if call.kind == "method" else [])
        for lib in libs:
            names = lib.get("api_names", {})
            if call.kind == "call" and any(call.callee.startswith(p) for p in lib.get("path_prefixes", [])):
                segs = call.callee.split("::")
                # an unmapped associated function keeps its type: `CudaBlas::new`, never a bare `new`
                api = names.get(name) or (f"{segs[-2]}::{name}" if len(segs) >= 2 and segs[-2][:1].isupper() else name)
                return lib["library"], api, {"binding": call.callee}
            if call.kind == "method" and name in lib.get("methods", []):
                recv = call.receiver.strip().rstrip("?")
                last = re.split(r"[.\s&*()]+", recv.rstrip(")").rstrip("("))[-1] if recv else ""
                if any(last.endswith(s) for s in lib.get("receiver_suffixes", [])):
                    return lib["library"], names.get(name, name), {"binding": f"{recv}.{name}"}
        return None


def _evidence(n: int, typed: bool) -> str:
    """One method of the type resolved in the caller's scope: exact; of a type found by its name
    only: heuristic; several: ambiguous."""
    return AMBIGUOUS if n > 1 else EXACT if typed else HEURISTIC


def with_context(call: CallSite, extra: Extra) -> CallSite:
    """``call`` as the site of ``extra``: its arm context appended, its own site tag."""
    attrs = dict(call.attrs)
    if extra.tag:
        attrs["site_tag"] = extra.tag
    if extra.by_name:
        attrs["by_name"] = extra.by_name
    ctxs = [*call.contexts, extra.context] if extra.context is not None else list(call.contexts)
    return replace(call, contexts=ctxs, attrs=attrs, kind="launch" if extra.kind == "launch" else call.kind)


# ----------------------------------------------------------------------------------- C++ → Python bindings


@dataclass
class Registration:
    """One C++ function registered for Python: a ``torch.ops`` operator or a pybind11 function."""

    framework: str  # "pytorch" / "pybind11"
    namespace: str  # the operator namespace or the module name, as written
    name: str  # the operator / function name
    fn: str  # the C++ function, as written (``rms_norm``, ``vllm::rms_norm``)
    key: str  # dispatch key ("CUDA", "CPU", "" for a catch-all) — torch only
    file: str
    line: int
    from_build: bool  # the namespace is set by the build (TORCH_EXTENSION_NAME)

    @property
    def dotted(self) -> str:
        return f"torch.ops.{self.namespace}.{self.name}" if self.framework == "pytorch" \
            else f"{self.namespace}.{self.name}"


_FN_ARG_RE = re.compile(r"^(?:&\s*)?(?:TORCH_FN\s*\(\s*)?&?\s*([\w:]+)\s*\)?$")


def _literal(arg: str) -> str | None:
    m = _STRING_RE.match(arg.strip())
    return m.group(1) if m else None


def registrations(t: Tables) -> list[Registration]:
    """Every TORCH_LIBRARY / TORCH_LIBRARY_IMPL / PYBIND11_MODULE registration in the C++ facts."""
    torch_blocks = {b: e for e in fm.entries("torch_library") for b in e.get("blocks", [])}
    methods = fm.merged("torch_library_methods")
    defines, impls = set(methods.get("define", ["def"])), set(methods.get("implement", ["impl"]))
    build_ns = set(methods.get("build_namespace", []))
    py_blocks = {b: e for e in fm.entries("pybind11") for b in e.get("blocks", [])}
    out: list[Registration] = []
    blocks: dict[tuple[str, str], tuple[Definition, dict[str, Any], str]] = {}
    found = []  # looked up by the blocks' names (the tables may be the stored ones, read key by key)
    for names, framework in ((torch_blocks, "pytorch"), (py_blocks, "pybind11")):
        for name in sorted(names):
            for nid in t.by_name.get(("cuda", name), ()):
                d = t.defs[nid]
                if d.attrs.get("macro_like"):
                    found.append((d, names[name], framework))
    for d, rule_, framework in sorted(found, key=lambda x: (x[0].file, x[0].line)):
        blocks.setdefault((d.file, d.qualname), (d, rule_, framework))
    if not blocks:
        return out
    for (file, qual), (d, rule, framework) in blocks.items():
        args = [p.type or p.name for p in d.params]

        def arg(key: str, rule: dict[str, Any] = rule, args: list[str] = args) -> str:
            i = rule.get(key)
            return args[i] if i is not None and i < len(args) else ""

        ns, var = arg("namespace_arg") or arg("module_arg" if framework == "pybind11" else "namespace_arg"), ""
        var = arg("module_arg") if framework == "pytorch" else arg("var_arg")
        key = arg("key_arg")
        from_build = ns in build_ns or ns in set(rule.get("build_module", []))
        f = t.file_of.get(file)
        for c in f.calls if f is not None else []:
            if c.caller != qual or c.kind != "method" or (var and c.receiver != var) or not c.args:
                continue
            name = _literal(c.args[0])
            if name is None:
                continue
            name = name.split("(")[0].split(".")[0].strip()
            if "::" in name:  # "ns::op"
                ns2, name = name.rsplit("::", 1)
            else:
                ns2 = ns
            rest = c.args[1:]
            if framework == "pybind11":
                if c.callee not in set(rule.get("methods", ["def"])) or not rest:
                    continue
                m = _FN_ARG_RE.match(rest[0].strip())
                if m:
                    out.append(Registration(framework, ns2, name, m.group(1), "", c.file, c.line, from_build))
                continue
            if c.callee in defines:
                fn = ""
                if rest:
                    m = _FN_ARG_RE.match(rest[-1].strip())
                    fn = m.group(1) if m else ""
                out.append(Registration(framework, ns2, name, fn, "" if fn else "schema", c.file, c.line, from_build))
            elif c.callee in impls and rest:
                k = key
                if len(rest) >= 2:
                    k = rest[0].split("::")[-1].removeprefix("k")
                m = _FN_ARG_RE.match(rest[-1].strip())
                if m:
                    out.append(Registration(framework, ns2, name, m.group(1), k, c.file, c.line, from_build))
    return out


class PythonOps:
    """Python calls of registered C++ functions: ``torch.ops.<ns>.<op>(…)``, ``module.fn(…)``."""

    def __init__(self, nodes: dict[str, str], by_op: dict[str, list[str]], by_fn: dict[str, list[str]],
                 project_roots: frozenset[str] = frozenset()):
        cfg = fm.merged("python_ops")
        self.prefix = cfg.get("prefix", "torch.ops")
        self.overloads = set(cfg.get("overloads", ["default"]))
        self.nodes = nodes  # dotted → binding node
        self.by_op = by_op  # op name → binding nodes whose namespace the build sets
        self.by_fn = by_fn  # pybind11 function name → nodes whose module the build sets
        self.project_roots = project_roots  # top-level Python packages defined in the checkout

    def resolve(self, full: str) -> tuple[list[str], str, str] | None:
        """(binding nodes, status, how) for an expanded dotted callee, else None."""
        if not self.nodes:
            return None
        parts = full.split(".")
        if full.startswith(self.prefix + "."):
            rest = parts[len(self.prefix.split(".")):]
            if len(rest) >= 3 and rest[-1] in self.overloads:
                rest = rest[:-1]
            if len(rest) != 2:
                return None
            dotted = f"{self.prefix}.{rest[0]}.{rest[1]}"
            if dotted in self.nodes:
                return [self.nodes[dotted]], EXACT, f"operator {rest[0]}::{rest[1]} registered with TORCH_LIBRARY"
            cands = self.by_op.get(rest[1], [])
            if cands:
                return cands, HEURISTIC, (f"operator {rest[1]} registered in a namespace the build sets "
                                          "(TORCH_EXTENSION_NAME); matched by name")
            return None
        if len(parts) >= 2:
            for k in range(len(parts) - 1):  # the module imported under a package prefix
                dotted = ".".join(parts[k:])
                if dotted in self.nodes:
                    return [self.nodes[dotted]], EXACT, "function bound with pybind11"
            cands = self.by_fn.get(parts[-1], [])
            if cands and len(parts) == 2 and parts[0] not in self.project_roots:
                return cands, HEURISTIC, ("function bound with pybind11 in a module the build names "
                                          "(TORCH_EXTENSION_NAME); matched by name")
        return None
