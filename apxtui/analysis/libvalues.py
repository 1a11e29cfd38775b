"""The dtype a library-call argument names, followed through the code that computes it.

``cuda_type`` in ``cublasGemmEx(…, b, cuda_type, …)`` is a local chosen by
``if dtype == DType::F16 { CUDA_R_16F } else { CUDA_R_16BF }``, with ``dtype`` a parameter the
caller binds (``DType::BF16``); ``plan.weight`` in ``cublasLtMatmul(…)`` is a layout created in a
plan builder (``make_bf16_plan``) reached through the map the plan was stored in
(``g_bf16_plans.emplace(key, plan)``).  :class:`Values` evaluates such an argument to the
dtypes it can take, each with the condition that selects it, and picks one when the bindings
decide the conditions.  Pure over the extracted facts: nothing is parsed again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from apxtui.analysis import types as ty
from apxtui.analysis.evidence import loc
from apxtui.vocab import node_id

MAX_DEPTH = 8
_INSERT = ("emplace", "insert", "try_emplace", "insert_or_assign")
_FIELD = re.compile(r"^\(?\s*&?\s*\(?\s*([A-Za-z_]\w*)\s*(?:\.|->)\s*([A-Za-z_]\w*)\s*\)?\s*\)?$")
_MAP_OF = re.compile(r"([A-Za-z_]\w*)\s*(?:\.find\(|\.at\(|\[)")

#: A binding: parameter name → (definition the expression is evaluated in, expression, that definition's env).
Env = dict[str, tuple[Any, str, "Env"]]


@dataclass
class Alt:
    """One value an argument can take: the dtype, the conditions selecting it, where it was seen."""

    dtype: str | None
    conds: tuple[str, ...] = ()
    evidence: list[str] = field(default_factory=list)


def top_split(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside brackets and quotes."""
    out, depth, cur, quote, i = [], 0, "", "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            cur += ch
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
            cur += ch
        elif ch in "([{":
            depth += 1
            cur += ch
        elif ch in ")]}":
            depth -= 1
            cur += ch
        elif depth == 0 and text.startswith(sep, i):
            out.append(cur)
            cur = ""
            i += len(sep)
            continue
        else:
            cur += ch
        i += 1
    out.append(cur)
    return [x.strip() for x in out]


def _ternary(e: str) -> tuple[str, str, str] | None:
    parts = top_split(e, "?")
    if len(parts) != 2:
        return None
    rest = top_split(parts[1], ":")
    rest = [r for r in rest if r != ""] if "::" not in parts[1] else _colon_split(parts[1])
    return (parts[0], rest[0], rest[1]) if len(rest) == 2 else None


def _colon_split(t: str) -> list[str]:
    """Split ``a::X : b::Y`` on the lone ``:``."""
    m = re.match(r"^(.*?[^:]):(?!:)(.*)$", t)
    return [m.group(1).strip(), m.group(2).strip()] if m else [t]


_C_CAST = re.compile(r"^\((?:const\s+)?[\w:]+\s*\)\s*")
_RUST_CAST = re.compile(r"\s+as\s+[\w:]+$")


def _strip(e: str) -> str:
    e = e.strip()
    for _ in range(4):
        before = e
        e = _C_CAST.sub("", e)
        e = _RUST_CAST.sub("", e)
        if e.startswith("(") and e.endswith(")") and len(top_split(e[1:-1], ",")) == 1 and \
                e.count("(") == e.count(")"):
            e = e[1:-1].strip()
        e = e.lstrip("&*").strip()
        if e == before:  # a round that changes nothing: the next ones would not either
            break
    return e


