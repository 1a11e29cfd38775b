"""Rust name resolution: module paths, `use` aliases, re-exports, impl and trait methods.

Rules (each answer says which one fired, in ``Resolved.how``):

* a path is expanded from the caller's module: ``Self``/``crate``/``self``/``super``,
  `use` aliases (incl. ``pub use`` re-exports, followed transitively), items of the
  module, glob imports, crate names;
* ``Type::method`` looks up methods of impls of ``Type`` (any module);
* ``B::op`` with ``B: Trait`` resolves to the impls of ``Trait`` — one impl is
  ``heuristic``, several are ``ambiguous`` (all kept);
* ``recv.m()`` uses the receiver's type when it can be read off ``self``, a field,
  a parameter, a typed local or a ``for x in &self.field`` loop; otherwise it falls
  back to the method name across the checkout (``heuristic`` if one, ``ambiguous`` if
  several), and to *dropped* for names no project type defines (``unwrap``, ``iter``).
"""

from __future__ import annotations

import re
from typing import Any

from apxtui.facts import CallSite, Definition
from apxtui.index.resolve import AMBIGUOUS, EXACT, HEURISTIC, Resolved
from apxtui.index.tables import Tables, short_type

PRELUDE = {
    "Ok", "Err", "Some", "None", "Box", "Vec", "String", "Arc", "Rc", "HashMap", "HashSet", "BTreeMap",
    "Option", "Result", "Default", "Cell", "RefCell", "Mutex", "RwLock", "PathBuf", "Path", "Duration",
    "Instant", "drop", "panic", "assert", "format", "println", "std", "core", "alloc", "i8", "i16", "i32",
    "i64", "u8", "u16", "u32", "u64", "usize", "isize", "f32", "f64", "bool", "char", "str", "Cow", "From",
    "Into", "Iterator", "IntoIterator", "PhantomData", "NonNull", "Ordering", "anyhow", "mem", "ptr",
}
STD_METHODS = {
    "unwrap", "expect", "clone", "iter", "iter_mut", "into_iter", "map", "and_then", "ok", "ok_or",
    "ok_or_else", "unwrap_or", "unwrap_or_else", "unwrap_or_default", "is_some", "is_none", "is_ok",
    "is_err", "as_ref", "as_mut", "as_ptr", "as_mut_ptr", "len", "is_empty", "push", "pop", "insert",
    "remove", "get", "get_mut", "contains", "contains_key", "entry", "or_insert", "or_insert_with",
    "collect", "enumerate", "zip", "filter", "filter_map", "fold", "sum", "product", "max", "min", "take",
    "skip", "chain", "rev", "step_by", "to_string", "to_owned", "into", "from", "try_into", "borrow",
    "borrow_mut", "lock", "read", "write", "extend", "clear", "first", "last", "split", "join", "trim",
    "parse", "starts_with", "ends_with", "replace", "to_vec", "keys", "values", "chunks", "windows",
    "copied", "cloned", "any", "all", "find", "position", "sort", "sort_by", "dedup", "resize", "truncate",
    "fmt", "eq", "ne", "cmp", "partial_cmp", "hash", "default", "with_capacity", "capacity", "reserve",
    "as_str", "as_slice", "as_bytes", "display", "map_err", "context", "with_context", "unwrap_unchecked",
    "to_le_bytes", "from_le_bytes", "saturating_sub", "checked_add", "checked_mul", "pow", "abs", "sqrt",
    "exp", "powi", "powf", "div_ceil", "next_power_of_two", "for_each", "flat_map", "last_mut", "swap",
    "send", "recv", "spawn", "then", "then_some", "copy_from_slice", "fill", "extend_from_slice",
    # raw-pointer methods: with an unknown receiver these are far likelier than a project method
    "add", "offset", "cast", "cast_mut", "is_null", "byte_add", "wrapping_add",
}
_TURBOFISH_RE = re.compile(r"::<.*>$")
_METHOD_CALLEE_RE = re.compile(r"^(.*)\.(\w+)$")
_PATH_RE = re.compile(r"[\w:]+")
_WORD_RE = re.compile(r"\w+")
_PEEL_RE = re.compile(r"\.(unwrap|expect|as_ref|as_mut|borrow|borrow_mut|lock|clone)\([^()]*\)")
_ITER_RE = re.compile(r"\.(iter|iter_mut|into_iter)\(\)$")
_TAIL_PEEL_RE = re.compile(r"\.(unwrap|expect|clone|to_owned)\([^()]*\)$")
_RESULT_RE = re.compile(r"^(?:[\w:]*::)?Result<(.*)>$")
_LIFETIME_RE = re.compile(r"^'\w+\s+")
_WRAPPER_RE = re.compile(r"^(?:[\w:]*::)?(Box|Arc|Rc|RefCell|Mutex|RwLock|Option|Cell)<(.*)>$")
_VEC_RE = re.compile(r"^(?:[\w:]*::)?(Vec|VecDeque|SmallVec)<(.*)>$")
_ARRAY_RE = re.compile(r"^\[(.*?)(;.*)?\]$")
_VARIANT_PAT_RE = re.compile(r"([\w:]*\w)::(\w+)\(([^()]*)\)")
_LOOP_RE = re.compile(r"^for\s+(?:\(?\s*(?:\w+\s*,\s*)?)?(?:mut\s+)?(\w+)\)?\s+in\s+(.+)$")


