"""Storage, input, accumulator and output dtypes of kernel launches and library calls.

Kernels: pointer parameters after template substitution (explicit ``<...>`` at the
launch, else deduced from ``static_cast<const X*>`` arguments), accumulators from
``attrs["accumulates"]`` of the kernel and the ``__device__`` helpers it calls, and
conversions from intrinsic calls, ``static_cast`` calls and stores.  Library calls:
A/B/C/D and compute types read from the call's arguments, following local variables
and descriptor/layout creation calls inside the same function.  Nothing is parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from apxtui.analysis import types as ty
from apxtui.analysis.dtypefacts import (
    AccumulationSite,
    Conversion,
    DtypeFact,
    KernelDtypes,
    LibraryDtypes,
    PointerParam,
    dfact,
)
from apxtui.analysis.evidence import EXACT, HEURISTIC, UNKNOWN, identifiers, loc
from apxtui.analysis.hostops import api_name
from apxtui.analysis.libvalues import Alt, Env, Values, summarize
from apxtui.facts import CallSite, Definition
from apxtui.trace import Via

_REDUCTION_HINT = re.compile(r"__shfl\w*|atomicAdd|BlockReduce|WarpReduce|__reduce_\w+")
HELPER_DEPTH = 3


class DtypeAnalysis:
    """Per-index cache of kernel/library dtype facts."""

    def __init__(self, index: Any):
        self.index = index
        self.g = index.graph
        self._calls: dict[tuple[str, str], list[CallSite]] = {}
        self.values = Values(index)
        self._made_memo: dict[tuple[str, int, str, str, int], _Op] = {}
        self._arg_memo: dict[tuple[Any, ...], _Op] = {}

    # -- facts access --------------------------------------------------------------------

    def defn(self, node: str) -> Definition | None:
        d: Definition | None = self.index.definition(node)
        return d

    def calls_in(self, d: Definition) -> list[CallSite]:
        key = (d.file, f"{d.qualname}@{d.line}")
        if key not in self._calls:
            facts = self.index.facts.get(d.file) if hasattr(self.index.facts, "get") else self.index.facts[d.file]
            self._calls[key] = [c for c in (facts.calls if facts else [])
                                if c.caller == d.qualname and d.line <= c.line <= d.end_line]
        return self._calls[key]

    def helpers(self, node: str) -> list[tuple[str, dict[str, str]]]:
        """``__device__`` functions called (transitively) from ``node``, with their template bindings."""
        out: list[tuple[str, dict[str, str]]] = []
        seen = {node}
        frontier = [node]
        for _ in range(HELPER_DEPTH):
            nxt = []
            for n in frontier:
                for _, v, e in self.g.out_edges(n, data=True):
                    if v in seen or self.g.nodes[v].get("kind") != "device_fn" or e.get("kind") != "call":
                        continue
                    seen.add(v)
                    tp = self.g.nodes[v].get("template_params", [])
                    out.append((v, dict(zip(tp, e.get("template_args", []), strict=False))))
                    nxt.append(v)
            frontier = nxt
        return out

    # -- kernels -------------------------------------------------------------------------

    def bindings(self, d: Definition, via: Via | None) -> tuple[dict[str, str], str, str]:
        """Template parameter → argument at the launch; status and how."""
        targs = list(via.template_args) if via else []
        tparams = list(d.template_params)
        b = dict(zip(tparams, targs, strict=False))
        if len(targs) >= len(tparams):
            return b, EXACT, "template arguments at the launch site" if tparams else "not a template"
        # deduce from `static_cast<const X*>(arg)` on pointer arguments
        for p, a in zip(d.params, via.args if via else (), strict=False):
            m = re.match(r"\s*(?:static_cast|reinterpret_cast)<\s*(.+?)\s*>\s*\(", a)
            base = ty.strip_type(p.type)
            if m and base in tparams and base not in b and ty.is_pointer(p.type):
                b[base] = ty.strip_type(m.group(1))
        missing = [t for t in tparams if t not in b]
        if not missing:
            return b, HEURISTIC, "template parameters deduced from casts on the launch arguments"
        return b, UNKNOWN, f"template parameter(s) {', '.join(missing)} not bound at the launch"

    def kernel(self, node: str, via: Via | None) -> KernelDtypes:
        d = self.defn(node)
        site = loc(via.file, via.line) if via else loc("", 0)
        if d is None:
            none: DtypeFact[list[str]] = dfact([], UNKNOWN, "no definition of the kernel in the checkout", [site])
            return KernelDtypes({}, (), none, none, none, none, ())
        b, bstatus, bhow = self.bindings(d, via)
        where = loc(d.file, d.line)
        params = []
        for p in d.params:
            t = ty.substitute(p.type, b)
            if not ty.is_pointer(t):
                continue
            params.append(PointerParam(p.name, t, ty.canonical(t), "input" if ty.is_const_pointer(t) else "output"))
        storage = sorted({p.dtype for p in params if p.dtype})
        ins = _uniq(p.dtype for p in params if p.role == "input" and p.dtype)
        outs = _uniq(p.dtype for p in params if p.role == "output" and p.dtype)
        in_why = "const pointer parameters (read)"
        if not ins and outs:
            ins, in_why = outs, "no const pointer parameter: the written pointers are read in place"
        st = bstatus if all(p.dtype for p in params) else UNKNOWN
        why = bhow if st != UNKNOWN or bstatus == UNKNOWN else "a pointer parameter's element type is not a known dtype"
        return KernelDtypes(b, tuple(params), dfact(storage, st, why, [where, site]), dfact(ins, st, in_why, [where]),
                            dfact(outs, st, "non-const pointer parameters (written)", [where]),
                            self.accumulators(node, d, b), tuple(self.conversions(node, d, b)))

    def _var_type(self, d: Definition, var: str, b: dict[str, str]) -> str | None:
        t = d.locals.get(var) or next((p.type for p in d.params if p.name == var), None)
        return ty.substitute(t, b) if t else None

    def accumulators(self, node: str, d: Definition, b: dict[str, str]) -> DtypeFact[list[str]]:
        sites: list[AccumulationSite] = []
        for n, hb in [(node, b), *self.helpers(node)]:
            hd = d if n == node else self.defn(n)
            if hd is None:
                continue
            for a in hd.attrs.get("accumulates", []):
                t = self._var_type(hd, a["var"], {**b, **hb}) if a.get("var") else None
                dt = ty.canonical(t) if t else None
                if dt not in ty.FLOATS:
                    continue  # loop counters, index arithmetic
                sites.append(AccumulationSite(a["var"], t, dt, a["op"], a["value"], hd.qualname,
                                              loc(hd.file, a["line"]), bool(_REDUCTION_HINT.search(a["value"]))))
        dts = _uniq(s.dtype for s in sites)
        if not sites:
            return dfact(
                [], UNKNOWN, "no floating-point accumulation (`+=`, `x = f(x)`) found in the kernel or its helpers"
            )
        return dfact(dts, EXACT, "declared types of the accumulated variables", [s.where for s in sites][:8],
                     sites=tuple(sites))

    def conversions(self, node: str, d: Definition, b: dict[str, str]) -> list[Conversion]:
        out: list[Conversion] = []
        for n, hb in [(node, b), *self.helpers(node)]:
            hd = d if n == node else self.defn(n)
            if hd is None:
                continue
            bb = {**b, **hb}
            for c in self.calls_in(hd):
                conv: tuple[str | None, str] | None = ty.intrinsic_target(c.callee, c.args)
                how = "conversion intrinsic"
                if conv is None and c.callee in ("static_cast", "__float2bfloat16") and c.template_args:
                    dst = ty.canonical(ty.substitute(c.template_args[0], bb))
                    src = self.expr_dtype(hd, c.args[0] if c.args else "", bb)
                    if not dst or ty.is_pointer(c.template_args[0]):
                        continue
                    conv = (src, dst)
                    how = "static_cast (source type from the operand's declared types)"
                if conv is None:
                    continue
                src, dst = conv
                kind = "round" if ty.narrows(src, dst) else ("widen" if src and src != dst else "same")
                if kind == "same":
                    continue
                out.append(Conversion(src, dst, kind, c.callee, hd.qualname, loc(hd.file, c.line), how,
                                      EXACT if how == "conversion intrinsic" else (HEURISTIC if src else UNKNOWN)))
            for s in hd.attrs.get("stores", []):  # implicit narrowing at a plain store
                if s.get("conversion"):
                    continue
                dst = ty.canonical(self._var_type(hd, s["base"], bb) or "")
                src = self.expr_dtype(hd, s["value"], bb)
                if dst and src and ty.narrows(src, dst):
                    out.append(Conversion(src, dst, "round", "implicit store", hd.qualname, loc(hd.file, s["line"]),
                                          "implicit conversion", HEURISTIC))
        return out

    def expr_dtype(self, d: Definition, expr: str, b: dict[str, str]) -> str | None:
        """Widest float dtype among an expression's casts and declared operands (usual arithmetic conversions)."""
        found = [ty.canonical(ty.substitute(m, b)) for m in re.findall(r"static_cast<\s*([^<>]+?)\s*>", expr)]
        if re.search(r"__\w+2float", expr):
            found.append("f32")
        stripped = re.sub(r"static_cast<[^<>]+>", "", expr)
        for ident in identifiers(stripped):
            t = self._var_type(d, ident, b)
            if t:
                found.append(ty.canonical(t))
        if re.search(r"\d\.\d*f\b|\d+\.?\d*e-?\d+f\b", stripped):
            found.append("f32")
        floats = [f for f in found if f in ty.FLOATS]
        return max(floats, key=lambda f: ty.WIDTH.get(f, 0)) if floats else None

    # -- library calls -------------------------------------------------------------------

    def library(self, caller: str, via: Via, env: Env | None = None, env_at: str = "") -> LibraryDtypes:
        """A/B/C/D, compute and scale types of one library call made by ``caller``.

        ``env`` binds ``caller``'s parameters to the arguments of the call into it (one level),
        so a type chosen by ``if dtype == DType::F16 {…}`` is decided when the caller passes
        ``DType::BF16`` (``env_at``: where that call is).  Rust calls of an ``extern`` declaration
        (``ffi::cublasGemmEx``) are read like C calls.
        """
        api = api_name(via.callee)
        lib = via.attrs.get("library", "")
        site = loc(via.file, via.line)
        d = self.defn(caller)
        if lib == "cutlass" or via.attrs.get("operator_type"):
            return self._cutlass(via, site)
        if d is None:
            return LibraryDtypes(api, dfact({}, UNKNOWN, "the calling function has no definition in the index", [site]))
        args = via.args
        env = env or {}
        if api == "cublasLtMatmul" and len(args) >= 12:
            ops = {k: self._made(d, args[i], "cublasLtMatrixLayoutCreate", 1, env)
                   for k, i in (("A", 4), ("B", 6), ("C", 9), ("D", 11))}
            compute = self._made(d, args[1], "cublasLtMatmulDescCreate", 1, env)
            scale = self._made(d, args[1], "cublasLtMatmulDescCreate", 2, env)
            return self._gemm(api, ops, compute, scale, site, d)
        pos = _GEMM_ARGS.get(api)
        if pos and len(args) > max(pos.values()):
            ops = {k: self._arg(d, args[i], env, env_at) for k, i in pos.items() if k not in ("compute", "algo")}
            compute = self._arg(d, args[pos["compute"]], env, env_at) if "compute" in pos else _NONE
            out = self._gemm(api, ops, compute, _NONE, site, d)
            if "algo" in pos and len(args) > pos["algo"]:
                out = replace(out, algorithm=_algo(args[pos["algo"]], site))
            return out
        fixed = _FIXED.get(api)
        if fixed:
            return LibraryDtypes(api, dfact({"A": fixed, "B": fixed, "C": fixed}, EXACT, f"{api} is typed by name",
                                            [site]),
                                 dfact(fixed, EXACT, f"{api} is typed by name", [site]))
        return LibraryDtypes(api, dfact({}, UNKNOWN, f"no dtype rule for {lib or 'this library'} call {api}", [site]))

    def resolve(self, d: Definition, arg: str, hops: int = 4) -> tuple[str | None, list[str]]:
        """dtype named by an argument: an enum constant, or a local assigned one (followed)."""
        v = self._arg(d, arg, {})
        return v.dtype, v.evidence

    def _arg(self, d: Definition, arg: str, env: Env, env_at: str = "") -> _Op:
        key = (d.file, d.line, arg, env_at, tuple(sorted((k, v[1]) for k, v in env.items())))
        if key not in self._arg_memo:
            self._arg_memo[key] = self._arg_in(d, arg, env, env_at)
        return self._arg_memo[key]

    def _arg_in(self, d: Definition, arg: str, env: Env, env_at: str) -> _Op:
        dt, cond, ev = summarize(self.values.eval(d, arg, env))
        how = ""
        if env and dt is not None:
            free, alts, _ = summarize(self.values.eval(d, arg, {}))
            if free is None and alts:
                used = [f"`{p}` = `{v}`" for p in env if any(re.search(rf"\b{re.escape(p)}\b", c) for c in alts)
                        and (v := self.values.value_text(d, p, env))]
                how = (f"`{arg.strip()}` is chosen by " + " / ".join(f"{c} → {x}" for c, x in alts.items())
                       + f"; the caller passes {', '.join(used) or 'arguments that decide it'}"
                       + (f" ({env_at})" if env_at else ""))
        return _Op(dt, cond, ev, how)

    def env_for(self, fn_node: str, via: Via | None, caller_node: str | None) -> Env:
        """``fn_node``'s parameters bound to the arguments of the call ``via`` made in ``caller_node``."""
        if via is None or caller_node is None:
            return {}
        return Values.bind(self.defn(fn_node), self.defn(caller_node), list(via.args), via.call_kind == "method")

    def _made(self, d: Definition, var: str, api_prefix: str, pos: int, env: Env) -> _Op:
        """The dtype argument ``pos`` of the creation call of the layout/descriptor ``var`` names."""
        if env:
            return self._made_in(d, var, api_prefix, pos, env)
        key = (d.file, d.line, var, api_prefix, pos)
        if key not in self._made_memo:
            self._made_memo[key] = self._made_in(d, var, api_prefix, pos, env)
        return self._made_memo[key]

    def _made_in(self, d: Definition, var: str, api_prefix: str, pos: int, env: Env) -> _Op:
        alts: list[Alt] = []
        hows: list[str] = []
        for c, cd, cenv, how in self.values.creations(d, var, api_prefix):
            if len(c.args) <= pos:
                continue
            here = loc(c.file, c.line)
            for a in self.values.eval(cd, c.args[pos], cenv or (env if cd is d else {})):
                alts.append(Alt(a.dtype, a.conds, [here, *a.evidence]))
            hows.append(how)
        if not alts:
            return _NONE
        dt, cond, ev = summarize(alts)
        how = "; ".join(dict.fromkeys(h for h in hows if h != "created in the calling function"))
        return _Op(dt, cond, ev, how)

    def _gemm(self, api: str, ops: dict[str, _Op], compute: _Op, scale: _Op, site: str,
              d: Definition) -> LibraryDtypes:
        vals = {k: v.dtype for k, v in ops.items()}
        ev = [site] + [e for v in ops.values() for e in v.evidence]
        missing = [k for k, v in vals.items() if v is None]
        hows = list(dict.fromkeys(v.how for v in (*ops.values(), compute) if v.how))
        st = UNKNOWN if missing else (HEURISTIC if hows else EXACT)
        why = ("data types from the call's arguments (locals and layout/descriptor creation followed)"
               + (f"; {'; '.join(hows)}" if hows else "") if not missing
               else f"operand type(s) {', '.join(missing)} not established from {d.qualname}")
        alts = {k: v.alternatives for k, v in ops.items() if v.alternatives}
        if alts:
            why += "; the value depends on a condition the trace does not decide (see alternatives)"
        operands = dfact(vals, st, why, _uniq(ev), alternatives=alts or None)
        cst = (HEURISTIC if compute.how else EXACT) if compute.dtype else UNKNOWN
        comp = dfact(compute.dtype, cst, ("compute type argument" + (f"; {compute.how}" if compute.how else ""))
                     if compute.dtype else "compute type not established", _uniq([site, *compute.evidence]),
                     alternatives=compute.alternatives or None)
        sc = dfact(scale.dtype, cst, "scale type argument", _uniq(scale.evidence)) if scale.dtype else None
        return LibraryDtypes(api, operands, comp, sc)

    def _cutlass(self, via: Via, site: str) -> LibraryDtypes:
        op = via.attrs.get("operator_type", "")
        args = template_args(op)
        name = op.split("<", 1)[0]
        if name.split("::")[-1] in ("Gemm", "GemmUniversal", "GemmBatched", "GemmSplitKParallel") and len(args) >= 7:
            vals = {"A": ty.canonical(args[0]), "B": ty.canonical(args[2]), "C": ty.canonical(args[4])}
            return LibraryDtypes(f"{name}::{via.callee}",
                                 dfact(vals, EXACT, "CUTLASS device::Gemm element template arguments", [site]),
                                 dfact(ty.canonical(args[6]), EXACT, "ElementAccumulator template argument", [site]),
                                 operator_type=op)
        floats = [(a, ty.canonical(a)) for a in args if ty.canonical(a) in ty.FLOATS]
        if not floats:
            return LibraryDtypes(via.callee, dfact({}, UNKNOWN, "no element type spelled in the CUTLASS operator type",
                                                   [site]), operator_type=op)
        element: dict[str, str | None] = {"element": floats[0][1]}
        acc = dfact(floats[1][1], HEURISTIC, "second floating-point template argument (accumulator by CUTLASS "
                    "convention)", [site]) if len(floats) > 1 else None
        return LibraryDtypes(f"{name}::{via.callee}", dfact(element, HEURISTIC, "first floating-point template "
                                                            "argument of the operator type", [site]), acc,
                             operator_type=op)

    # -- Rust operators ------------------------------------------------------------------

    @staticmethod
    def operator_arm(dispatch_subject: str, arms: list[tuple[str, bool | None]]) -> DtypeFact[list[str] | None] | None:
        """The ``DType`` arm of a ``match x.dtype()`` dispatch: the chosen arm or the alternatives."""
        if "dtype" not in dispatch_subject.lower() and not any(ty.enum_dtypes(a) for a, _ in arms):
            return None
        chosen = [a for a, s in arms if s]
        alts = [a for a, s in arms if s is None]
        labels = tuple(a for a, _ in arms)
        if chosen:
            return dfact([x for a in chosen for x in (ty.enum_dtypes(a) or [a])], EXACT,
                         f"arm selected at `match {dispatch_subject}`", arms=labels)
        return dfact(None, UNKNOWN, f"no selection at `match {dispatch_subject}`: alternatives "
                     + ", ".join(a for a in alts), arms=labels)


