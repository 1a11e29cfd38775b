"""Rust name resolution: module paths, `use` aliases, re-exports, typed receivers, trait impls.

Rules (each answer says which one fired, in ``Resolved.how``):

* a path is expanded from the caller's module: ``Self``/``crate``/``self``/``super``,
  `use` aliases (incl. ``pub use`` re-exports, followed transitively), items of the
  module, glob imports, the caller's dependencies by the names its Cargo.toml gives them
  (``candle = { package = "candle-core" }``), crate names;
* types are resolved to their definition through the module where the type text is
  written (``rust_types``): ``self`` is the enclosing impl's type, a field's type is read
  in the struct's module, a parameter's in the function's, a return type in the callee's;
* ``Type::method`` / ``recv.method()`` with a known type: the methods of impls of that
  type (inherent and trait impls, trait default methods) — ``exact``;
* ``B::op`` / ``b.op()`` with ``B: Trait``, and ``dyn Trait`` / ``impl Trait`` receivers:
  the impls of the trait in the caller's dependency closure — one is ``exact``
  ("only impl"), several are ``ambiguous`` (all kept);
* a receiver whose type comes from outside the checkout (std, a crates.io dependency)
  is ``unresolved`` (external) unless a local trait impl for that type has the method —
  never linked to a same-named local method; such an impl's method is ``heuristic`` (the type's
  own method of that name, not in the index, would win), and never the impl method itself when
  it passes its own arguments to its name (``fn to_f32(self) { self.to_f32() }``);
* a receiver of unknown type falls back to the method name, within the caller's
  dependency closure: always ``ambiguous`` (even with one candidate) and marked
  ``name_only`` (the trace leaves it unexpanded until chosen); names of common std
  methods (``unwrap``, ``iter``) are dropped;
* a method call's candidates by name (and local trait impls for an external type) must take
  ``self`` and as many more parameters as the call passes arguments (:func:`takes`); a path
  naming several functions prefers the type's inherent ones, then the call's arity, then the
  ``From<A>`` impl of the argument's known type (:meth:`RustResolver._path_choice`).

Every candidate must lie in the caller's dependency closure (``apxtui.packages``);
code under ``#[cfg(test)]`` is a candidate only for test code.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

from apxtui.facts import CallSite, Context, Definition, FileFacts, Import
from apxtui.index import rust_indexes
from apxtui.index.resolve import AMBIGUOUS, EXACT, HEURISTIC, UNRESOLVED, Resolved
from apxtui.index.rust_types import (
    CONTAINERS,
    MAPS,
    PRIMITIVES,
    STD_TYPES,
    WRAPPERS,
    Scope,
    dyn_bounds,
    element,
    generic_args,
    is_test_only,
    members,
    peel,
    peel_refs,
    short,
    split_top,
    strip_marks,
    union,
)
from apxtui.index.tables import Tables, macro_candidates
from apxtui.packages import STD_CRATES, Packages
from apxtui.vocab import node_file

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
    # iterator / Option / slice methods of std that projects also name their own methods after
    "next", "transpose", "concat", "flatten", "values_mut", "into_keys", "into_values", "sort_unstable",
    "sort_by_key", "retain", "drain", "split_off", "append", "peekable", "count", "nth", "as_deref", "as_deref_mut",
    "map_or", "map_or_else", "unwrap_err", "inspect", "zip_with", "min_by",
    "max_by", "min_by_key", "max_by_key", "partition", "unzip", "scan", "take_while", "skip_while",
    "is_some_and", "get_or_insert_with", "replace_range", "to_lowercase", "to_uppercase", "lines",
    "chars", "bytes", "split_whitespace", "trim_end", "trim_start", "strip_prefix", "strip_suffix",
}
_TURBOFISH_RE = re.compile(r"::<.*>$")
_METHOD_CALLEE_RE = re.compile(r"^(.*)\.(\w+)$")
_PATH_RE = re.compile(r"[\w:]+")
_WORD_RE = re.compile(r"\w+")
_PEEL_RE = re.compile(r"\.(unwrap|expect|as_ref|as_mut|borrow|borrow_mut|lock|clone|as_deref|as_deref_mut)"
                      r"\([^()]*\)")
_ITER_RE = re.compile(r"\.(iter|iter_mut|into_iter|values|values_mut|into_values|enumerate|rev|skip\(\w*\)|"
                      r"take\(\w*\))\(?\)?$")
#: Methods that hand back their receiver's content type (`Result`/`Option` plumbing, clones, guards).
_SAME_TYPE = {"unwrap", "expect", "clone", "to_owned", "map_err", "context", "with_context", "ok_or", "ok_or_else",
              "ok", "unwrap_or_default", "unwrap_or", "unwrap_or_else", "as_ref", "as_mut", "borrow", "borrow_mut",
              "lock", "as_deref", "as_deref_mut", "inspect_err", "expect_err"}
_SAME_TYPE_RE = re.compile(r"\.\s*(?:" + "|".join(sorted(_SAME_TYPE)) + r")\s*\(")
_VARIANT_TUPLE_RE = re.compile(r"((?:[\w]+::)*\w+)::(\w+)\s*\(([^()]*)\)")
_BRACE_PAT_RE = re.compile(r"((?:\w+::)*\w+)\s*\{")
_OPTION_PAT_RE = re.compile(r"^(?:let\s+)?(Some|Ok)\s*\(\s*(?:ref\s+)?(?:mut\s+)?(\w+)\s*\)\s*(?:=\s*(.+))?$")
_LOOP_RE = re.compile(r"^for\s+(?:\(?\s*(?:\w+\s*,\s*)?)?(?:mut\s+)?(\w+)\)?\s+in\s+(.+)$")
_CLOSURE_RE = re.compile(r"^(?:move\s+)?\|[^|]*\|\s*(?:->\s*[^{]+)?(.*)$", re.S)
_FN_BOUND_RE = re.compile(r"^(?:impl\s+|dyn\s+)?Fn(?:Once|Mut)?\s*\(.*\)\s*->\s*(.+)$")
_FIELDS_RE = re.compile(r"\w+(\s*\.\s*\w+|\[[^\[\]]*\])*")
_DOT_WS_RE = re.compile(r"\s*\.\s*")
_PARENS_RE = re.compile(r"[()]")
_CHAIN_TOKENS = re.compile(r"[.()\[\]{}<>]")
#: Methods whose closure argument receives the receiver's element (or an `Option`'s content).
#: (Not `fold`: its closure's first parameter is the accumulator.)
_ELEMENTWISE = {"map", "filter", "for_each", "any", "all", "find", "position", "is_some_and", "is_none_or", "is_ok_and",
                "map_or", "map_or_else", "and_then", "filter_map", "flat_map", "take_while", "skip_while",
                "inspect", "max_by_key", "min_by_key", "sort_by_key", "retain", "try_for_each"}
#: Of those, the methods only `Option`/`Result` (and futures) have: the closure receives their content,
#: the receiver's (peeled) type itself, never an element of it (`Option<Vec<T>>::and_then(|v| ..)`: `v` is the Vec).
_CONTENT_CLOSURE = {"and_then", "is_some_and", "is_ok_and", "is_none_or", "map_or", "map_or_else"}
#: … and those both `Option`/`Result` and iterators have: the receiver's syntax must tell which
#: (`o.map(|v| ..)` on an `Option<Vec<T>>`: the Vec; `xs.iter().map(|x| ..)`: an element).
_CONTENT_OR_ITEM = {"map", "filter", "inspect"}
#: Calls that hand out an iterator whatever their receiver (`Option` has none of them) …
_ITER_MAKERS = {"iter", "iter_mut", "into_iter", "values", "values_mut", "into_values", "keys", "drain", "chunks",
                "windows", "chunks_exact", "rev", "skip", "step_by", "enumerate", "flat_map", "filter_map", "chain",
                "take_while", "skip_while", "peekable", "lines", "chars", "bytes", "split_whitespace", "cycle"}
#: … and those that do when their receiver is one (`Option` has them too).
_ITER_KEEPERS = {"map", "filter", "inspect", "copied", "cloned", "take", "flatten", "zip", "by_ref"}
_CLOSURE_PARAMS_RE = re.compile(r"^(?:move\s+)?\|([^|]*)\|")
#: Methods handing back their receiver's elements (an iterator over the same element).
_SAME_ELEMS = {"iter", "iter_mut", "into_iter", "values", "values_mut", "into_values", "drain", "rev", "skip",
               "take", "filter", "copied", "cloned", "chunks", "windows", "peekable", "step_by", "by_ref"}
_ELEM_METHODS = {"first", "last", "get", "get_mut", "first_mut", "last_mut", "pop", "remove", "swap_remove", "next",
                 "next_back", "nth", "find", "min", "max", "min_by_key", "max_by_key", "pop_front", "pop_back",
                 "front", "back"}


def _split_chain(expr: str) -> list[str]:
    """``a.b(x.y).c[i]`` → ``["a", "b(x.y)", "c[i]"]`` (dots inside brackets kept)."""
    if len(expr) > 1000:
        return []  # (the extractor writes a long builder chain link by link, arguments elided, in fewer)
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


def _is_iterator(expr: str) -> bool:
    """Is ``expr`` an iterator by its syntax alone (``xs.iter()``, ``xs.iter().map(f)``; not ``opt.map(f)``)?"""
    e = expr.strip()
    for _ in range(16):
        head = _call_head(e) if e.endswith(")") else None
        if head is None or head[0] is None:
            return False
        if head[1] in _ITER_MAKERS:
            return True
        if head[1] not in _ITER_KEEPERS:
            return False
        e = head[0].strip()
    return False


def _call_head(expr: str) -> tuple[str | None, str, str] | None:
    """``recv.m(args)`` → (recv, m, args); ``a::b(args)`` → (None, "a::b", args); the outermost call only."""
    depth = 0
    for p in reversed(list(_PARENS_RE.finditer(expr))):  # find the "(" matching the final ")"
        if p.group() == ")":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                i = p.start()
                callee, args = expr[:i], expr[i + 1 : -1]
                break
    else:
        return None
    callee = _TURBOFISH_RE.sub("", callee.strip())
    m = _METHOD_CALLEE_RE.match(callee)
    if m:
        return m.group(1), m.group(2), args
    if _PATH_RE.fullmatch(callee):
        return None, callee, args
    return None


def _peel_tail(expr: str) -> str:
    """Strip ``?``, ``.await`` and content-preserving calls (``.map_err(..)``, ``.unwrap()``) off a value."""
    e = expr.strip()
    for _ in range(8):
        if e.endswith("?"):
            e = e[:-1].rstrip()
        elif e.endswith(".await"):
            e = e[: -len(".await")].rstrip()
        elif e.endswith(")"):
            if not _SAME_TYPE_RE.search(e):
                break
            head = _call_head(e)
            if head is None or head[0] is None or head[1] not in _SAME_TYPE:
                break
            e = head[0].strip()
        else:
            break
    return e


#: std types generic over their content: what their associated functions return may be a checkout type.
_STD_GENERIC = WRAPPERS | CONTAINERS | {"Vec", "Option", "Result", "Box", "PhantomData", "Cow"}
#: Of their associated functions, those handing out (a reference to) their one argument's content.
_CONTENT_FNS = frozenset({"get_mut", "make_mut", "clone", "as_ref", "as_mut", "into_inner", "unwrap_or_clone"})
#: Arithmetic operators → (the `std::ops` trait, its method).
_OPERATORS = {"+": ("Add", "add"), "-": ("Sub", "sub"), "*": ("Mul", "mul"), "/": ("Div", "div"), "%": ("Rem", "rem")}
OPERATOR_TRAITS = frozenset(t for t, _ in _OPERATORS.values())  # their impls' lines are cited (interface.py)
_PREFIX_WORDS = frozenset({"mut", "as", "const", "dyn", "impl", "move", "ref", "return", "in", "unsafe"})
_NOT_ARITH = ("==", "!=", "<=", ">=", "&&", "||", "..", "=>", "+=", "-=", "*=", "/=", " < ", " > ")


@lru_cache(maxsize=1 << 16)
def _binary_split(expr: str) -> tuple[str, str, str] | None:
    """``a * b - c`` → (``a * b``, ``-``, ``c``): the outermost arithmetic operator of an expression
    (the last ``+``/``-`` at the top level, else the last ``*``/``/``/``%``; unary ``-``, ``*`` and ``&``
    — after another operator or a keyword such as ``mut`` — are not operators); None when it has none,
    or holds a comparison, logic, range, assignment, literal or comment at the top level."""
    if len(expr) > 400 or not any(c in expr for c in "+-*/%") or "//" in expr or "/*" in expr:
        return None
    depth, operand, additive, multiplicative = 0, False, -1, -1
    i, n = 0, len(expr)
    while i < n:
        ch = expr[i]
        if ch in "([{" or ch == "<" and expr[i - 2 : i] == "::":
            depth += 1
            operand = True
        elif ch in ")]}" or ch == ">" and depth and expr[i - 1] != "-":
            depth -= 1
        elif depth == 0:
            if ch in "\"'" or ch in "=!<>|" or expr.startswith(_NOT_ARITH, i):
                return None
            if ch.isalnum() or ch == "_":
                j = i
                while j < n and (expr[j].isalnum() or expr[j] == "_"):
                    j += 1
                operand = expr[i:j] not in _PREFIX_WORDS  # `&mut *x`, `x as *const T`
                i = j
                continue
            if ch in _OPERATORS and operand and not expr.startswith("->", i):
                if ch in "+-":
                    additive = i
                else:
                    multiplicative = i
                operand = False
            elif ch in _OPERATORS or ch == "&":
                operand = False  # a unary operator: an operand follows
        i += 1
    k = additive if additive >= 0 else multiplicative
    if k < 0:
        return None
    return expr[:k].strip(), expr[k], expr[k + 1 :].strip()


def _wrapped(expr: str) -> bool:
    """Is ``expr`` one parenthesised expression, ``( … )`` (not ``(a)(b)``)?"""
    if not (expr.startswith("(") and expr.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(expr):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i == len(expr) - 1
    return False


#: Constructors whose value a receiver reaches as its content (`Ok(x)?`).  Not `Arc::new(x)`: a local
#: `impl Tr for Arc<T>` is found before `T`'s methods.
_CONTENT_CTORS = frozenset({"Ok", "Some"})
_CLOSURE_HEAD_RE = re.compile(r"^(?:move\s+)?\|[^|]*\|\s*(?:->\s*([^{]+?)\s*(?=\{))?")
_DIVERGES_RE = re.compile(r"^(?:(?:\w+::)*(?:panic|unreachable|todo|unimplemented|bail)!|return\b|continue\b|break\b)")
_STRUCT_LIT_RE = re.compile(r"^((?:\w+::)*[A-Z]\w*)\s*\{")
_MACRO_VALUE_RE = re.compile(r"^(\w+)!\s*\((.*)\)$", re.S)
_GUARD_METHODS = r"(?:try_lock|lock|read|write|try_read|try_write|borrow|borrow_mut|try_borrow|try_borrow_mut)"


def _is_lock_guard(text: str) -> bool:
    """Is a ``macro_rules!`` text one rule of one ``$x:expr`` whose value is a lock guard of ``$x``: a
    loop that breaks with ``g`` of ``if let Ok(g) = $x.try_lock()``, or ``$x.lock()`` (``.unwrap()``)?"""
    from apxtui.index.rust_macros import rules  # lazy: parses with tree-sitter

    got = rules(text)
    if len(got) != 1 or got[0][0] is None or len(got[0][0]) != 1:
        return False
    x, body = re.escape(got[0][0][0]), " ".join(got[0][1].split())
    inner = body.strip().removeprefix("{").removesuffix("}").strip().rstrip(";").strip()
    if re.fullmatch(rf"\${x}\s*\.\s*{_GUARD_METHODS}\s*\(\s*\)(?:\s*\.\s*(?:unwrap\(\s*\)|expect\([^()]*\)))?",
                    inner):
        return True
    bound = re.search(rf"(?:Ok|Some)\s*\(\s*(\w+)\s*\)\s*=\s*\${x}\s*\.\s*{_GUARD_METHODS}\s*\(\s*\)", body)
    if bound is None or "return" in body:
        return False
    breaks = re.findall(r"\bbreak\s+([^;}]+)", body)
    return bool(breaks) and all(b.strip() == bound.group(1) for b in breaks) and inner.startswith("loop")


#: std modules whose functions return std types (`std::io::stdout()`), never their argument's type
#: (as `std::mem::take`, `std::cmp::max`, `std::convert::identity` do).
_STD_OPAQUE_MODULES = frozenset({"io", "fs", "env", "process", "thread", "time", "path", "net", "fmt"})
_FN_HEAD_RE = re.compile(r"^Fn(?:Once|Mut)?\s*\(")


def _fn_args(bound: str) -> list[str] | None:
    """``Fn(&A, B) -> R`` → [``&A``, ``B``]; None when ``bound`` is not an ``Fn``/``FnMut``/``FnOnce`` bound."""
    m = _FN_HEAD_RE.match(bound.strip())
    if m is None:
        return None
    t, depth = bound.strip(), 0
    for i in range(m.end() - 1, len(t)):
        depth += {"(": 1, ")": -1}.get(t[i], 0)
        if depth == 0:
            return split_top(t[m.end() : i])
    return None


_FOR_RE = re.compile(r"^for\s+(.+?)\s+in\s+(.+)$", re.S)
#: Iterator adaptors that yield their receiver's items.
_SAME_ITEMS = {"iter", "iter_mut", "into_iter", "rev", "skip", "take", "step_by", "cloned", "copied", "by_ref",
               "peekable", "filter", "skip_while", "take_while", "chain", "drain"}


def _pattern_path(pattern: str, var: str) -> list[int] | None:
    """Where ``var`` sits in a loop pattern of variables and tuples (``(i, (a, var))`` → [1, 1]); None when
    the pattern does not bind it that way."""
    p = pattern.strip()
    while p.startswith(("&", "mut ", "ref ")):
        p = p.removeprefix("&").removeprefix("mut ").removeprefix("ref ").strip()
    if p == var:
        return []
    if p.startswith("(") and p.endswith(")"):
        for i, sub in enumerate(split_top(p[1:-1])):
            got = _pattern_path(sub, var)
            if got is not None:
                return [i, *got]
    return None


_RANGE_INDEX_RE = re.compile(r"\[[^\[\]]*\.\.[^\[\]]*\]$")
#: A value iterated by an iterator method (the closure of `.map` on it receives its items, not the value).
_ITER_HEAD_RE = re.compile(r"\.\s*(?:iter|iter_mut|into_iter|values|values_mut|into_values|drain|chunks|windows|"
                           r"chunks_exact)\s*\(\s*\)")
_LET_COND_RE = re.compile(r"^let\s+(.+?)\s*=\s*(.+)$", re.S)


def _pattern_and_subject(pattern: str, subject: str) -> tuple[str, str]:
    """An arm's pattern and the value it matches: ``if let P = v`` conditions carry both in their text."""
    p = pattern.strip()
    if subject or not p.startswith("let "):
        return p, subject.strip()
    m = _LET_COND_RE.match(p)
    if m is None or "=" in m.group(1) or len(split_top(m.group(2), "=")) != 1:
        return p, ""
    return m.group(1).strip(), m.group(2).strip()


