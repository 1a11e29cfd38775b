"""The C preprocessor model: function-like macro invocations expanded, their code read as code.

The expansion itself is done by `pcpp <https://pypi.org/project/pcpp/>`_ (a C99
preprocessor in pure Python, BSD, no dependencies): its macro engine does object- and
function-like macros, ``#``/``##``, ``__VA_ARGS__`` and rescanning of nested
invocations as a compiler does, which a regex substitution gets wrong in the corners
(pasting next to a parameter used twice, an argument that is itself a macro call,
variadic commas).  Only *function-like* macros are defined for it: object-like ones
(``WARP_SIZE``, ``BLOCK_KN_SIZE``) stay as written, as the rest of the index sees them.

What this module adds around pcpp:

* :func:`clean_body` — a ``#define``'s text as pcpp wants it (comments out, line
  continuations joined), the form stored in :class:`~apxtui.facts.Import` ``define`` facts;
* :class:`Expander` — expands one invocation text with the definitions a lookup gives
  (only the macros the text reaches are defined), remembering which output tokens
  came from the invocation's own text (its arguments) and which from a macro body, and
  stopping at a size limit (a macro can grow exponentially);
* :func:`read_expansions` — parses many expansions at once with the CUDA/C++
  extractor (one synthetic source, statement invocations wrapped in a function body,
  file-level ones in their namespaces) and maps every definition and call back to the
  invocation: code from an argument keeps its real line, code from a macro body is
  placed at the invocation's line and names the macro and its definition.

Linking decides which invocations to expand (``apxtui/index/macros.py``); nothing here
reads other files.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from apxtui.facts import CallSite, Context, Definition, FileFacts
from apxtui.parse import extract_file

#: Largest macro definition body kept (characters) and invocation text read.
MAX_DEFINE = 65536
MAX_INVOCATION = 65536
#: Tokens one expansion may handle, and CPU seconds it may take (pcpp has no limit; ``#define A(x) x x``
#: nested grows 2^n).
MAX_EXPANSION_TOKENS = 100_000
MAX_EXPANSION_SECONDS = 1.0

_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")
#: Wrapper function names in the synthetic source (statement invocations).
WRAPPER = "__apxtui_macro_"


def clean_body(text: str, limit: int = MAX_DEFINE) -> str:
    """A macro definition's text with comments replaced by a space and continuations joined."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    text = _COMMENT_OR_STRING.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else " ", text)
    text = " ".join(text.split())
    return text[:limit]


@dataclass(frozen=True)
class MacroDef:
    """One ``#define NAME(params) body`` (function-like), where it is and under which ``#if`` arms."""

    name: str
    params: str  # "(a, b, ...)" as written
    body: str
    file: str
    line: int
    cond: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def macro_defs(facts: FileFacts) -> list[MacroDef]:
    """Function-like macro definitions of a file (``Import`` facts of kind ``macro``: the path is
    the parameter list and the body)."""
    out = []
    for imp in facts.imports:
        if imp.kind == "macro" and imp.path.startswith("("):
            depth = 0
            for i, ch in enumerate(imp.path):
                depth += ch == "("
                depth -= ch == ")"
                if depth == 0:
                    out.append(MacroDef(imp.alias, imp.path[: i + 1], imp.path[i + 1 :].strip(), imp.file, imp.line,
                                        tuple(imp.cfg)))
                    break
    return out


