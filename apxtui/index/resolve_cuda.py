"""C/C++/CUDA name resolution: by name, narrowed by namespace qualification and includes.

A name with one definition in the indexed code is ``exact``.  With several
(overloads, per-file statics, ``#if`` alternatives), the candidates visible from the
calling file — the file itself and what it includes, transitively — are kept; one
left is ``exact``, several are ``ambiguous`` (all kept).  A name with no definition
is ``unresolved`` and classified (CUDA runtime/driver, C/C++ standard library, other).

Before that, candidates that surely cannot be the callee are dropped: a qualifier naming none
of them (``cute::gemm``), a receiver's declared type (a library type: external; a template
parameter or unknown type: a name-only choice), the argument count and pointer types, another
arm of an ``#if`` the call lies in, class and explicit template arguments.  The type text
helpers are in :mod:`apxtui.index.cpp_text` (private to these two modules).
"""

from __future__ import annotations

import re
from collections import ChainMap
from dataclasses import replace

from apxtui.facts import CallSite, Definition
from apxtui.index.cpp_text import (
    _BUILTIN_RE,
    _ELEMENT_RE,
    _FIELD_RE,
    _VECTOR_FIELD,
    _VECTOR_RE,
    _arg_type,
    _arith_result,
    _arity_fits,
    _balanced,
    _bare_type,
    _conversion_rank,
    _declared,
    _file_under,
    _is_arms,
    _literal,
    _norm,
    _pp_literals,
    _split_arith,
    _split_template,
)
from apxtui.index.resolve import AMBIGUOUS, EXACT, HEURISTIC, UNRESOLVED, Resolved
from apxtui.index.tables import ALIAS_ARMS, Tables

