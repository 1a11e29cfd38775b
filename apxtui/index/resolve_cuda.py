"""C/C++/CUDA name resolution: by name, narrowed by namespace qualification and includes.

A name with one definition in the indexed code is ``exact``.  With several
(overloads, per-file statics, ``#if`` alternatives), the candidates visible from the
calling file — the file itself and what it includes, transitively — are kept; one
left is ``exact``, several are ``ambiguous`` (all kept).  A name with no definition
is ``unresolved`` and classified (CUDA runtime/driver, C/C++ standard library, other).
"""

from __future__ import annotations

import re

from apxtui.facts import CallSite, Definition
from apxtui.index.resolve import EXACT, HEURISTIC, Resolved
from apxtui.index.tables import Tables

_RUNTIME_RE = re.compile(
    r"^(cuda[A-Z_]|cu[A-Z]|nvrtc|__nv_|__shfl|__syncthreads|atomic[A-Z]|__ldg|__float2|__half2|__bfloat)"
)
CPP_STD = {
    "printf", "fprintf", "snprintf", "malloc", "free", "memcpy", "memset", "abort", "exit", "assert", "min",
    "max", "fminf", "fmaxf", "expf", "exp", "sqrtf", "rsqrtf", "sqrt", "powf", "fabsf", "abs", "tanhf",
    "logf", "log", "ceil", "floor", "static_cast", "reinterpret_cast", "const_cast", "sizeof", "throw",
    "__syncwarp", "strcmp", "atoi", "atof", "getenv", "fflush", "puts",
}


class CudaResolver:
    def __init__(self, t: Tables, includes: dict[str, set[str]], vendored: set[str] | frozenset[str] = frozenset()):
        self.t = t
        self.vendored = vendored
        self.includes = includes  # file → files it includes (resolved, direct)
        self._closure: dict[str, set[str]] = {}

    def visible(self, file: str) -> set[str]:
        """The file and everything it includes, transitively (cached)."""
        if file not in self._closure:
            seen = {file}
            todo = [file]
            while todo:
                for inc in self.includes.get(todo.pop(), ()):
                    if inc not in seen:
                        seen.add(inc)
                        todo.append(inc)
            self._closure[file] = seen
        return self._closure[file]

    def resolve(self, call: CallSite, caller: Definition | None, kinds: tuple[str, ...]) -> Resolved:
        name = call.callee.split("::")[-1]
        if caller is not None and call.kind == "call" and name in caller.template_params:
            return Resolved(drop=True, how="functional cast to a template parameter")
        if name.startswith("__") and not name.startswith("__nv_cvt") and call.kind != "launch":
            return Resolved(drop=True, how="CUDA intrinsic")
        if not name:
            return Resolved(
                status="unresolved",
                how="kernel not nameable from the launch",
                external=call.attrs.get("kernel_expr", "?"),
                external_kind="external",
            )
        ids = [i for i in self.t.by_name.get(("cuda", name), []) if self.t.defs[i].kind in kinds]
        if call.kind == "call" and "::" not in call.callee:
            # a plain `f(x)` never calls a class's member function, except from inside that class
            mine = caller.container if caller is not None else ""
            ids = [i for i in ids if not self.t.defs[i].container or self.t.defs[i].container == mine]
        if "::" in call.callee:
            qual = call.callee.removeprefix("::")
            q = [i for i in ids if self.t.defs[i].qualname == qual or self.t.defs[i].qualname.endswith("::" + qual)]
            ids = q or ids
        if call.kind == "method" and call.receiver and caller is not None:
            ids = self._method_filter(ids, call, caller)
        ids = self.t.live(ids)
        real = [i for i in ids if not self.t.defs[i].attrs.get("decl_only")]
        if not real:
            kind = (
                "cuda_runtime"
                if _RUNTIME_RE.match(name)
                else ("std" if name in CPP_STD or call.callee.startswith("std::") else "external")
            )
            if kind == "std":
                return Resolved(drop=True, how="C/C++ standard library")
            how = "declared only (no definition indexed)" if ids else "no definition in the indexed code"
            return Resolved(status="unresolved", how=how, external=call.callee, external_kind=kind)
        if len(real) == 1:
            return Resolved(real, EXACT, "unique definition by name")
        vis = self.visible(call.file)
        near = [i for i in real if self.t.defs[i].file in vis]
        if len(near) == 1:
            return Resolved(near, EXACT, "the definition visible through #include")
        if near:
            best, why = self.overload(near, call, caller)
            if best is not None:
                return Resolved([best], EXACT, f"overload chosen by argument types ({why})")
            return Resolved.of(near, "several definitions visible through #include")
        if caller is not None and caller.file in self.vendored:
            return Resolved(drop=True, how="vendored code: callee not visible through #include")
        return Resolved.of(real, "several definitions by name, none included by the caller", HEURISTIC)

    def project_definition(self, call: CallSite, caller: Definition | None) -> Resolved | None:
        """A call the vendor name table matched (``run_mha_fwd``) that a project file defines is a call of
        that definition: a project definition always wins over the table.  Calls on a vendor-typed
        object (``op.run()``, CUTLASS) stay library calls."""
        if call.attrs.get("operator_type") or not call.callee:
            return None
        name = call.callee.split("::")[-1]
        kinds = ("host_fn", "abi_fn", "device_fn", "kernel")
        own = [i for i in self.t.by_name.get(("cuda", name), []) if self.t.defs[i].kind in kinds
               and not self.t.defs[i].attrs.get("decl_only") and self.t.defs[i].file not in self.vendored]
        if not own:
            return None
        res = self.resolve(CallSite("call", call.callee, call.path, call.caller, call.file, call.line, call.col,
                                    receiver=call.receiver, args=call.args, template_args=call.template_args,
                                    contexts=call.contexts, text=call.text, attrs=call.attrs), caller, kinds)
        if not res.targets or any(self.t.defs[i].file in self.vendored for i in res.targets):
            return None
        res.how = f"{res.how}; a project definition wins over the vendor name table"
        return res

    # -- overloads --------------------------------------------------------------------------

    def overload(self, ids: list[str], call: CallSite, caller: Definition | None) -> tuple[str | None, str]:
        """The overload C++ picks for ``call`` among ``ids``, when the argument count and the types
        of the arguments that are known (literals, casts, the caller's parameters and locals) decide
        it: the candidate no worse than every other on each argument and better on one."""
        args = call.args
        fits = [i for i in ids if _arity_fits(self.t.defs[i], len(args))]
        if len(fits) == 1:
            return fits[0], f"{len(args)} arguments"
        if not fits:
            return None, ""
        typedefs = self.t.typedefs.get(call.file, {})
        known = [_norm(_arg_type(a, caller), typedefs) for a in args]
        if not any(known):
            return None, ""
        ranks: dict[str, list[int]] = {}
        for i in fits:
            params = self.t.defs[i].params
            r = []
            for k, at in enumerate(known):
                pt = _norm(params[k].type, self.t.typedefs.get(self.t.defs[i].file, {})) if k < len(params) else ""
                if not at or not pt:
                    r.append(1)
                elif at == pt:
                    r.append(0)
                elif at.endswith("*") != pt.endswith("*") and at != "nullptr":
                    r = []
                    break  # a pointer for a value (or the reverse): not viable
                else:
                    r.append(1)
            if r:
                ranks[i] = r
        for i, r in ranks.items():
            if all(i == j or (all(a <= b for a, b in zip(r, q, strict=True)) and r != q) for j, q in ranks.items()):
                shown = ", ".join(f"{a}: {t}" for a, t in zip(args, known, strict=True) if t)
                return i, shown[:160]
        return None, ""

    def _method_filter(self, ids: list[str], call: CallSite, caller: Definition) -> list[str]:
        recv = call.receiver.strip().lstrip("*&")
        ty = caller.locals.get(recv, "")
        if not ty:
            return ids
        short = re.sub(r"<.*", "", ty).split("::")[-1].strip()
        typed = [i for i in ids if self.t.defs[i].container == short]
        return typed or ids