_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;(){}]*>\s*)?\(")
_KEYWORDS = frozenset(("if", "while", "for", "switch", "return", "sizeof", "alignof", "decltype", "defined",
                       "static_assert", "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast",
                       "noexcept", "throw", "catch", "__attribute__", "__launch_bounds__", "__declspec"))
_BRANCH_WORDS = re.compile(r"\b(?:if|else|case|default|switch)\b|\?|\[[&=]?\]")


def shape(d: MacroDef) -> tuple[set[str], bool, bool]:
    """What a definition's body does, read without expanding it: (names it calls, whether it
    launches (``<<<``), calls a parameter or returns, whether a parameter is used after a branch
    keyword or inside a lambda — code of the invocation's arguments that the macro places under a
    condition)."""
    params = {p.strip().removesuffix("...") or "__VA_ARGS__" for p in d.params.strip("()").split(",")}
    params.discard("")
    if any(p.endswith("...") for p in d.params.strip("()").split(",")):
        params.add("__VA_ARGS__")
    called = {m.group(1) for m in _CALLED.finditer(d.body)} - _KEYWORDS
    m = _BRANCH_WORDS.search(d.body)
    branched = m is not None and any(re.search(rf"\b{re.escape(p)}\b", d.body[m.start():]) for p in params)
    launches = "<<<" in d.body or bool(called & params) or re.search(r"\breturn\b", d.body) is not None
    return called - params, launches, branched


class ExpansionError(Exception):
    """An invocation pcpp could not expand (malformed, too large); the message says why."""


@dataclass
class Expansion:
    """The text of one expansion and, per output token, where it came from."""

    text: str
    starts: list[int]  # character offset of each token in ``text``
    origins: list[int]  # offset of the token in the invocation text, or -1 (from a macro body)
    used: list[MacroDef] = field(default_factory=list)  # the definitions expanded, outermost first

    def origin_at(self, pos: int) -> int:
        """Invocation offset of the token at character ``pos`` (-1: macro body)."""
        i = bisect_right(self.starts, pos) - 1
        return self.origins[i] if i >= 0 else -1


_PP: Any = None


def _preprocessor() -> Any:
    """One pcpp instance per process (building its lexer costs ~15 ms); errors collected, never printed."""
    global _PP
    if _PP is None:
        from pcpp import Preprocessor  # lazy: only checkouts with macro invocations need the preprocessor

        class _Quiet(Preprocessor):
            def __init__(self) -> None:
                self.errors: list[str] = []
                self.work = 0
                self.deadline = float("inf")
                super().__init__()

            def on_error(self, file, line, msg):  # noqa: ANN001 - pcpp's hook signature
                self.errors.append(msg)

            def expand_macros(self, tokens, expanding_from=[]):  # noqa: B006 - pcpp's signature
                self.work += len(tokens)
                if self.work > MAX_EXPANSION_TOKENS or time.process_time() > self.deadline:
                    raise ExpansionError(f"expansion larger than {MAX_EXPANSION_TOKENS} tokens or "
                                         f"{MAX_EXPANSION_SECONDS:g} s")
                return super().expand_macros(tokens, expanding_from)

        def _copy(tok):  # pcpp copies every token it moves; the generic copy.copy is its main cost
            new = object.__new__(type(tok))
            new.__dict__.update(tok.__dict__)
            return new

        _PP = _Quiet()
        type(_PP.tokenize("x")[0]).__copy__ = _copy  # pcpp's bundled ply token class
        _PP.expand_linemacro = _PP.expand_countermacro = False
    return _PP


#: pcpp's parsed form of each definition (tokenising a body costs more than expanding it).
_DEFINED: dict[MacroDef, Any] = {}


#: Expansions already made in this process, by (invocation text, the definitions it reached, the
#: scalar-type table): the same invocation written in several places or files is expanded once.
_EXPANDED: dict[tuple[Any, ...], Expansion] = {}


#: A model macro's way of naming the C++ type of a dtype enum (``APXTUI_SCALAR_TYPE(at::kHalf)``),
#: replaced from the model's ``scalar_types`` table after expansion.
SCALAR_TYPE = "APXTUI_SCALAR_TYPE"


#: A constant a macro body may declare with a literal value (bound by :meth:`Expander._aliases`).
_LITERAL = re.compile(r"true|false|-?\d+[uUlL]*")
_DECL_WORDS = frozenset(("constexpr", "static", "const", "inline", "bool", "int", "unsigned", "long", "short",
                         "size_t", "int32_t", "int64_t", "uint32_t", "uint64_t", "auto", "char"))


class Expander:
    """Expands invocation texts with the function-like macros ``lookup`` gives by name.

    After expansion, ``SCALAR_TYPE(e)`` becomes ``scalar_types[e]`` (when known), and an alias a
    macro body declares (``using scalar_t = float;``) is substituted in the rest of its block, as
    the compiler would resolve it: a dispatch arm's launch then names its concrete type.
    """

    def __init__(self, lookup: Callable[[str], MacroDef | None], scalar_types: dict[str, str] | None = None):
        self.lookup = lookup
        self.scalar_types = scalar_types or {}
        self._types_key = tuple(sorted(self.scalar_types.items()))

    def _needed(self, text: str) -> list[MacroDef]:
        """The macros ``text`` reaches, transitively (each once)."""
        out: dict[str, MacroDef] = {}
        todo = [text]
        while todo:
            for name in dict.fromkeys(_IDENT.findall(todo.pop())):  # first-seen order: not the hash seed's
                if name in out:
                    continue
                d = self.lookup(name)
                if d is not None:
                    out[name] = d
                    todo.append(d.body)
        return list(out.values())

    def expand(self, text: str) -> Expansion:
        """The expansion of ``text`` (memoised per process: an :class:`Expansion` is never changed)."""
        used = self._needed(text)
        key = (text, tuple(used), self._types_key)
        hit = _EXPANDED.get(key)
        if hit is None:
            hit = self._expand(text, used)
            if len(_EXPANDED) > 20000:
                _EXPANDED.clear()
            _EXPANDED[key] = hit
        return hit

    def _expand(self, text: str, used: list[MacroDef]) -> Expansion:
        pp = _preprocessor()
        pp.errors = []
        pp.work = 0
        pp.deadline = time.process_time() + MAX_EXPANSION_SECONDS
        macros = {}
        for d in used:
            m = _DEFINED.get(d)
            if m is None:
                pp.macros = {}
                pp.define(f"{d.name}{d.params} {d.body}")
                if pp.errors:
                    raise ExpansionError(f"{d.name} ({d.where}): " + "; ".join(pp.errors[:3]))
                m = _DEFINED[d] = pp.macros.get(d.name)
                if len(_DEFINED) > 20000:
                    _DEFINED.clear()
            if m is not None:
                macros[d.name] = m
        pp.macros = macros
        toks = pp.tokenize(text)
        for t in toks:
            t.apx = t.lexpos
        out = pp.expand_macros(toks)
        if pp.errors:
            raise ExpansionError("; ".join(pp.errors[:3]))
        parts, starts, origins, pos = [], [], [], 0
        for v, o in self._bind(out, pp):
            starts.append(pos)
            origins.append(o)
            parts.append(v)
            pos += len(v)
        first = text.split("(", 1)[0].strip()
        used.sort(key=lambda d: d.name != first)
        return Expansion("".join(parts), starts, origins, used)


    def _bind(self, out: list[Any], pp: Any) -> list[tuple[str, int]]:
        """(text, origin) per output token, with scalar types and macro-declared aliases resolved."""
        toks = [("" if t.type in pp.t_COMMENT else str(t.value), getattr(t, "apx", -1), t.type in pp.t_WS)
                for t in out]
        return self._aliases(self._scalar_types(toks))

    def _scalar_types(self, toks: list[tuple[str, int, bool]]) -> list[tuple[str, int, bool]]:
        """``SCALAR_TYPE ( enum )`` → the C++ type the model gives (ATen's template when unknown)."""
        res: list[tuple[str, int, bool]] = []
        i, n = 0, len(toks)
        while i < n:
            if toks[i][0] == SCALAR_TYPE:
                j = i + 1
                while j < n and toks[j][2]:
                    j += 1
                k = j + 1
                while k < n and toks[k][0] != ")":
                    k += 1
                if j < n and toks[j][0] == "(" and k < n:
                    enum = "".join(t[0] for t in toks[j + 1 : k]).strip()
                    res.append((self.scalar_types.get(enum, f"c10::impl::ScalarTypeToCPPTypeT<{enum}>"), -1, False))
                    i = k + 1
                    continue
            res.append(toks[i])
            i += 1
        return res

    @staticmethod
    def _aliases(toks: list[tuple[str, int, bool]]) -> list[tuple[str, int]]:
        """``using X = T;`` written by a macro body: ``X`` replaced by ``T`` in the rest of its block.
        Likewise a literal constant a macro body declares (``constexpr static bool Is_causal = true;``,
        BOOL_SWITCH / HEADDIM_SWITCH): its name, where it is not a member (``.x``, ``->x``, ``::x``),
        becomes the literal, so ``f<elem_type, kHeadDim, Is_causal>`` names the specialisation."""
        res: list[tuple[str, int]] = []
        aliases: list[tuple[int, str, str]] = []  # (brace depth, alias, type or literal)
        depth, i, n = 0, 0, len(toks)
        prev = ""  # the last non-blank token
        while i < n:
            v, o, ws = toks[i]
            if v == "using" and o < 0:
                words = [(j, t) for j, t in enumerate(toks[i + 1 : i + 64], i + 1) if not t[2]]
                if len(words) >= 3 and words[1][1][0] == "=":
                    end = next((j for j, t in words[2:] if t[0] == ";"), None)
                    if end is not None:
                        ty = "".join(t[0] for t in toks[words[1][0] + 1 : end]).strip()
                        aliases.append((depth, words[0][1][0], ty))
                        res.extend((t[0], t[1]) for t in toks[i:end])
                        i = end
                        continue
            if v in ("constexpr", "static") and o < 0:
                decl = [(j, t[0]) for j, t in enumerate(toks[i : i + 24], i) if not t[2]]
                eq = next((k for k, (_, w) in enumerate(decl) if w in ("=", ";", "{", "(")), None)
                if eq is not None and eq >= 2 and decl[eq][1] == "=" and eq + 2 < len(decl) \
                        and decl[eq + 2][1] == ";" and _LITERAL.fullmatch(decl[eq + 1][1]) \
                        and "constexpr" in {w for _, w in decl[:eq]} \
                        and all(w in _DECL_WORDS for _, w in decl[: eq - 1]):
                    aliases.append((depth, decl[eq - 1][1], decl[eq + 1][1]))
                    end = decl[eq + 2][0]
                    res.extend((t[0], t[1]) for t in toks[i:end])
                    i, prev = end, decl[eq + 1][1]
                    continue
            if v == "{":
                depth += 1
            elif v == "}":
                depth -= 1
                while aliases and aliases[-1][0] > depth:
                    aliases.pop()
            bound = next((ty for _, a, ty in reversed(aliases) if a == v), None) if aliases and not ws else None
            if bound is not None and prev in (".", "->", "::") and _LITERAL.fullmatch(bound):
                bound = None  # `params.Is_causal`: a member of that name, not the constant
            res.append((bound if bound is not None else v, o))
            if not ws:
                prev = v
            i += 1
        return res


# ----------------------------------------------------------------------------------- reading expansions


@dataclass
class Invocation:
    """One macro invocation to expand: its text and where it stands.

    ``caller`` is the enclosing function's qualname ("" at file level); ``scope`` the
    namespaces/classes around a file-level invocation and ``abi`` whether it sits in an
    ``extern "C"`` block; ``contexts`` the branch/loop contexts around it.
    """

    text: str
    file: str
    line: int
    col: int
    caller: str = ""
    contexts: list[Context] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    abi: bool = False
    expansion: Expansion | None = None

    @property
    def file_level(self) -> bool:
        return not self.caller

    @property
    def name(self) -> str:
        return self.text.split("(", 1)[0].strip()


@dataclass
class Region:
    inv: Invocation
    start: int  # byte offset of the expansion in the synthetic source
    end: int


def _synthetic(invs: list[Invocation]) -> tuple[bytes, list[Region]]:
    chunks: list[bytes] = []
    regions: list[Region] = []
    pos = 0
    for i, inv in enumerate(invs):
        assert inv.expansion is not None
        if inv.file_level:
            head = "".join(f"namespace {s} {{ " for s in inv.scope) + ('extern "C" { ' if inv.abi else "") + "\n"
            tail = (" }" if inv.abi else "") + " }" * len(inv.scope) + "\n"
        else:
            head, tail = f"void {WRAPPER}{i}() {{\n", "\n;}\n"
        hb = head.encode()
        body = inv.expansion.text.encode("utf-8", "replace")
        chunks += [hb, body, tail.encode()]
        regions.append(Region(inv, pos + len(hb), pos + len(hb) + len(body)))
        pos += len(hb) + len(body) + len(tail.encode())
    return b"".join(chunks), regions


class _Mapper:
    """Positions in the synthetic source → the invocation and the real line/column."""

    def __init__(self, src: bytes, regions: list[Region]):
        self.line_starts = [0] + [m.end() for m in re.finditer(rb"\n", src)]
        self.src = src
        self.regions = regions
        self.region_starts = [r.start for r in regions]

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def region(self, off: int) -> Region | None:
        i = bisect_right(self.region_starts, off) - 1
        if i < 0:
            return None
        r = self.regions[i]
        return r if off <= r.end else None

    def real(self, r: Region, off: int) -> tuple[int, int] | None:
        """(line, col) in the real file of the invocation text the byte at ``off`` came from, or None."""
        exp = r.inv.expansion
        assert exp is not None
        char = len(self.src[r.start : max(r.start, off)].decode("utf-8", "replace"))
        o = exp.origin_at(char)
        if o < 0:
            return None
        before = r.inv.text[:o]
        nl = before.count("\n")
        if nl == 0:
            return r.inv.line, r.inv.col + len(before.encode())
        return r.inv.line + nl, len(before[before.rfind("\n") + 1 :].encode())


def _contexts(r: Region, ctxs: list[Context]) -> list[Context]:
    """A statement invocation's contexts, then the expansion's own (grouped per invocation, at its
    line); inside a function a file-level invocation defines, only the expansion's own."""
    tag = f"m{r.inv.line}:{r.inv.col}/"
    inner = [replace(c, group=tag + c.group, line=r.inv.line, negated=list(c.negated), env=list(c.env))
             for c in ctxs]
    return inner if r.inv.file_level else [*r.inv.contexts, *inner]


def read_expansions(file: str, invs: list[Invocation], budget: float | None = None
                    ) -> tuple[list[Definition], list[CallSite], dict[str, list[dict[str, Any]]]]:
    """Definitions and calls of the expansions of ``invs`` (each with ``expansion`` set), placed at their
    invocations, and the ``returns`` entries the statement expansions add to their callers (by
    caller qualname).  Statement invocations' calls get the invocation's caller and contexts."""
    invs = [i for i in invs if i.expansion is not None and i.expansion.text.strip()]
    if not invs:
        return [], [], {}
    src, regions = _synthetic(invs)
    ff = extract_file(file, src, "cuda", budget=budget)
    m = _Mapper(src, regions)
    wrapper_of: dict[str, Region] = {f"{WRAPPER}{i}": r for i, r in enumerate(regions)}
    defs: list[Definition] = []
    calls: list[CallSite] = []
    returns: dict[str, list[dict[str, Any]]] = {}
    for d in ff.defs:
        if d.name.startswith(WRAPPER):
            r = wrapper_of.get(d.name)
            if r is None:
                continue
            for ret in d.attrs.get("returns", []):
                ctxs = _contexts(r, [Context(**c) for c in ret["contexts"]])
                returns.setdefault(r.inv.caller, []).append(
                    {**ret, "line": r.inv.line, "contexts": [dict(vars(c)) for c in ctxs], "macro": r.inv.name,
                     "macro_site": f"{r.inv.line}:{r.inv.col}"})
            continue
        r = m.region(m.offset(d.line, 0))
        if r is None or not r.inv.file_level:
            continue  # a local class or lambda inside a statement expansion: not a definition of the file
        defs.append(_placed_def(d, r))
    for c in ff.calls:
        off = m.offset(c.line, c.col)
        r = wrapper_of.get(c.caller) or m.region(off)
        if r is None:
            continue
        real = m.real(r, off)
        contexts = _contexts(r, c.contexts)
        exp = r.inv.expansion
        assert exp is not None
        line, col = real if real is not None else (r.inv.line, r.inv.col)
        attrs = {**c.attrs, "macro": r.inv.name, "macro_at": f"{r.inv.file}:{r.inv.line}",
                 "macro_defs": [d.where for d in exp.used], "macro_origin": "argument" if real else "body",
                 "macro_site": f"{r.inv.line}:{r.inv.col}#{len(calls)}"}
        caller = r.inv.caller if not r.inv.file_level else c.caller
        calls.append(replace(c, file=file, line=line, col=col, caller=caller, contexts=contexts, attrs=attrs))
    return defs, calls, returns


def _placed_def(d: Definition, r: Region) -> Definition:
    inv = r.inv
    exp = inv.expansion
    assert exp is not None
    top = exp.used[0] if exp.used else None
    args = _top_args(inv.text)
    attrs = {**d.attrs, "macro": inv.name, "macro_args": args, "macro_at": f"{inv.file}:{inv.line}",
             "macro_defs": [x.where for x in exp.used]}
    if top is not None:
        attrs["macro_line"] = top.line
    pp = [c for c in inv.contexts if c.kind == "pp_if"]
    end = inv.line + inv.text.count("\n")
    return replace(d, file=inv.file, line=inv.line, end_line=end, pp=pp, attrs=attrs)


def _top_args(text: str) -> list[str]:
    """Top-level comma-separated arguments of ``NAME(a, b(c, d), e)``, each on one line."""
    start = text.find("(")
    if start < 0:
        return []
    args: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text[start + 1 :]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            args.append(" ".join("".join(cur).split()))
            cur = []
        else:
            cur.append(ch)
    tail = " ".join("".join(cur).split())
    if tail or args:
        args.append(tail)
    return args


def invocation_end(src: bytes, pos: int, limit: int = MAX_INVOCATION) -> int | None:
    """Byte offset just past the ``)`` closing the invocation whose ``(`` is at ``pos`` (None if unclosed)."""
    depth = 0
    i = pos
    end = min(len(src), pos + limit)
    while i < end:
        ch = src[i]
        if ch in b"([{":
            depth += 1
        elif ch in b")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif ch in b"\"'":
            j = src.find(bytes([ch]), i + 1)
            while j != -1 and src[j - 1] == 92 and src[j - 2] != 92:  # 92 = "\\"
                j = src.find(bytes([ch]), j + 1)
            if j == -1 or src.find(b"\n", i, j) != -1:
                i += 1
                continue
            i = j
        i += 1
    return None