_GEMM_ARGS = {
    "cublasGemmEx": {"A": 8, "B": 11, "C": 15, "compute": 17, "algo": 18},
    "cublasGemmBatchedEx": {"A": 8, "B": 11, "C": 15, "compute": 18, "algo": 19},
    "cublasGemmStridedBatchedEx": {"A": 8, "B": 12, "C": 17, "compute": 21, "algo": 22},
}


@dataclass
class _Op:
    """One operand's dtype (or the alternatives it takes), evidence and how it was followed."""

    dtype: str | None
    alternatives: dict[str, str] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    how: str = ""


_NONE = _Op(None)


def _algo(arg: str, site: str) -> DtypeFact[str | None]:
    """cuBLAS GEMM algorithm argument: ``-1`` / ``CUBLAS_GEMM_DEFAULT`` is the library's default choice."""
    a = arg.strip().split("::")[-1]
    if a in ("-1", "CUBLAS_GEMM_DEFAULT", "CUBLAS_GEMM_DFALT"):
        return dfact("default", EXACT, f"`{arg.strip()}` = CUBLAS_GEMM_DEFAULT: cuBLAS chooses", [site])
    if a in ("CUBLAS_GEMM_DEFAULT_TENSOR_OP", "CUBLAS_GEMM_DFALT_TENSOR_OP", "99"):
        return dfact("default (tensor op)", EXACT, f"`{arg.strip()}` = CUBLAS_GEMM_DEFAULT_TENSOR_OP", [site])
    m = re.fullmatch(r"CUBLAS_GEMM_ALGO(\d+)(_TENSOR_OP)?|(\d+)", a)
    if m:
        return dfact(f"algorithm {m.group(1) or m.group(3)}" + (" (tensor op)" if m.group(2) else ""), EXACT,
                     f"`{arg.strip()}`", [site])
    return dfact(None, UNKNOWN, f"algorithm argument `{arg.strip()}` not a known constant", [site])
_FIXED = {"cublasSgemm": "f32", "cublasHgemm": "f16", "cublasDgemm": "f64", "cublasSgemmStridedBatched": "f32",
          "cublasHgemmStridedBatched": "f16"}


def is_library_gemm(name: str) -> bool:
    """A vendor GEMM whose operand types are read from its arguments (or typed by its name)."""
    if "emm" not in name and "Matmul" not in name:
        return False
    n = api_name(name)
    return n in _GEMM_ARGS or n in _FIXED or n == "cublasLtMatmul"


def template_args(t: str) -> list[str]:
    """Top-level template arguments of ``Name<a, b<c>, d>``."""
    if "<" not in t:
        return []
    body = t[t.index("<") + 1: t.rindex(">")] if ">" in t else t[t.index("<") + 1:]
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _uniq(xs: Iterable[str | None]) -> list[str]:
    return list(dict.fromkeys(x for x in xs if x))