_RUNTIME_RE = re.compile(
    r"^(cuda[A-Z_]|cu[A-Z]|nvrtc|__nv_|__shfl|__syncthreads|atomic[A-Z]|__ldg|__float2|__half2|__bfloat)"
)
#: CUDA built-ins a project may overload (``atomicAdd`` for ``half``): its definitions compete with them.
_BUILTIN_FN = re.compile(r"atomic(Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(_block|_system)?$")
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
        self._aliases: dict[str, dict[str, str]] = {}
        self._scoped: dict[tuple[str, str], dict[str, str]] = {}
        self._has_arms: dict[int, bool] = {}  # by id of a table in _scoped (kept alive there)

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
        if "::" in call.callee and caller is not None and not call.attrs.get("scope_args"):
            call = self._through_alias(call, caller)
        ids = [i for i in self.t.by_name.get(("cuda", name), []) if self.t.defs[i].kind in kinds]
        if call.kind == "call" and "::" not in call.callee:
            # a plain `f(x)` never calls a class's member function, except from inside that class
            mine = caller.container if caller is not None else ""
            ids = [i for i in ids if not self.t.defs[i].container or self.t.defs[i].container == mine]
        if "::" in call.callee:
            qual = call.callee.removeprefix("::")
            ctor = f"{qual}::{name}"  # `ns::Error(…)`: the constructor `ns::Error::Error`
            q = [i for i in ids if any(self.t.defs[i].qualname == x or self.t.defs[i].qualname.endswith("::" + x)
                                       for x in (qual, ctor))]
            if not q and ids and caller is not None and self._foreign_scope(qual.split("::")[0], ids, call, caller):
                if qual.startswith("std::"):
                    return Resolved(drop=True, how="C/C++ standard library")
                return Resolved(status=UNRESOLVED, how=f"`{qual.split('::')[0]}` names no namespace or class of the "
                                "definitions of that name", external=call.callee, external_kind="external")
            ids = q or ids
        method_note = ""
        if call.kind == "method" and call.receiver and caller is not None:
            ids, method_note, verdict, recv_args = self._receiver(ids, call, caller)
            if verdict is not None:
                return verdict
            if recv_args and not call.attrs.get("scope_args"):
                call = replace(call, attrs={**call.attrs, "scope_args": recv_args})
        scoped, scoped_sure = "", False
        if call.attrs.get("scope_args") and len(ids) > 1:
            ids, scoped, scoped_sure = self.by_class_args(ids, call, caller)
        every = ids
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
        builtin = call.kind == "call" and "::" not in call.callee and bool(_BUILTIN_FN.match(name) or name in CPP_STD)
        known: list[str] = []
        cut = ""
        if (builtin or len(real) > 1) and call.kind in ("call", "method") and not call.template_args:
            known = self.known_args(call, caller)
            ok = [i for i in real if not self._rejects(self.t.defs[i], known)]
            shown = ", ".join(t or "?" for t in known)
            if not ok and builtin:
                if name in CPP_STD:
                    return Resolved(drop=True, how="C/C++ standard library")
                return Resolved(status=UNRESOLVED, how=f"the CUDA built-in: no project definition of `{name}` "
                                f"takes ({shown})"[:200], external=call.callee, external_kind="cuda_runtime")
            if ok and len(ok) < len(real):
                cut = f"{len(real) - len(ok)} definition(s) cannot take ({shown})"[:160]
                real = ok
        if len(real) > 1 and caller is not None:
            same = self._same_build(real, call, caller)
            if len(same) < len(real):
                note = f"{len(real) - len(same)} definition(s) in another arm of the caller's `#if`"
                cut, real = (f"{cut}; {note}" if cut else note), same
        res = self._choose(real, every, call, caller, scoped, scoped_sure, method_note, cut)
        arms = self.arms_note(call, caller)
        if arms:
            res.how = f"{res.how}; {arms}"
        if builtin and res.targets and not (res.status == EXACT and self._unchanged(
                res.targets[0], known or self.known_args(call, caller))):
            res = Resolved(res.targets, HEURISTIC if res.status == EXACT else res.status,
                           f"{res.how}; the CUDA/C++ built-in `{name}` may be the better match")
        return res

    def _choose(self, real: list[str], every: list[str], call: CallSite, caller: Definition | None, scoped: str,
                scoped_sure: bool, method_note: str, cut: str) -> Resolved:
        """The definition(s) of a call among ``real`` (the checkout's definitions it can name)."""
        if cut and len(real) == 1 and not scoped:
            how = f"{method_note or 'the one definition by name that fits'}; {cut}"
            if self.t.defs[real[0]].file in self.visible(call.file):
                return Resolved(real, EXACT, how)
            if caller is not None and caller.file in self.vendored:
                return Resolved(drop=True, how="vendored code: callee not visible through #include")
            return Resolved(real, HEURISTIC, f"{how}; it is not visible through #include")
        if len(real) == 1:
            if scoped:
                return Resolved(real, EXACT if scoped_sure else HEURISTIC, scoped)
            return Resolved(real, EXACT, method_note or "unique definition by name")
        if call.template_args and len(real) > 1:
            real, picked = self.by_template_args(real, every, call, caller)
            if picked is not None:
                return picked
        vis = self.visible(call.file)
        near = [i for i in real if self.t.defs[i].file in vis]
        if cut and near:
            scoped, scoped_sure = (f"{scoped}; {cut}", scoped_sure) if scoped else (cut, True)
        if len(near) == 1:
            return Resolved(near, EXACT if not scoped or scoped_sure else HEURISTIC,
                            f"{scoped}; the definition visible through #include" if scoped
                            else "the definition visible through #include")
        if near:
            best, why, sure = self.overload(near, call, caller)
            if best is not None:
                if sure:
                    return Resolved([best], EXACT, f"overload chosen by argument types ({why})")
                return Resolved([best], HEURISTIC, f"overload preferred by the known argument types ({why})")
            arms = self._arm_alternatives(near)
            if arms:
                return Resolved.of(near, f"alternatives by `#if` arm, one per build configuration ({arms})")
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

    def overload(self, ids: list[str], call: CallSite, caller: Definition | None) -> tuple[str | None, str, bool]:
        """The overload C++ picks for ``call`` among ``ids``: (candidate, why, sure).

        The argument count decides it when one candidate fits (sure).  Otherwise the types of the
        arguments that are known (literals, casts, the caller's parameters and locals, their fields,
        elements and targets) rank them: the candidate no worse than every other on each argument and
        better on one.  That is sure only when every argument's type is known and the winner, a
        non-template, takes each unchanged (an exact match beats any conversion); with an argument of
        unknown type, or a conversion, another candidate could still be the better one (heuristic)."""
        args = call.args
        fits = [i for i in ids if _arity_fits(self.t.defs[i], len(args))]
        if len(fits) == 1:
            return fits[0], f"{len(args)} arguments", True
        if not fits or call.template_args:
            return None, "", False  # with template arguments, a specialisation is no overload of its template
        known = self.known_args(call, caller)
        if not any(known):
            return None, "", False
        ranks: dict[str, list[int]] = {}
        for i in fits:
            params = self.t.defs[i].params
            r = []
            for k, at in enumerate(known):
                d_i = self.t.defs[i]
                pt = _norm(params[k].type, self.typedefs(d_i.file, d_i)) if k < len(params) else ""
                pt = "" if _is_arms(pt) else pt
                if not at or not pt:
                    r.append(1)
                elif at == pt:
                    r.append(0)
                elif at.endswith("*") != pt.endswith("*") and at != "nullptr":
                    r = []
                    break  # a pointer for a value (or the reverse): not viable
                else:
                    r.append(_conversion_rank(at, pt))
            if r:
                ranks[i] = r
        if len(ranks) > 1 and len({self.t.defs[i].container for i in ranks}) > 1:
            return None, "", False  # members of different classes: the receiver's type decides, not a ranking
        for i, r in ranks.items():
            if all(i == j or (all(a <= b for a, b in zip(r, q, strict=True)) and r != q) for j, q in ranks.items()):
                shown = ", ".join(f"{a}: {t}" for a, t in zip(args, known, strict=True) if t)
                sure = all(known) and not any(r) and not self.t.defs[i].template_params \
                    and not self.t.defs[i].attrs.get("explicit_specialization")
                return i, shown[:160], sure
        return None, "", False

    def _same_build(self, ids: list[str], call: CallSite, caller: Definition) -> list[str]:
        """``ids`` without the definitions in another arm of an ``#if`` the call lies in (same file):
        they are never compiled with it."""
        ctxs = [c for c in [*caller.pp, *call.contexts] if c.kind == "pp_if"]
        if not ctxs:
            return ids
        mine = {c.group: c.arm for c in ctxs}
        need = _pp_literals(ctxs)

        def excluded(d: Definition) -> bool:
            pp = [c for c in d.pp if c.kind == "pp_if"]
            if d.file == call.file and any(c.group in mine and mine[c.group] != c.arm for c in pp):
                return True
            return any((not holds) in need.get(text, set()) for text, pols in _pp_literals(pp).items()
                       for holds in pols)

        keep = [i for i in ids if not excluded(self.t.defs[i])]
        return keep or ids

    def _arm_alternatives(self, ids: list[str]) -> str:
        """When every two of ``ids`` lie in different arms of one ``#if`` chain of their file (only
        one of them is compiled in a build): their arms' conditions; "" otherwise."""
        defs = [self.t.defs[i] for i in ids]
        arms = [{c.group: c for c in d.pp if c.kind == "pp_if"} for d in defs]
        for x in range(len(defs)):
            for y in range(x + 1, len(defs)):
                if defs[x].file != defs[y].file or not any(
                        g in arms[y] and arms[x][g].arm != arms[y][g].arm for g in arms[x]):
                    return ""
        shown = []
        for d, a in zip(defs, arms, strict=True):
            inner = max(a.values(), key=lambda c: c.line)
            shown.append(f":{d.line} `{inner.text}`")
        return "; ".join(shown)[:200]

    def known_args(self, call: CallSite, caller: Definition | None) -> list[str]:
        """The argument types of ``call`` where known ("" each where not, and for the caller's own
        template parameters: the callee's ``T`` is another type)."""
        typedefs = self.typedefs(call.file, caller)
        mine = set(caller.template_params) if caller is not None else set()
        return [t if not mine & set(re.findall(r"\w+", t)) and not _is_arms(t) else ""
                for t in (_norm(self.arg_type(a, caller, call.file), typedefs) for a in call.args)]

    def arms_note(self, call: CallSite, caller: Definition | None) -> str:
        """Which argument or template argument types are aliases whose ``#if`` arms disagree, and
        what they may be ("" when none)."""
        table = self.typedefs(call.file, caller)
        if id(table) not in self._has_arms:
            self._has_arms[id(table)] = any(t.startswith(ALIAS_ARMS) for t in table.values())
        if not self._has_arms[id(table)]:
            return ""
        out = []
        for a in [*call.template_args, *call.args]:
            t = _norm(a if a in call.template_args else _arg_type(a, caller), table)
            if _is_arms(t):
                out.append(f"`{a}` is {t[1 + len(ALIAS_ARMS):-1]} by `#if` arm")
        return "; ".join(dict.fromkeys(out))[:200]

    def _rejects(self, d: Definition, known: list[str]) -> bool:
        """Can ``d`` surely not take arguments of these types?  Their count does not fit, or a pointer
        argument meets a pointer parameter to another built-in type (no conversion between them)."""
        if not _arity_fits(d, len(known)):
            return True
        pf = self.typedefs(d.file, d)
        own = set(d.template_params)
        for at, p in zip(known, d.params, strict=False):
            pt = _norm(p.type, pf)
            if not at or not pt or own & set(re.findall(r"\w+", pt)) or not (at.endswith("*") and pt.endswith("*")):
                continue
            a0, p0 = at[:-1], pt[:-1]
            if a0 != p0 and p0 != "void" and _BUILTIN_RE.fullmatch(a0) and _BUILTIN_RE.fullmatch(p0):
                return True
        return False

    def _unchanged(self, target: str, known: list[str]) -> bool:
        """Does ``target`` take every argument (each of known type) unchanged?"""
        d = self.t.defs[target]
        if not all(known) or len(known) != len(d.params) or d.template_params \
                or d.attrs.get("explicit_specialization"):
            return False  # (a template's specialisation loses to a non-template built-in that takes them alike)
        pf = self.typedefs(d.file, d)
        return all(at == _norm(p.type, pf) for at, p in zip(known, d.params, strict=True))

    def arg_type(self, arg: str, caller: Definition | None, file: str) -> str:
        """:func:`_arg_type`, and through a typed name: its field (``a.x``, ``p->x``: the struct's
        declared field, when every struct of that name in the checkout agrees), its element
        (``x[i]``), its target (``*p``) or its address (``&x[i]``)."""
        got = _arg_type(arg, caller)
        if got or caller is None:
            return got
        a = arg.strip()
        parts = _split_arith(a)
        if parts is not None:
            return _arith_result([_norm(self.arg_type(x, caller, file), self.typedefs(file, caller)) for x in parts])
        if a.startswith("-") and not a.startswith("--"):
            return _arith_result([_norm(self.arg_type(a[1:], caller, file), self.typedefs(file, caller))])
        if a.startswith("(") and a.endswith(")") and _balanced(a[1:-1]):
            return self.arg_type(a[1:-1], caller, file)
        if a.startswith("&") and not a.startswith("&&"):
            inner = self.arg_type(a[1:], caller, file)
            return f"{inner}*" if inner else ""
        if a.startswith("*"):
            inner = _norm(self.arg_type(a[1:], caller, file), self.typedefs(file, caller))
            return inner[:-1] if inner.endswith("*") else ""
        m = _ELEMENT_RE.fullmatch(a)
        if m:
            base = _norm(self.arg_type(m.group(1), caller, file), self.typedefs(file, caller))
            return base[:-1] if base.endswith("*") else ""
        m = _FIELD_RE.fullmatch(a)
        if m:
            base = _norm(self.arg_type(m.group(1), caller, file), self.typedefs(file, caller))
            if m.group(2) == "->":
                if not base.endswith("*"):
                    return ""
                base = base[:-1]
            elif base.endswith("*"):
                return ""
            return self._field_type(base, m.group(3))
        return ""

    def _field_type(self, struct: str, field: str) -> str:
        """The declared type of ``struct.field``: one answer from every C/C++ type of that name."""
        name = struct.split("::")[-1]
        if not re.fullmatch(r"\w+", name):
            return ""
        vec = _VECTOR_RE.fullmatch(name)
        if vec and field in "xyzw"[: int(vec.group(2) or vec.group(4))] and len(field) == 1:
            return _VECTOR_FIELD[vec.group(1) or vec.group(3)]
        types = {self.t.defs[i].fields.get(field, "") for i in self.t.by_name.get(("cuda", name), [])
                 if self.t.defs[i].kind == "cpp_type" and not self.t.defs[i].template_params}
        return types.pop() if len(types) == 1 else ""

    # -- explicit template arguments -----------------------------------------------------------

    def by_template_args(self, ids: list[str], every: list[str], call: CallSite, caller: Definition | None
                         ) -> tuple[list[str], Resolved | None]:
        """``f<A, B>(…)`` among the definitions ``ids`` (``every``: with the prototypes): the
        candidates it can name, and the choice when that is decided.

        A non-template cannot be named with template arguments.  An explicit specialisation
        (``template <> R f<A, B>(…)``, or with its arguments deduced from the primary template's
        signature) is the call's when its arguments are the call's, and is not when one of them
        differs: two literals, two built-in or checkout-defined types (sure), two library type
        names (``cutlass::half_t``, taken as distinct: heuristic).  An argument that names a
        constant or a template parameter of the caller decides nothing.  One matching
        specialisation (and at most its own primary template left) is the call's; no match and
        one primary template left: that template."""
        d = self.t.defs
        targs = call.template_args
        cf = self.typedefs(call.file, caller)
        tparams = set(caller.template_params) if caller is not None else set()
        match: list[str] = []
        unknown: list[str] = []
        primaries: list[str] = []
        assumed: list[str] = []  # told apart by library type names only
        for i in ids:
            c = d[i]
            if c.template_params:
                primaries.append(i)
                continue
            if not c.attrs.get("explicit_specialization"):
                continue  # a non-template
            _file_under(self._spec_verdict(c, every, targs, cf, tparams), i, match, unknown, assumed)
        kept = match + unknown + primaries
        if not kept:
            return ids, None
        how = f"explicit template arguments <{', '.join(targs)}>"
        res = EXACT if not assumed else HEURISTIC
        note = "" if not assumed else "; library type names taken as distinct"
        if len(match) == 1 and not unknown and all(len(d[p].template_params) == len(targs) for p in primaries) \
                and len(primaries) <= 1:
            return kept, Resolved(match, res, f"{how} match this explicit specialisation{note}")
        if not match and not unknown and len(primaries) == 1:
            return kept, Resolved(primaries, res, f"{how}: no explicit specialisation matches, the template{note}")
        return kept + assumed, None  # undecided: nothing dropped on an assumption

    def by_class_args(self, ids: list[str], call: CallSite, caller: Definition | None
                      ) -> tuple[list[str], str, bool]:
        """``Allreduce<4>::run(…)``: the members of the class specialisation the qualifier's template
        arguments name (ids, how, sure), by the rules of :meth:`by_template_args`; a partial
        specialisation's own parameters match anything, a full specialisation that matches wins over
        partial ones.  Undecided, ids only lose the members of classes that surely differ (``how``
        says how many; "" when none).  Members are placed in their class by line range (defined in
        its body)."""
        d = self.t.defs
        sargs = list(call.attrs["scope_args"])
        cf = self.typedefs(call.file, caller)
        tparams = set(caller.template_params) if caller is not None else set()
        groups: dict[str, list[str]] = {}
        for i in ids:
            cls = self._class_of(d[i])
            if cls is None:
                return ids, "", False
            groups.setdefault(cls, []).append(i)
        names = {d[c].name for c in groups}
        sargs = self._with_defaults(sargs, [d[j] for n in names for j in self.t.by_name.get(("cuda", n), [])
                                           if d[j].kind == "cpp_type" and d[j].template_params
                                           and d[j].attrs.get("specialization_args") is None])
        match: list[str] = []
        unknown: list[str] = []
        primaries: list[str] = []
        assumed: list[str] = []
        for cid in groups:
            c = d[cid]
            spec = c.attrs.get("specialization_args")
            if spec is None:
                if c.template_params:
                    primaries.append(cid)
                continue  # a class that is no template cannot be named with arguments
            _file_under(self._class_verdict(c, spec, sargs, cf, tparams), cid, match, unknown, assumed)
        full = [m for m in match if not d[m].template_params]
        ordered = ""
        if len(match) > 1 and not full and not unknown:
            best = [m for m in match if all(m == o or self._more_specialised(d[m], d[o]) for o in match)]
            if len(best) == 1:
                ordered = f" (the most specialised of {len(match)} that match)"
                match = best
        how = f"class template arguments <{', '.join(sargs)}>"
        sure = not assumed
        note = "" if sure else "; library type names taken as distinct"
        if len(full) == 1 or (len(match) == 1 and not unknown):
            chosen = full[0] if full else match[0]
            return groups[chosen], f"{how} match the specialisation at line {d[chosen].line}{ordered}{note}", sure
        if not match and not unknown and len(primaries) == 1:
            return groups[primaries[0]], f"{how}: no specialisation matches, the class template{note}", sure
        kept = [i for cid in match + unknown + primaries + assumed for i in groups[cid]]
        if not kept or len(kept) == len(ids):
            return ids, "", False
        out = len(groups) - len(match + unknown + primaries + assumed)
        return kept, f"{how} rule out {out} specialisation(s)", sure

    @staticmethod
    def _with_defaults(sargs: list[str], primaries: list[Definition]) -> list[str]:
        """``sargs`` completed with the class template's default arguments (``data_layout ds_ =
        DATA_LAYOUT_I_MAJOR``), when one primary template declares them and they name no parameter."""
        decls = {tuple(p.attrs.get("template_param_decls", [])) for p in primaries}
        if len(decls) != 1:
            return sargs
        (params,) = decls
        names = {re.split(r"[\s=]", x.split("=")[0].strip())[-1] for x in params if x.split("=")[0].strip()}
        out = list(sargs)
        for decl in params[len(sargs):]:
            if "=" not in decl or "..." in decl:
                return sargs
            value = decl.split("=", 1)[1].strip()
            if names & set(re.findall(r"\w+", value)):
                return sargs  # a default that depends on another parameter: not modelled
            out.append(value)
        return out

    @staticmethod
    def _more_specialised(a: Definition, b: Definition) -> bool:
        """Is partial specialisation ``a`` at least as specialised as ``b`` everywhere and more so once
        (each argument either a parameter of its own, or a written argument)?"""
        sa, sb = a.attrs.get("specialization_args") or [], b.attrs.get("specialization_args") or []
        if len(sa) != len(sb):
            return False
        wa, wb = set(a.template_params), set(b.template_params)
        more = False
        for x, y in zip(sa, sb, strict=True):
            xw, yw = x.strip() in wa, y.strip() in wb
            if xw and not yw:
                return False
            if yw and not xw:
                more = True
            elif not xw and x.replace(" ", "") != y.replace(" ", ""):
                return False
        return more

    def _class_of(self, m: Definition) -> str | None:
        """The class a member is defined in (innermost by line range, same file)."""
        inside = [j for j in self.t.by_name.get(("cuda", m.container), []) if self.t.defs[j].kind == "cpp_type"
                  and self.t.defs[j].file == m.file and self.t.defs[j].line <= m.line <= self.t.defs[j].end_line]
        return max(inside, key=lambda j: self.t.defs[j].line) if inside else None

    def _class_verdict(self, c: Definition, spec: list[str], sargs: list[str], cf: dict[str, str],
                       tparams: set[str]) -> str | None:
        if len(spec) != len(sargs):
            return None  # default arguments: not modelled
        return self._combined(list(zip(sargs, spec, strict=True)), cf, self.typedefs(c.file, c), tparams,
                              c.template_params)

    def _spec_verdict(self, spec: Definition, every: list[str], targs: list[str], cf: dict[str, str],
                      tparams: set[str]) -> str | None:
        """Are an explicit specialisation's arguments the call's?  ``same``; ``differ`` (sure);
        ``assumed`` (differ, by library type names); None (undecided)."""
        sf = self.typedefs(spec.file, spec)
        written = spec.attrs.get("specialization_args")
        if written is not None:
            if len(written) != len(targs):
                # another instantiation, unless a default template argument fills the shorter list
                return None if self._defaulted(spec, every) else "differ"
            pairs = list(zip(targs, written, strict=True))
        else:  # deduced: the primary template's signature with the call's arguments put in
            owners = [self.t.defs[i] for i in every if self.t.defs[i].qualname == spec.qualname
                      and len(self.t.defs[i].template_params) == len(targs)
                      and len(self.t.defs[i].params) == len(spec.params)]
            if len(owners) != 1:
                return None
            p = owners[0]
            sub = dict(zip(p.template_params, targs, strict=True))

            def put(t: str) -> str:
                return re.sub(r"\b\w+\b", lambda m: sub.get(m.group(0), m.group(0)), t)

            pairs = [(put(p.return_type), spec.return_type)] + \
                [(put(a.type), b.type) for a, b in zip(p.params, spec.params, strict=True)]
        return self._combined(pairs, cf, sf, tparams)

    def _defaulted(self, spec: Definition, every: list[str]) -> bool:
        """May a template argument of ``spec``'s template be defaulted (or its template is unknown)?"""
        prim = [self.t.defs[i] for i in every if self.t.defs[i].qualname == spec.qualname
                and self.t.defs[i].template_params]
        return not prim or any("=" in decl or "..." in decl for p in prim
                               for decl in p.attrs.get("template_param_decls", ["="]))

    def _combined(self, pairs: list[tuple[str, str]], fa: dict[str, str], fb: dict[str, str], tparams: set[str],
                  wild: frozenset[str] | list[str] = frozenset()) -> str | None:
        """The verdict on argument lists from their pairs (call's, specialisation's): ``differ`` when one
        pair surely differs, else ``assumed`` when one differs by library type names, else ``same``
        when all are the same, else None.  ``wild``: a partial specialisation's own parameters."""
        out = "same"
        for a, b in pairs:
            if b.strip() in wild:
                continue
            v = self._same_arg(a, b, fa, fb, tparams)
            if v == "differ":
                return "differ"
            if v == "assumed":
                out = "assumed"
            elif v is None and out == "same":
                out = "undecided"
        return None if out == "undecided" else out

    def _same_arg(self, a: str, b: str, fa: dict[str, str], fb: dict[str, str], tparams: set[str]) -> str | None:
        """One template argument of the call (``a``) against a specialisation's (``b``)."""
        x, y = _norm(a, fa), _norm(b, fb)
        if _is_arms(x) or _is_arms(y):
            return None  # an alias whose `#if` arms disagree: either type
        if x.replace(" ", "") == y.replace(" ", ""):
            return "same"
        if tparams & set(re.findall(r"\w+", x)):
            return None
        ex, ey = self._enumerator(x), self._enumerator(y)
        if ex is not None and ey is not None and ex[0] == ey[0]:
            return "same" if ex[1] == ey[1] else "differ"  # two enumerators of one enum, by their values
        lx, ly = _literal(x), _literal(y)
        if lx is not None and ly is not None:
            return "same" if lx == ly else "differ"
        if lx is not None or ly is not None:
            return None
        # by its own name when its alias is unknown (an `#if` arm's `typedef __hip_bfloat16 __nv_bfloat16;`)
        kx = self._type_kind(x) or self._type_kind(_norm(a, {}))
        ky = self._type_kind(y) or self._type_kind(_norm(b, {}))
        if kx and ky:
            return "differ" if kx == "sure" and ky == "sure" else "assumed"
        return None

    def _enumerator(self, t: str) -> tuple[str, int] | None:
        """(enum, value) of an enumerator the checkout defines once (every definition of the name
        agreeing), its value known; None otherwise."""
        name = t.strip().split("::")[-1]
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            return None
        rows = set(self.t.enumerators.get(name, ()))
        if len(rows) != 1:
            return None
        enum, _, value = rows.pop().rpartition("=")
        return (enum, int(value)) if value else None

    def _type_kind(self, t: str) -> str:
        """``sure``: a built-in type or one the checkout defines (its identity known); ``named``: a
        library type by its name (``cutlass::half_t``); "" when it may be a constant."""
        bare = t.rstrip("*").strip()
        if _BUILTIN_RE.fullmatch(bare):
            return "sure"
        if re.fullmatch(r"\w+", bare) and any(self.t.defs[i].kind == "cpp_type"
                                               for i in self.t.by_name.get(("cuda", bare), [])):
            return "sure"
        if re.fullmatch(r"(\w+::)+\w+(<.*>)?|\w+_t", bare):
            return "named"
        return ""

    def typedefs(self, file: str, within: Definition | None = None) -> dict[str, str]:
        """The aliases of ``file`` seen from ``within`` (a definition of it): the file's own, then its
        enclosing classes' and its own (``using Element = …`` in a class or a function body)."""
        scoped = within is not None and within.file == file and bool(within.qualname)
        key = (file, within.qualname if scoped and within is not None else "")
        if key not in self._scoped:
            table = self.t.typedefs.get(file, {})
            out = {a: t for a, t in table.items() if "::" not in a}
            parts = key[1].split("::") if key[1] else []
            for k in range(1, len(parts) + 1):
                scope = "::".join(parts[:k]) + "::"
                out.update({a[len(scope):]: t for a, t in table.items()
                            if a.startswith(scope) and "::" not in a[len(scope):]})
            self._scoped[key] = out
        return self._scoped[key]

    def _through_alias(self, call: CallSite, caller: Definition) -> CallSite:
        """``tile_C::get_j(…)`` with ``typedef tile<16, 8, int> tile_C;`` in scope: the call as
        ``tile::get_j`` with the class template arguments ``<16, 8, int>``."""
        head, _, rest = call.callee.removeprefix("::").partition("::")
        alias = ChainMap(self.typedefs(call.file, caller), self.visible_typedefs(call.file)).get(head, "")
        if not alias or _is_arms(alias) or not rest:
            return call
        base, targs = _split_template(re.sub(r"^\s*typename\s+", "", alias))
        if not re.fullmatch(r"(::)?\w+(::\w+)*", base):
            return call
        attrs = {**call.attrs, "scope_args": targs} if targs else call.attrs
        return replace(call, callee=f"{base.removeprefix('::')}::{rest}", attrs=attrs)

    def _receiver(self, ids: list[str], call: CallSite, caller: Definition
                  ) -> tuple[list[str], str, Resolved | None, list[str]]:
        """``x.f()`` on a local or parameter ``x`` of declared type ``T``: (candidates, note, verdict,
        the class template arguments of ``T``).

        ``T`` a checkout class with a method ``f``: its methods (note says so).  ``T`` the caller's
        template parameter (or a type of it), or ``auto``: the type is unknown, so name matches are at
        most a choice (ambiguous, by method name only).  ``T`` a type the checkout does not define (a
        library's, through the aliases visible by ``#include``): an external call, never linked by name."""
        recv = call.receiver.strip()
        ty = _declared(recv, caller)
        if not ty:
            return ids, "", None, []
        normed = _norm(ty, ChainMap(self.typedefs(call.file, caller), self.visible_typedefs(call.file)))
        bare = _bare_type(normed)
        short = bare.split("::")[-1]
        head = bare.split("::")[0]
        name = call.callee.split("::")[-1]
        tparams = self._template_params_around(caller)
        known_type = _BUILTIN_RE.fullmatch(short) or self._is_project_type(short)
        if head in tparams or bare in ("auto", "decltype") or not re.fullmatch(r"[\w:]+", bare) \
                or ("::" not in bare and not known_type):
            why = f"`{recv}` is of type `{ty.strip()}`"
            why += ", a template parameter" if head in tparams else \
                f", {normed[1:-1]} by `#if` arm" if _is_arms(normed) else \
                ", not a type the checkout defines" if re.fullmatch(r"\w+", bare) else ", not known"
            real = [i for i in self.t.live(ids) if not self.t.defs[i].attrs.get("decl_only")]
            if not real:
                return ids, "", None, []
            return ids, "", Resolved(sorted(set(real)), AMBIGUOUS, f"by method name only ({why})", name_only=True), []
        typed = [i for i in ids if self.t.defs[i].container == short]
        if typed:
            return typed, f"method of `{short}` (the declared type of `{recv}`)", None, \
                _split_template(normed.replace("&", "").replace("*", "").strip())[1]
        if known_type:
            return ids, "", None, []  # a class of the checkout without that method here: a base class's, maybe
        return [], "", Resolved(status=UNRESOLVED, how=f"method of `{bare}` (the declared type of `{recv}`), "
                                "a type the checkout does not define", external=f"{bare}::{name}",
                                external_kind="external"), []

    def _foreign_scope(self, head: str, ids: list[str], call: CallSite, caller: Definition) -> bool:
        """Does the qualifier of ``head::f(…)``, which no definition's name ends with, rule out every
        definition of ``f`` (``cute::gemm`` when the checkout's ``gemm`` are ``flash::gemm``, ``cute::copy``
        when its ``copy`` are members of classes of ``cute``)?  Not when ``head`` is an alias, a template
        parameter or a class of the checkout (its members may be found through it)."""
        if not re.fullmatch(r"\w+", head) or head in self._template_params_around(caller) \
                or self._is_project_type(head):
            return False
        return head not in self.typedefs(call.file, caller) and head not in self.visible_typedefs(call.file)

    def _template_params_around(self, d: Definition) -> set[str]:
        """``d``'s template parameters and those of the classes it is defined in."""
        out = set(d.template_params)
        cls = self._class_of(d) if d.container else None
        for _ in range(8):  # nested classes, innermost first
            if cls is None:
                break
            c = self.t.defs[cls]
            out.update(c.template_params)
            cls = self._class_of(c) if c.container else None
        return out

    def _is_project_type(self, name: str) -> bool:
        return any(self.t.defs[i].kind == "cpp_type" for i in self.t.by_name.get(("cuda", name), []))

    def visible_typedefs(self, file: str) -> dict[str, str]:
        """The aliases of ``file`` and of the files it includes (transitively; the file's own win)."""
        if file not in self._aliases:
            out: dict[str, str] = {}
            for f in sorted(self.visible(file) - {file}):
                out.update(self.typedefs(f))
            out.update(self.typedefs(file))
            self._aliases[file] = out
        return self._aliases[file]