def _tuple_slot(pattern: str, subject: str, var: str) -> tuple[str, str] | None:
    """(sub-pattern, sub-value) of a tuple pattern matched against a tuple value of as many elements
    (``(A(x), B(y))`` against ``(a, b)``) whose sub-pattern binds ``var``; None when they are not such tuples."""
    p, v = pattern.strip().removeprefix("let ").strip(), subject.strip()
    if not (p.startswith("(") and p.endswith(")") and v.startswith("(") and v.endswith(")")):
        return None
    pats, vals = split_top(p[1:-1]), split_top(v[1:-1])
    if len(pats) < 2 or len(pats) != len(vals) or "|" in p:
        return None
    hits = [k for k, x in enumerate(pats) if re.search(rf"(?<![\w.]){re.escape(var)}\b", x)]
    return (pats[hits[0]], vals[hits[0]]) if len(hits) == 1 else None


def _clip(text: str, n: int = 48) -> str:
    """``text`` on one line, at most ``n`` characters (for ``how``)."""
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


def _block_tail(expr: str) -> str:
    """``{ a; b; tail }`` → ``tail`` (the value of a block expression)."""
    inner = expr[1:-1].strip()
    parts = split_top(inner, ";")
    return parts[-1] if parts and not inner.endswith(";") else ""


def _display(ref: str) -> str:
    """An external type reference as a readable name: ``X:[]<X:u8>`` → ``[u8]``, ``X:?`` → ``(external)``."""
    r = strip_marks(ref)[0][2:]
    if r.endswith("?"):
        return "(external)"
    if r.startswith("[]<"):
        return f"[{short(r[3:-1]) if len(r) > 4 else '?'}]"
    return r.split("<", 1)[0].rsplit("::", 1)[-1]


def _is_std(ref: str) -> bool:
    """Is an external type reference a std / primitive / builtin type (its methods are std's)?"""
    base = strip_marks(ref)[0][2:].split("<", 1)[0].rstrip("…")
    return base in ("closure", "builtin", "[]", "()") or base in PRIMITIVES or base in STD_TYPES \
        or base.split("::")[0] in STD_CRATES


def _opaque(ref: str) -> str:
    """A value handed out by an opaque external type: of that type's crate, type unknown."""
    path = strip_marks(ref)[0][2:]
    return f"X:{path.split('::')[0]}::?" if "::" in path else "X:?"


def _external_path(ref: str) -> bool:
    """Is ``ref`` a type an import or path places in another crate (not std, not a bare name no import
    explains, which may be a glob-imported variant of the checkout)?"""
    r = strip_marks(ref)[0]
    return r.startswith("X:") and "::" in r and "<" not in r and not _is_opaque(r) and not _is_std(r)


def _is_opaque(ref: str) -> bool:
    """Is ``ref`` an external value whose exact type is not known (``X:c::?``, ``X:T…``)?"""
    return strip_marks(ref)[0].endswith(("?", "…"))


def join_branches(tys: Iterable[str]) -> str:
    """The type of a value that is one of several branch values (``if``/``match`` arms, array elements): Rust
    gives them one type, so the types known must agree.  External values whose exact type is not known
    (``X:c::?``) agree with any external type: the one known exactly, else an unknown external type
    (``X:?``).  Unknown when a branch is untyped, a checkout type is one of several, or a mark differs."""
    got = set(tys)
    if len(got) == 1:
        return got.pop()
    if "" in got or not all(t.startswith("X:") for t in got):
        return ""
    exact = {t for t in got if not _is_opaque(t)}
    return exact.pop() if len(exact) == 1 else "X:?" if not exact else ""


_TURBOFISH_ARGS_RE = re.compile(r"::\s*<(.*)>\s*$", re.S)


def _local_turbofish(text: str) -> bool:
    """Does the outermost call of ``text`` (``f::<A>(..)``, ``x.m::<A>(..)``) name a type argument other than
    a primitive or ``_`` (a generic function of another crate may then return a checkout type)?"""
    head = _call_head(text) if text.endswith(")") else None
    if head is None:
        return False
    m = _TURBOFISH_ARGS_RE.search(text[: len(text) - len(head[2]) - 2])
    return m is not None and any(peel_refs(a) not in PRIMITIVES and a != "_" for a in split_top(m.group(1)))


def takes(d: Definition, call: CallSite) -> bool:
    """Can ``d`` be the method of the method call ``call`` (``recv.m(a, b)``) by its parameters: it takes ``self``
    and as many more parameters as the call passes arguments (Rust has no overloading, default or variadic
    arguments).  A parameter list or argument list the texts do not tell for sure (macro metavariables, C
    variadics, another language's definition) fits."""
    if d.lang != "rust" or any("$" in a for a in call.args) or any("$" in p.name or p.name == "..." for p in d.params):
        return True
    return bool(d.params) and d.params[0].name == "self" and len(d.params) - 1 == len(call.args)


#: Other crates' tuple structs whose one field is their type argument (``pub struct State<S>(pub S)``): a parameter
#: pattern ``State(state): State<S>`` binds ``state`` to ``S``.  By crate, as its path starts.
NEWTYPE_PAYLOADS = {"axum": frozenset({"State", "Json", "Extension", "Path", "Query", "Form"})}
_NEWTYPE_PATTERN_RE = re.compile(r"(\w+)\(\s*(?:mut\s+)?(\w+)\s*\)")

_INTEGERS = frozenset({"u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize"})
_INT_SUFFIX = r"[ui](?:8|16|32|64|128|size)"
_INT_ARG_RE = re.compile(rf"^(?:-?\d[\d_]*(?:{_INT_SUFFIX})?|[\w.]+(?:\(\))?\s+as\s+{_INT_SUFFIX})$")


_OPTION_ITER_RE = re.compile(r"&?(?:mut\s+)?((?:self\.)?\w+)\s*\.\s*(?:iter|iter_mut|into_iter)\s*\(\s*\)")


def _is_option_text(text: str) -> bool:
    """Type text ``text`` is an ``Option`` (behind references)."""
    return re.match(r"^(?:(?:std|core)\s*::\s*option\s*::\s*)?Option\s*<", peel_refs(text).strip()) is not None


def _arg_shape(arg: str) -> tuple[str, int]:
    """What an argument's text says its type is: ("tuple", n) a tuple expression of n elements, ("int", 0) an
    integer literal or a cast to an integer type, ("range", 0) a range, ("ref", 0) a reference; ("", 0) unknown."""
    a = arg.strip()
    if a.startswith("&") and not a.startswith("&&"):
        return "ref", 0
    if a.startswith("(") and a.endswith(")") and _closes_at_end(a):
        inner = a[1:-1].strip()
        parts = split_top(inner.removesuffix(","))
        if len(parts) == 1 and not inner.endswith(","):
            return _arg_shape(parts[0])  # `(x)`: parentheses
        return ("tuple", len(parts)) if parts and all(x.strip() for x in parts) else ("", 0)
    if _INT_ARG_RE.match(a):
        return "int", 0
    flat = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", "", a)
    if ".." in flat and not re.search(r"[(\[{]|\.\.\.", flat):
        return "range", 0
    return "", 0


def _closes_at_end(a: str) -> bool:
    """``a`` starts with ``(`` whose matching ``)`` is its last character (``(a, b)``, not ``(a).f(b)``)."""
    depth = 0
    for k, ch in enumerate(a):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0:
            return k == len(a) - 1
    return False


def _takes_path(d: Definition, call: CallSite) -> bool:
    """Can ``d`` be the function of the path call ``call`` (``T::f(a, b)``; a method's ``self`` is an argument
    there) by its parameter count; texts that do not tell for sure (macro metavariables) fit."""
    if d.lang != "rust" or any("$" in a for a in call.args) or any("$" in p.name or p.name == "..." for p in d.params):
        return True
    return len(d.params) == len(call.args)


def _nameable_from(d: Definition, module: str, fn_qual: str = "") -> bool:
    """Can code in ``module`` (in function ``fn_qual``) name the item ``d`` by its visibility: a private item only
    in its module (or function) and the modules inside it, a ``pub(crate)`` one only in its crate
    (``pub(super)``/``pub(in ..)``: assumed yes)."""
    vis = d.visibility
    home = d.qualname.rpartition("::")[0]
    if not vis:
        return any(x == home or x.startswith(home + "::") for x in (module, fn_qual) if x)
    if vis == "pub(crate)":
        return module.split("::")[0] == home.split("::")[0]
    return True


def _scope_module(d: Definition) -> str:
    """The module a definition's own text (signature, fields, body) is written in."""
    q = d.qualname
    if d.container and d.kind == "rust_fn":
        return q.rsplit("::", 2)[0] if q.count("::") >= 2 else ""
    if d.attrs.get("nested_in"):
        return ""  # filled by the caller from the file's module
    return q.rpartition("::")[0]


#: The resolver's indexes over all files' definitions: computed once per tables object and
#: packages (a build links file by file, each with its own resolver), shared read-only.
_SHARED_INDEXES = ("types_by_qual", "type_defs", "_same_qual", "test_only", "impl_methods", "trait_impl_methods",
                   "trait_impls", "type_traits", "trait_decls", "empty_impls")
#: The ones stored with an index generation (the others derive from them), see :meth:`RustResolver.replace_files`.
STORED_INDEXES = ("types_by_qual", "test_only", "impl_methods", "trait_impl_methods", "trait_decls", "empty_impls")


def _brace_fields(pattern: str, var: str) -> list[tuple[str, str]]:
    """(path, field) of each ``Path { .., field: var, .. }`` / ``Path { var, .. }`` in a pattern,
    nested ones included (``A { inner: B { var, .. }, .. }`` → ``("B", "var")``)."""
    out = []
    for m in _BRACE_PAT_RE.finditer(pattern):
        depth, i = 0, m.end() - 1
        for j in range(i, len(pattern)):
            depth += {"{": 1, "}": -1}.get(pattern[j], 0)
            if depth == 0:
                break
        else:
            continue
        for part in split_top(pattern[i + 1 : j]):
            fname, _, bound = part.partition(":")
            fname = re.sub(r"^(ref\s+)?(mut\s+)?", "", fname.strip())
            bound = re.sub(r"^(ref\s+)?(mut\s+)?&?", "", bound.strip()) if bound else fname
            if bound == var:
                out.append((m.group(1), fname))
    return out


def _let_entry(a: dict[str, Any], slot: int) -> tuple[Any, ...]:
    """A `let` fact as (line, column, statement end, block end, value, slot, branch positions,
    destructuring pattern, written type); the positions are ``None`` in facts without them."""
    value, tails = a.get("value", ""), a.get("tail_at", [])
    if a.get("tails"):  # `let x = if c { a } else { b }`: typed by its branches' values
        value = "\0".join(a["tails"])
    last, end = a.get("last"), a.get("end")
    return (a.get("line", 0), a.get("col", 0), tuple(last) if last else None, tuple(end) if end else None, value,
            slot, tails, a.get("pattern", ""), a.get("type", ""), a.get("tail_arms", ()))


def pack_indexes(indexes: dict[str, Any]) -> bytes:
    """:data:`STORED_INDEXES` as stored with a generation (``rust_indexes.py``)."""
    return rust_indexes.pack(indexes)


def unpack_indexes(blob: bytes) -> dict[str, Any]:
    """The stored indexes; the type index unpickled per qualname on first look-up."""
    return rust_indexes.unpack(blob)