_INT_LIT_RE = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|\d+)([uU]?[lL]{0,2}|[lL]{0,2}[uU]?)$")
_FLOAT_LIT_RE = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?[fF]$")
_DOUBLE_LIT_RE = re.compile(r"^[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?$")
_CAST_RE = re.compile(r"^(?:static_cast|reinterpret_cast|const_cast)\s*<\s*(.+?)\s*>\s*\(.*\)$"
                      r"|^\(\s*([\w:\s*&<>,]+?)\s*\)\s*[\w(]")


def _arg_type(arg: str, caller: Definition | None) -> str:
    """The declared type of an argument expression, where it is plain to see."""
    a = arg.strip()
    m = _INT_LIT_RE.match(a)
    if m:
        suffix = m.group(2).lower()
        return ("unsigned " if "u" in suffix else "") + ("long" if "l" in suffix else "int")
    if _FLOAT_LIT_RE.match(a):
        return "float"
    if _DOUBLE_LIT_RE.match(a):
        return "double"
    if a in ("true", "false"):
        return "bool"
    if a == "nullptr":
        return "nullptr"
    m = _CAST_RE.match(a)
    if m:
        return m.group(1) or m.group(2) or ""
    if caller is not None and re.fullmatch(r"\w+", a):
        for p in caller.params:
            if p.name == a:
                return p.type
        return caller.locals.get(a, "")
    return ""


def _norm(ty: str, typedefs: dict[str, str]) -> str:
    """A type for comparison: aliases expanded, ``const``/``volatile``/references and spaces dropped."""
    t = ty.strip()
    for _ in range(4):
        base = t.replace("const ", "").replace("volatile ", "").strip().rstrip("&").strip()
        bare = base.rstrip("*").strip()
        if bare in typedefs and typedefs[bare] != bare:
            t = typedefs[bare] + base[len(bare):]
            continue
        break
    t = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict)\b", "", t).replace("&", "")
    t = re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\s*\*\s*", "*", t)


def _arity_fits(d: Definition, n: int) -> bool:
    params = d.params
    if any(p.type.endswith("...") for p in params):
        return n >= len(params) - 1
    required = sum(1 for p in params if not p.default)
    return required <= n <= len(params)