class Values:
    """Evaluates argument expressions of library calls to dtypes (see the module docstring)."""

    def __init__(self, index: Any):
        self.index = index
        self._calls: dict[tuple[str, int], list[Any]] = {}
        self._builders: dict[tuple[str, int, str], list[tuple[Any, str, Env, str]]] = {}

    def calls_in(self, d: Any) -> list[Any]:
        key = (d.file, d.line)
        if key not in self._calls:
            facts = self.index.facts.get(d.file) if hasattr(self.index.facts, "get") else self.index.facts[d.file]
            self._calls[key] = [c for c in (facts.calls if facts else [])
                                if c.caller == d.qualname and d.line <= c.line <= d.end_line]
        return self._calls[key]

    # -- expressions -----------------------------------------------------------------------------

    def eval(self, d: Any, expr: str, env: Env | None = None, depth: int = 0) -> list[Alt]:
        """Every dtype ``expr`` (evaluated inside definition ``d``) can name, with its conditions."""
        env = env or {}
        e = _strip(expr)
        if depth > MAX_DEPTH or not e:
            return [Alt(None)]
        dt = ty.enum_dtype(e)
        if dt:
            return [Alt(dt)]
        t = _ternary(e)
        m = re.match(r"^if\s+(.+?)\s*\{\s*(.+?)\s*\}\s*else\s*\{\s*(.+?)\s*\}$", e, re.S)
        if t or m:
            cond, a, b = t if t else (m.group(1), m.group(2), m.group(3))  # type: ignore[union-attr]
            return self._branch(d, cond, a, b, env, depth)
        m = re.match(r"^match\s+(.+?)\s*\{(.*)\}$", e, re.S)
        if m:
            return self._match(d, m.group(1), m.group(2), env, depth)
        if re.fullmatch(r"[A-Za-z_]\w*", e):
            if e in env:
                dd, val, denv = env[e]
                return self.eval(dd, val, denv, depth + 1) if dd is not None else [Alt(ty.enum_dtype(val))]
            if d is not None:
                a = next((x for x in reversed(d.attrs.get("assigns", [])) if x["var"] == e), None)
                if a is not None and a["value"].strip() != e:
                    return [Alt(x.dtype, x.conds, [loc(d.file, a["line"]), *x.evidence])
                            for x in self.eval(d, a["value"], env, depth + 1)]
        return [Alt(None)]

    def _branch(self, d: Any, cond: str, a: str, b: str, env: Env, depth: int) -> list[Alt]:
        truth = self.truth(d, cond, env)
        if truth is True:
            return self.eval(d, a, env, depth + 1)
        if truth is False:
            return self.eval(d, b, env, depth + 1)
        return ([Alt(x.dtype, (cond, *x.conds), x.evidence) for x in self.eval(d, a, env, depth + 1)]
                + [Alt(x.dtype, (f"not ({cond})", *x.conds), x.evidence) for x in self.eval(d, b, env, depth + 1)])

    def _match(self, d: Any, subject: str, body: str, env: Env, depth: int) -> list[Alt]:
        arms = []
        for part in top_split(body, ","):
            if "=>" in part:
                pat, val = part.split("=>", 1)
                arms.append((pat.strip(), val.strip().strip("{}").strip()))
        bound = self.value_text(d, subject, env)
        if bound:
            tail = bound.split("::")[-1]
            hit = [v for p, v in arms if tail in re.split(r"[\s|:]+", p)] or [v for p, v in arms if p == "_"]
            if hit:
                return self.eval(d, hit[0], env, depth + 1)
        return [Alt(x.dtype, (f"{subject} matches {p}", *x.conds), x.evidence)
                for p, v in arms for x in self.eval(d, v, env, depth + 1)]

    def value_text(self, d: Any, expr: str, env: Env, depth: int = 0) -> str | None:
        """The literal text an identifier is bound to (``DType::BF16``, ``true``), when bindings show it."""
        e = _strip(expr)
        if re.fullmatch(r"true|false|[\w]+::[\w:]+|\d+", e):
            return e
        if depth > MAX_DEPTH or not re.fullmatch(r"[A-Za-z_]\w*", e):
            return None
        if e in env:
            dd, val, denv = env[e]
            return self.value_text(dd, val, denv, depth + 1) if dd is not None else val
        return None

    def truth(self, d: Any, cond: str, env: Env) -> bool | None:
        """Decide ``x == A``, ``x != A``, ``x``, ``!x`` from the bindings (None when they do not)."""
        c = _strip(cond)
        neg = False
        while c.startswith("!") and not c.startswith("!="):
            neg, c = not neg, _strip(c[1:])
        m = re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", c)
        if m:
            left, right = self.value_text(d, m.group(1), env), self.value_text(d, m.group(3), env)
            if left is None or right is None:
                return None
            same = left.split("::")[-1] == right.split("::")[-1]
            return (same if m.group(2) == "==" else not same) != neg
        v = self.value_text(d, c, env)
        if v in ("true", "false"):
            return (v == "true") != neg
        return None

    # -- bindings ---------------------------------------------------------------------------------

    @staticmethod
    def bind(callee: Any, caller: Any, args: list[str], method: bool, env: Env | None = None) -> Env:
        """Parameters of ``callee`` bound to the argument expressions of one call in ``caller``."""
        if callee is None:
            return {}
        params = [p.name for p in callee.params]
        if params and params[0] == "self" and method:
            params = params[1:]
        return {p: (caller, a, env or {}) for p, a in zip(params, args, strict=False)}

    # -- plans: layouts and descriptors created elsewhere ---------------------------------------

    def creations(self, d: Any, arg: str, api_prefix: str) -> list[tuple[Any, Any, Env, str]]:
        """Creation calls (``api_prefix``) of the object ``arg`` names, wherever it was built.

        ``arg`` local to ``d`` → creations in ``d``; ``plan.field`` → creations of ``&p->field`` in
        the builders of the plan (through the map it was stored in, or the struct type).
        Each: (call, definition, env, how).
        """
        var = _strip(arg)
        own = [c for c in self.calls_in(d) if c.callee.startswith(api_prefix) and c.args
               and _strip(c.args[0]) == var]
        if own:
            return [(c, d, {}, "created in the calling function") for c in own]
        m = _FIELD.match(var)
        if not m:
            return []
        base, fld = m.groups()
        out = []
        for bd, pname, env, how in self.builders(d, base):
            for c in self.calls_in(bd):
                if c.callee.startswith(api_prefix) and c.args:
                    m2 = _FIELD.match(_strip(c.args[0]))
                    if m2 and m2.group(1) == pname and m2.group(2) == fld:
                        out.append((c, bd, env, how))
        return out

    def builders(self, d: Any, base: str) -> list[tuple[Any, str, Env, str]]:
        """Functions that fill the plan ``base`` names: (definition, its name there, env, how)."""
        key = (d.file, d.line, base)
        if key not in self._builders:
            self._builders[key] = self._find_builders(d, base)
        return self._builders[key]

    def _find_builders(self, d: Any, base: str) -> list[tuple[Any, str, Env, str]]:
        maps = self._maps_of(d, base)
        out = []
        for mp in maps:
            out += self._map_builders(d.file, mp)
        if out:
            return out
        t = (d.locals.get(base) or next((p.type for p in d.params if p.name == base), "")) if d else ""
        st = ty.strip_type(t)
        if not st or st in ("auto",):
            return []
        for bd in self._defs_in(d.file):
            for p in bd.params:
                if ty.strip_type(p.type) == st and bd.qualname != d.qualname:
                    out.append((bd, p.name, {}, f"a function taking a {st} (the plan's type)"))
        return out

    def _maps_of(self, d: Any, base: str) -> list[str]:
        a = next((x for x in reversed(d.attrs.get("assigns", [])) if x["var"] == base), None)
        if a is not None:
            m = _MAP_OF.search(a["value"])
            if m:
                return [m.group(1)]
        finds = [c.receiver.strip() for c in self.calls_in(d) if c.callee.split(".")[-1] in ("find", "at")
                 and c.receiver and re.fullmatch(r"[A-Za-z_]\w*", c.receiver.strip())]
        return list(dict.fromkeys(finds))

    def _defs_in(self, file: str) -> list[Any]:
        facts = self.index.facts.get(file) if hasattr(self.index.facts, "get") else self.index.facts[file]
        return [x for x in (facts.defs if facts else []) if x.kind in ("host_fn", "abi_fn", "rust_fn")]

    def _map_builders(self, file: str, mp: str) -> list[tuple[Any, str, Env, str]]:
        """Builders of the values stored into map ``mp`` (``mp.emplace(key, plan)``, an alias of ``mp``)."""
        out = []
        for fd in self._defs_in(file):
            calls = self.calls_in(fd)
            aliases: dict[str, Env] = {mp: {}}
            for a in fd.attrs.get("assigns", []):
                t = _ternary(a["value"])
                if t and mp in (_strip(t[1]), _strip(t[2])):
                    cv = _strip(t[0])
                    if re.fullmatch(r"!?\s*[A-Za-z_]\w*", cv):
                        name = cv.lstrip("!").strip()
                        truth = (mp == _strip(t[1])) != cv.startswith("!")
                        aliases[a["var"]] = {name: (None, "true" if truth else "false", {})}
                elif _strip(a["value"]) == mp:
                    aliases[a["var"]] = {}
            for c in calls:
                recv = (c.receiver or "").strip()
                if (
                    c.kind != "method"
                    or c.callee.split(".")[-1] not in _INSERT
                    or recv not in aliases
                    or len(c.args) < 2
                ):
                    continue
                plan = re.sub(r"^std::move\((.*)\)$", r"\1", _strip(c.args[-1]))
                env = dict(aliases[recv])
                how = f"stored into {mp} at {loc(c.file, c.line)}" + (
                    f" (as {recv}, under {', '.join(f'{k} = {v[1]}' for k, v in env.items())})" if env else "")
                out.append((fd, plan, env, how))
                for b in calls:  # builders the plan is passed to: make_plan(key, &plan)
                    if b.line > c.line or b.kind != "call":
                        continue
                    k = next((i for i, x in enumerate(b.args) if _strip(x) == plan), None)
                    if k is None:
                        continue
                    bd = self._callee(fd, b)
                    if bd is None or k >= len(bd.params):
                        continue
                    benv = self.bind(bd, fd, list(b.args), False, env)
                    out.append((bd, bd.params[k].name, benv, f"{how}; built by {bd.name} ({loc(b.file, b.line)})"))
        return out

    def _callee(self, fd: Any, call: Any) -> Any:
        g = self.index.graph
        node = node_id(fd.qualname, fd.file, fd.line)
        if node in g:
            for _, v, e in g.out_edges(node, data=True):
                if e.get("line") == call.line and g.nodes[v].get("name") == call.callee.split("::")[-1]:
                    return self.index.definition(v)
        return None


def summarize(alts: list[Alt]) -> tuple[str | None, dict[str, str], list[str]]:
    """(the dtype when all alternatives agree, {condition: dtype} otherwise, evidence)."""
    ev = list(dict.fromkeys(e for a in alts for e in a.evidence if e))
    known = {a.dtype for a in alts}
    if len(known) == 1 and None not in known:
        return next(iter(known)), {}, ev
    return None, {(" and ".join(a.conds) or "otherwise"): (a.dtype or "unknown") for a in alts}, ev