class RustResolver:
    def __init__(self, t: Tables, packages: Packages | None = None, files: Mapping[str, FileFacts] | None = None,
                 indexes: dict[str, Any] | None = None):
        """``files``: the linked files' full facts (the tables hold interfaces); ``indexes``: the
        :data:`STORED_INDEXES` of these tables, as a stored generation kept them (not recomputed)."""
        self.t = t
        self.pk = packages if packages is not None else Packages()
        self._pk_arg = packages
        self.files = files if files is not None else {}
        self._ty_memo: dict[tuple[Any, ...], str] = {}
        self._imp_memo: dict[int, tuple[str, ...]] = {}
        # Memos keyed by id() hold their key objects here: an id is unique only while its object lives, and
        # short-lived call sites and contexts (made while typing receivers) would otherwise hand their ids, and
        # their memo entries, to later objects — links then depended on the allocator (builds differed).
        self._pinned: dict[int, object] = {}
        self._recv_cache: dict[tuple[Any, ...], str] = {}
        self._recv_why: dict[tuple[Any, ...], str] = {}  # the binding rule that typed a receiver (for `how`)
        self._why = ""  # set by the rule that typed the receiver being evaluated
        self._guard_memo: dict[tuple[str, str], bool] = {}
        self._owners_open: set[int] = set()
        self._deref_memo: dict[str, str] = {}
        self._binding_memo: dict[tuple[Any, ...], tuple[str, str]] = {}  # loop / closure variable → (type, note)
        self._owner_memo: dict[tuple[Any, ...], CallSite | None] = {}  # a closure's context → the call it is passed to
        self._owner_res: dict[int, Resolved] = {}  # that call's resolution (its callee's `Fn` parameter types)
        self._scope_memo: dict[int, Scope] = {}
        self._assigns: dict[int, dict[str, list[tuple[Any, ...]]]] = {}
        self._by_name_memo: dict[tuple[Any, ...], list[str]] = {}
        self._let_memo: dict[tuple[Any, ...], str] = {}
        self._calls_by_caller: dict[tuple[str, str], list[CallSite]] = {}
        self._pattern_memo: dict[tuple[Any, ...], str] = {}
        # memos of the table look-ups below (pure functions of the tables, the packages and their arguments)
        self._expand_memo: dict[tuple[Any, ...], list[str]] = {}
        self._imports_memo: dict[tuple[str, str, str, bool], list[Import]] = {}
        self._lookup_memo: dict[tuple[str, int, str], tuple[list[str], str]] = {}
        self._type_at_memo: dict[tuple[str, int, str], str] = {}
        self._tuples: frozenset[str] | None = None
        self._ext_impls: dict[str, list[str]] | None = None
        self._scope_traits: dict[tuple[str, str, str], tuple[frozenset[str], tuple[str, ...]]] = {}
        shared = getattr(t, "_rust_indexes", None)
        if shared is not None and shared[0] is packages:
            for name, value in zip(_SHARED_INDEXES, shared[1], strict=True):
                setattr(self, name, value)
            return
        if indexes is not None:
            self._adopt(indexes)
        else:
            types_by_qual: dict[str, list[Definition]] = {}  # qualnames several types share: cfg alternatives,
            for defs in t.types.values():                     # same-named bin/test crates of two packages
                for d in defs:
                    types_by_qual.setdefault(d.qualname, []).append(d)
            self._set_types(types_by_qual)
            self.test_only = {i for i, d in t.defs.items() if d.cfg and is_test_only(d)}
            # impl index: (type ref, method) → ids; trait ref → implementing type refs
            self.impl_methods: dict[tuple[str, str], list[str]] = defaultdict(list)
            self.trait_impl_methods: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # (trait, type, m)
            self.trait_impls: dict[str, set[str]] = defaultdict(set)
            self.type_traits: dict[str, set[str]] = defaultdict(set)
            self.trait_decls: dict[tuple[str, str], list[str]] = defaultdict(list)
            self.empty_impls: dict[tuple[str, str], list[str]] = defaultdict(list)  # (trait, type) → files
            self._index_impls(t.defs.items())
            self._index_empty_impls(t.file_of.values())
        self.share()

    def share(self) -> None:
        """Let later resolvers of the same tables and packages use these indexes."""
        try:
            self.t._rust_indexes = (self._pk_arg,  # type: ignore[attr-defined]
                                    tuple(getattr(self, n) for n in _SHARED_INDEXES))
        except AttributeError:
            pass

    def _set_types(self, types_by_qual: Mapping[str, list[Definition]]) -> None:
        self.types_by_qual = types_by_qual
        if isinstance(types_by_qual, rust_indexes.LazyTypes):  # as stored: views unpickling on look-up
            self.type_defs: Mapping[str, Definition] = rust_indexes.FirstTypes(types_by_qual)
            self._same_qual: Mapping[str, list[Definition]] = rust_indexes.SharedQualnames(types_by_qual)
            return
        self.type_defs = {q: ds[0] for q, ds in types_by_qual.items()}
        self._same_qual = {q: ds for q, ds in types_by_qual.items() if len(ds) > 1}

    def _adopt(self, indexes: dict[str, Any]) -> None:
        self._set_types(indexes["types_by_qual"])
        self.test_only = indexes["test_only"]
        self.impl_methods = indexes["impl_methods"]
        self.trait_impl_methods = indexes["trait_impl_methods"]
        self.trait_decls = indexes["trait_decls"]
        self.empty_impls = indexes.get("empty_impls", defaultdict(list))
        self.trait_impls = defaultdict(set)
        self.type_traits = defaultdict(set)
        for (tr, ty, _m), ids in self.trait_impl_methods.items():
            if ids:  # exactly the pairs the impl index adds beside a trait impl's method
                self.trait_impls[tr].add(ty)
                self.type_traits[ty].add(tr)
        for (tr, ty), files in self.empty_impls.items():
            if files:
                self.trait_impls[tr].add(ty)
                self.type_traits[ty].add(tr)

    def stored_indexes(self) -> dict[str, Any]:
        """The :data:`STORED_INDEXES` (take them before resolving: look-ups may add empty entries)."""
        return {n: getattr(self, n) for n in STORED_INDEXES}

    def replace_files(self, ifaces: Mapping[str, FileFacts], rank: Mapping[str, int]) -> None:
        """Re-index the definitions of the files ``ifaces`` names (their new interfaces), keeping every
        other file's entries; the file order ``rank`` orders each entry's list as a full build would."""
        gone = set(ifaces)
        order = sorted(ifaces, key=lambda r: rank.get(r, 1 << 30))
        by_file = {rel: Tables() for rel in order}
        for rel in order:
            by_file[rel].add_file(ifaces[rel])
        touched: set[str] = set()
        if isinstance(self.types_by_qual, rust_indexes.LazyTypes):  # as stored: only these files' entries
            added = [d for rel in order for defs in by_file[rel].types.values() for d in defs]
            self._set_types(self.types_by_qual.replace_files(gone, added, rank))
        else:
            types = {q: [d for d in ds if d.file not in gone] for q, ds in self.types_by_qual.items()}
            for rel in order:
                for defs in by_file[rel].types.values():
                    for d in defs:
                        types.setdefault(d.qualname, []).append(d)
                        touched.add(d.qualname)
            for q in touched:
                types[q].sort(key=lambda d: rank.get(d.file, 1 << 30))
            self._set_types({q: ds for q, ds in types.items() if ds})
        self.test_only = {i for i in self.test_only if node_file(i) not in gone}
        self.test_only |= {i for rel in order for i, d in by_file[rel].defs.items() if d.cfg and is_test_only(d)}
        lists = ("impl_methods", "trait_impl_methods", "trait_decls")
        # node_file(i) is a gone file only when i's text from its last `@` starts with `@file`: tested first
        # (no splitting of every id of the indexes)
        marks = tuple(f"@{rel}" for rel in gone)
        one = marks[0] if len(marks) == 1 else None
        for name in lists:
            kept: dict[Any, list[str]] = defaultdict(list)
            for k, ids in getattr(self, name).items():
                # most entries name no gone file: one substring test of the joined ids rules them out
                joined = "\0".join(ids)
                if one in joined if one is not None else any(m in joined for m in marks):
                    left = [i for i in ids if not (i[i.rfind("@"):].startswith(marks) and node_file(i) in gone)]
                else:
                    left = ids.copy()
                if left:
                    kept[k] = left
            setattr(self, name, kept)
        before = {name: {k: len(v) for k, v in getattr(self, name).items()} for name in lists}
        empty: dict[tuple[str, str], list[str]] = defaultdict(list)
        for k, files in self.empty_impls.items():
            if any(f not in gone for f in files):
                empty[k] = [f for f in files if f not in gone]
        self.empty_impls = empty
        for rel in order:
            self._index_impls(by_file[rel].defs.items())
            self._index_empty_impls([ifaces[rel]])
        for name in lists:
            for k, ids in getattr(self, name).items():
                if len(ids) != before[name].get(k, 0):
                    ids.sort(key=lambda i: rank.get(node_file(i), 1 << 30))  # stable: in-file order kept
        self._adopt(self.stored_indexes())
        self.share()

    # -- scopes and visibility -------------------------------------------------------------

    def _pin(self, obj: object) -> int:
        """``id(obj)`` as a memo key, ``obj`` kept alive with the resolver (one file's link) so the id stays its own."""
        key = id(obj)
        self._pinned.setdefault(key, obj)
        return key

    def scope_of(self, d: Definition) -> Scope:
        """Where ``d``'s text is written: module, file, generic names in scope, ``Self``."""
        hit = self._scope_memo.get(self._pin(d))
        if hit is not None:
            return hit
        module = _scope_module(d)
        if not module and d.attrs.get("nested_in"):
            f = self.t.file_of.get(d.file)
            module = f.module if f else ""
        generics = frozenset(d.template_params) | frozenset(d.generic_bounds)
        sc = Scope(module, d.file, generics, "", d.qualname if d.kind == "rust_fn" else "")
        if d.container and d.kind == "rust_fn":
            sc = sc._replace(self_ty=self._self_type(d, sc))
        elif d.kind == "rust_type":
            sc = sc._replace(self_ty=f"T:{d.qualname}")
        self._scope_memo[self._pin(d)] = sc
        return sc

    def _self_type(self, d: Definition, sc: Scope) -> str:
        if d.attrs.get("trait_decl") or d.attrs.get("trait_default"):
            tq = f"{sc.module}::{d.container}" if sc.module else d.container
            return f"D:T:{tq}"
        ref = self.type_ref(d.attrs.get("type_path") or d.container, sc._replace(fn_qual=""))
        return ref

    def visible(self, ids: list[str], call: CallSite, caller: Definition | None) -> list[str]:
        """Candidates the caller can reach: in its dependency closure; ``cfg(test)`` code only from tests."""
        test_caller = caller is not None and bool(caller.cfg) and is_test_only(caller)
        defs, vis, test_only = self.t.defs, self.pk.visible, self.test_only  # (visible: memoised per unit pair)
        if len(ids) > 1 and hasattr(defs, "prefetch"):
            defs.prefetch(ids)  # stored tables: one query for all, not one per id
        return [i for i in ids if vis(call.file, defs[i].file) and (test_caller or i not in test_only)]

    # -- the impl index ----------------------------------------------------------------------

    def _index_impls(self, defs: Iterable[tuple[str, Definition]]) -> None:
        for nid, d in defs:
            if d.lang != "rust" or d.kind != "rust_fn" or not d.container:
                continue
            sc = self.scope_of(d)
            if d.attrs.get("trait_decl") or d.attrs.get("trait_default"):
                self.trait_decls[(sc.self_ty[2:], d.name)].append(nid)  # keyed by the trait's reference (`T:..`)
                continue
            ty = strip_marks(sc.self_ty)[0]
            if ty.startswith("G:"):
                ty = "G:*"  # a blanket impl (`impl<T: Bound> Trait for T`)
            if not ty:
                ty = f"?:{d.container}"
            self.impl_methods[(ty, d.name)].append(nid)
            if d.trait:
                tr = strip_marks(self.type_ref(d.attrs.get("trait_path") or d.trait, sc._replace(fn_qual="")))[0]
                if tr:
                    self.trait_impls[tr].add(ty)
                    self.type_traits[ty].add(tr)
                    self.trait_impl_methods[(tr, ty, d.name)].append(nid)

    def _index_empty_impls(self, files: Iterable[FileFacts]) -> None:
        """``impl Tr for B {}`` (no methods: ``B`` runs the trait's default methods) makes ``B`` an implementor."""
        for f in files:
            for imp in f.imports:
                if imp.kind != "impl":
                    continue
                sc = Scope(imp.scope, imp.file)
                ty = strip_marks(self.type_ref(imp.path, sc))[0]
                tr = strip_marks(self.type_ref(imp.alias, sc))[0]
                if ty.startswith("G:") or not ty:
                    continue
                if tr and f.file not in self.empty_impls[(tr, ty)]:
                    self.empty_impls[(tr, ty)].append(f.file)
                    self.trait_impls[tr].add(ty)
                    self.type_traits[ty].add(tr)

    # -- paths -------------------------------------------------------------------------------

    def imp_paths(self, imp: Import) -> tuple[str, ...]:
        """An import's absolute path(s): the first segment mapped through the importing crate's dependency
        names, or through the importing module's own aliases (``pub use cuda::X`` where ``cuda`` is
        ``cuda_backend`` or, under another cfg, ``dummy_cuda_backend``: both)."""
        hit = self._imp_memo.get(self._pin(imp))
        if hit is None:
            self._imp_memo[self._pin(imp)] = (imp.path,)  # a cycle of aliases ends here
            first, sep, rest = imp.path.partition("::")
            f = self.t.file_of.get(imp.file)
            scope = f.module if f else ""
            target = self.pk.crate_aliases(imp.file).get(first)
            if sep and scope and first != scope.split("::")[0] and f"{scope}::{first}" in self.t.modules:
                hit = (f"{scope}::{imp.path}",)  # 2018 edition: a module of this one comes first
            elif target and target != first:
                hit = (f"{target}{sep}{rest}",)
            elif sep and scope and first not in STD_CRATES and target is None and any(
                    i is not imp for i in self._imports(scope, first, imp.file, same_file=True)):
                # `pub use cuda::X` where `cuda` is an alias in this module (one per cfg alternative)
                got = [p for i in self._imports(scope, first, imp.file, same_file=True) if i is not imp
                       for p in self.imp_paths(i)]
                hit = tuple(dict.fromkeys(f"{p}{sep}{rest}" for p in got)) or (imp.path,)
            else:
                hit = (imp.path,)
            self._imp_memo[self._pin(imp)] = hit
        return hit

    def imp_path(self, imp: Import) -> str:
        return self.imp_paths(imp)[0]

    def external_crate(self, name: str, file: str) -> bool:
        """Does a path starting with ``name`` (after imports) lead out of the checkout?"""
        if name in STD_CRATES:
            return True
        alias = self.pk.crate_aliases(file).get(name)
        if alias is not None:
            return alias == ""
        return name not in self.t.crates and name not in self.t.modules

    def expand(self, segs: list[str], module: str, fn_qual: str = "", file: str = "", depth: int = 0) -> list[str]:
        """Absolute path candidates for ``segs`` written in ``module`` (and function ``fn_qual``); memoised."""
        key = (tuple(segs), module, fn_qual, file, depth)
        hit = self._expand_memo.get(key)
        if hit is None:
            hit = self._expand_memo[key] = self._expand(segs, module, fn_qual, file, depth)
        return list(hit)

    def _expand(self, segs: list[str], module: str, fn_qual: str, file: str, depth: int) -> list[str]:
        if not segs or depth > 8:
            return []
        s0, rest = segs[0], segs[1:]
        if s0 == "crate":
            return ["::".join([module.split("::")[0], *rest])]
        if s0 == "self":
            return ["::".join([module, *rest])]
        if s0 == "super":
            parent = module.rsplit("::", 1)[0] if "::" in module else module
            return self.expand(["self", *rest], parent, "", file, depth + 1) if rest[:1] != ["super"] \
                else self.expand(rest, parent, "", file, depth + 1)
        if s0.startswith("::"):
            return ["::".join([s0[2:], *rest])]
        out: list[str] = []
        if rest and f"{module}::{s0}" in self.t.modules:  # `m::f` with a child module `m` (type namespace)
            return ["::".join([module, *segs])]
        for scope in ((fn_qual, module) if fn_qual else (module,)):
            for imp in self._imports(scope, s0, file, same_file=True):
                for path in self.imp_paths(imp):
                    target = path.split("::")
                    if target[0] not in self.t.crates and target[0] != s0 and depth < 8 \
                            and target[0] not in STD_CRATES:
                        # `use kernels::norm;` where `kernels` is itself an alias in this module
                        out += [f"{p}::{'::'.join(rest)}" if rest else p
                                for p in self.expand(target, module, "", imp.file, depth + 1)]
                    else:
                        out.append("::".join([path, *rest]))
        if out:
            return out
        local = f"{module}::{s0}"
        if local in self.t.by_qual or local in self.t.modules or local in self.type_defs:
            return ["::".join([local, *rest])]
        if s0 in STD_CRATES and rest:
            return ["::".join(segs)]  # `std::io::stdout()`: outside the checkout
        for g in self.t.globs.get(module, []):
            if file and g.file != file:
                continue  # another crate's module of the same path
            cand = f"{self.imp_path(g).rstrip(':*').removesuffix('::')}::{s0}"
            if cand in self.t.by_qual or cand in self.t.modules or cand in self.type_defs or self._reexported(cand):
                out.append("::".join([cand, *rest]))
        if out:
            return out
        aliases = self.pk.crate_aliases(file) if file else {}
        alias = aliases.get(s0)
        if alias:
            return ["::".join([alias, *rest])]
        if alias is not None or s0 in self.t.crates and (not aliases or s0 == module.split("::")[0]):
            return ["::".join(segs)]  # (a test/example crate's name is not a path from elsewhere)
        return ["::".join([module, *segs]), "::".join(segs)]

    def _reexported(self, qual: str) -> bool:
        mod, _, name = qual.rpartition("::")
        return bool(self.t.uses.get(mod, {}).get(name))

    def _imports(self, scope: str, name: str, file: str, same_file: bool = False) -> list[Import]:
        """``use`` items binding ``name`` in module ``scope`` that ``file`` can see: its own (``same_file``,
        for names written in ``file``), or re-exports of crates it depends on.  Two crates may share a
        module path (two packages' ``src/bin/m.rs``, two libs named alike): their items are apart.  Memoised."""
        key = (scope, name, file, same_file)
        hit = self._imports_memo.get(key)
        if hit is None:
            hit = self._imports_memo[key] = self._imports_uncached(scope, name, file, same_file)
        return hit

    def _imports_uncached(self, scope: str, name: str, file: str, same_file: bool) -> list[Import]:
        imps = self.t.uses.get(scope, {}).get(name, [])
        if not file or not imps:
            return imps
        if same_file:
            return [i for i in imps if i.file == file]
        return [i for i in imps if i.file == file or self.pk.visible(file, i.file)]

    def lookup(self, path: str, depth: int = 0, file: str = "") -> tuple[list[str], str]:
        """Definitions at absolute ``path``, following re-exports (those ``file`` can see); memoised."""
        key = (path, depth, file)
        hit = self._lookup_memo.get(key)
        if hit is None:
            hit = self._lookup_memo[key] = self._lookup(path, depth, file)
        return list(hit[0]), hit[1]

    def _lookup(self, path: str, depth: int, file: str) -> tuple[list[str], str]:
        if depth > 8:
            return [], ""
        hit = self.t.by_qual.get(path)
        if hit:
            return list(hit), "path"
        mod, _, name = path.rpartition("::")
        if not mod:
            return [], ""
        for imp in self._imports(mod, name, file):
            for ipath in self.imp_paths(imp):
                ids, how = self.lookup(ipath, depth + 1, file)
                if ids:
                    return ids, "re-export " + (how or "")
        for g in self.t.globs.get(mod, []):  # `pub use cuda::*;` re-exports
            if file and not self.pk.visible(file, g.file):
                continue
            base = self.imp_path(g).removesuffix("*").removesuffix("::")
            if base and base != mod:
                ids, how = self.lookup(f"{base}::{name}", depth + 1, file)
                if ids:
                    return ids, "glob re-export " + (how or "")
        segs = path.split("::")
        for k in range(len(segs) - 1, 1, -1):  # a re-exported module on the way: `a::kernels::norm::f`
            pmod, pname = "::".join(segs[: k - 1]), segs[k - 1]
            for imp in self._imports(pmod, pname, file):
                ipath = self.imp_path(imp)
                if ipath != "::".join(segs[:k]):
                    ids, how = self.lookup("::".join([ipath, *segs[k:]]), depth + 1, file)
                    if ids:
                        return ids, "re-export " + (how or "")
        return [], ""

    # -- types -------------------------------------------------------------------------------

    def type_ref(self, text: str, sc: Scope, depth: int = 0) -> str:
        """The type reference (see ``rust_types``) of type ``text`` written in scope ``sc``."""
        key = (text, sc)
        hit = self._ty_memo.get(key)
        if hit is None:
            hit = self._ty_memo[key] = self._type_ref(text, sc, depth) if depth < 6 else ""
        return hit

    def _type_ref(self, text: str, sc: Scope, depth: int) -> str:
        t = peel(text)
        if not t:
            return ""
        if t.startswith(("dyn ", "impl ")):
            bounds = dyn_bounds(t)
            if not bounds or _FN_BOUND_RE.match(bounds[0]) or bounds[0].startswith(("Fn(", "FnMut(", "FnOnce(")):
                return "X:closure" if bounds else ""
            inner = self.type_ref(bounds[0], sc, depth + 1)
            return f"D:{inner}" if inner and not inner.startswith(("D:", "G:")) else inner
        if t.startswith("(") and t.endswith(")"):  # a tuple: `P:<ref>;<ref>` (a slot of it types a `let (a, b)`)
            parts = split_top(t[1:-1])
            if len(parts) >= 2:
                return "P:" + ";".join(strip_marks(self.type_ref(p, sc, depth + 1))[0] for p in parts)
            return self.type_ref(parts[0], sc, depth + 1) if parts and not t[1:-1].rstrip().endswith(",") else "X:()"
        if t[0] in "([*" or t.startswith(("fn(", "unsafe ", "extern ")):
            elem = element(t)
            if elem:
                inner = strip_marks(self.type_ref(elem, sc, depth + 1))[0]
                return f"X:[]<{inner}>"
            return "X:builtin"
        base, args = generic_args(t)
        base = re.sub(r"\s*::\s*", "::", base)
        if base.startswith("<"):
            return ""  # `<T as Trait>::Assoc`: not followed
        segs = [s for s in base.split("::") if s]
        if not segs:
            return ""
        if len(segs) == 1:
            s = segs[0]
            if s in PRIMITIVES:
                return f"X:{s}"
            if s in sc.generics:
                return f"G:{s}"
            if s == "Self":
                return sc.self_ty
        elif segs[0] == "Self":
            return ""  # an associated type
        found = self._path_type(segs, sc, depth)
        if found is not None and found.startswith("A:"):  # an alias handing out one of its arguments
            k = int(found[2:])
            return self.type_ref(args[k], sc, depth + 1) if k < len(args) else ""
        if found is not None and found.startswith("X:") and "<" not in found and any(
                a and not a.startswith("'") and not strip_marks(self.type_ref(a, sc, depth + 1))[0].startswith("X:")
                for a in args):  # (a lifetime, `'_` or stripped to "", is no type argument)
            return f"{found}<>"  # `Receiver<Msg>`: another crate's generic over a checkout type (what it hands out
            # may be one: not assumed external)
        if found is not None:
            return found
        name = segs[-1]
        if name in CONTAINERS and args:
            inner = strip_marks(self.type_ref(element(t), sc, depth + 1))[0]
            return f"X:{name}<{inner}>"
        if len(segs) > 1 and self.pk.crate_aliases(sc.file).get(segs[0]) == "":
            # `candle_core::Error`: a path through a crate the caller's Cargo.toml names outside the checkout is
            ext = "::".join(segs)  # that crate's, never a checkout type of its last name (std paths: by name below)
            return f"X:{ext}<>" if any(a and not a.startswith("'") and not strip_marks(
                self.type_ref(a, sc, depth + 1))[0].startswith("X:") for a in args) else f"X:{ext}"
        return self._short_type(name, sc, args)

    def _path_type(self, segs: list[str], sc: Scope, depth: int) -> str | None:
        expanded = self.expand(segs, sc.module, sc.fn_qual, sc.file)
        refs = [self._type_at(absolute, depth, sc.file) for absolute in dict.fromkeys(expanded)]
        if any(refs):
            return union(refs)
        if expanded and len(expanded) == 1:
            first = expanded[0].split("::")[0]
            if self.external_crate(first, sc.file):
                if segs[-1] in CONTAINERS or segs[-1] in STD_TYPES:
                    return None  # the container handling below knows its element
                return f"X:{expanded[0]}"
        return None

    def _short_type(self, name: str, sc: Scope, args: list[str]) -> str:
        """A type name no import or path explains (a glob import, a prelude): by name, within the closure."""
        cands = {d.qualname: d for d in self.t.types.get(name, ())
                 if self.pk.visible(sc.file, d.file) and _nameable_from(d, sc.module, sc.fn_qual)}
        if not cands or (name in STD_TYPES and not any(q.startswith(sc.module.split("::")[0] + "::") for q in cands)):
            return f"X:{name}<>" if args else f"X:{name}"
        if len(cands) == 1:
            return f"T:{next(iter(cands))}~"
        crate = sc.module.split("::")[0]
        same = [q for q in cands if q.split("::")[0] == crate]
        if len(same) == 1:
            return f"T:{same[0]}~"
        return ""

    def _type_at(self, path: str, depth: int = 0, file: str = "") -> str:
        """``T:<qual>`` when ``path`` names a type of the checkout (through re-exports and aliases); memoised."""
        key = (path, depth, file)
        hit = self._type_at_memo.get(key)
        if hit is None:
            hit = self._type_at_memo[key] = self._type_at_uncached(path, depth, file)
        return hit

    def _type_at_uncached(self, path: str, depth: int, file: str) -> str:
        if depth > 8:
            return ""
        d = self.type_def(path, file) if file else self.type_defs.get(path)
        if d is not None:
            if d.attrs.get("kind") == "type_alias" and d.attrs.get("aliased"):
                inner = peel(d.attrs["aliased"])
                if inner in d.template_params:  # `type CudaResult<T> = Result<T, E>`: the usage's argument
                    return f"A:{d.template_params.index(inner)}"
                aliased = self.type_ref(d.attrs["aliased"], self.scope_of(d)._replace(generics=frozenset(
                    d.template_params)), depth + 1)
                if aliased:
                    return aliased
            return f"T:{path}"
        mod, _, name = path.rpartition("::")
        if not mod:
            return ""
        refs = [self._type_at(p, depth + 1, file) for imp in self._imports(mod, name, file)
                for p in self.imp_paths(imp)]
        if any(refs):
            return union(refs)  # cfg alternatives re-exported under one name: all of them
        for g in self.t.globs.get(mod, []):
            if file and not self.pk.visible(file, g.file):
                continue
            base = self.imp_path(g).removesuffix("*").removesuffix("::")
            if base and base != mod:
                r = self._type_at(f"{base}::{name}", depth + 1, file)
                if r:
                    return r
        return ""

    def methods_of(self, ref: str, name: str, depth: int = 0) -> list[str]:
        """Methods ``name`` of type reference ``ref``: its impls, then its traits' default methods, then
        (auto-deref) those of its ``Deref::Target``."""
        r = strip_marks(ref)[0]
        if r.startswith("U:"):
            return list(dict.fromkeys(i for m in members(r) for i in self.methods_of(m, name)))
        ids = list(self.impl_methods.get((r, name), ()))
        inherent = [i for i in ids if not self.t.defs[i].trait]
        if inherent:
            return inherent  # an inherent method is found before any trait method of the same name
        if not ids:
            for tr in self.type_traits.get(r, ()):
                ids += [i for i in self.trait_decls.get((tr, name), ())
                        if self.t.defs[i].attrs.get("trait_default")]
        if not ids and depth < 3 and name != "deref":
            target = self.deref_target(r)
            if target and target != r:
                return self.methods_of(target, name, depth + 1)
        return ids

    def deref_target(self, ref: str) -> str:
        """``Target`` of the one ``impl Deref for T`` of a checkout type (``type Target = …``), or ""."""
        r = strip_marks(ref)[0]
        hit = self._deref_memo.get(r)
        if hit is None:
            ids = [i for i in self.impl_methods.get((r, "deref"), ()) if self.t.defs[i].trait == "Deref"]
            d = self.t.defs[ids[0]] if len(ids) == 1 and r.startswith("T:") else None
            rt = d.attrs.get("return_assoc", "") if d is not None else ""
            hit = self._deref_memo[r] = strip_marks(self.type_ref(rt, self.scope_of(d)))[0] if d and rt else ""
        return hit

    def trait_impls_of(self, trait_ref: str, name: str, depth: int = 0) -> tuple[list[str], list[str]]:
        """(impl methods of ``name`` over the trait's impls, the trait's own declaration/default)."""
        tr = strip_marks(trait_ref)[0]
        decl = list(self.trait_decls.get((tr, name), ()))
        ids: list[str] = []
        default = [i for i in decl if self.t.defs[i].attrs.get("trait_default")]
        for ty in sorted(self.trait_impls.get(tr, ())):
            own = self.trait_impl_methods.get((tr, ty, name), [])
            ids += own or default
        if not ids and not decl and depth < 3 and tr.startswith("T:"):
            td = self.type_defs.get(tr[2:])
            for sup in td.attrs.get("supertraits", []) if td is not None else []:
                assert td is not None
                sref = self.type_ref(sup, self.scope_of(td), 0)
                if sref:
                    more, mdecl = self.trait_impls_of(sref, name, depth + 1)
                    ids += more
                    decl += mdecl
        return list(dict.fromkeys(ids)), decl

    # -- calls -------------------------------------------------------------------------------

    def resolve(self, call: CallSite, caller: Definition | None) -> Resolved:
        pos = call.attrs.get("macro_pos")
        if pos and caller is not None and caller.attrs.get("macro"):
            return self._in_macro_body(replace(call, line=pos[0], col=pos[1]), caller)
        if call.kind == "method":
            return self._method(call, caller)
        return self._path(call, caller)

    def _in_macro_body(self, call: CallSite, caller: Definition) -> Resolved:
        """A call of a function a ``macro_rules!`` invocation defines, typed where it is in the macro's body
        (``call`` placed there: its ``let``s and arms are read from the body); binding notes name the
        definition's file."""
        res = self._method(call, caller) if call.kind == "method" else self._path(call, caller)
        mfile = caller.attrs.get("macro_defs", [""])[0].rsplit(":", 1)[0]
        base, mbase = call.file.rsplit("/", 1)[-1], mfile.rsplit("/", 1)[-1]
        if mbase and mbase != base and f"({base}:" in res.how:
            res = replace(res, how=res.how.replace(f"({base}:", f"({mbase}:"))
        return res

    def _scope(self, caller: Definition | None, call: CallSite) -> Scope:
        if caller is not None:
            return self.scope_of(caller)
        f = self.t.file_of.get(call.file)
        return Scope(f.module if f else "", call.file)

    def _path(self, call: CallSite, caller: Definition | None) -> Resolved:
        segs = [s for s in call.path if s] or [call.callee]
        sc = self._scope(caller, call)
        s0 = segs[0]
        if s0.startswith("<") and len(segs) >= 2:  # <T as Trait>::m
            return self._qualified_path(s0.strip("<>"), segs[-1], sc, call, caller)
        if caller is not None and s0 in caller.generic_bounds and len(segs) == 2:
            return self._generic(s0, segs[1], caller.generic_bounds[s0], sc, call, caller)
        if s0 in PRELUDE or (len(segs) == 1 and s0[:1].isupper() and s0 not in self.t.types):
            return Resolved(drop=True, how="std/prelude")
        if s0 == "Self" and len(segs) == 2 and sc.self_ty:
            return self._typed(sc.self_ty, segs[1], call, caller, "Self", path=True)
        for absolute in self.expand(segs, sc.module, sc.fn_qual, call.file):
            ids, how = self.lookup(absolute, 0, call.file)
            if ids:
                vis = self.visible(ids, call, caller)
                if len(vis) > 1:
                    vis, why = self._path_choice(vis, call, caller)
                    how = f"{how} {absolute}{why}"
                else:
                    how = f"{how} {absolute}"
                if vis:
                    return Resolved.of(vis, how.strip())
        if len(segs) >= 2 and segs[-1][:1].isupper():
            return Resolved(drop=True, how="enum variant or tuple-struct constructor")
        if len(segs) >= 2:
            ty = self.type_ref("::".join(segs[:-1]), sc)
            if ty.startswith(("T:", "D:")):
                return self._typed(ty, segs[-1], call, caller, "::".join(segs[:-1]), path=True)
            if ty.startswith("X:") and (ty[2:].split("::")[0] in STD_CRATES or ty[2:].split("<")[0] in STD_TYPES):
                return Resolved(drop=True, how="std")
            if ty.startswith("X:"):
                local = self.visible(self.impl_methods.get((ty, segs[-1]), []), call, caller)
                local = [i for i in local if not _calls_itself(self.t.defs[i], caller, call)]
                if local:
                    return Resolved.of(local, f"local impl for {ty[2:]}{_EXT_OWN}", HEURISTIC)
                return Resolved(status=UNRESOLVED, how=f"type {ty[2:]} is outside the checkout",
                                external="::".join(segs), external_kind="external")
        ext = "::".join(segs)
        if segs[0] in STD_CRATES:
            return Resolved(drop=True, how="std")
        return Resolved(status=UNRESOLVED, how="no definition in the checkout", external=ext, external_kind="external")

    def _path_choice(self, ids: list[str], call: CallSite, caller: Definition | None) -> tuple[list[str], str]:
        """Of several functions at one path (``Type::new``): the inherent ones when some are (Rust looks an
        associated function up in the type's inherent impls before its traits'), then those taking as many
        parameters as the call passes arguments (when some do), then the one trait impl whose one parameter has
        the one argument's known type (``E::from("x")`` of ``impl From<&str> for E``); with the reason for ``how``."""
        defs = [self.t.defs[i] for i in ids]
        why = ""
        if all(d.lang == "rust" and d.container for d in defs) and any(not d.trait for d in defs) \
                and any(d.trait for d in defs):
            ids = [i for i, d in zip(ids, defs, strict=True) if not d.trait]
            why = " (inherent before trait impls)"
        if len(ids) > 1 and not any("$" in a for a in call.args):
            fit = [i for i in ids if self.t.defs[i].lang != "rust" or any(
                "$" in p.name or p.name == "..." for p in self.t.defs[i].params)
                or len(self.t.defs[i].params) == len(call.args)]
            if fit and len(fit) < len(ids):
                ids, why = fit, f"{why} (by the number of arguments)"
        if len(ids) > 1 and len(call.args) == 1 and caller is not None:
            one = self._by_argument_type(ids, call.args[0], call, caller)
            if one:
                ids, why = [one[0]], f"{why} (by the argument's type {one[1]})"
        return ids, why

    def _by_argument_type(self, ids: list[str], arg: str, call: CallSite, caller: Definition) -> tuple[str, str] | None:
        """The one of several trait impl functions of one parameter (``From::from`` of several ``From<A>``) whose
        parameter type is the argument's known type (references aside); None unless exactly one is and every
        parameter type is known (a generic one may take anything)."""
        defs = [self.t.defs[i] for i in ids]
        if not all(d.lang == "rust" and d.trait and len(d.params) == 1 and d.params[0].name != "self" for d in defs):
            return None
        a = arg.strip()
        if a.startswith(('"', 'r"', 'r#"')):
            got = "X:str"
        elif _MACRO_VALUE_RE.match(a) and a.startswith("format!") or a.endswith(".to_string()"):
            got = strip_marks(self.type_ref("String", self.scope_of(caller)))[0]
        else:
            got, heur = strip_marks(self._expr_or_receiver(a, caller, call, 0))
            if heur or not got.startswith(("T:", "X:")) or _is_opaque(got) or got.endswith("<>"):
                return None
        params = [strip_marks(self.type_ref(d.params[0].type, self.scope_of(d)))[0] for d in defs]
        if any(not p or p.startswith(("G:", "D:", "U:")) or p.endswith("<>") for p in params):
            return None
        hits = [i for i, p in zip(ids, params, strict=True) if p == got]
        return (hits[0], f"`{_display(got) if got.startswith('X:') else short(got)}`") if len(hits) == 1 else None

    def _qualified_path(self, inner: str, name: str, sc: Scope, call: CallSite, caller: Definition | None) -> Resolved:
        ty, _, trait = inner.partition(" as ")
        tref = self.type_ref(ty, sc)
        if trait:
            trref = strip_marks(self.type_ref(trait, sc))[0]
            ids = self.trait_impl_methods.get((trref, strip_marks(tref)[0], name), [])
            if not ids and strip_marks(tref)[0].startswith(("G:", "D:")):
                ids, _ = self.trait_impls_of(trref, name)
        else:
            ids = self.methods_of(tref, name)
        ids = self.visible(list(ids), call, caller)
        if not ids:
            return Resolved(status=UNRESOLVED, how=f"qualified path <{inner}>::{name}: no impl in the checkout",
                            external=f"<{inner}>::{name}", external_kind="external")
        return Resolved.of(ids, f"qualified path <{inner}>::{name}")

    def _generic(self, param: str, method: str, bounds: list[str], sc: Scope, call: CallSite,
                 caller: Definition | None) -> Resolved:
        ids: list[str] = []
        decl: list[str] = []
        for b in bounds:
            if _FN_BOUND_RE.match(b) or b.startswith(("Fn(", "FnMut(", "FnOnce(", "'")):
                continue
            tr = self.type_ref(b, sc)
            if not tr:
                continue
            got, d = self.trait_impls_of(tr, method)
            ids += got
            decl += d
        return self._fanout(ids, decl, f"generic {param}: {' + '.join(bounds)}", call, caller)

    def _fanout(self, ids: list[str], decl: list[str], what: str, call: CallSite,
                caller: Definition | None) -> Resolved:
        """The impls of a trait method (generic bound or trait object), within the caller's closure."""
        vis = self.visible(list(dict.fromkeys(ids)), call, caller)
        if len(vis) == 1:
            return Resolved(vis, EXACT, f"{what} → only impl of the trait in the caller's dependency closure")
        if vis:
            return Resolved(sorted(vis), AMBIGUOUS, f"{what} → impls of the trait in the caller's dependency closure")
        dvis = self.visible(decl, call, caller)
        if dvis:
            return Resolved(dvis, HEURISTIC, f"{what}: trait method without impl in the caller's dependency closure")
        return Resolved(drop=True, how=f"{what}: no impl of the method in the checkout")

    def _typed(self, ref: str, name: str, call: CallSite, caller: Definition | None, recv: str,
               path: bool = False, note: str = "") -> Resolved:
        """A method ``name`` of a receiver (or path) of type reference ``ref`` (``note``: the binding
        rule that typed the receiver)."""
        r, heur = strip_marks(ref)
        bare = f"`{recv}`: {short(ref)}"  # (a dropped call's reason is a tally key: without the binding)
        what = bare + (f", {note}" if note else "")
        if r.startswith("G:"):
            g = r[2:]
            bounds = (caller.generic_bounds.get(g) if caller is not None else None) or []
            if bounds:
                return self._generic(g, name, bounds, self._scope(caller, call), call, caller)
            return Resolved(drop=True, how=f"{bare}: an unbounded generic")
        if r.startswith("D:"):
            ids, decl = self.trait_impls_of(r[2:], name)
            inherent = self.methods_of(r[2:], name)  # `impl dyn Trait { .. }` blocks
            if inherent and not ids:
                ids = inherent
            return self._fanout(ids, decl, f"{what} (trait object)", call, caller)
        if r.startswith("U:"):
            ids = self.visible(self.methods_of(r, name), call, caller)
            if ids:
                return Resolved.of(ids, f"method of one of {short(r)} (cfg alternatives; {what})",
                                   HEURISTIC if heur else EXACT)
            ext = next((m for m in members(r) if m.startswith("X:")), "")
            if not ext:
                return Resolved(drop=True, how=f"{short(r)} have no method {name} in the checkout")
            r = ext
        if r.startswith("T:"):
            ids = self.visible(self.methods_of(r, name), call, caller)
            if heur and ids:  # a type found by name only: its method must take the call's arguments
                ids = [i for i in ids if (_takes_path(self.t.defs[i], call) if path else takes(self.t.defs[i], call))]
                if not ids:
                    return Resolved(drop=True, how=f"{short(r)} (found by name only) has no method {name} "
                                    "taking the call's arguments")
            if ids:
                if len(ids) > 1 and caller is not None:
                    ids = self._trait_in_scope(ids, call) or ids
                status = HEURISTIC if heur else EXACT
                how = f"method of {short(r)} ({what}{'; type found by name only' if heur else ''})"
                if len(ids) > 1 and not path:
                    kept, sure, why = self._by_argument_shape(ids, call, caller)
                    if why and not kept:
                        return Resolved(status=UNRESOLVED, how=f"{how}: {why}", external=f"{short(r)}::{name}",
                                        external_kind="external")
                    if why:
                        ids, how = kept, f"{how}; {why}"
                        status = HEURISTIC if heur or not sure else EXACT
                return Resolved.of(ids, how, status)
            return Resolved(drop=True, how=f"{short(r)} has no method {name} in the checkout")
        if r.startswith("X:"):
            ids = self.visible(self.impl_methods.get((r, name), []) or self.impl_methods.get((r[:-2], name), [])
                               if r.endswith("<>") else self.impl_methods.get((r, name), []), call, caller)
            if not path:  # (a trait impl's method another arity cannot be: then the external type's own)
                ids = [i for i in ids if takes(self.t.defs[i], call)]
            ids = [i for i in ids if not _calls_itself(self.t.defs[i], caller, call)]
            if ids:
                return Resolved.of(ids, f"local trait impl for {r[2:]} ({what}){_EXT_OWN}", HEURISTIC)
            if name in STD_METHODS or _is_std(r):
                return Resolved(drop=True, how=f"std method; {bare}")  # as `std::` paths: counted, not drawn
            if _is_opaque(r) and not path:
                ids = [i for i in self.visible(self._external_impls(name), call, caller)
                       if takes(self.t.defs[i], call) and self._trait_in_scope_at(self._impl_trait(i), call, caller)]
                if ids:  # of some external type: a checkout trait impl for one may be the method
                    return Resolved(sorted(ids), AMBIGUOUS, f"by method name among checkout impls for external "
                                    f"types whose trait is in scope ({what}, exact type unknown)", name_only=True)
            return Resolved(status=UNRESOLVED, how=f"{what} is a type outside the checkout",
                            external=f"{_display(r)}::{name}", external_kind="external")
        return Resolved(drop=True, how=f"unknown type {bare}")

    def _by_argument_shape(self, ids: list[str], call: CallSite, caller: Definition | None
                           ) -> tuple[list[str], bool, str]:
        """Of several impls of one generic trait for one type (candle's ``IndexOp<T>``, ``IndexOp<(A,)>``,
        ``IndexOp<(A, B)>`` for ``Tensor``), those whose parameter can take the argument by its shape: a tuple
        expression of n elements only an n-tuple parameter or a generic one whose ``Into<X>`` bound some
        ``From`` impl of the checkout type ``X`` can meet with a tuple; an integer literal or cast, a range or a
        reference never a tuple parameter.  (kept, whether the one kept surely takes it, the reason for ``how``;
        no reason when the shape decides nothing.)"""
        defs = [self.t.defs[i] for i in ids]
        if len(call.args) != 1 or len({(d.trait, len(d.params)) for d in defs}) != 1 or not defs[0].trait \
                or len(defs[0].params) != 2 or defs[0].params[0].name != "self":
            return ids, False, ""
        arg = call.args[0].strip()
        kind, n = _arg_shape(arg)
        if not kind and caller is not None and re.fullmatch(r"[\w.]+", arg):  # a typed variable or field
            got, heur = strip_marks(self._expr_or_receiver(arg, caller, call, 0))
            if not heur and got.startswith("P:"):
                kind, n = "tuple", len(got[2:].split(";"))
            elif not heur and got[2:] in _INTEGERS and got.startswith("X:"):
                kind = "int"
        if not kind:
            return ids, False, ""
        verdicts = {i: self._param_takes(d, d.params[1].type, kind, n) for i, d in zip(ids, defs, strict=True)}
        kept = [i for i in ids if verdicts[i] != "no"]
        desc = f"a {n}-tuple" if kind == "tuple" else {"int": "an integer", "range": "a range",
                                                         "ref": "a reference"}[kind]
        if len(kept) == len(ids):
            return ids, False, ""
        if not kept:
            return [], False, (f"the argument `{_clip(arg)}` is {desc}, which no indexed impl of {defs[0].trait} "
                               "takes (an impl a macro with repetitions makes is not expanded)")
        takes_it = ", ".join(f"`{self.t.defs[i].params[1].type}` (line {self.t.defs[i].line})" for i in kept)
        return kept, len(kept) == 1 and verdicts[kept[0]] == "yes", \
            f"the argument `{_clip(arg)}` is {desc}: of the {defs[0].trait} impls only those taking {takes_it}"

    def _param_takes(self, d: Definition, ptype: str, kind: str, n: int) -> str:
        """Whether parameter type ``ptype`` of impl method ``d`` takes an argument of shape ``kind`` (``n``: a
        tuple's size): "yes", "no" or "maybe"."""
        p = ptype.strip()
        if p.startswith("(") and p.endswith(")"):
            m = len([x for x in split_top(p[1:-1]) if x.strip()])
            return "yes" if kind == "tuple" and m == n else "no"
        bounds = d.generic_bounds.get(p)
        if bounds is None:
            return "no" if kind == "tuple" and (p in PRIMITIVES or p.startswith("&")) else "maybe"
        into = [b for b in bounds if b.replace(" ", "").startswith("Into<")]
        if len(into) != len(bounds) or len(into) != 1:
            return "maybe"
        target = strip_marks(self.type_ref(into[0].strip()[5:-1], self.scope_of(d)))[0]
        if not target.startswith("T:"):
            return "maybe"
        froms = [self.t.defs[i] for i in self.impl_methods.get((target, "from"), ())
                 if self.t.defs[i].trait == "From" and len(self.t.defs[i].params) == 1]
        if kind == "tuple":  # only the crate of a checkout type can convert a tuple into it: all in the index
            return "maybe" if any(self._from_takes_tuple(f) for f in froms) else "no"
        if kind == "int":
            return "yes" if any(f.params[0].type.strip() in _INTEGERS for f in froms) else "maybe"
        if kind == "range":
            return "yes" if any(self._from_takes_range(f) for f in froms) else "maybe"
        return "maybe"

    def _from_takes_range(self, f: Definition) -> bool:
        """``From`` impl ``f`` surely takes a range: a ``Range…`` parameter, or a generic one whose checkout trait
        bound is implemented by each of ``Range``, ``RangeFrom``, ``RangeTo``, ``RangeFull`` and
        ``RangeInclusive`` (whatever range the argument is)."""
        p = f.params[0].type.strip()
        bounds = f.generic_bounds.get(p)
        if bounds is None or len(bounds) != 1:
            return False
        tr = strip_marks(self.type_ref(bounds[0], self.scope_of(f)))[0]
        names = {short(t).split("<")[0].rsplit("::", 1)[-1] for t in self.trait_impls.get(tr, ())}
        return tr.startswith("T:") and {"Range", "RangeFrom", "RangeTo", "RangeFull", "RangeInclusive"} <= names

    def _from_takes_tuple(self, f: Definition) -> bool:
        """Can ``From`` impl ``f`` (of a checkout type) take a tuple: a tuple parameter, or a generic one not bound
        by checkout traits that no tuple implements (none of their impls is for a tuple or a blanket one)."""
        p = f.params[0].type.strip()
        if p.startswith("("):
            return True
        bounds = f.generic_bounds.get(p)
        if bounds is None:
            return False
        for b in bounds:
            tr = strip_marks(self.type_ref(b, self.scope_of(f)))[0]
            if tr.startswith("T:") and not any(t.startswith(("P:", "G:")) for t in self.trait_impls.get(tr, ())):
                return False  # (a tuple is no local type: another crate cannot implement the trait for one)
        return True

    def _external_impls(self, name: str) -> list[str]:
        """Methods ``name`` of checkout impls that may be an external type's: impls for an external type, and
        blanket impls (``impl<T: Bound> Tr for T``) unless a bound is a checkout trait with no impl for an
        external type (no external type can meet it)."""
        if self._ext_impls is None:
            self._ext_impls = defaultdict(list)
            for (ty, m), ids in self.impl_methods.items():
                if ty.startswith("X:"):
                    self._ext_impls[m] += ids
                elif ty == "G:*":
                    self._ext_impls[m] += [i for i in ids if self._blanket_fits_external(self.t.defs[i])]
        return self._ext_impls.get(name, [])

    def _impl_trait(self, i: str) -> str:
        """The trait reference (``T:<qual>``) of trait impl method ``i``; "" for an inherent method."""
        d = self.t.defs[i]
        if not d.trait:
            return ""
        sc = self.scope_of(d)._replace(fn_qual="")
        return strip_marks(self.type_ref(d.attrs.get("trait_path") or d.trait, sc))[0]

    def _trait_in_scope_at(self, tr: str, call: CallSite, caller: Definition | None) -> bool:
        """May trait ``tr``'s methods be called with method syntax at ``call`` (on a receiver that is not a
        trait object or a bounded generic): is the trait defined in the caller's module, or imported into
        it (by name, ``as _``, a glob)?"""
        if not tr.startswith("T:"):
            return False
        sc = self._scope(caller, call)
        key = (sc.module, sc.fn_qual, call.file)
        got = self._scope_traits.get(key)
        if got is None:
            refs: set[str] = set()
            globs: list[str] = []
            for scope in (sc.fn_qual, sc.module) if sc.fn_qual else (sc.module,):
                for imps in self.t.uses.get(scope, {}).values():
                    for imp in imps:
                        if imp.file == call.file:
                            refs.update(m for p in self.imp_paths(imp) for m in members(self._type_at(p, 0, call.file)))
                globs += [self.imp_path(g).removesuffix("*").removesuffix("::") for g in self.t.globs.get(scope, [])
                          if g.file == call.file]
            got = self._scope_traits[key] = (frozenset(refs), tuple(globs))
        refs_in, globs_in = got
        mod, _, name = tr[2:].rpartition("::")
        return tr in refs_in or mod == sc.module or any(
            b == mod or self._type_at(f"{b}::{name}", 0, call.file) == tr for b in globs_in)

    def _blanket_fits_external(self, d: Definition) -> bool:
        """Can the blanket impl of method ``d`` (``impl<T: Bound> Tr for T``) be an external type's?"""
        sc = self.scope_of(d)
        param = peel(d.attrs.get("type_path") or d.container)
        for b in d.generic_bounds.get(param, []):
            tr = strip_marks(self.type_ref(b, sc))[0] if not _FN_BOUND_RE.match(b) else ""
            if tr.startswith("T:") and not any(ty.startswith("X:") for ty in self.trait_impls.get(tr, ())):
                return False
        return True

    def _trait_in_scope(self, ids: list[str], call: CallSite) -> list[str]:
        """Impls of a private trait are callable only where the trait is: prefer the caller's module's."""
        f = self.t.file_of.get(call.file)
        module = f.module if f else ""
        return [i for i in ids if self.t.defs[i].trait and self.t.defs[i].qualname.rsplit("::", 2)[0] == module
                and f"{module}::{self.t.defs[i].trait}" in self.type_defs]

    def _method(self, call: CallSite, caller: Definition | None) -> Resolved:
        name = call.callee.split("::")[-1]
        ref = self.receiver_type(call.receiver, caller, call) if caller is not None else ""
        if ref:
            note = self._note(call.receiver, caller, call) if caller is not None else ""
            return self._typed(ref, name, call, caller, call.receiver, note=note)
        if name in STD_METHODS:
            return Resolved(drop=True, how="std method")
        recv = call.receiver.strip()
        if recv.startswith("(") and recv.endswith(")") and len(split_top(recv[1:-1])) >= 2 \
                and name not in self._tuple_methods():  # `(StatusCode::OK, body).into_response()`
            return Resolved(status=UNRESOLVED, how="method of a tuple: no impl for a tuple type in the checkout",
                            external=f"(tuple)::{name}", external_kind="external")
        test_caller = caller is not None and bool(caller.cfg) and is_test_only(caller)
        unit = self.pk.unit_of(call.file)
        key = (unit, call.file if unit is None else "", name, test_caller)  # the answer depends on no more
        ids = self._by_name_memo.get(key)
        if ids is None:
            ids = self.visible(list(self.t.methods_by_name.get(name, ())), call, caller)
            impl_traits = {self.t.defs[i].trait for i in ids if self.t.defs[i].trait}
            ids = self._by_name_memo[key] = sorted(
                i for i in ids
                if not (self.t.defs[i].attrs.get("trait_decl") and self.t.defs[i].container in impl_traits))
        if not ids:
            return Resolved(drop=True, how="no method of that name in the caller's dependency closure")
        fit = [i for i in ids if takes(self.t.defs[i], call)]
        if not fit:
            return Resolved(drop=True, how=f"no method of that name taking self and {len(call.args)} argument(s) in "
                            "the caller's dependency closure")
        return Resolved(fit, AMBIGUOUS, f"by method name only (receiver `{call.receiver}` type unknown)",
                        name_only=True)

    def _tuple_methods(self) -> frozenset[str]:
        """Names of the methods the checkout implements for tuple types (`impl Tr for (A, B)`)."""
        if self._tuples is None:
            self._tuples = frozenset(m for (ty, m) in self.impl_methods if ty.startswith("P:"))
        return self._tuples

    # -- receiver types ------------------------------------------------------------------------

    def receiver_type(self, recv: str, caller: Definition, call: CallSite, depth: int = 0) -> str:
        """Type reference of a method receiver expression, or '' when unknown (memoised per position)."""
        # the innermost context decides bindings (two closures or arms on one line bind apart), the
        # column which `let`s are in scope (`let x = x.f(); x.g()`)
        inner = self._pin(call.contexts[-1]) if call.contexts else 0
        key = (self._pin(caller), recv, call.line, call.col, inner, depth)
        hit = self._recv_cache.get(key)
        if hit is None:
            self._why = ""
            hit = self._recv_cache[key] = self._receiver_type(recv, caller, call, depth)
            if self._why:
                self._recv_why[key] = self._why
        return hit

    def _note(self, recv: str, caller: Definition, call: CallSite) -> str:
        """The binding rule that typed receiver ``recv`` of ``call`` (after :meth:`receiver_type`), or ""."""
        return self._recv_why.get((self._pin(caller), recv, call.line, call.col,
                                   self._pin(call.contexts[-1]) if call.contexts else 0, 0), "")

    def _receiver_type(self, recv: str, caller: Definition, call: CallSite, depth: int = 0) -> str:
        r = recv.strip()
        if r.startswith("unsafe") and r.endswith("}") and "{" in r:  # `unsafe { &*ptr }.f()`
            r = r[r.index("{") + 1 : -1].strip()
        for p in ("&mut ", "&", "*", "&*", "*"):
            r = r.removeprefix(p)
        r = _peel_tail(_PEEL_RE.sub("", r))
        if r.startswith("(") and r.endswith(")") and r.count("(") == 1:
            r = r[1:-1].strip()
        sc = self.scope_of(caller)
        indexed = False
        if r.endswith("]") and "[" in r and _WORD_RE.fullmatch(r[: r.index("[")].replace("self.", "", 1)):
            r, indexed = r[: r.index("[")], True
        if r == "self":
            return sc.self_ty
        if r.startswith("self.") and _WORD_RE.fullmatch(r[5:]):
            return self._field(sc.self_ty, r[5:], indexed, call.file)
        if _WORD_RE.fullmatch(r):
            return self._var_type(r, caller, call, sc, indexed, depth)
        if "::" in r and _PATH_RE.fullmatch(r) and r.rsplit("::", 1)[-1][:1].isupper():  # `DType::F16`
            enum = strip_marks(self.type_ref(r.rsplit("::", 1)[0], sc))[0]
            d = self.type_defs.get(enum[2:]) if enum.startswith("T:") else None
            if _external_path(enum):
                return _opaque(enum)  # a variant or constant of another crate's type: of that crate
            return enum if d is not None and d.attrs.get("kind") == "enum" else ""
        m = _STRUCT_LIT_RE.match(r)
        if m and r.endswith("}") and _split_chain(r) == [r]:  # `Error::Shape { .. }.bt()`
            return self._literal_type(m.group(1), sc)
        m = _MACRO_VALUE_RE.match(r)
        if m and depth < 4:
            return self._macro_value(m, caller, call, depth + 1)
        if depth < 4 and _binary_split(r) is not None:
            return self._expr_type(r, caller, call, depth + 1)
        if depth < 4:
            ty = self._chain_type(r, caller, call, depth + 1)
            self._why = ""
            return ty
        return ""

    def _literal_type(self, path: str, sc: Scope) -> str:
        """Type of a struct literal ``Path { .. }``: the enum of a struct-like variant ``E::V { .. }``, else the
        struct."""
        if "::" in path:
            enum = strip_marks(self.type_ref(path.rsplit("::", 1)[0], sc))[0]
            d = self.type_defs.get(enum[2:]) if enum.startswith("T:") else None
            if d is not None and d.attrs.get("kind") == "enum" and path.rsplit("::", 1)[1] in d.attrs.get(
                    "variants", ()):
                return enum
        return self.type_ref(path, sc)

    def _macro_value(self, m: re.Match[str], caller: Definition, call: CallSite, depth: int) -> str:
        """The value of ``name!(x)`` when the checkout's ``macro_rules! name`` hands out a lock guard of its one
        argument (``if let Ok(g) = $x.try_lock() { break g; }``, ``$x.lock().unwrap()``): the argument's
        content type (a guard derefs to it)."""
        name, arg = m.group(1), m.group(2).strip()
        if not arg or len(split_top(arg)) != 1 or not self._lock_guard_macro(name, call.file):
            return ""
        ty = self._expr_or_receiver(arg, caller, call, depth)
        rows = self._macro_rows(name, call.file)  # all of them lock guards (checked above)
        more = f" and {len(rows) - 1} more alike" if len(rows) > 1 else ""
        row = rows[0]
        self._why = f"lock guard of `{arg}` (macro {name}!, {row[0].rsplit('/', 1)[-1]}:{row[2]}{more})" if ty else ""
        return ty

    def _macro_rows(self, name: str, file: str) -> list[tuple[str, str, int, str]]:
        """The ``macro_rules!`` a macro name written in ``file`` may be: the file's own, else its crate's, else
        those ``file`` can see (every candidate kept: the caller requires all of them to agree)."""
        unit = self.pk.unit_of(file)
        return macro_candidates(self.t.macro_rules.get(name, ()), file,
                                lambda r: unit is not None and self.pk.unit_of(r[0]) == unit,
                                lambda r: self.pk.visible(file, r[0]))

    def _lock_guard_macro(self, name: str, file: str) -> bool:
        key = (name, file)
        hit = self._guard_memo.get(key)
        if hit is None:
            rows = self._macro_rows(name, file)
            hit = self._guard_memo[key] = bool(rows) and all(_is_lock_guard(r[3]) for r in rows)
        return hit

    def _var_type(self, r: str, caller: Definition, call: CallSite, sc: Scope, indexed: bool, depth: int) -> str:
        """Type of variable ``r`` at ``call``; ``self._why`` names the binding that typed it."""
        base = call.file.rsplit("/", 1)[-1]
        assigned = self._assigned(caller, r, call.line, call.col, call.text)
        let_line = assigned[1] if assigned[0] or assigned[6] else 0  # a `let` in scope shadows what bound r before
        for p in caller.params if not let_line else ():
            if p.name == r:
                self._why = f"parameter `{r}: {_clip(p.type)}`"
                return self._text_type(p.type, sc, indexed)
            m = _NEWTYPE_PATTERN_RE.fullmatch(p.name)
            if m and m.group(2) == r:
                got, why = self._newtype_payload(m.group(1), p.type, sc)
                if got:
                    self._why = f"parameter pattern `{p.name}: {_clip(p.type)}`, {why}"
                    return self._text_type(got[1], got[0], indexed)
        for ctx in reversed(call.contexts):  # the innermost binding wins
            if let_line > ctx.line:
                break  # a `let` inside this context (or the ones around it) binds r later than they do
            if ctx.kind == "loop":
                lkey = (self._pin(ctx), r, self._pin(caller), depth)  # (the same for every call in the loop's body)
                hit = self._binding_memo.get(lkey)
                if hit is None:
                    hit = self._binding_memo[lkey] = self._loop_binding(ctx, r, caller, call, sc, depth)
                if hit[1]:
                    self._why = hit[1]
                    return hit[0]
                continue
            elif ctx.kind in ("match_arm", "if"):
                pkey = (self._pin(ctx), r, self._pin(caller))
                ty = self._pattern_memo.get(pkey)
                if ty is None:
                    ty = self._pattern_memo[pkey] = self._pattern_binding(ctx.text, ctx.subject, r, caller, call, sc,
                                                                          depth) if r in ctx.text else ""
                if ty:
                    self._why = f"bound by the pattern `{_clip(ctx.text)}` ({base}:{ctx.line})"
                    return ty
            elif ctx.kind == "closure" and depth < 4:
                params = _CLOSURE_PARAMS_RE.match(ctx.text.strip())
                declared = [x.partition(":") for x in split_top(params.group(1))] if params else []
                paths = [_pattern_path(n, r) for n, _, _ in declared]
                slot = next((k for k, p in enumerate(paths) if p is not None), -1)
                if slot >= 0:
                    annotated = declared[slot][2].strip()  # `|w: Tensor|`: the type as written
                    if annotated and not paths[slot]:
                        self._why = f"closure parameter `{r}: {_clip(annotated)}` ({base}:{ctx.line})"
                        return self._text_type(annotated, sc, indexed)
                    ckey = (self._pin(ctx), r, self._pin(caller), depth)
                    hit = self._binding_memo.get(ckey)
                    if hit is None:
                        self._why = ""
                        ty = self._closure_param(ctx, slot, caller, call, depth, paths[slot] or [])
                        hit = self._binding_memo[ckey] = (ty, self._why)
                    self._why = hit[1]
                    return hit[0]
        value, line, col, slot, tails, pattern, written, arms = assigned
        if written:
            self._why = f"let `{r}: {_clip(written)}` ({base}:{line})"
            return self._text_type(written, sc, indexed)
        if value and depth < 4:
            # the value is evaluated where its own `let` starts (shadowing: `let xs = xs.f()`)
            # (a fresh depth budget: the value sees only `let`s ending before it, so following them ends by
            # itself, and a chain of `let x = x.f().g()` shadowing a parameter or closure parameter is not cut)
            depth = 0
            mkey = (self._pin(caller), r, line, col, depth)
            ty = self._let_memo.get(mkey)
            if ty is None:
                at = CallSite(call.kind, call.callee, call.path, call.caller, call.file, line, col,
                              contexts=call.contexts)
                if pattern:  # `let S { r, .. } = v`, `let Some(r) = v else { .. }`
                    ty = self._pattern_binding(pattern, value, r, caller, at, sc, depth)
                else:  # every branch the same type, else unknown
                    values = value.split("\0")
                    ats = [replace(at, line=p[0], col=p[1]) for p in tails] if len(tails) == len(values) \
                        else [at] * len(values)  # each tail where it is written: its block's bindings
                    if len(arms) == len(ats):  # … and its arms' (`Storage::Cuda(s) => s`, `if let Some(x) = v { x }`)
                        ats = [replace(a, contexts=[*a.contexts, *(Context(k, t, a.line, f"tail:{line}:{col}",
                                                                           subject=subj) for k, t, subj in arm)])
                               if arm else a for a, arm in zip(ats, arms, strict=True)]
                    ty = join_branches(self._branch_type(v, slot, caller, a, depth)
                                       for v, a in zip(values, ats, strict=True))
                self._let_memo[mkey] = ty
            if ty:
                self._why = f"let `{r} = {_clip(value.split(chr(0))[0])}` ({base}:{line})" if not pattern else \
                    f"let pattern `{_clip(pattern)}` ({base}:{line})"
                return self._index(ty) if indexed else ty
        self._why = ""
        if r in caller.locals:
            return self._text_type(caller.locals[r], sc, indexed)
        if r[:1].isupper() and not indexed:  # a unit struct used as a value: `CpuDevice.f()`
            ty = strip_marks(self.type_ref(r, sc))[0]
            return ty if ty.startswith("T:") else ""
        return ""

    def _branch_type(self, value: str, slot: int, caller: Definition, at: CallSite, depth: int) -> str:
        """Type of a `let` value (or one branch's tail, evaluated at its own line: its block's
        bindings), or of its tuple slot ``slot`` (a tuple literal's element, or a slot of the value's tuple type).
        Following a `let` costs no depth: the `let`s a value sees end before the one it belongs to,
        so a chain of them (`let x = f(); let x = x.g(); ...`) ends by itself."""
        v = value.strip()
        if slot >= 0 and v.startswith("(") and v.endswith(")"):
            elems = split_top(v[1:-1])
            if len(elems) >= 2:
                return self._expr_type(elems[slot], caller, at, depth) if slot < len(elems) else ""
        ty = self._expr_type(v, caller, at, depth)
        if slot >= 0 and strip_marks(ty)[0].startswith("X:") and strip_marks(ty)[0].endswith("…"):
            return "X:?"  # `let (s, l) = t.storage_and_layout()` on a non-generic external type: external parts
        if slot >= 0:
            parts = strip_marks(ty)[0][2:].split(";") if ty.startswith("P:") else []
            ty = parts[slot] if slot < len(parts) else ""
        return ty

    def _closure_param(self, ctx: Context, slot: int, caller: Definition, call: CallSite, depth: int,
                       path: list[int] | None = None) -> str:
        """Parameter ``slot`` of a closure passed to an element-wise method: an ``Option``/``Result``'s content
        (``opt.is_some_and(|x| ..)``, ``opt.map(|v| ..)`` on an ``Option<Vec<T>>``: the Vec), an iterator's item
        (``xs.iter().map(|x| ..)``), unknown when the receiver's syntax does not tell which; passed to a function
        or method that resolves exactly: the argument type its ``Fn(..)`` parameter declares (``func(|xs| ..)``)."""
        key = (caller.file, caller.qualname)
        calls = self._calls_by_caller.get(key)
        if calls is None:
            f = self.files.get(caller.file) or self.t.file_of.get(caller.file)
            calls = self._calls_by_caller[key] = [
                replace(c, line=c.attrs["macro_pos"][0], col=c.attrs["macro_pos"][1]) if "macro_pos" in c.attrs else c
                for c in (f.calls if f else ()) if c.caller == caller.qualname and c.kind in ("method", "call")]
        head = ctx.text.strip()
        okey = (key, self._pin(ctx))
        if okey in self._owner_memo:
            owner = self._owner_memo[okey]
        else:
            owner = self._owner_memo[okey] = next((c for c in reversed(calls) if c.line <= ctx.line
                                                   and any(a.strip().startswith(head) for a in c.args)), None)
        if owner is not None and (owner.kind != "method" or owner.callee not in _ELEMENTWISE):
            return "" if path else self._fn_bound_param(owner, head, slot, caller, ctx, depth)
        if owner is not None and path and not slot and owner.callee not in _CONTENT_CLOSURE and depth < 4 and (
                owner.callee not in _CONTENT_OR_ITEM or _is_iterator(owner.receiver)):
            item = self._iter_item(owner.receiver, caller, owner, depth + 1)  # `.map(|(i, (a, b))| ..)`
            for k in path:
                item = item[k] if isinstance(item, tuple) and k < len(item) else ""
            self._why = f"closure parameter of `.{owner.callee}` on `{_clip(owner.receiver)}` " \
                        f"({call.file.rsplit('/', 1)[-1]}:{ctx.line})"
            return item if isinstance(item, str) else ""
        if owner is None or slot or path or owner.callee in ("map_or", "map_or_else") and \
                not owner.args[-1].strip().startswith(head):
            return ""  # `Result::map_or_else(|e| .., |x| ..)`: the first closure receives the error
        ty = self.receiver_type(owner.receiver, caller, owner, depth + 1)
        r = strip_marks(ty)[0]
        self._why = f"closure parameter of `.{owner.callee}` on `{_clip(owner.receiver)}` " \
                    f"({call.file.rsplit('/', 1)[-1]}:{ctx.line})"
        if owner.callee in _CONTENT_CLOSURE:  # `Option`/`Result` only (no iterator has them): the content
            return ty if r.startswith(("T:", "D:", "U:", "X:")) else ""
        if owner.callee in _CONTENT_OR_ITEM and not _is_iterator(owner.receiver):
            # an `Option<P>` (typed as its P) or an iterator held in a variable: the payload only when the
            # type can be no iterator and no container (those are iterators' items or an `Option<Vec<T>>`'s Vec)
            if r.startswith("X:"):
                return "" if "<" in r else self._element(r)
            return ty if r.startswith(("T:", "D:", "U:")) and not any(
                self.methods_of(m, "next") for m in members(r)) else ""
        opt = _OPTION_ITER_RE.fullmatch(owner.receiver.strip())
        if opt and depth < 4 and self._option_declared(opt.group(1), caller, owner):
            # `opt.iter().map(|v| ..)` of an `Option<Vec<T>>`: the `Vec` (the type peels the `Option`)
            note = self._why
            item = self._iter_item(owner.receiver, caller, owner, depth + 1)
            self._why = note
            return item if isinstance(item, str) else ""
        if not r and depth < 4 and _ITER_HEAD_RE.search(owner.receiver):  # `[q, k, v].into_iter().all(|x| ..)`
            note = self._why
            item = self._iter_item(owner.receiver, caller, owner, depth + 1)
            self._why = note  # (not the last item's own binding)
            return item if isinstance(item, str) else ""
        if r.startswith("X:"):
            return self._element(r)
        return ""  # an iterator (or a `Vec`) typed as a checkout type: its item is not the type itself

    def _fn_bound_param(self, owner: CallSite, head: str, slot: int, caller: Definition, ctx: Context,
                        depth: int) -> str:
        """Parameter ``slot`` of the closure ``head`` passed to ``owner``: when ``owner`` resolves exactly, the
        type its parameter's ``Fn(A, ..)`` (a generic bound, ``impl Fn``, ``Box<dyn Fn>``) gives that slot."""
        if depth > 3 or id(owner) in self._owners_open:
            return ""
        res = self._owner_res.get(self._pin(owner))
        if res is None:
            self._owners_open.add(id(owner))  # (typing the owner's receiver cannot come back to its closure)
            try:
                res = self._owner_res[self._pin(owner)] = self._method(owner, caller) if owner.kind == "method" \
                    else self._path(owner, caller)
            finally:
                self._owners_open.discard(id(owner))
        if res.status != EXACT or len(res.targets) != 1:
            return ""
        d = self.t.defs[res.targets[0]]
        k = next(i for i, a in enumerate(owner.args) if a.strip().startswith(head))
        params = [p for p in d.params if p.name != "self"]
        if k >= len(params):
            return ""
        ptxt = peel(params[k].type)
        for bound in d.generic_bounds.get(ptxt, [ptxt]):
            args = _fn_args(dyn_bounds(bound)[0] if bound.startswith(("impl ", "dyn ")) and dyn_bounds(bound)
                            else bound)
            if args is None:
                continue
            ty = self.type_ref(args[slot], self.scope_of(d)) if slot < len(args) else ""
            if ty.startswith("G:"):
                return ""
            self._why = f"closure parameter of {d.name}'s `{_clip(bound)}` ({owner.file.rsplit('/', 1)[-1]}:{ctx.line})"
            return ty
        return ""

    def _text_type(self, text: str, sc: Scope, indexed: bool) -> str:
        if indexed:
            elem = element(text)
            return self.type_ref(elem, sc) if elem else ""
        return self.type_ref(text, sc)

    @classmethod
    def _element(cls, ref: str) -> str:
        """The element of a container reference (see :meth:`_index`); of a non-generic external type (or over
        external types only), or of a value one's method handed out (``X:T…``, e.g. ``linear.bias()``), an
        external value (``X:?``): that crate cannot name a checkout type."""
        r = strip_marks(ref)[0]
        return cls._index(r) or ("X:?" if r.startswith("X:") and (r.endswith("…") or _external_path(r)) else "")

    @staticmethod
    def _index(ref: str) -> str:
        """The element of a container reference (``X:Vec<T:a::B>`` → ``T:a::B``), else ''."""
        r = strip_marks(ref)[0]
        if r.startswith("X:") and r.endswith(">") and "<" in r:
            return r[r.index("<") + 1 : -1]
        return ""

    def type_def(self, qual: str, file: str, field: str = "") -> Definition | None:
        """The type definition at ``qual`` as seen from ``file`` (with ``field`` when given): one
        qualified name can hold several (cfg alternatives; same-named binaries of two packages)."""
        alts = self._same_qual.get(qual)
        if alts is None:
            d = self.type_defs.get(qual)
            return d if d is not None and (not field or field in d.fields) else None
        fit = [d for d in alts if not field or field in d.fields]
        return next((d for d in fit if d.file == file), None) or next(
            (d for d in fit if self.pk.visible(file, d.file)), None) or (fit[0] if fit else None)

    def _field(self, owner: str, field: str, indexed: bool, file: str = "") -> str:
        r = strip_marks(owner)[0]
        if r.startswith("U:"):
            return union([self._field(m, field, indexed, file) for m in members(r)])
        if r.startswith("P:") and field.isdigit() and "P:" not in r[2:]:  # a tuple's slot: `pair.0`
            parts = r[2:].split(";")
            slot = parts[int(field)] if int(field) < len(parts) else ""
            return self._index(slot) if indexed else slot
        if not r.startswith("T:"):
            return _opaque(r) if r.startswith("X:") and "<" not in r else ""
        d = self.type_def(r[2:], file, field)
        seen, target = {r}, r
        while d is None:  # auto-deref: `self.layout` of `struct Tensor(Arc<Tensor_>)` with `Target = Tensor_`
            target = self.deref_target(target)
            if not target.startswith("T:") or target in seen:
                return ""
            seen.add(target)
            d = self.type_def(target[2:], file, field)
        return self._text_type(d.fields[field], self.scope_of(d), indexed)

    def _loop_elem(self, coll: str, caller: Definition, call: CallSite, sc: Scope, depth: int, line: int = 0) -> str:
        coll = coll.removeprefix("&mut ").removeprefix("&").strip()
        for _ in range(3):
            coll = _ITER_RE.sub("", coll)
        coll = _RANGE_INDEX_RE.sub("", coll)  # `&xs[1..]`: a slice of the same elements
        if coll.startswith("[") and coll.endswith("]") and ";" not in coll and depth < 4:  # `[a, b, c]`
            tys = {self._expr_or_receiver(x, caller, call, depth + 1) for x in split_top(coll[1:-1])}
            return join_branches(tys)
        if coll.startswith("self.") and coll.count(".") == 1:
            owner = strip_marks(sc.self_ty)[0]
            d = self.type_def(owner[2:], caller.file, coll[5:]) if owner.startswith("T:") else None
            if d is not None:  # (iterating an `Option` yields its content, not the content's elements)
                text = d.fields[coll[5:]]
                return self._text_type(text, self.scope_of(d), not _is_option_text(text))
            return ""
        let = self._assigned(caller, coll, line or call.line, 0) if _WORD_RE.fullmatch(coll) else None
        for p in caller.params if not (let and (let[0] or let[6])) else ():  # (a `let` shadowing the parameter)
            if p.name == coll:
                return self._text_type(p.type, sc, not _is_option_text(p.type))
        if _WORD_RE.fullmatch(coll) and depth < 4:
            return self._index(self._var_type(coll, caller, call, sc, False, depth + 1))
        return ""

    def _loop_binding(self, ctx: Context, r: str, caller: Definition, call: CallSite, sc: Scope,
                      depth: int) -> tuple[str, str]:
        """(type, binding note) of variable ``r`` bound by the ``for`` loop ``ctx``; ("", "") when the loop does
        not bind it (the note is set whenever it does, typed or not: the innermost binding wins)."""
        fm = _FOR_RE.match(ctx.text)
        path = _pattern_path(fm.group(1), r) if fm else None
        if fm is None or path is None:
            return "", ""
        m = _LOOP_RE.match(ctx.text)
        elem = ""
        if m and m.group(1) == r and (not path or ".enumerate()" in m.group(2)):
            elem = self._loop_elem(m.group(2).strip(), caller, call, sc, depth, ctx.line)
        if not elem and depth < 4:  # nested tuple patterns over `zip` / `enumerate`, any iterable expression
            item = self._iter_item(fm.group(2).strip(), caller, call, depth + 1)
            for k in path:
                item = item[k] if isinstance(item, tuple) and k < len(item) else ""
            elem = item if isinstance(item, str) else ""
        return elem, f"element of `{_clip(fm.group(2).strip())}` (for loop, {call.file.rsplit('/', 1)[-1]}:{ctx.line})"

    def _iter_item(self, expr: str, caller: Definition, call: CallSite, depth: int) -> str | tuple[Any, ...]:
        """The item type of iterating ``expr``: a reference, or a tuple of them for ``enumerate``, ``zip`` and
        maps (key unknown, value); ``""`` when unknown."""
        e = expr.strip().removeprefix("&mut ").removeprefix("&").strip()
        if depth > 6 or not e:
            return ""
        if e.startswith("[") and e.endswith("]") and ";" not in e:  # `[a, b, c]`
            tys = {self._expr_or_receiver(x, caller, call, depth + 1) for x in split_top(e[1:-1])}
            return join_branches(tys)
        head = _call_head(e) if e.endswith(")") else None
        recv, name, args = head if head is not None else (None, "", "")
        if recv is not None:
            if name == "enumerate":
                return ("X:usize", self._iter_item(recv, caller, call, depth + 1))
            if name == "zip" and len(split_top(args)) == 1:
                return (self._iter_item(recv, caller, call, depth + 1), self._iter_item(args, caller, call, depth + 1))
            if name in _SAME_ITEMS:
                return self._iter_item(recv, caller, call, depth + 1)
            if name in ("values", "values_mut", "into_values"):
                return self._index(self._expr_or_receiver(recv, caller, call, depth + 1))
            if name in ("chunks", "windows", "chunks_exact"):
                inner = self._iter_item(recv, caller, call, depth + 1)
                return f"X:[]<{inner}>" if isinstance(inner, str) and inner else ""
            if name == "flatten":
                inner = self._iter_item(recv, caller, call, depth + 1)
                return self._index(inner) or inner if isinstance(inner, str) and inner.startswith("X:") else inner
        e = _RANGE_INDEX_RE.sub("", e)  # `&xs[1..]`: a slice of the same elements
        if self._option_declared(e, caller, call):  # an `Option` (peeled in its type) yields its content
            return strip_marks(self._expr_or_receiver(e, caller, call, depth + 1))[0]
        ty = strip_marks(self._expr_or_receiver(e, caller, call, depth + 1))[0]
        if ty.startswith("X:") and ty[2:].split("<", 1)[0] in MAPS:
            return ("", self._index(ty))  # a map yields (key, value)
        return self._element(ty)

    def _option_declared(self, e: str, caller: Definition, call: CallSite) -> bool:
        """``e`` — ``self.f`` or a parameter no ``let`` shadows at ``call`` — is declared an ``Option`` (type
        references peel it: iterating it yields its content, which the peeled type would take for a container)."""
        if e.startswith("self.") and _WORD_RE.fullmatch(e[5:]):
            owner = strip_marks(self.scope_of(caller).self_ty)[0]
            d = self.type_def(owner[2:], caller.file, e[5:]) if owner.startswith("T:") else None
            return d is not None and _is_option_text(d.fields[e[5:]])
        if not _WORD_RE.fullmatch(e):
            return False
        let = self._assigned(caller, e, call.line, call.col, call.text)
        if let[6]:
            return _is_option_text(let[6])
        return not let[0] and any(p.name == e and _is_option_text(p.type) for p in caller.params)

    def _pattern_binding(self, pattern: str, subject: str, var: str, caller: Definition, call: CallSite,
                         sc: Scope, depth: int) -> str:
        """Type of ``var`` bound by an arm / ``if let`` pattern: ``E::V(a, var)``, ``E::V { var, .. }``,
        ``Some(var)`` / ``Ok(var)`` (the subject's content)."""
        m = _OPTION_PAT_RE.match(pattern.strip())
        if m and m.group(2) == var:
            expr = m.group(3) or subject
            if expr and depth < 4:
                return self._expr_or_receiver(expr.strip(), caller, call, depth + 1)
            return ""
        pat, subj = _pattern_and_subject(pattern, subject)
        pair = _tuple_slot(pat, subj, var)
        if pair is not None and depth < 4:  # `match (&*a, &*b) { (S::Cuda(x), S::Cuda(y)) => .. }`: slot by slot
            return self._pattern_binding(pair[0], pair[1], var, caller, call, sc, depth + 1)
        for m in _VARIANT_TUPLE_RE.finditer(pattern):
            names = [re.sub(r"^(ref\s+)?(mut\s+)?&?", "", x.strip()) for x in m.group(3).split(",")]
            if var in names:
                got = self._variant_payload(m.group(1), m.group(2), names.index(var), sc)
                if not got and subj and depth < 4 and _external_path(self.type_ref(m.group(1), sc)):
                    got = self._external_payload(m.group(1), subj, caller, call, sc, depth + 1)
                return got
        for path, fname in _brace_fields(pattern, var):  # `E::V { a, .. }`, `S { a, b: c, .. }` (nested too)
            enum_text, _, variant = path.rpartition("::")
            got = (self._variant_payload(enum_text, variant, fname, sc) if enum_text else "") or self._struct_field(
                path, fname, sc, call.file)
            if got:
                return got
        return ""

    def _external_payload(self, enum_text: str, subject: str, caller: Definition, call: CallSite, sc: Scope,
                          depth: int) -> str:
        """A payload of another crate's enum variant (``Storage::Cuda(c)``) matched against ``subject``: external
        when the subject's type is another crate's that is not generic over a checkout type (``X:c::T``, or a value
        one of its types handed out, ``X:c::?``): no part of its value can be a checkout type.  (The pattern alone
        does not tell: ``Either::Left(x)`` may hold a checkout type.)"""
        ty = strip_marks(self._expr_or_receiver(subject, caller, call, depth))[0]
        if not ty.startswith("X:") or "<" in ty or _is_std(ty):
            return ""
        return _opaque(strip_marks(self.type_ref(enum_text, sc))[0])

    def _newtype_payload(self, ctor: str, text: str, sc: Scope) -> tuple[tuple[Scope, str] | None, str]:
        """The one field's type text (with its scope) of a parameter pattern ``Ctor(x): Ty``, when ``Ty`` is (through
        checkout type aliases found by their path) one of :data:`NEWTYPE_PAYLOADS` — another crate's tuple struct
        whose one field is its type argument (axum's ``State<S>(pub S)``) — named ``Ctor``; with the rule's text."""
        for _ in range(4):
            base, args = generic_args(peel_refs(text))
            segs = [x for x in re.sub(r"\s*::\s*", "::", base).split("::") if x]
            if not segs:
                return None, ""
            ref = strip_marks(self.type_ref(base, sc))[0]
            crate = ref[2:].split("::")[0] if ref.startswith("X:") else ""
            if segs[-1] == ctor and len(args) == 1 and segs[-1] in NEWTYPE_PAYLOADS.get(crate, ()):
                return (sc, args[0]), f"`{crate}::{ctor}<T>(pub T)`: T"
            aliases = [d for d in self.t.types.get(segs[-1], ()) if d.attrs.get("kind") == "type_alias"
                       and d.attrs.get("aliased") and d.qualname in self.expand(segs, sc.module, sc.fn_qual, sc.file)]
            if len(aliases) != 1 or args:
                return None, ""
            text, sc = aliases[0].attrs["aliased"], self.scope_of(aliases[0])
        return None, ""

    def _struct_field(self, path: str, field: str, sc: Scope, file: str) -> str:
        """Type of field ``field`` of the struct named ``path`` (written in ``sc``), or ""."""
        ty = strip_marks(sc.self_ty if path == "Self" else self.type_ref(path, sc))[0]
        return self._field(ty, field, False, file) if ty.startswith("T:") else ""

    def _variant_payload(self, enum_text: str, variant: str, slot: int | str, sc: Scope) -> str:
        enum = strip_marks(sc.self_ty if enum_text == "Self" else self.type_ref(enum_text, sc))[0]
        if not enum.startswith("T:"):
            return ""
        alts = [d for d in self.t.types.get(enum.rsplit("::", 1)[-1], ()) if d.qualname == enum[2:]]
        alts.sort(key=lambda d: (d.file != sc.file, not self.pk.visible(sc.file, d.file)))  # its own first
        for d in alts:
            if isinstance(slot, int):
                types = d.attrs.get("variant_types", {}).get(variant)
                text = types[slot] if types and slot < len(types) else ""
            else:
                text = d.attrs.get("variant_fields", {}).get(variant, {}).get(slot, "")
            if text:
                return self.type_ref(text, self.scope_of(d))
        return ""

    def _expr_or_receiver(self, expr: str, caller: Definition, call: CallSite, depth: int) -> str:
        e = expr.strip().removeprefix("&mut ").removeprefix("&").strip()
        if e.endswith(")"):
            return self._expr_type(e, caller, call, depth)
        return self.receiver_type(e, caller, call, depth)

    def _assigned(self, caller: Definition, var: str, line: int, col: int = 1 << 20,
                  inside: str = "") -> tuple[str, int, int, int, list[list[int]], str, str, Any]:
        """The value text, line, column, tuple slot (-1: the whole value), branch positions and
        destructuring pattern (`let S { var, .. } = …`, `let Some(var) = … else`; else ""), written
        type (`let var: T = …`; else "") and the arms around each branch value (``tail_arms``) of the
        last `let var = …` / `let (.., var, ..) = …` in scope at ``line``:``col``: its statement
        ended before (its own value cannot see it: in `let w = w.f()` the receiver is the earlier
        `w`) and its block is still open (a `let` in another block, e.g. the other branch of an
        `if`, is out of scope).  Without positions (``col`` unknown), a `let` on ``line`` counts
        unless its value holds the call ``inside``.  A value with branches (`if`/`match`) is
        their tails joined by NUL, each written at its position."""
        by_var = self._assigns.get(self._pin(caller))
        if by_var is None:
            by_var = self._assigns[self._pin(caller)] = {}
            for a in caller.attrs.get("assigns", ()):
                by_var.setdefault(a.get("var", ""), []).append(_let_entry(a, -1))
            for a in caller.attrs.get("tuple_assigns", ()):
                for k, v in enumerate(a.get("vars", ())):
                    by_var.setdefault(v, []).append(_let_entry(a, k))
            for a in caller.attrs.get("pattern_assigns", ()):
                for v in a.get("vars", ()):
                    by_var.setdefault(v, []).append(_let_entry(a, -1))
            for lst in by_var.values():
                lst.sort(key=lambda e: (e[0], e[1]))
        best: tuple[str, int, int, int, list[list[int]], str, str, Any] = ("", 0, 0, -1, [], "", "", ())
        here = (line, col)
        for at, at_col, last, end, value, slot, tails, pattern, written, arms in by_var.get(var, ()):
            if last is None:
                seen = at < line or at == line and not (inside and inside[:60] in value)
            else:
                seen = last <= here if col < 1 << 20 else last[0] < line or last[0] == line and not (
                    inside and inside[:60] in value)
                seen = seen and (end is None or here < end)
            if seen:
                best = (value, at, at_col, slot, tails, pattern, written, arms)
        return best

    def _chain_type(self, expr: str, caller: Definition, call: CallSite, depth: int) -> str:
        """Type of ``a.b[i].c(x).d`` by folding field types and method return types left to right."""
        parts = _split_chain(" ".join(expr.split()))
        if not parts:
            return ""
        first = parts[0]
        if first.endswith(")"):  # Type::new(..) / f(..)
            ty = self._expr_type(first, caller, call, depth)
        else:
            base, idx = _strip_index(first)
            ty = self.receiver_type(base, caller, call, depth)
            if idx:
                ty = self._index(ty)
        for part in parts[1:]:
            if not ty:
                return ""
            name, idx = _strip_index(part)
            if name.endswith(")") and "(" not in name:
                return ""
            if name.endswith(")") and name[: name.index("(")] in _SAME_TYPE:
                pass  # `.map_err(..)`, `.unwrap()`: the same type
            elif name.endswith(")"):
                ty = self._method_result(ty, name[: name.index("(")].split("::<")[0], name, caller, call, depth)
            else:
                ty = self._field(ty, name, False, call.file)
            if idx:
                ty = self._index(ty)
        return ty

    def _option_content(self, ty: str) -> bool:
        """Is ``ty`` a checkout type a ``.cloned()`` / ``.copied()`` of can only be ``Option``'s (the type has no
        such method and is no iterator, so the value is an ``Option<&T>``, typed as its ``T``)?"""
        r = strip_marks(ty)[0]
        return r.startswith("T:") and not self.methods_of(r, "cloned") and not self.methods_of(r, "copied") \
            and not self.methods_of(r, "next")

    def _into_bound(self, var: str, name: str, caller: Definition, call: CallSite) -> str:
        """``var.into()`` (``try_into``) of a parameter (no ``let`` shadowing it) whose type is a generic or ``impl``
        bounded by one ``Into<U>`` (``TryInto<U>``): ``U`` — a where clause is chosen before any impl, so the bound
        decides the result.  ``self._why`` is left as it was."""
        if self._assigned(caller, var, call.line, call.col, call.text)[0:7:6] != ("", ""):
            return ""
        p = next((p for p in caller.params if p.name == var), None)
        if p is None:
            return ""
        text = peel_refs(p.type).strip()
        bounds = dyn_bounds(text) if text.startswith("impl ") else caller.generic_bounds.get(text, [])
        trait = "Into" if name == "into" else "TryInto"
        got = [b for b in bounds if generic_args(b)[0].rsplit("::", 1)[-1] == trait and len(generic_args(b)[1]) == 1]
        if len(got) != 1:
            return ""
        ty = self.type_ref(generic_args(got[0])[1][0], self.scope_of(caller))
        return ty if strip_marks(ty)[0].startswith("T:") else ""

    def _method_result(self, ty: str, mname: str, text: str, caller: Definition, call: CallSite, depth: int) -> str:
        """Type of ``<ty>.mname(..)``: the declared return type of the method it resolves to."""
        r = strip_marks(ty)[0]
        if r.startswith("U:"):
            return union([self._method_result(m, mname, text, caller, call, depth) for m in members(r)])
        if r.startswith("X:"):
            if _local_turbofish(text):
                return ""  # `v.extract::<Config>()`: a generic method may hand out a checkout type
            if mname in _ELEM_METHODS and self._index(r):
                return self._index(r)
            if mname in _SAME_ELEMS and self._index(r):
                return r
            local = self.impl_methods.get((r, mname))
            if local:
                return self._returns(local, caller, call, text, depth)
            if "<" in r:
                return ""  # a generic external type (a container) may hand out a local type
            if _is_std(r):
                return "X:std::?"
            return r if r.endswith(("…", "?")) else f"{r}…"  # an opaque external type's methods stay outside
        if r.startswith(("D:", "G:")):
            trait = r[2:] if r.startswith("D:") else ""
            if r.startswith("G:") and caller is not None:
                bounds = caller.generic_bounds.get(r[2:], [])
                trait = self.type_ref(bounds[0], self.scope_of(caller)) if bounds else ""
            _, decl = self.trait_impls_of(trait, mname) if trait else ([], [])
            return self._returns(decl, caller, call, text, depth, self_ty=r)
        if mname in ("cloned", "copied") and self._option_content(r):
            return ty  # `Option<&T>::cloned()`: a T
        return self._returns(self.methods_of(r, mname), caller, call, text, depth)

    def _returns(self, ids: list[str], caller: Definition, call: CallSite, text: str, depth: int,
                 self_ty: str = "") -> str:
        types = set()
        for i in ids:
            d = self.t.defs[i]
            ty = self._return_type(d, caller, call, text, depth)
            if ty == "" and d.return_type:
                return ""
            own = d.attrs.get("trait_decl") and strip_marks(ty)[0] == strip_marks(self.scope_of(d).self_ty)[0]
            types.add(self_ty if self_ty and own else ty)  # a trait's `-> Self` is the receiver's type (not any dyn)
        types.discard("")
        return types.pop() if len(types) == 1 else ""

    def _return_type(self, d: Definition, caller: Definition, call: CallSite, text: str, depth: int) -> str:
        rt = d.attrs.get("return_assoc") or d.return_type.strip()  # `-> Self::Output`: the impl's `type Output`
        if not rt:
            return ""
        sc = self.scope_of(d)
        ref = self.type_ref(rt, sc)
        if ref.startswith("G:") and ref[2:] in d.template_params and depth < 4:
            return self._bind_generic(ref[2:], d, caller, call, text, depth)
        return ref

    def _bind_generic(self, g: str, d: Definition, caller: Definition, call: CallSite, text: str, depth: int) -> str:
        """A generic return type bound by an argument: ``f<V>(x: V)`` or ``f<V>(build: impl FnOnce() -> Result<V>)``
        called with a closure (``|| self.make()``) — the argument's (or the closure body's) type."""
        head = _call_head(text) if text.endswith(")") else None
        if head is None:
            return ""
        args = split_top(head[2])
        params = [p for p in d.params if p.name != "self"]
        for i, p in enumerate(params):
            if i >= len(args):
                break
            ptxt = peel_refs(p.type)
            bound = (d.generic_bounds.get(ptxt) or [""])[0] if ptxt in d.generic_bounds else ptxt
            fm = _FN_BOUND_RE.match(bound)
            if ptxt == g:
                return self._expr_or_receiver(args[i], caller, call, depth + 1)
            if fm and re.search(rf"\b{re.escape(g)}\b", fm.group(1)):
                cm = _CLOSURE_RE.match(args[i].strip())
                if cm:
                    return self._expr_or_receiver(cm.group(1).strip(), caller, call, depth + 1)
        return ""

    def _operator_type(self, split: tuple[str, str, str], caller: Definition, call: CallSite, depth: int) -> str:
        """Type of ``a op b`` (``+ - * / %``): the declared ``Output`` of the left operand type's impls of
        the operator trait in the checkout (all of them must agree); a primitive left operand without
        such an impl gives a primitive; an external one stays outside (its crate's impl)."""
        left, op, _ = split
        trait, method = _OPERATORS[op]
        left = left.strip()
        while _wrapped(left) and _binary_split(left[1:-1]) is None:
            left = left[1:-1].strip()
        if not left or left[0] in "-!" or left[0].isdigit() or depth > 4:
            return ""  # a negation or an (untyped) literal: the impl is not known
        cast = split_top(left, " ")
        if len(cast) >= 3 and cast[-2] == "as":  # `x as f64 * t`
            ty = self.type_ref(cast[-1], self.scope_of(caller))
        else:
            ty = self._expr_or_receiver(left, caller, call, depth + 1)
        r, heur = strip_marks(ty)
        if not r.startswith(("T:", "X:")):
            return ""
        ids = [i for i in self.impl_methods.get((r, method), ()) if self.t.defs[i].trait == trait]
        if ids:
            got = self._returns(ids, caller, call, "", depth + 1)
            d = self.t.defs[ids[0]]
            self._why = f"`{op}` operator: Output of {trait} for {short(r)} ({d.file.rsplit('/', 1)[-1]}:{d.line})" \
                if got else ""
            return got + "~" if got and heur and not got.endswith("~") else got
        if r.startswith("X:") and r[2:] in PRIMITIVES:
            return r  # `usize * usize`: std's impls keep the primitive
        if r.startswith("X:") and "<" not in r and not _is_std(r):
            return _opaque(r)
        return ""

    def _local_closure_call(self, name: str, caller: Definition, call: CallSite, depth: int) -> str | None:
        """Type of calling the local closure ``name`` (``let name = |..| body;`` in scope; None when ``name`` is
        no such closure): its written return type, else its body's value — a ``match`` is typed arm by arm
        with each arm's bindings, diverging arms (``bail!``, ``panic!``, ``return``) left out."""
        value, line, col, slot, _, pattern, written, _ = self._assigned(caller, name, call.line, call.col, call.text)
        m = _CLOSURE_HEAD_RE.match(value) if value and slot < 0 and not pattern and not written else None
        if m is None:
            return None
        key = (self._pin(caller), name, line, col)
        hit = self._let_memo.get(key)
        if hit is not None:
            return hit
        self._let_memo[key] = ""  # (a closure calling itself)
        at = replace(call, line=line, col=col)
        ret, body = (m.group(1) or "").strip(), value[m.end() :].strip()
        if ret:
            ty = self.type_ref(ret, self.scope_of(caller))
        elif body.startswith("match ") and body.endswith("}") and "{" in body and depth < 4:
            subject, arms = body[6 : body.index("{")].strip(), body[body.index("{") + 1 : -1]
            tys = set()
            for arm in split_top(arms):
                pat, sep, val = arm.partition("=>")
                val = val.strip()
                if not sep or _DIVERGES_RE.match(val):
                    continue
                ctx = Context("match_arm", pat.strip(), line, f"closure:{line}:{col}", subject=subject)
                tys.add(self._expr_type(_block_tail(val) if val.startswith("{") else val, caller,
                                        replace(at, contexts=[*at.contexts, ctx]), depth + 1))
            ty = join_branches(tys)
        else:
            ty = self._expr_type(body, caller, at, depth + 1) if depth < 4 else ""
        self._let_memo[key] = ty
        return ty

    def _expr_type(self, expr: str, caller: Definition, call: CallSite, depth: int) -> str:
        """Type of a value expression: a call (through the callee's declared return type), an operator
        (through its trait impl), a struct literal, a block's tail, a variable."""
        e = _peel_tail(expr)
        if depth > 4 or not e:
            return ""
        while _wrapped(e):
            e = _peel_tail(e[1:-1])  # `(a * b)`
        split = _binary_split(e)
        if split is not None:
            return self._operator_type(split, caller, call, depth)
        m = _MACRO_VALUE_RE.match(e)
        if m:
            return self._macro_value(m, caller, call, depth + 1)
        if e.startswith("unsafe") and e.endswith("}") and e[6:].lstrip().startswith("{"):  # `unsafe { dev.alloc(n)? }`
            e = e[6:].strip()
        if e.startswith("{") and e.endswith("}"):
            tail = _block_tail(e)
            return self._expr_type(tail, caller, call, depth + 1) if tail else ""
        if e.startswith(("&", "*")):
            return self._expr_type(e.lstrip("&*").removeprefix("mut ").lstrip("*").strip(), caller, call, depth + 1)
        if not e.endswith(")"):
            m = _STRUCT_LIT_RE.match(e)
            if m:
                return self._literal_type(m.group(1), self.scope_of(caller))
            if _FIELDS_RE.fullmatch(e):
                return self.receiver_type(_DOT_WS_RE.sub(".", e), caller, call, depth + 1)
            if "::" in e and _PATH_RE.fullmatch(e):  # `State::Idle` (a unit variant or constant)
                return self.receiver_type(e, caller, call, depth + 1)
            parts = _split_chain(" ".join(e.split())) if ")" in e and "." in e else []
            if len(parts) >= 2 and _FIELDS_RE.fullmatch(parts[-1]) and _WORD_RE.match(parts[0]):
                return self.receiver_type(e, caller, call, depth + 1)  # `t.storage_and_layout().0`: a field of a call
            return ""
        head = _call_head(e)
        if head is None:
            return ""
        recv, name, _ = head
        if recv is not None and name in ("into", "try_into") and _WORD_RE.fullmatch(recv.strip()) and e.endswith("()"):
            target = self._into_bound(recv.strip(), name, caller, call)
            if target:
                return target
        if recv is not None:
            fake = CallSite("method", name, [name], call.caller, call.file, call.line, call.col, receiver=recv,
                            contexts=call.contexts)
            ty = self.receiver_type(recv, caller, fake, depth)
            return self._method_result(ty, name, e, caller, call, depth) if ty else ""
        segs = name.split("::")
        sc = self.scope_of(caller)
        if name in _CONTENT_CTORS and len(split_top(head[2])) == 1:  # `Ok(x)`: x's type (as `Result<T>` is peeled)
            return self._expr_or_receiver(head[2], caller, call, depth + 1)
        if len(segs) == 1 and not segs[0][:1].isupper():  # `get(x)` where `let get = |n| …` (shadows a fn `get`)
            got = self._local_closure_call(segs[0], caller, call, depth)
            if got is not None:
                return got
        if segs[-1][:1].isupper() and segs[-1] not in PRELUDE:  # `Enum::Variant(..)` / `TupleStruct(..)`
            whole = strip_marks(self.type_ref(name, sc))[0]
            if whole.startswith("T:"):
                return whole
            if _external_path(whole):  # `Json(body)`: another crate's tuple struct
                return _opaque(whole)  # (its payload may be a checkout type: only its crate is known)
            enum = strip_marks(self.type_ref("::".join(segs[:-1]), sc))[0] if len(segs) >= 2 else ""
            d = self.type_defs.get(enum[2:]) if enum.startswith("T:") else None
            return enum if d is not None and d.attrs.get("kind") == "enum" else ""
        if len(segs) >= 2:
            owner = self.type_ref("::".join(segs[:-1]), sc) if segs[-2][:1].isupper() or segs[-2] == "Self" else ""
            if owner:
                r = strip_marks(owner)[0]
                ids = self.methods_of(r, segs[-1]) if r.startswith("T:") else []
                if ids:
                    got = self._returns(ids, caller, call, e, depth)
                    return got or (owner if segs[-1] in ("new", "from", "default") else "")
                if r.startswith("X:") and _local_turbofish(e):
                    return ""
                if r.startswith("X:") and r[2:].split("<")[0] in _STD_GENERIC:  # `Arc::get_mut(&mut a)`: a's content
                    one = split_top(head[2])
                    return self._expr_or_receiver(one[0], caller, call, depth + 1) \
                        if segs[-1] in _CONTENT_FNS and len(one) == 1 else ""
                if r.startswith("X:"):
                    return owner if segs[-1] in ("new", "from", "default") or segs[-1].startswith(
                        ("from_", "new_", "with_", "zeros", "ones")) else _opaque(r)
                return owner if segs[-1] in ("new", "from", "default") else ""
        if caller is not None and segs[0] in caller.generic_bounds:
            return ""
        for absolute in self.expand(segs, sc.module, sc.fn_qual, call.file):
            ids, _ = self.lookup(absolute, 0, call.file)
            if ids:
                return self._returns(ids, caller, call, e, depth)
        first = self.expand(segs, sc.module, sc.fn_qual, call.file)
        if len(first) == 2 and first[0] == f"{sc.module}::{first[1]}" and "::" in first[1]:
            first = first[1:]  # `tempfile::tempdir()` in test code (a dev-dependency): no such module here
        if first and self.external_crate(first[0].split("::")[0], call.file) and not _local_turbofish(e) and (
                segs[0] not in PRELUDE or len(segs) > 2 and segs[0] in STD_CRATES and segs[1] in _STD_OPAQUE_MODULES) \
                and segs[-1] not in ("spawn", "scope"):  # (`thread::spawn(f)` hands out a handle of f's result)
            return f"X:{first[0].split('::')[0]}::?"  # what a function of another crate returns stays there
        return ""


__all__ = ["RustResolver", "AMBIGUOUS", "EXACT", "HEURISTIC", "STD_METHODS", "PRELUDE"]


#: Why a checkout impl's method for an external type is only ``heuristic``: Rust takes the type's own
#: (inherent) method of that name first, and the type's own methods are not in the index.
_EXT_OWN = "; by name: a same-named method the type has itself (outside the checkout) would be taken first"


def _calls_itself(d: Definition, caller: Definition | None, call: CallSite) -> bool:
    """``d`` is the caller and the call passes it its own parameters unchanged (``fn to_f32(self) {
    self.to_f32() }``, ``fn from_f64(v) { f16::from_f64(v) }``): it would recurse forever, so in a checkout
    impl for an external type it is the type's own method of that name."""
    if caller is None or d.file != caller.file or d.line != caller.line or d.name != caller.name:
        return False
    own = [p.name for p in caller.params]
    args = [a.strip().lstrip("&").removeprefix("mut ").strip() for a in call.args]
    if call.kind == "method":
        return call.receiver.strip() == "self" and args == [p for p in own if p != "self"]
    return args == own
