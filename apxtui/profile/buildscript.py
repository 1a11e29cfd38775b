"""Cargo build scripts read statically: what they emit and under which conditions.

Finds ``println!("cargo:rustc-cfg=…")`` / ``cargo::rustc-cfg`` / ``rustc-check-cfg`` and
C/CUDA macro definitions handed to the compiler (``.define("X", …)``, ``"-DX"`` flags),
each with the chain of ``if`` conditions (and callers, for helper functions) it sits
under.  :meth:`BuildScript.decide` evaluates those conditions for a target architecture
and a feature set where they are static (comparisons of the architecture with literals,
``matches!`` on it, helper functions whose body is such a test, ``CARGO_FEATURE_*``
reads, ``let`` bindings of those).  Anything else is undecided, never guessed; the one
stated premise is ``assume_host``: with an architecture given, filesystem probes for the
CUDA toolkit/sources (``.exists()``, ``.is_dir()``, lists filtered by them) in an ``if``
that is not part of an else-if chain are taken as true, and the derivation says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from apxtui.errors import InputFileError
from apxtui.facts import FileFacts
from apxtui.inputs import confine, read_limited
from apxtui.parse import plain
from apxtui.parse.util import one_line, same
from apxtui.profile import cfgexpr

Node = plain.PlainNode  # the syntax as plain data (parse/plain.py), cached with the script's facts
_CFG_RE = re.compile(r"^cargo::?rustc-cfg=(.+)$")
_CHECK_RE = re.compile(r"^cargo::?rustc-check-cfg=(.+)$")
_DEFINE_FLAG = re.compile(r"^-D([A-Za-z_]\w*)(?:=(.*))?$")
ARCH_STR = re.compile(r"\b(?:sm|compute)_(\d{2,3})[a-z]?\b")
_ARCH_NAME = re.compile(r"arch", re.I)
_NOT_GPU = re.compile(r"target|host|cpu|CARGO_CFG", re.I)
_UNKNOWN = object()
_CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")
#: Largest build script (or ``#[path]`` module of one) read; the indexer's per-file limit.
MAX_SCRIPT_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Arch:
    """The target GPU architecture as the script sees it (``sm_90`` / 90)."""


ARCH = Arch()


@dataclass
class Cond:
    file: str
    line: int
    text: str
    positive: bool  # False: the emission sits in the else branch
    node: Node = field(repr=False, compare=False)
    chain: bool = False  # part of an else-if chain


@dataclass
class Emission:
    kind: str  # cfg | check_cfg | define
    name: str
    value: str | None
    file: str
    line: int
    paths: list[list[Cond]]  # OR over paths (helper called from several places), AND within


@dataclass
class Decision:
    value: bool | None
    steps: list[str]  # derivation, one "path:line `cond` = value" per condition
    assumed: list[str]


class _Ctx:
    def __init__(self, arch: str | None, features: set[str], declared: set[str], allow_probe: bool):
        self.arch = arch
        self.features = features
        self.declared = declared
        self.allow_probe = allow_probe
        self.assumed: list[str] = []


def arch_number(arch: str) -> int | None:
    m = re.match(r"^(?:sm_|compute_)?(\d{2,3})[a-z]?$", arch.strip())
    return int(m.group(1)) if m else None


class BuildScript:
    """What one build script emits and under which conditions.  ``facts``: the index's facts,
    whose build scripts carry their syntax tree (parsed once by parse/, kept in the fact cache)."""

    def __init__(self, root: Path, rel: str, facts: Mapping[str, FileFacts] | None = None):
        self.rel = rel
        self._facts = facts or {}
        self.files: dict[str, tuple[bytes, Node]] = {}
        self.fns: dict[str, tuple[str, Node]] = {}
        self.emissions: list[Emission] = []
        self.arch_mentions: list[tuple[str, int, str]] = []
        self.env_names: list[tuple[str, int, str]] = []
        self.problems: list[tuple[str, str]] = []  # (file, why it was not read)
        self._lets_memo: dict[Node, dict[str, list[tuple[int, Node]]]] = {}
        self._load(root, rel)
        for f, (src, tree) in list(self.files.items()):
            self._collect(f, src, tree)

    # -- reading ------------------------------------------------------------------------

    def _load(self, root: Path, rel: str) -> None:
        """``rel`` and the ``#[path]`` modules it names, each confined to the checkout and size-bounded."""
        pending = [(rel, "")]
        while pending:
            name, base = pending.pop()
            try:
                path = confine(root, name, base)
                f = path.relative_to(Path(root).resolve()).as_posix()
                if f in self.files:
                    continue
                src = read_limited(path, MAX_SCRIPT_BYTES, f)
            except (InputFileError, ValueError) as e:
                if base or not isinstance(e, InputFileError) or "not found" not in str(e):
                    self.problems.append((f"{base}/{name}".lstrip("/"), str(e).removeprefix(f"{name}: ")))
                continue
            tree = self._tree(f, src)
            self.files[f] = (src, tree)
            parent = Path(f).parent.as_posix()
            parent = "" if parent == "." else parent
            for m in re.finditer(rb'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub\s+)?mod\s+\w+\s*;', src):
                pending.append((m.group(1).decode("utf-8", "replace"), parent))

    def _tree(self, rel: str, src: bytes) -> Node:
        """The script's syntax: from its cached facts when they are of these bytes, else parsed now."""
        ff = self._facts.get(rel)
        syntax = ff.syntax if ff is not None else None
        if syntax is None or syntax.src != src:
            syntax = plain.parse("rust", src)
        return syntax.root

    @staticmethod
    def t(node: Node | None) -> str:
        return (node.text or b"").decode("utf-8", "replace") if node is not None else ""

    def _collect(self, f: str, src: bytes, tree: Node) -> None:
        stack = [tree]
        while stack:
            n = stack.pop()
            stack.extend(reversed(n.children))
            if n.type == "function_item":
                name = n.child_by_field_name("name")
                if name is not None and name.text:
                    self.fns.setdefault(name.text.decode(), (f, n))
            elif n.type == "string_literal":
                s = _str(n)
                for am in ARCH_STR.finditer(s):
                    self.arch_mentions.append((f, n.start_point[0] + 1, am.group(0)))
                dm = _DEFINE_FLAG.match(s)
                if dm:
                    self._emit("define", dm.group(1), dm.group(2), f, n)
            elif n.type == "binary_expression" and self.t(n.child_by_field_name("operator")) in _CMP_OPS:
                sides = [n.child_by_field_name("left"), n.child_by_field_name("right")]
                texts = [self.t(x) for x in sides]
                for a, b in ((0, 1), (1, 0)):
                    side = sides[b]
                    if (side is not None and side.type == "integer_literal" and _ARCH_NAME.search(texts[a])
                            and not _NOT_GPU.search(texts[a]) and texts[b].isdigit() and 20 <= int(texts[b]) < 300):
                        self.arch_mentions.append((f, n.start_point[0] + 1, f"sm_{texts[b]}"))
            elif n.type == "macro_invocation" and _macro_name(n) in ("println", "print"):
                lits = [c for c in _descend(n) if c.type == "string_literal"]
                if lits:
                    s = _str(lits[0]).replace('\\"', '"')
                    m = _CFG_RE.match(s)
                    if m:
                        self._emit_cfg("cfg", m.group(1).strip(), f, n)
                    m = _CHECK_RE.match(s)
                    if m:
                        inner = m.group(1).strip()
                        inner = inner[4:-1] if inner.startswith("cfg(") and inner.endswith(")") else inner
                        for part in re.split(r",\s*(?![^()]*\))", inner):
                            cfg_name = part.strip()
                            if cfg_name and not cfg_name.startswith("values("):
                                self._emit("check_cfg", cfg_name, None, f, n)
            elif n.type == "call_expression":
                fn = n.child_by_field_name("function")
                if fn is not None and fn.type == "field_expression":
                    fld = self.t(fn.child_by_field_name("field"))
                    args = n.child_by_field_name("arguments")
                    first = args.named_children[0] if args is not None and args.named_children else None
                    if fld == "define" and args is not None and first is not None and first.type == "string_literal":
                        val = args.named_children[1] if len(args.named_children) > 1 else None
                        vt = self.t(val)
                        value = None if vt in ("", "None") else _unquote(vt.removeprefix("Some(").removesuffix(")"))
                        self._emit("define", _str(first), value, f, n)
            elif n.type == "scoped_identifier" and self.t(n) in ("env::var", "std::env::var", "env::var_os",
                                                                  "std::env::var_os"):
                call = n.parent
                args = call.child_by_field_name("arguments") if call is not None else None
                if args is not None and args.named_children and args.named_children[0].type == "string_literal":
                    self.env_names.append((f, n.start_point[0] + 1, _str(args.named_children[0])))

    def _emit_cfg(self, kind: str, spec: str, f: str, node: Node) -> None:
        m = re.match(r'^([A-Za-z_]\w*)\s*(?:=\s*"?([^"]*)"?)?$', spec)
        if m:
            self._emit(kind, m.group(1), m.group(2), f, node)

    def _emit(self, kind: str, name: str, value: str | None, f: str, node: Node) -> None:
        self.emissions.append(Emission(kind, name, value, f, node.start_point[0] + 1, self._paths(f, node, 0)))

    def _paths(self, f: str, node: Node, depth: int) -> list[list[Cond]]:
        """Condition chains from the enclosing function's entry to ``node``; callers' chains prepended."""
        conds: list[Cond] = []
        child, p = node, node.parent
        fn_node = None
        while p is not None:
            if p.type == "if_expression":
                cond = p.child_by_field_name("condition")  # the grammar: an if_expression has one
                chain = _in_chain(p)
                if same(p.child_by_field_name("consequence"), child):
                    conds.append(Cond(f, p.start_point[0] + 1, one_line(self.t(cond)), True, cond, chain))  # type: ignore[arg-type]
                elif same(p.child_by_field_name("alternative"), child):
                    conds.append(Cond(f, p.start_point[0] + 1, one_line(self.t(cond)), False, cond, chain))  # type: ignore[arg-type]
            elif p.type in ("match_arm", "closure_expression", "for_expression", "while_expression",
                            "loop_expression"):
                label = {"match_arm": "match arm", "closure_expression": "closure"}.get(p.type, "loop")
                head = p.child_by_field_name("pattern") if p.type == "match_arm" else None
                conds.append(Cond(f, p.start_point[0] + 1, f"{label} {one_line(self.t(head))}".strip(), True, p))
            elif p.type == "function_item":
                fn_node = p
                break
            child, p = p, p.parent
        conds.reverse()
        name = self.t(fn_node.child_by_field_name("name")) if fn_node is not None else ""
        if fn_node is None or name == "main" or depth > 4:
            return [conds]
        callers = self._call_sites(name)
        if not callers:  # an uncalled helper: its emission never happens in this script
            return []
        return [[*pc, *conds] for cf, cn in callers for pc in self._paths(cf, cn, depth + 1)]

    def _call_sites(self, name: str) -> list[tuple[str, Node]]:
        out = []
        for f, (_src, tree) in self.files.items():
            for n in _descend(tree):
                if n.type == "call_expression":
                    fn = n.child_by_field_name("function")
                    if fn is not None and fn.type == "identifier" and fn.text == name.encode():
                        out.append((f, n))
        return out

    # -- deciding -----------------------------------------------------------------------

    def decide(self, em: Emission, arch: str | None, features: set[str], declared: set[str],
               assume_host: bool = True) -> Decision:
        """Is ``em`` emitted for ``arch`` with ``features`` on (``declared``: the crate's feature names)?"""
        steps: list[str] = []
        assumed: list[str] = []
        path_vals: list[bool | None] = []
        for path in em.paths:
            vals: list[bool | None] = []
            for c in path:
                ctx = _Ctx(arch, features, declared, assume_host and arch is not None and not c.chain)
                v = self._truth(c.node, ctx) if c.node.type not in (
                    "match_arm", "closure_expression", "for_expression", "while_expression", "loop_expression"
                ) else None
                if v is not None and not c.positive:
                    v = not v
                vals.append(v)
                shown = c.text if c.positive else f"!({c.text})"
                steps.append(f"{c.file}:{c.line} `{shown}` = {_tri(v)}")
                assumed += [f"{c.file}:{c.line} {a}" for a in ctx.assumed]
                if v is False:
                    break
            path_vals.append(False if False in vals else (None if None in vals else True))
        if not em.paths:
            return Decision(False, [f"{em.file}:{em.line} inside a helper nobody calls"], [])
        value = True if True in path_vals else (None if None in path_vals else False)
        if not any(em.paths):
            steps.append(f"{em.file}:{em.line} unconditional")
        return Decision(value, steps, list(dict.fromkeys(assumed)))

    def _truth(self, node: Node, ctx: _Ctx) -> bool | None:
        v = self._val(node, ctx, {}, 0)
        return v if isinstance(v, bool) else None

    def _val(self, n: Node, ctx: _Ctx, bind: dict[str, object], depth: int) -> object:
        if depth > 30:
            return _UNKNOWN
        ty = n.type
        if ty == "boolean_literal":
            return self.t(n) == "true"
        if ty == "integer_literal":
            try:
                return int(re.sub(r"[_a-z]+$|_", "", self.t(n)), 0)
            except ValueError:
                return _UNKNOWN
        if ty == "string_literal":
            return _str(n)
        if ty in ("parenthesized_expression", "reference_expression", "try_expression"):
            kids = n.named_children
            return self._val(kids[-1], ctx, bind, depth + 1) if kids else _UNKNOWN
        if ty == "unary_expression":
            v = self._val(n.named_children[0], ctx, bind, depth + 1)
            if self.t(n).startswith("!"):
                return (not v) if isinstance(v, bool) else _UNKNOWN
            return -v if isinstance(v, int) and not isinstance(v, bool) else _UNKNOWN
        if ty == "binary_expression":
            return self._binary(n, ctx, bind, depth)
        if ty == "identifier":
            name = self.t(n)
            if name in bind:
                return bind[name]
            init = self._let_value(n, name)
            if init is not None:
                return self._val(init, ctx, bind, depth + 1)
            if name in self.fns:
                return ("fn", name)
            return _UNKNOWN
        if ty == "field_expression":
            fld = self.t(n.child_by_field_name("field"))
            if _ARCH_NAME.search(fld) and not _NOT_GPU.search(fld):
                return ARCH
            return _UNKNOWN
        if ty == "macro_invocation":
            return self._macro(n, ctx, bind, depth)
        if ty == "call_expression":
            return self._call(n, ctx, bind, depth)
        return _UNKNOWN

    def _binary(self, n: Node, ctx: _Ctx, bind: dict[str, object], depth: int) -> object:
        op = self.t(n.child_by_field_name("operator"))
        # the grammar: a binary_expression has both sides
        a = self._val(n.child_by_field_name("left"), ctx, bind, depth + 1)  # type: ignore[arg-type]
        b = self._val(n.child_by_field_name("right"), ctx, bind, depth + 1)  # type: ignore[arg-type]
        if op in ("&&", "||"):
            av = a if isinstance(a, bool) else None
            bv = b if isinstance(b, bool) else None
            if op == "&&":
                return False if False in (av, bv) else (_UNKNOWN if None in (av, bv) else True)
            return True if True in (av, bv) else (_UNKNOWN if None in (av, bv) else False)
        a, b = self._arch_value(a, b, ctx), self._arch_value(b, a, ctx)
        if a is _UNKNOWN or b is _UNKNOWN or type(a) is not type(b):
            return _UNKNOWN
        try:
            # same type (checked above); a type without an order raises TypeError, caught
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]  # type: ignore[operator]
        except (KeyError, TypeError):
            return _UNKNOWN

    def _arch_value(self, v: object, other: object, ctx: _Ctx) -> object:
        """The architecture in the representation it is compared against (90 / 900 / "sm_90")."""
        if v is not ARCH:
            return v
        if ctx.arch is None:
            return _UNKNOWN
        num = arch_number(ctx.arch)
        if isinstance(other, str):
            return ctx.arch if ctx.arch.startswith(("sm_", "compute_")) else f"sm_{ctx.arch}"
        if isinstance(other, int) and num is not None:
            return num * 10 if other >= 300 else num
        return _UNKNOWN

    def _let_value(self, ident: Node, name: str) -> Node | None:
        """The initialiser of the nearest preceding ``let name = …`` in the enclosing function (one only)."""
        fn = ident.parent
        while fn is not None and fn.type != "function_item":
            fn = fn.parent
        if fn is None:
            return None
        found = [val for start, val in self._lets(fn).get(name, ()) if start < ident.start_byte]
        if len(found) != 1:
            return None
        return found[0]

    def _lets(self, fn: Node) -> dict[str, list[tuple[int, Node]]]:
        """``fn``'s simple ``let name = value`` bindings by name (start byte, value), walked once per function."""
        lets = self._lets_memo.get(fn)
        if lets is None:
            lets = {}
            for x in _descend(fn):
                if x.type == "let_declaration":
                    pat = x.child_by_field_name("pattern")
                    val = x.child_by_field_name("value")
                    if pat is not None and pat.type == "identifier" and val is not None:
                        lets.setdefault(pat.text.decode("utf-8", "replace"), []).append((x.start_byte, val))
            self._lets_memo[fn] = lets
        return lets

    def _macro(self, n: Node, ctx: _Ctx, bind: dict[str, object], depth: int) -> object:
        name = _macro_name(n)
        tt = next((c for c in n.children if c.type == "token_tree"), None)
        body = self.t(tt)[1:-1] if tt is not None else ""
        if name == "cfg":
            def look(key: str, value: str | None) -> bool | None:
                if key == "feature" and value is not None:
                    return value in ctx.features if value in ctx.declared else False
                return None
            v = cfgexpr.evaluate(body, look)
            return _UNKNOWN if v is None else v
        if name == "format":  # format!("sm_{arch}") / format!("sm_{}", arch): the arch as a string
            m = re.fullmatch(r'\s*"sm_\{(\w+)\}"\s*|\s*"sm_\{\}"\s*,\s*(\w+)\s*', body)
            var = (m.group(1) or m.group(2)) if m else None
            if var is not None:
                init = self._let_value(n, var)
                bound = bind.get(var, _UNKNOWN) if var in bind else (
                    self._val(init, ctx, bind, depth + 1) if init is not None else _UNKNOWN)
                return ARCH if bound is ARCH else _UNKNOWN
            return _UNKNOWN
        if name == "matches" and tt is not None:
            subj_text, _, pats = body.partition(",")
            subj = self._subject(tt, subj_text.strip(), ctx, bind, depth)
            if subj is _UNKNOWN:
                return _UNKNOWN
            pats = pats.split(" if ")[0]
            hit: bool | None = False
            for alt in pats.split("|"):
                alt = alt.strip()
                m = re.match(r"^(-?\d+)\s*\.\.(=?)\s*(-?\d+)$", alt)
                if m:
                    lo, hi = int(m.group(1)), int(m.group(3))
                    cmp = self._arch_value(subj, 0, ctx) if subj is ARCH else subj
                    if not isinstance(cmp, int):
                        return _UNKNOWN
                    if lo <= cmp and (cmp <= hi if m.group(2) else cmp < hi):
                        return True
                    continue
                if alt.startswith('"') and alt.endswith('"'):
                    lit: object = alt[1:-1]
                elif re.match(r"^-?\d+$", alt):
                    lit = int(alt)
                else:
                    hit = None
                    continue
                cmp = self._arch_value(subj, lit, ctx)
                if cmp is _UNKNOWN:
                    return _UNKNOWN
                if cmp == lit:
                    return True
            return _UNKNOWN if hit is None else False
        return _UNKNOWN

    def _subject(self, tt: Node, text: str, ctx: _Ctx, bind: dict[str, object], depth: int) -> object:
        if text in bind:
            return bind[text]
        first = next((c for c in tt.named_children if c.type == "identifier"), None)
        if first is not None and self.t(first) == text:
            return self._val(first, ctx, bind, depth + 1)
        return _UNKNOWN

    def _call(self, n: Node, ctx: _Ctx, bind: dict[str, object], depth: int) -> object:
        fn = n.child_by_field_name("function")
        args_node = n.child_by_field_name("arguments")
        args = list(args_node.named_children) if args_node is not None else []
        if fn is None:
            return _UNKNOWN
        if fn.type in ("identifier", "scoped_identifier"):
            name = self.t(fn)
            if name in ("env::var", "std::env::var", "env::var_os", "std::env::var_os") and args:
                var = _str(args[0]) if args[0].type == "string_literal" else ""
                if _ARCH_NAME.search(var) and not _NOT_GPU.search(var):
                    return ARCH
                return ("env", var)
            if name == "Some" and args:
                return self._val(args[0], ctx, bind, depth + 1)
            short = name.rsplit("::", 1)[-1]
            if short in self.fns:
                return self._apply(short, [self._val(a, ctx, bind, depth + 1) for a in args], ctx, depth)
            return _UNKNOWN
        if fn.type != "field_expression":
            return _UNKNOWN
        method = self.t(fn.child_by_field_name("field"))
        recv_node = fn.child_by_field_name("value")
        if method in ("exists", "is_dir", "is_file", "try_exists"):
            return self._probe(True, n, ctx)
        if method in ("any", "all") and re.search(r"\.(exists|is_dir|is_file)\(", self.t(n)):
            return self._probe(True, n, ctx)
        recv = self._val(recv_node, ctx, bind, depth + 1) if recv_node is not None else _UNKNOWN
        if method == "is_empty" and recv_node is not None and self._probe_derived(recv_node):
            return self._probe(False, n, ctx)
        if isinstance(recv, tuple) and recv and recv[0] == "env":
            var = str(recv[1])
            if method in ("is_ok", "is_some") and var.startswith("CARGO_FEATURE_"):
                feat = next((f for f in ctx.declared if f.upper().replace("-", "_") == var[14:]), None)
                return feat in ctx.features if feat is not None else False
            if method in ("is_err", "is_none") and var.startswith("CARGO_FEATURE_"):
                feat = next((f for f in ctx.declared if f.upper().replace("-", "_") == var[14:]), None)
                return feat not in ctx.features if feat is not None else True
            return _UNKNOWN
        if recv is ARCH:
            if method in ("as_deref", "as_ref", "as_str", "clone", "to_string", "to_owned", "trim", "unwrap",
                          "expect", "ok", "unwrap_or_else", "unwrap_or", "unwrap_or_default"):
                return ARCH
            if method in ("is_some", "is_ok"):
                return True if ctx.arch is not None else _UNKNOWN
            if method in ("is_some_and", "is_ok_and", "map_or") and args:
                f = args[-1]
                fv = self._val(f, ctx, bind, depth + 1)
                if isinstance(fv, tuple) and fv and fv[0] == "fn":
                    return self._apply(str(fv[1]), [ARCH], ctx, depth)
                if f.type == "closure_expression":
                    return self._closure(f, ARCH, ctx, bind, depth)
            return _UNKNOWN
        return _UNKNOWN

    def _closure(self, f: Node, arg: object, ctx: _Ctx, bind: dict[str, object], depth: int) -> object:
        params = f.child_by_field_name("parameters")
        body = f.child_by_field_name("body")
        names = [self.t(p) for p in (params.named_children if params is not None else [])]
        if len(names) != 1 or body is None:
            return _UNKNOWN
        return self._val(body, ctx, {**bind, names[0].split(":")[0].strip(): arg}, depth + 1)

    def _apply(self, name: str, args: list[object], ctx: _Ctx, depth: int) -> object:
        f, fn = self.fns[name]
        body = fn.child_by_field_name("body")
        params = fn.child_by_field_name("parameters")
        ret = self.t(fn.child_by_field_name("return_type"))
        if ret and ret != "bool" and _ARCH_NAME.search(name) and not _NOT_GPU.search(name):
            return ARCH  # detect_arch() -> u32 and friends: the architecture itself
        if body is None or ret != "bool":
            return _UNKNOWN
        exprs = [c for c in body.named_children if c.type not in ("line_comment", "block_comment")]
        if len(exprs) != 1 or exprs[0].type in ("let_declaration", "expression_statement"):
            return _UNKNOWN
        bind: dict[str, object] = {}
        for p, a in zip([p for p in (params.named_children if params else []) if p.type == "parameter"], args,
                        strict=False):
            pat = p.child_by_field_name("pattern")
            if pat is not None:
                bind[self.t(pat)] = a
        return self._val(exprs[0], ctx, bind, depth + 1)

    def _probe(self, value: bool, n: Node, ctx: _Ctx) -> object:
        if not ctx.allow_probe:
            return _UNKNOWN
        ctx.assumed.append(f"assumed `{one_line(self.t(n), 80)}` = {_tri(value)} (CUDA build host)")
        return value

    def _probe_derived(self, n: Node) -> bool:
        if n.type == "identifier":
            init = self._let_value(n, self.t(n))
            return init is not None and bool(re.search(r"\.(exists|is_dir|is_file)\(", self.t(init)))
        return bool(re.search(r"\.(exists|is_dir|is_file)\(", self.t(n)))


def _in_chain(p: Node) -> bool:
    """``p`` is part of an if/else-if chain (it is an else-if, or its else is an if)."""
    par = p.parent
    if par is not None and par.type == "else_clause":
        return True
    alt = p.child_by_field_name("alternative")
    return alt is not None and any(c.type == "if_expression" for c in alt.named_children)


def _macro_name(n: Node) -> str:
    m = n.child_by_field_name("macro")
    return (m.text or b"").decode() if m is not None else ""


def _descend(n: Node) -> Iterator[Node]:
    """``n`` and every node below it, in source order (no recursion)."""
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(x.children))


def _str(n: Node) -> str:
    t = (n.text or b"").decode("utf-8", "replace")
    if t.startswith("r#"):
        t = t[1:].strip("#")
    return t[1:-1] if len(t) >= 2 and t[0] == '"' and t[-1] == '"' else t


def _unquote(s: str) -> str:
    s = s.strip()
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] == '"' else s


def _tri(v: bool | None) -> str:
    return "undecided" if v is None else ("true" if v else "false")
