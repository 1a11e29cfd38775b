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
            return Resolved.of(near, "several definitions visible through #include")
        if caller is not None and caller.file in self.vendored:
            return Resolved(drop=True, how="vendored code: callee not visible through #include")
        return Resolved.of(real, "several definitions by name, none included by the caller", HEURISTIC)

    def _method_filter(self, ids: list[str], call: CallSite, caller: Definition) -> list[str]:
        recv = call.receiver.strip().lstrip("*&")
        ty = caller.locals.get(recv, "")
        if not ty:
            return ids
        short = re.sub(r"<.*", "", ty).split("::")[-1].strip()
        typed = [i for i in ids if self.t.defs[i].container == short]
        return typed or ids
