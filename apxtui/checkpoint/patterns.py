"""Tensor-name patterns the code asks for, built from the extracted string facts.

Sources: string literals, ``format!``/f-string/``.format``/``%`` templates and string
constants (``FileFacts.strings``).  Placeholders are resolved where the code shows
their value: a string constant, a local bound to another template or to a helper's
returned template (``let prefix = layer_prefix(i)``), or a parameter filled by the
callers of the function (``take_linear(t, &format!("{p}.q_proj"))`` joined to its
``format!("{prefix}.weight")``), each followed one call deep.  What stays unknown
becomes a wildcard: ``{*}`` (one name segment: an index) or ``{**}`` (one or more).

What each string claims (needed, optional under a condition, one of a group of alternatives,
or only a message) comes from :mod:`apxtui.checkpoint.claims`; strings under ``scripts/``,
``tools/`` and ``benchmarks/`` are not loader claims.

Pure over facts (and the graph when given); the only source read is one line per
loader call, to name the struct field a tensor initialises (a labelled heuristic).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apxtui.checkpoint.claims import ALTERNATIVE, MESSAGE, OPTIONAL, REQUIRED, Claim, Claims
from apxtui.parse.util import split_commas
from apxtui.vocab import node_id

ONE, MANY = "{*}", "{**}"
#: Identifiers that stand for an integer index when nothing else is known.
INDEXISH = re.compile(r"^(i|j|k|l|n|e|idx|index|li|bi|layer|layer_i|layer_id|layer_idx|layer_index|block|blk|"
                      r"block_idx|expert|expert_id|expert_idx|head|h|shard|rank|\w+_(idx|id|index|num|no))$", re.I)
TENSOR_SUFFIX = re.compile(r"\.(weight|bias|scale|scales|weight_scale|weight_scale_inv|input_scale|qweight|qzeros|"
                           r"g_idx|zeros|absmax|inv_freq|running_mean|running_var|embedding|gamma|beta)$")
LOADERISH = re.compile(r"load|weight|checkpoint|safetensor|tensor|param|state_dict|from_pretrained|ckpt|convert",
                       re.I)
FILE_EXT = re.compile(r"\.(json|safetensors|bin|pt|pth|gguf|ckpt|txt|py|rs|cu|cuh|h|hpp|cc|cpp|c|so|toml|yaml|yml|"
                      r"md|log|csv|npy|npz|onnx|engine|plan|model|tiktoken|jinja|html|png|jpg)$", re.I)
MESSAGE_MACROS = {"println", "eprintln", "print", "eprint", "panic", "bail", "anyhow", "ensure", "assert",
                  "assert_eq", "debug_assert", "write", "writeln", "info", "warn", "debug", "error", "trace",
                  "unreachable", "todo", "unimplemented", "expect", "log", "concat", "include_str", "env"}
#: Directories of scripts and tools: their strings analyse or convert checkpoints, they are not the loader.
SCRIPT_DIRS = re.compile(r"/(scripts|tools|benchmarks|bench)/")
CLAIM_ORDER = {REQUIRED: 0, ALTERNATIVE: 1, OPTIONAL: 2}
_NAME_CHARS = re.compile(r"^[\w.\-\[\]*{}]+$")
_FIELD_INIT = re.compile(r"^\s*(?:(?:pub\s+)?let\s+(?:mut\s+)?)?([A-Za-z_]\w*)\s*[:=](?!:)")
_STRIP_TAIL = re.compile(r"(\?|\.clone\(\)|\.to_string\(\)|\.to_owned\(\)|\.as_str\(\)|\.into\(\)|\.as_ref\(\))+$")


@dataclass
class Source:
    """One code site asking for a name: ``file:line``, the function, the template as written."""

    file: str
    line: int
    caller: str
    written: str
    origin: str  # literal / format / fstring / percent / const / joined
    field: str = ""  # struct field or local the loader line initialises (heuristic)

    @property
    def at(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class NamePattern:
    """A tensor name or name template; ``{*}``/``{**}`` are wildcards."""

    text: str
    sources: list[Source] = field(default_factory=list)
    how: list[str] = field(default_factory=list)
    loaderish: bool = False
    claim: str = REQUIRED  # required / optional (read under a condition) / alternative (one of a group)
    condition: str = ""  # optional: the condition
    group: str = ""  # alternative: the call site listing the alternatives
    claim_how: list[str] = field(default_factory=list)

    @property
    def wildcards(self) -> int:
        return self.text.count(ONE) + self.text.count(MANY)

    @property
    def literal_parts(self) -> list[str]:
        return [p for p in re.split(r"\{\*\*?\}", self.text) if p]

    def regex(self) -> re.Pattern[str]:
        parts = re.split(r"(\{\*\*?\})", self.text)
        rx = "".join(r"[^.]+" if p == ONE else r".+" if p == MANY else re.escape(p) for p in parts)
        return re.compile(rx + r"\Z")

    @property
    def segments(self) -> set[str]:
        return {s for p in self.literal_parts for s in p.split(".") if s}


# -- template tokens -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Param:
    name: str
    fn: str


Tok = str | _Param  # literal text, ONE/MANY wildcard markers are literal strings of their own


class _Ctx:
    """Everything resolution needs: strings and defs by function, call sites, consts, graph."""

    def __init__(self, facts: Mapping[str, Any], graph: Any = None, root: Path | None = None):
        self.facts = facts
        self.graph = graph
        self.root = root
        self.strings: list[tuple[str, dict[str, Any]]] = []
        self.by_caller_line: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.by_caller: dict[str, list[dict[str, Any]]] = {}
        self.consts: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self.defs: dict[str, Any] = {}
        self.defs_by_name: dict[str, list[Any]] = {}
        self.calls_by_name: dict[str, list[Any]] = {}
        self.calls_at: dict[tuple[str, int], list[Any]] = {}
        self.consumed: set[int] = set()
        self._lines: dict[str, list[str]] = {}
        for path, ff in facts.items():
            for s in ff.strings:
                self.strings.append((path, s))
                self.by_caller_line.setdefault((s.get("caller", ""), s["line"]), []).append(s)
                self.by_caller.setdefault(s.get("caller", ""), []).append(s)
                if s.get("const"):
                    self.consts.setdefault(s["const"], []).append((path, s))
            for d in ff.defs:
                if d.kind in ("rust_fn", "python_fn", "host_fn", "abi_fn"):
                    self.defs[d.qualname] = d
                    self.defs_by_name.setdefault(d.name, []).append(d)
            for c in ff.calls:
                if c.kind in ("call", "method"):
                    self.calls_by_name.setdefault(c.path[-1] if c.path else c.callee, []).append(c)
                    self.calls_at.setdefault((path, c.line), []).append(c)

    def source_line(self, file: str, line: int) -> str:
        if self.root is None:
            return ""
        if file not in self._lines:
            try:
                self._lines[file] = (self.root / file).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._lines[file] = []
        lines = self._lines[file]
        return lines[line - 1] if 0 < line <= len(lines) else ""


# -- placeholder parsing ---------------------------------------------------------------------


def _placeholders(text: str, macro: str) -> list[tuple[str, str]]:
    """``[("lit", text) | ("ph", inner)]`` for Rust/Python ``{}`` templates and ``%`` formats."""
    out: list[tuple[str, str]] = []
    if macro == "percent":
        for m in re.finditer(r"%%|%(\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdirfxXu]|[^%]+|%", text):
            t = m.group(0)
            out.append(("lit", "%") if t == "%%" else ("ph", m.group(1) or "") if t.startswith("%") and len(t) > 1
                       else ("lit", t))
        return out
    if macro not in ("format", "fstring") and macro not in ("",):
        macro = "format"
    if macro == "":
        return [("lit", text)]
    i = 0
    buf = ""
    while i < len(text):
        ch = text[i]
        if text.startswith("{{", i) or text.startswith("}}", i):
            buf += ch
            i += 2
            continue
        if ch == "{":
            j = text.find("}", i)
            if j < 0:
                buf += text[i:]
                break
            if buf:
                out.append(("lit", buf))
                buf = ""
            out.append(("ph", text[i + 1 : j]))
            i = j + 1
            continue
        buf += ch
        i += 1
    if buf:
        out.append(("lit", buf))
    return out


def _ph_expr(inner: str, macro: str, args: list[str], pos: list[int]) -> str:
    """The expression a placeholder stands for (``""`` when unknown)."""
    name = re.split(r"[:!]", inner, maxsplit=1)[0].strip() if macro != "fstring" else \
        re.split(r"(?<![=!<>])[:!](?!=)", inner, maxsplit=1)[0].strip()
    if macro == "percent":
        name = inner.strip("()")
    named = {}
    positional = []
    for a in args:
        m = re.match(r"^\s*([A-Za-z_]\w*)\s*=(?!=)\s*(.+)$", a)
        if m:
            named[m.group(1)] = m.group(2)
        else:
            positional.append(a)
    if macro == "fstring":
        return name
    if name == "":
        k = pos[0]
        pos[0] += 1
        return positional[k] if k < len(positional) else ""
    if name.isdigit():
        k = int(name)
        return positional[k] if k < len(positional) else ""
    return named.get(name, name)


# -- resolution ------------------------------------------------------------------------------


class Resolver:
    def __init__(self, ctx: _Ctx, max_depth: int = 10):
        self.ctx = ctx
        self.max_depth = max_depth

    def template(self, s: dict[str, Any], fn: str, depth: int, how: list[str]) -> list[Tok]:
        macro = s.get("macro", "")
        toks: list[Tok] = []
        pos = [0]
        for kind, val in _placeholders(s["text"], macro if macro in ("format", "fstring", "percent") else
                                       ("format" if macro and macro not in MESSAGE_MACROS else "")):
            if kind == "lit":
                toks.append(val)
                continue
            expr = _ph_expr(val, "format" if macro not in ("fstring", "percent") else macro, s.get("args", []), pos)
            toks += self.expr(expr, fn, s["line"], depth + 1, how)
        return toks

    def expr(self, e: str, fn: str, line: int, depth: int, how: list[str]) -> list[Tok]:
        e = _STRIP_TAIL.sub("", re.sub(r"^(&mut\s+|&|\*)+", "", (e or "").strip())).strip()
        if not e:
            return [MANY]
        if depth > self.max_depth:
            how.append(f"`{e}`: resolution depth exceeded")
            return [MANY]
        m = re.fullmatch(r"[rbf]?\"(.*)\"|'(.*)'", e, re.S)
        if m and not e.startswith("f"):
            return [m.group(1) if m.group(1) is not None else m.group(2)]
        if e.startswith(("format!(", "f\"", "f'")) or ".format(" in e:
            s = self._string_in(fn, line, e)
            if s is not None:
                self.ctx.consumed.add(id(s))
                return self.template(s, fn, depth, how)
            return [MANY]
        if re.fullmatch(r"[A-Za-z_]\w*", e):
            return self.ident(e, fn, line, depth, how)
        m = re.fullmatch(r"(?:(?:self|Self)(?:\.|::))?([A-Za-z_]\w*)\((.*)\)", e, re.S)
        if m:
            return self.helper(m.group(1), _split_args(m.group(2)), fn, line, depth, how) or [MANY]
        if INDEXISH.match(e.split(".")[-1]) or re.fullmatch(r"[\w.]+\s*[-+*]\s*\d+", e):
            return [ONE]
        how.append(f"`{e}` unknown: wildcard")
        return [MANY]

    def ident(self, name: str, fn: str, line: int, depth: int, how: list[str]) -> list[Tok]:
        d = self.ctx.defs.get(fn)
        if d is not None:
            assigns = [a for a in d.attrs.get("assigns", []) if a.get("var") == name and a.get("line", 0) <= line]
            if assigns:
                a = assigns[-1]
                out = self.expr(a.get("value", ""), fn, a.get("line", line), depth + 1, how)
                how.append(f"{{{name}}} ← `{_short(a.get('value', ''))}` ({d.file}:{a.get('line')})")
                return out
            if any(p.name == name for p in d.params):
                return [_Param(name, fn)]
        consts = self.ctx.consts.get(name, [])
        if consts:
            file = d.file if d is not None else ""
            same = [c for c in consts if c[0] == file] or consts
            if len({c[1]["text"] for c in same}) == 1:
                path, s = same[0]
                self.ctx.consumed.add(id(s))
                how.append(f"{{{name}}} ← const {path}:{s['line']}")
                return self.template(s, s.get("caller", ""), depth, how)
        lit = self._const_in_source(name, d.file if d is not None else "")
        if lit is not None:
            how.append(f"{{{name}}} ← const {lit[1]} (source line; not a string fact)")
            return [lit[0]]
        if INDEXISH.match(name):
            return [ONE]
        how.append(f"{{{name}}} unresolved: wildcard")
        return [MANY]

    def _const_in_source(self, name: str, file: str) -> tuple[str, str] | None:
        """``const NAME: &str = "…"`` / ``NAME = "…"`` in ``file`` (consts the extractor drops)."""
        if not file or not name[:1].isupper():
            return None
        rx = re.compile(
            rf'^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:const|static)\s+{name}\s*:\s*&(?:\'static\s+)?str\s*=\s*"([^"\\]*)"'
            rf'|^{name}\s*(?::\s*\w+\s*)?=\s*[\'"]([^\'"\\]*)[\'"]\s*$'
        )
        self.ctx.source_line(file, 1)
        for i, text in enumerate(self.ctx._lines.get(file, []), 1):
            m = rx.match(text)
            if m:
                return (m.group(1) if m.group(1) is not None else m.group(2)), f"{file}:{i}"
        return None

    def helper(self, name: str, args: list[str], fn: str, line: int, depth: int, how: list[str]) -> list[Tok] | None:
        """A call's returned template: the helper's one ``format`` string, its params bound to ``args``."""
        cands = self._callee_defs(name, fn, line)
        for h in cands:
            fmts = [s for s in self.ctx.by_caller.get(h.qualname, []) if s.get("macro") in ("format", "fstring")]
            texts = {s["text"] for s in fmts}
            if len(texts) != 1:
                continue
            s = fmts[0]
            for x in fmts:
                self.ctx.consumed.add(id(x))
            inner: list[str] = []
            toks = self.template(s, h.qualname, depth, inner)
            params = [p.name for p in h.params if p.name != "self"]
            out: list[Tok] = []
            for t in toks:
                if isinstance(t, _Param) and t.fn == h.qualname and t.name in params:
                    k = params.index(t.name)
                    out += self.expr(args[k], fn, line, depth + 1, how) if k < len(args) else [MANY]
                else:
                    out.append(t)
            how.append(f"`{name}(…)` returns `{s['text']}` ({h.file}:{s['line']})")
            return out
        return None

    def _callee_defs(self, name: str, fn: str, line: int) -> list[Any]:
        caller = self.ctx.defs.get(fn)
        g = self.ctx.graph
        if g is not None and caller is not None:
            node = node_id(caller.qualname, caller.file, caller.line)
            if node in g:
                out = []
                for _u, v, a in g.out_edges(node, data=True):
                    if a.get("line") == line and g.nodes[v].get("name") == name:
                        d = self.ctx.defs.get(g.nodes[v].get("qualname", ""))
                        if d is not None:
                            out.append(d)
                if out:
                    return out
        cands = self.ctx.defs_by_name.get(name, [])
        file = caller.file if caller is not None else ""
        return [d for d in cands if d.file == file] or (cands if len(cands) == 1 else [])

    def _string_in(self, fn: str, line: int, e: str) -> dict[str, Any] | None:
        for ln in range(line, line + 4):
            for s in self.ctx.by_caller_line.get((fn, ln), []):
                if s["text"] in e:
                    return s
        return None

    # -- callers fill parameters ----------------------------------------------------------

    def expand(self, toks: list[Tok], depth: int, how: list[str], levels: int = 2,
               cond: Claim | None = None) -> list[list[Tok]]:
        """One token list per caller binding of the remaining parameters.

        ``cond``: an optional claim whose condition is a parameter of the string's function; a
        caller passing ``true``/``false`` for it decides the claim for the names built there.
        """
        params = [t for t in toks if isinstance(t, _Param)]
        if not params:
            return [toks]
        p = params[0]
        d = self.ctx.defs.get(p.fn)
        sites = self._call_sites(d) if d is not None and levels > 0 else []
        if not sites:
            how.append(f"{{{p.name}}}: parameter of {p.fn.split('::')[-1]}, no caller found: wildcard")
            return self.expand([MANY if t == p else t for t in toks], depth, how, levels, cond)
        assert d is not None  # no definition: no call sites, returned above
        plist = [x.name for x in d.params if x.name != "self"]
        k = plist.index(p.name) if p.name in plist else -1
        ci = plist.index(cond.cond_param) if cond and cond.cond_param in plist and p.fn == self._cond_fn else -1
        out: list[list[Tok]] = []
        for c in sites:
            kind = ""
            if ci >= 0:
                flag = c.args[ci].strip() if ci < len(c.args) else ""
                if flag in ("true", "false", "True", "False"):
                    if (flag.lower() == "true") == cond.cond_negated:  # type: ignore[union-attr]
                        self.dropped_by_condition += 1
                        continue  # this caller never reads the name
                    kind = REQUIRED
                else:
                    kind = OPTIONAL
            arg = c.args[k] if 0 <= k < len(c.args) else ""
            sub_how: list[str] = []
            val = self.expr(arg, c.caller, c.line, depth + 1, sub_how)
            s = self._string_in(c.caller, c.line, arg)
            if s is not None:
                self.ctx.consumed.add(id(s))
            new: list[Tok] = []
            for t in toks:
                new += val if t == p else [t]
            site_how = [*how, f"{{{p.name}}} ← `{_short(arg)}` at {c.file}:{c.line}", *sub_how]
            if kind:
                site_how.append(f"`{cond.cond_param}` = `{c.args[ci].strip() if ci < len(c.args) else '?'}` at "  # type: ignore[union-attr]
                                f"{c.file}:{c.line}: {'read' if kind == REQUIRED else 'read only if true'}")
            for res in self.expand(new, depth, site_how, levels - 1, cond):
                out.append(res)
                self._last_how[id(res)] = site_how
                if kind:
                    self._variant_claim[id(res)] = kind
        return out

    _last_how: dict[int, list[str]] = {}
    _variant_claim: dict[int, str] = {}
    _cond_fn: str = ""
    dropped_by_condition: int = 0

    def _call_sites(self, d: Any) -> list[Any]:
        g = self.ctx.graph
        node = node_id(d.qualname, d.file, d.line)
        if g is not None and node in g:
            out = []
            for _u, _v, a in g.in_edges(node, data=True):
                if a.get("kind") != "call":
                    continue
                for c in self.ctx.calls_at.get((a.get("file", ""), a.get("line", 0)), []):
                    if (c.path[-1] if c.path else c.callee) == d.name and c not in out:
                        out.append(c)
            if out:
                return out
        return [c for c in self.ctx.calls_by_name.get(d.name, []) if c.file == d.file]


def _split_args(text: str) -> list[str]:
    return [p.strip() for p in split_commas(text, quotes="\"'")]


def _short(s: str, n: int = 60) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _render(toks: list[Tok]) -> str:
    out = "".join(t if isinstance(t, str) else MANY for t in toks)
    out = re.sub(r"(\{\*\*\})+", MANY, out)
    return re.sub(r"\{\*\*\}\{\*\}|\{\*\}\{\*\*\}", MANY, out)


def _namelike(text: str) -> bool:
    lit = re.sub(r"\{\*\*?\}", "x", text)
    if not lit or not _NAME_CHARS.match(lit) or "." not in text or FILE_EXT.search(lit):
        return False
    if lit.startswith((".", "-")) or lit.endswith(".") or ".." in lit:
        return False
    return any(ch.isalpha() for ch in re.sub(r"\{\*\*?\}", "", text))


# -- public ----------------------------------------------------------------------------------


def collect_patterns(facts: Mapping[str, Any], graph: Any = None, root: Path | str | None = None,
                     under: Iterable[str] = ()) -> tuple[list[NamePattern], dict[str, int]]:
    """Name patterns the code asks for, merged by text; plus counts of what was skipped.

    ``under``: only strings in files below these relative paths (default: everywhere).
    """
    ctx = _Ctx(facts, graph, Path(root) if root is not None else None)
    res = Resolver(ctx)
    under = tuple(u.rstrip("/") + "/" for u in under if u)
    built: list[tuple[str, Source, list[str], bool, str, Claim]] = []
    skipped = {"messages": 0, "not_name_like": 0, "consumed_as_prefix": 0}
    todo = []
    claims = Claims(ctx)
    for path, s in ctx.strings:
        if under and not path.startswith(under):
            continue
        if SCRIPT_DIRS.search(f"/{path}"):
            skipped["scripts"] = skipped.get("scripts", 0) + 1
            continue
        if re.search(r"(::|\.)tests?(::|\.)|(::|\.)test_\w+$", s.get("caller", "")) or "/tests/" in f"/{path}":
            skipped["tests"] = skipped.get("tests", 0) + 1
            continue
        if s.get("macro") in MESSAGE_MACROS:
            skipped["messages"] += 1
            continue
        todo.append((path, s))
    results = []
    for path, s in todo:
        claim = claims.of(path, s)
        if claim.kind == MESSAGE:
            skipped["message_args"] = skipped.get("message_args", 0) + 1
            continue
        how: list[str] = []
        res._last_how, res._variant_claim = {}, {}
        res._cond_fn = s.get("caller", "") if claim.cond_param else ""
        toks = res.template(s, s.get("caller", ""), 0, how)
        variants = res.expand(toks, 0, how, cond=claim if claim.cond_param else None)
        kinds = [res._variant_claim.get(id(v), claim.kind) for v in variants]
        results.append((path, s, variants, how, [res._last_how.get(id(v), how) for v in variants], kinds, claim))
    if res.dropped_by_condition:
        skipped["not_read_by_caller"] = res.dropped_by_condition
    for path, s, variants, _how, hows, kinds, claim in results:
        if id(s) in ctx.consumed:
            skipped["consumed_as_prefix"] += 1
            continue
        origin = "const" if s.get("const") else (s.get("macro") or "literal")
        if origin not in ("const", "literal", "format", "fstring", "percent"):
            origin = "format"
        fld = _field_of(ctx, path, s)
        for toks, how, kind in zip(variants, hows, kinds, strict=False):
            text = _render(toks)
            if not _namelike(text):
                skipped["not_name_like"] += 1
                continue
            joined = len(variants) > 1 or any("←" in h for h in how)
            src = Source(path, s["line"], s.get("caller", ""), s["text"], "joined" if joined and origin != "const"
                         else origin, fld)
            loaderish = bool(TENSOR_SUFFIX.search(text) or LOADERISH.search(path) or
                             LOADERISH.search(s.get("caller", "").split("::")[-1].split(".")[-1]))
            built.append((text, src, how, loaderish, kind, claim))
    merged: dict[str, NamePattern] = {}
    for text, src, how, loaderish, kind, claim in built:
        p = merged.get(text)
        if p is None:
            p = merged[text] = NamePattern(text, claim=kind, condition=claim.condition if kind == OPTIONAL else "",
                                           group=claim.group if kind == ALTERNATIVE else "")
        elif CLAIM_ORDER[kind] < CLAIM_ORDER[p.claim]:  # required wins over alternative, alternative over optional
            p.claim, p.condition = kind, claim.condition if kind == OPTIONAL else ""
            p.group = claim.group if kind == ALTERNATIVE else ""
        if all(x.at != src.at for x in p.sources):
            p.sources.append(src)
        p.how += [h for h in how if h not in p.how]
        if claim.how and claim.how not in p.claim_how:
            p.claim_how.append(claim.how)
        p.loaderish = p.loaderish or loaderish
    return list(merged.values()), skipped


def _field_of(ctx: _Ctx, path: str, s: dict[str, Any]) -> str:
    """The struct field / local a loader line initialises with this name (heuristic, source line)."""
    lines = [s["line"]]
    if s.get("const"):
        lines = [c.line for (f, _ln), cs in ctx.calls_at.items() if f == path for c in cs
                 if any(re.search(rf"(?<![\w.]){re.escape(s['const'])}\b", a) for a in c.args)]
    for ln in lines:
        m = _FIELD_INIT.match(ctx.source_line(path, ln))
        if m and m.group(1) not in ("let", "return", "Ok", "Some", "self"):
            return m.group(1)
    return ""