def _first_generic(args: str) -> str:
    """``A<B, C>, E`` → ``A<B, C>`` (the first top-level generic argument)."""
    depth = 0
    for i, ch in enumerate(args):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            return args[:i].strip()
    return args.strip()


_CHAIN_TOKENS = re.compile(r"[.()\[\]{}<>]")


def _split_chain(expr: str) -> list[str]:
    """``a.b(x.y).c[i]`` → ``["a", "b(x.y)", "c[i]"]`` (dots inside brackets kept)."""
    if len(expr) > 400:
        return []  # a long builder chain: not worth typing
    if "(" not in expr and "[" not in expr and "{" not in expr and "<" not in expr:
        return [p.strip().rstrip("?") for p in expr.split(".") if p.strip()]
    parts, depth, last = [], 0, 0
    for m in _CHAIN_TOKENS.finditer(expr):
        ch = m.group()
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif depth == 0:
            parts.append(expr[last:m.start()])
            last = m.end()
    parts.append(expr[last:])
    return [p.strip().rstrip("?") for p in parts if p.strip()]


def _strip_index(part: str) -> tuple[str, bool]:
    if part.endswith("]") and "[" in part:
        return part[: part.index("[")], True
    return part, False


def _call_head(expr: str) -> tuple[str | None, str] | None:
    """``recv.m(args)`` → (recv, m); ``a::b(args)`` → (None, "a::b"); the outermost call only."""
    depth = 0
    for i in range(len(expr) - 1, -1, -1):  # find the "(" matching the final ")"
        ch = expr[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                callee = expr[:i]
                break
    else:
        return None
    callee = _TURBOFISH_RE.sub("", callee.strip())
    m = _METHOD_CALLEE_RE.match(callee)
    if m:
        return m.group(1), m.group(2)
    if _PATH_RE.fullmatch(callee):
        return None, callee
    return None


class RustResolver:
    def __init__(self, t: Tables):
        self.t = t
        self._recv_cache: dict[tuple[Any, ...], str] = {}

    # -- paths -------------------------------------------------------------------------

    def _module_of(self, d: Definition | None, call: CallSite) -> str:
        f = self.t.file_of.get(call.file)
        return f.module if f else ""

    def expand(self, segs: list[str], module: str, caller: Definition | None, depth: int = 0) -> list[str]:
        """Absolute path candidates for ``segs`` seen from ``module``."""
        if not segs or depth > 8:
            return []
        s0, rest = segs[0], segs[1:]
        if s0 == "Self" and caller is not None and caller.container:
            base = caller.qualname.rsplit("::", 2)[0] if caller.qualname.count("::") >= 2 else ""
            return ["::".join(x for x in (base, caller.container, *rest) if x)]
        if s0 == "crate":
            return ["::".join([module.split("::")[0], *rest])]
        if s0 == "self":
            return ["::".join([module, *rest])]
        if s0 == "super":
            parent = module.rsplit("::", 1)[0] if "::" in module else module
            return (
                self.expand(["self", *rest], parent, caller, depth + 1)
                if rest[:1] != ["super"]
                else self.expand(rest, parent, caller, depth + 1)
            )
        if s0.startswith("::"):
            return ["::".join([s0[2:], *rest])]
        out: list[str] = []
        for scope in self._scopes(module, caller):
            for imp in self.t.uses.get(scope, {}).get(s0, []):
                target = imp.path.split("::")
                if target[0] not in self.t.crates and target[0] != s0 and depth < 8:
                    # `use kernels::norm;` where `kernels` is itself an alias in this module
                    out += [f"{p}::{'::'.join(rest)}" if rest else p
                            for p in self.expand(target, module, None, depth + 1)]
                else:
                    out.append("::".join([imp.path, *rest]))
        if out:
            return out
        local = f"{module}::{s0}"
        if local in self.t.by_qual or local in self.t.modules or self._type_at(local):
            return ["::".join([local, *rest])]
        for g in self.t.globs.get(module, []):
            cand = f"{g.path.rstrip(':*').removesuffix('::')}::{s0}"
            if cand in self.t.by_qual or cand in self.t.modules or self._type_at(cand) or self._reexported(cand):
                out.append("::".join([cand, *rest]))
        if out:
            return out
        if s0 in self.t.crates:
            return ["::".join(segs)]
        return ["::".join([module, *segs]), "::".join(segs)]

    def _scopes(self, module: str, caller: Definition | None) -> list[str]:
        scopes = [module]
        if caller is not None:
            scopes.insert(0, caller.qualname)
        return scopes

    def _type_at(self, qual: str) -> bool:
        return any(d.qualname == qual for d in self.t.types.get(qual.rsplit("::", 1)[-1], ()))

    def _reexported(self, qual: str) -> bool:
        mod, _, name = qual.rpartition("::")
        return bool(self.t.uses.get(mod, {}).get(name))

    def lookup(self, path: str, depth: int = 0) -> tuple[list[str], str]:
        """Definitions at absolute ``path``, following re-exports and impl methods."""
        if depth > 8:
            return [], ""
        hit = self.t.by_qual.get(path)
        if hit:
            return list(hit), "path"
        mod, _, name = path.rpartition("::")
        if not mod:
            return [], ""
        for imp in self.t.uses.get(mod, {}).get(name, []):
            ids, how = self.lookup(imp.path, depth + 1)
            if ids:
                return ids, "re-export " + (how or "")
        for g in self.t.globs.get(mod, []):  # `pub use cuda::*;` re-exports
            base = g.path.removesuffix("*").removesuffix("::")
            if base and base != mod:
                ids, how = self.lookup(f"{base}::{name}", depth + 1)
                if ids:
                    return ids, "glob re-export " + (how or "")
        segs = path.split("::")
        for k in range(len(segs) - 1, 1, -1):  # a re-exported module on the way: `a::kernels::norm::f`
            pmod, pname = "::".join(segs[: k - 1]), segs[k - 1]
            for imp in self.t.uses.get(pmod, {}).get(pname, []):
                if imp.path != "::".join(segs[:k]):
                    ids, how = self.lookup("::".join([imp.path, *segs[k:]]), depth + 1)
                    if ids:
                        return ids, "re-export " + (how or "")
        # Type::method where the impl lives in another module, or the type is re-exported
        tname = self.type_name(mod, depth + 1)
        if tname:
            impl_ids = self.t.methods.get((tname, name)) or self.t.trait_methods.get((tname, name))
            if impl_ids:
                return list(impl_ids), "impl method"
        return [], ""

    def type_name(self, path: str, depth: int = 0) -> str:
        """Short name of the type at absolute ``path`` (following re-exports), or ''."""
        if depth > 8:
            return ""
        short = path.rsplit("::", 1)[-1]
        if self._type_at(path):
            return short
        mod, _, name = path.rpartition("::")
        for imp in self.t.uses.get(mod, {}).get(name, []):
            found = self.type_name(imp.path, depth + 1)
            if found:
                return found
        if short[:1].isupper() and (self.t.types.get(short) or short in self.t.containers):
            return short
        return ""

    # -- calls -------------------------------------------------------------------------

    def resolve(self, call: CallSite, caller: Definition | None) -> Resolved:
        if call.kind == "method":
            return self._method(call, caller)
        return self._path(call, caller)

    def _path(self, call: CallSite, caller: Definition | None) -> Resolved:
        segs = [s for s in call.path if s] or [call.callee]
        module = self._module_of(caller, call)
        s0 = segs[0]
        if s0.startswith("<") and len(segs) >= 2:  # <T as Trait>::m
            inner = s0.strip("<>")
            ty, _, trait = inner.partition(" as ")
            tshort = short_type(ty)
            cands = self.t.methods.get((tshort, segs[-1]), [])
            ids = [i for i in cands if short_type(self.t.defs[i].trait) == short_type(trait)] if trait else list(cands)
            return Resolved.of(ids, f"qualified path <{inner}>::{segs[-1]}")
        if caller is not None and s0 in caller.generic_bounds and len(segs) == 2:
            return self._generic(s0, segs[1], caller.generic_bounds[s0])
        if s0 in PRELUDE or (len(segs) == 1 and s0[:1].isupper() and s0 not in self.t.types):
            return Resolved(drop=True, how="std/prelude")
        for absolute in self.expand(segs, module, caller):
            ids, how = self.lookup(absolute)
            if ids:
                exact = how in ("path", "impl method") or how.startswith(("re-export", "glob re-export"))
                status = EXACT if exact else HEURISTIC
                return Resolved.of(ids, f"{how} {absolute}".strip(), status)
        ext = "::".join(segs)
        if segs[0] in ("std", "core", "alloc"):
            return Resolved(drop=True, how="std")
        if len(segs) >= 2 and segs[-1][:1].isupper():
            return Resolved(drop=True, how="enum variant or tuple-struct constructor")
        if len(segs) >= 2 and segs[-2][:1].isupper() and segs[-2] not in self.t.types:
            return Resolved(status="unresolved", how="type not defined in the checkout", external=ext,
                            external_kind="external")
        return Resolved(status="unresolved", how="no definition in the checkout", external=ext,
                        external_kind="external")

    def _generic(self, param: str, method: str, bounds: list[str]) -> Resolved:
        ids: list[str] = []
        for b in bounds:
            trait = short_type(b)
            for ty in sorted(self.t.trait_impls.get(trait, ())):
                ids += [i for i in self.t.methods.get((ty, method), []) if short_type(self.t.defs[i].trait) == trait]
        status = HEURISTIC
        res = Resolved.of(ids, f"generic {param}: {' + '.join(bounds)} → impls of the trait", status)
        if res.status == "unresolved":
            decl = [i for b in bounds for i in self.t.trait_methods.get((short_type(b), method), [])]
            if decl:
                return Resolved(decl, HEURISTIC, f"generic {param}: trait method without impl in the checkout")
        return res

    def receiver_type(self, recv: str, caller: Definition | None, call: CallSite, depth: int = 0) -> str:
        """Short type name of a method receiver expression, or '' when unknown (memoised per line)."""
        key = (id(caller), recv, call.line, depth)
        hit = self._recv_cache.get(key)
        if hit is not None:
            return hit
        ty = self._receiver_type(recv, caller, call, depth)
        self._recv_cache[key] = ty if ty != "Self" or caller is None else caller.container
        if ty == "Self" and caller is not None:
            return caller.container
        return ty

    def _receiver_type(self, recv: str, caller: Definition | None, call: CallSite, depth: int = 0) -> str:
        r = recv.strip()
        for p in ("&mut ", "&", "*"):
            r = r.removeprefix(p)
        r = _PEEL_RE.sub("", r).rstrip("?")
        indexed = False
        if r.endswith("]") and "[" in r:
            r = r[: r.index("[")]
            indexed = True
        if caller is None:
            return ""
        if r == "self":
            return caller.container
        if r.startswith("self.") and r.count(".") == 1:
            return self._field_type(caller.container, r[5:], indexed)
        if _WORD_RE.fullmatch(r):
            for prm in caller.params:
                if prm.name == r:
                    return self._elem(prm.type, indexed)
            if r in caller.locals:
                return self._elem(caller.locals[r], indexed)
            value, line = self._assigned(caller, r, call.line)
            if value and depth < 3:
                # the value is evaluated before its own `let` (shadowing: `let xs = xs.f()`)
                at = CallSite(call.kind, call.callee, call.path, call.caller, call.file, line - 1 if
                              line < call.line else line, call.col, contexts=call.contexts)
                return self._expr_type(value, caller, at, depth + 1)
            for ctx in call.contexts:
                if ctx.kind == "loop":
                    m = _LOOP_RE.match(ctx.text)
                    if m and m.group(1) == r:
                        coll = m.group(2).strip().removeprefix("&mut ").removeprefix("&").strip()
                        coll = _ITER_RE.sub("", coll)
                        if coll.startswith("self.") and coll.count(".") == 1:
                            return self._field_type(caller.container, coll[5:], True)
                        for prm in caller.params:
                            if prm.name == coll:
                                return self._elem(prm.type, True)
                elif ctx.kind in ("match_arm", "if"):
                    ty = self._variant_binding(ctx.text, r)
                    if ty:
                        return ty
            return ""
        if depth < 3:
            return self._chain_type(r, caller, call, depth + 1, indexed)
        return ""

    def _chain_type(self, expr: str, caller: Definition, call: CallSite, depth: int, indexed: bool) -> str:
        """Type of ``a.b[i].c(x).d`` by folding field types and method return types left to right."""
        parts = _split_chain(" ".join(expr.split()))
        if not parts:
            return ""
        first = parts[0]
        if first.endswith(")"):  # Type::new(..) / f(..)
            ty = self._expr_type(first, caller, call, depth)
        else:
            base, idx = _strip_index(first)
            ty = self._receiver_type(base, caller, call, depth)
            if ty and idx:
                ty = ""  # indexing a non-field value: element type unknown
        for part in parts[1:]:
            if not ty:
                return ""
            if ty.endswith("…") or (ty not in self.t.types and ty not in self.t.containers):
                # a chain through a type defined outside the checkout stays outside it
                return ty if ty.endswith("…") else ty + "…"
            name, idx = _strip_index(part)
            if name.endswith(")"):
                mname = name[: name.index("(")].split("::<")[0]
                ids = self.t.methods.get((ty, mname), [])
                types = {self._return_type(self.t.defs[i]) for i in ids} - {""}
                ty = types.pop() if len(types) == 1 else ""
            else:
                ty = self._field_type(ty, name, idx)
        return ty if not indexed else ""

    def _variant_binding(self, pattern: str, var: str) -> str:
        """Type of ``var`` bound by ``Enum::Variant(a, var)`` in a match arm or ``if let``."""
        for m in _VARIANT_PAT_RE.finditer(pattern):
            enum, variant = m.group(1).split("::")[-1], m.group(2)
            names = [re.sub(r"^(ref\s+)?(mut\s+)?&?", "", x.strip()) for x in m.group(3).split(",")]
            if var not in names:
                continue
            for d in self.t.types.get(enum, ()):
                types = d.attrs.get("variant_types", {}).get(variant)
                if types and names.index(var) < len(types):
                    return self._elem(types[names.index(var)], False)
        return ""

    @staticmethod
    def _assigned(caller: Definition, var: str, line: int) -> tuple[str, int]:
        """The value text and line of the last `let var = …` at or before ``line``."""
        best = ("", 0)
        for a in caller.attrs.get("assigns", ()):
            if a.get("var") == var and a.get("line", 0) <= line:
                best = (a.get("value", ""), a.get("line", 0))
        return best

    def _expr_type(self, expr: str, caller: Definition, call: CallSite, depth: int) -> str:
        """Type of a simple call expression through the callee's declared return type."""
        e = _TAIL_PEEL_RE.sub("", expr.strip()).rstrip("?").strip()
        if depth > 3 or not e.endswith(")"):
            return ""
        head = _call_head(e)
        if head is None:
            return ""
        recv, name = head
        ids: list[str] = []
        if recv is None:  # a path call: Type::new(..), module::f(..), f(..)
            segs = name.split("::")
            if len(segs) >= 2 and segs[-2][:1].isupper() and segs[-1] in ("new", "from", "default") \
                    and segs[-2] != "Self":
                return segs[-2]
            module = self._module_of(caller, call)
            for absolute in self.expand(segs, module, caller):
                ids, _ = self.lookup(absolute)
                if ids:
                    break
        else:
            fake = CallSite("method", name, [name], call.caller, call.file, call.line, call.col, receiver=recv,
                            contexts=call.contexts)
            ty = self.receiver_type(recv, caller, fake, depth)
            ids = list(self.t.methods.get((ty, name), [])) if ty else []
        types = {self._return_type(self.t.defs[i]) for i in ids}
        types.discard("")
        return types.pop() if len(types) == 1 else ""

    def _return_type(self, d: Definition) -> str:
        rt = d.return_type.strip()
        m = _RESULT_RE.match(rt)
        if m:
            rt = _first_generic(m.group(1))
        t = self._elem(rt, False)
        return d.container if t == "Self" else t

    def _field_type(self, container: str, fieldname: str, indexed: bool) -> str:
        for d in self.t.types.get(container, ()):
            if fieldname in d.fields:
                return self._elem(d.fields[fieldname], indexed)
        return ""

    def _elem(self, ty: str, indexed: bool) -> str:
        t = ty.strip()
        for _ in range(4):
            t = t.removeprefix("&").removeprefix("mut ").strip()
            t = _LIFETIME_RE.sub("", t)
            m = _WRAPPER_RE.match(t)
            if m:
                t = m.group(2)
                continue
            break
        if indexed:
            m = _VEC_RE.match(t) or _ARRAY_RE.match(t)
            if m:
                inner = m.group(2) if m.re.pattern.startswith("^(?:") else m.group(1)
                return self._elem(inner.split(",")[0] if inner.count("<") == 0 else inner, False)
        return short_type(t)

    def _method(self, call: CallSite, caller: Definition | None) -> Resolved:
        name = call.callee.split("::")[-1]
        ty = self.receiver_type(call.receiver, caller, call)
        if ty:
            if caller is not None and ty in caller.generic_bounds:
                return self._generic(ty, name, caller.generic_bounds[ty])
            if any(d.attrs.get("kind") == "trait" for d in self.t.types.get(ty, ())):
                return self._generic(ty, name, [ty])  # `&dyn Trait` / `impl Trait`: its impls
            ids = self.t.methods.get((ty, name), [])
            if not ids:
                for trait, types in self.t.trait_impls.items():
                    if ty in types:
                        ids = ids + self.t.trait_methods.get((trait, name), [])
            if len(ids) > 1 and caller is not None:
                # impls of a trait only in scope where the trait is: prefer the caller's module's
                module = self._module_of(caller, call)
                scoped = [i for i in ids if self.t.defs[i].trait
                          and self.t.defs[i].qualname.rsplit("::", 2)[0] == module
                          and any(d.qualname == f"{module}::{short_type(self.t.defs[i].trait)}"
                                  for d in self.t.types.get(short_type(self.t.defs[i].trait), ()))]
                if scoped:
                    return Resolved.of(scoped, f"method of {ty} via the trait in scope in {module}")
            if ids:
                return Resolved.of(list(ids), f"method of {ty} (receiver `{call.receiver}`)")
            # The receiver's type is known: never fall back to a same-named method elsewhere.
            if ty in self.t.types or name in STD_METHODS:
                return Resolved(drop=True, how=f"{ty} has no method {name} in the checkout")
            return Resolved(
                status="unresolved", how=f"receiver type {ty} is not defined in the checkout",
                external=f"{ty}::{name}", external_kind="external",
            )
        if name in STD_METHODS:
            return Resolved(drop=True, how="std method")
        ids = list(self.t.methods_by_name.get(name, ()))
        if not ids:
            return Resolved(drop=True, how="no method of that name in the checkout")
        res = Resolved.of(ids, f"by method name only (receiver `{call.receiver}` type unknown)", HEURISTIC)
        return res


__all__ = ["RustResolver", "AMBIGUOUS", "EXACT", "HEURISTIC"]
