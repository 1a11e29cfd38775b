"""Rust extractor: one run of ``queries/rust.scm`` over the tree, then captured ranges nested once.

The query says *what* is a definition, call, macro, import, FFI block, PyO3 attribute,
env read or string, and which items, macro calls and contexts enclose code
(``@scope.*``, ``@context.*``).  Their byte ranges are nested once
(:mod:`apxtui.parse.nesting`), so this module never walks up the tree: a node's module
path, impl container, enclosing fn and cfg chain come from the frames around it
(memoised per frame), its branch/loop/closure/cfg contexts from
:mod:`apxtui.parse.contexts`; attributes reach the item after them through captured
sibling pairs.  Cost is linear in the file whatever its nesting.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable
from functools import cache
from typing import Any

import tree_sitter as ts

from apxtui.facts import Binding, CallSite, Definition, EnvRead, FileFacts, Import, Issue, Param
from apxtui.parse import languages
from apxtui.parse.budget import Budget, BudgetExceeded
from apxtui.parse.contexts import Contexts, Policy
from apxtui.parse.nesting import SCOPE, Frame, nest
from apxtui.parse.util import SourceText, line, one_line, text

ARG_LIMIT = 120
RECEIVER_LIMIT = 400  # a builder chain's receiver is typed link by link (the resolver reads up to 400)
CHAIN_LIMIT = 1000  # … written link by link, arguments elided (see _Extractor.chain_text), up to this
TEXT_LIMIT = 200
_ITEM_PREFIX = ("attribute_item", "line_comment", "block_comment")
_LOOPS = ("for_expression", "while_expression", "loop_expression")
_NAME_RE = re.compile(r'\bname\s*=\s*"([^"]*)"')
_LIFETIME_RE = re.compile(r"'\w+\s*")
_NOT_WRAPPED = {"Some", "Ok", "Err"}
_SELF_FIELD_CALL = re.compile(r"\(\s*self\.(\w+)\s*\)$")  # `(self.launcher)`, called
_FN_NAME = re.compile(r"[a-z_]\w*$")  # a function's name (not a variant or a constant)
_IDENT_STRING = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,127}")
_CFG_FRAMES = frozenset(("impl", "trait", "mod", "foreign", SCOPE))  # items whose cfg applies inside them
#: Parent node types that can put a context around a child (see _Extractor._context_step).
_CONTEXT_PARENTS = frozenset(
    ("if_expression", "match_arm", *_LOOPS, "closure_expression", "macro_invocation", "block", "field_initializer")
)
POLICY = Policy(if_negated=False, if_env_earlier=False, paren_wrapped=frozenset(("token_tree",)))


def extract(facts: FileFacts, tree: ts.Tree, src: bytes, budget: Budget | None = None) -> None:
    """Fill ``facts`` from a parsed Rust file (see module docstring)."""
    _Extractor(facts, src, budget or Budget(float("inf"))).run(tree.root_node)


# -- small text helpers -------------------------------------------------------------------


def split_path(path: str) -> tuple[list[str], list[str]]:
    """Split a Rust path on top-level ``::``; turbofish segments are returned apart.

    ``Foo::<u8>::new`` -> (["Foo", "new"], ["<u8>"]); ``<T as Tr>::f`` -> (["<T as Tr>", "f"], []).
    """
    segs: list[str]
    if "<" not in path:  # no generics: a plain split gives the same segments
        segs = [s.strip() for s in path.split("::")]
        if segs[0] == "" and len(segs) > 1:
            segs = segs[1:]
        return segs, []
    segs = []
    depth = 0
    cur: list[str] = []
    i = 0
    while i < len(path):
        c = path[i]
        if c == "<":
            depth += 1
        elif c == ">" and depth and path[i - 1] != "-":
            depth -= 1
        if depth == 0 and path.startswith("::", i):
            segs.append("".join(cur).strip())
            cur = []
            i += 2
            continue
        cur.append(c)
        i += 1
    segs.append("".join(cur).strip())
    if segs and segs[0] == "" and len(segs) > 1:  # leading `::std::…`
        segs = segs[1:]
    kept: list[str] = []
    generics: list[str] = []
    for k, s in enumerate(segs):
        (generics if k > 0 and s.startswith("<") else kept).append(s)
    return kept, generics


_SELF_ASSOC_RE = re.compile(r"\bSelf::(\w+)")


def strip_generics(t: str) -> str:
    """``Foo<B>`` -> ``Foo``; ``&mut a::Foo<B>`` -> ``a::Foo``; ``dyn Tr`` -> ``Tr``."""
    t = _LIFETIME_RE.sub("", t).strip()
    while True:
        for p in ("&", "mut ", "dyn ", "impl "):
            if t.startswith(p):
                t = t[len(p) :].strip()
                break
        else:
            break
    if not t.startswith("<"):
        t = t.split("<", 1)[0]
    return re.sub(r"\s*::\s*", "::", t).strip()


def _pattern_vars(pat: ts.Node, out: list[str]) -> list[str]:
    """The variables a destructuring pattern binds (not the paths it names: `Some`, `m::S`)."""
    for i, c in enumerate(pat.named_children):
        if c.type == "shorthand_field_identifier" or c.type == "identifier" and not (
                i == 0 and pat.type == "tuple_struct_pattern"):
            if c.text is not None:
                out.append(c.text.decode("utf-8", "replace"))
        elif c.type not in ("scoped_identifier", "scoped_type_identifier", "type_identifier", "field_identifier"):
            _pattern_vars(c, out)
    return out


def _let_span(let: ts.Node) -> dict[str, Any]:
    """Where a ``let`` binding is in scope, as (1-based line, 0-based column) pairs: from the end of
    its statement (``last``; its own value cannot see it) to the end of its block (``end``)."""
    block = let.parent if let.parent is not None else let
    return {"col": let.start_point[1], "last": [let.end_point[0] + 1, let.end_point[1]],
            "end": [block.end_point[0] + 1, block.end_point[1]]}


def literal_content(node: ts.Node, src: bytes) -> str:
    """Content of a (raw) string literal without quotes and prefixes."""
    s = text(node, src)
    a, b = s.find('"'), s.rfind('"')
    return s[a + 1 : b] if 0 <= a < b else s


def cfg_predicate(tt: str) -> str:
    """``(feature = "x")`` -> ``feature = "x"`` (one line)."""
    tt = tt.strip()
    if tt.startswith("(") and tt.endswith(")"):
        tt = tt[1:-1]
    return one_line(tt, 400)


def _chain_text(s: str, limit: int = 200) -> str:
    """One-lined method chain without the line-break spaces before ``.``/``?``."""
    return one_line(re.sub(r"\s+(?=[.?])", "", s), limit)


def _is_tensorish(s: str) -> bool:
    return (
        ("." in s or "{" in s)
        and not any(c.isspace() for c in s)
        and any(c.isalnum() for c in s)
        and not re.fullmatch(r"[0-9.eE+-]+", s)
    )


# -- the extractor --------------------------------------------------------------------------

_BUCKETS = (
    "definition.function", "definition.method", "definition.class", "definition.interface",
    "ffi.decl", "import", "import.mod", "definition.macro_rules", "reference.call", "reference.method",
    "reference.indirect", "reference.macro", "env.read", "binding.register", "local", "string",
    "exit.return", "fnptr.field",
)  # fmt: skip


_SPECIAL = ("chain.try", "const.value", "attr.before")


@cache
def _routes() -> tuple[tuple[str, bool, str] | None, ...]:
    """Per pattern index: its :func:`_route`, None for a context pattern."""
    return tuple(None if any(n.startswith("context.") for n in names) else _route(tuple(names))
                 for names in languages.pattern_captures("rust"))


def _route(names: tuple[str, ...]) -> tuple[str, bool, str]:
    """(bucket of a match with these capture names or "", whether it carries attribute flags,
    the capture of a navigation-only match or "")."""
    special = next((n for n in names if n in _SPECIAL or n.startswith("scope.")), "")
    if special:
        return "", False, special
    bucket = next((k for k in _BUCKETS if k in names), "")
    attr = any(n.startswith(("attr.", "binding.pyo3.")) and n != "attr.value" for n in names)
    return bucket, attr, ""



class _Extractor:
    def __init__(self, facts: FileFacts, src: bytes, budget: Budget) -> None:
        self.f = facts
        self.check = budget.check
        self.src = src
        st = self.st = SourceText(src)
        self.t = st.text  # node text
        self.tl = st.line  # one_line(node text)
        self.module = facts.module
        self.crate = facts.module.split("::", 1)[0] if facts.module else ""
        self.attr_flags: dict[int, list[tuple[str, str]]] = {}  # attribute_item id -> [(flag, value)]
        self.inner_cfg: dict[int, list[str]] = defaultdict(list)  # container id (0: the file) -> cfg predicates
        self.fn_defs: dict[int, Definition] = {}  # function_item id -> def
        self.assoc_types: dict[int, dict[str, str]] = {}  # impl_item id -> its `type Name = …` items
        self.env_by_fn: dict[int | None, list[tuple[int, int, list[str]]]] = defaultdict(list)
        self.env_locals: dict[int | None, list[tuple[int, str, list[str]]]] = defaultdict(list)
        self.consts: dict[str, str] = {}  # const NAME -> string value (this file)
        self.pyclasses: dict[str, str] = {}  # struct name -> python name
        self.pyfunctions: dict[str, str] = {}  # fn name -> python name
        self.pymodules: dict[int, str] = {}  # fn node id -> python module name
        self._pymod_attrs: list[ts.Node] = []
        self._inner: list[ts.Node] = []  # inner attribute items with a cfg
        self._inner_cfg_values: dict[int, list[str]] = defaultdict(list)
        self._attrs_before: dict[int, list[ts.Node]] = {}  # item id -> flagged attributes preceding it
        self._attr_nodes: dict[int, ts.Node] = {}  # flagged attribute id -> node
        self._attr_target: dict[int, ts.Node] = {}  # flagged attribute id -> the item it precedes
        self.const_of: dict[int, ts.Node] = {}  # const/static value id -> the item
        self.receiver_of: dict[int, ts.Node] = {}  # method receiver / `?` operand id -> the call / try
        self.frame_of: dict[int, Frame | None] = {}  # node id -> innermost frame around it
        self._string_memo: dict[int, tuple[bool, Frame | None, Frame | None]] = {}
        self._macro_args: dict[int, set[int]] = {}  # macro id -> ids of its token tree's children
        self.ctx = Contexts(st, POLICY, self._context_env)

    # -- tree navigation (captured ranges, see apxtui/parse/nesting.py) ----------------------

    def frame(self, n: ts.Node) -> Frame | None:
        return self.frame_of.get(n.id)

    def enclosing_fn(self, n: ts.Node) -> ts.Node | None:
        f = self.frame_of.get(n.id)
        return f.scope.node if f is not None and f.scope is not None else None

    def caller_of(self, n: ts.Node, fn: ts.Node | None = None) -> str:
        fn = fn if fn is not None else self.enclosing_fn(n)
        d = self.fn_defs.get(fn.id) if fn is not None else None
        return d.qualname if d else ""

    def item_attrs(self, item: ts.Node) -> list[tuple[str, str]]:
        """Flags of the attribute items preceding ``item``."""
        out: list[tuple[str, str]] = []
        flags = self.attr_flags
        for a in self._attrs_before.get(item.id, ()):
            out.extend(flags[a.id])
        return out

    def _place_attrs(self) -> None:
        """Map each flagged attribute to the item it precedes (comments and other attributes
        in between, followed through the captured sibling pairs)."""
        for aid in sorted(self.attr_flags, key=lambda k: self._attr_nodes[k].start_byte):
            n = self.ctx.item_after(self._attr_nodes[aid])
            if n is not None:
                self._attrs_before.setdefault(n.id, []).append(self._attr_nodes[aid])
                self._attr_target[aid] = n

    def own_cfg(self, item: ts.Node | None) -> list[str]:
        if item is None:  # the file: its inner `#![cfg]`
            return list(self.inner_cfg.get(0, []))
        cfg = [v for k, v in self.item_attrs(item) if k == "attr.cfg"]
        return cfg + self.inner_cfg.get(item.id, [])

    def cfg_chain(self, item: ts.Node) -> list[str]:
        """cfg predicates on the item and on its enclosing items, outermost first."""
        return [*self._scope_above(item)[1], *self.own_cfg(item)]

    def module_of(self, n: ts.Node) -> str:
        return self._scope_above(n)[0]

    def _scope_above(self, n: ts.Node) -> tuple[str, tuple[str, ...]]:
        """(module path, cfg predicates of the enclosing items outermost first) of the items
        around ``n``; memoised per frame."""
        pending: list[Frame] = []
        f = self.frame_of.get(n.id)
        got = None
        while f is not None:
            if f.memo is not None:
                got = f.memo
                break
            pending.append(f)
            f = f.parent
        if got is None:
            got = (self.module, tuple(self.own_cfg(None)))
        for f in reversed(pending):  # the memo of a frame covers its item: its name (mod) and its own cfg
            if f.kind in _CFG_FRAMES:
                mod, cfg = got
                if f.kind == "mod":
                    name = self.t(f.node.child_by_field_name("name"))
                    mod = f"{mod}::{name}" if mod and name else mod or name
                got = (mod, cfg + tuple(self.own_cfg(f.node)))
            f.memo = got
        return got

    def container_of(self, n: ts.Node) -> ts.Node | None:
        """The impl/trait item whose body directly holds ``n``."""
        f = self.frame_of.get(n.id)
        return f.node if f is not None and f.kind in ("impl", "trait") else None

    def _nest(self, buckets: dict[str, list[dict[str, list[ts.Node]]]], scopes: list[tuple[str, ts.Node]]) -> None:
        """Frames of the items, macro calls and contexts; the innermost one around every node read."""
        frames = self.ctx.frames()
        for caps in buckets["definition.function"]:
            n = caps["definition.function"][0]
            frames.append(Frame(n.start_byte, n.end_byte, SCOPE, n))
        for kind, n in scopes:
            frames.append(Frame(n.start_byte, n.end_byte, kind, n))
        points: list[tuple[int, int, bool]] = []
        nodes: list[ts.Node] = []
        for key, caps_list in buckets.items():
            outside = key.startswith(("definition.", "ffi."))
            for caps in caps_list:
                n = caps[key][0]
                nodes.append(n)
                points.append((n.start_byte, n.end_byte, outside))
        for n in self._inner:
            nodes.append(n)
            points.append((n.start_byte, n.end_byte, False))
        for n, f in zip(nodes, nest(frames, points), strict=True):
            self.frame_of[n.id] = f
        for item in self._inner:  # `#![cfg]` inside a mod/fn/impl applies to it; at the top, to the file
            f = self.frame_of.get(item.id)
            while f is not None and f.kind not in _CFG_FRAMES:
                f = f.parent
            for value in self._inner_cfg_values[item.id]:
                self.inner_cfg[f.node.id if f is not None else 0].append(value)

    # -- main ------------------------------------------------------------------------------

    def run(self, root: ts.Node) -> None:
        buckets: dict[str, list[dict[str, list[ts.Node]]]] = defaultdict(list)
        scopes: list[tuple[str, ts.Node]] = []
        add_ctx = self.ctx.add
        routes = _routes()
        for i, caps in languages.matches("rust", root):
            route = routes[i]
            if route is None:
                add_ctx(caps)
                continue
            if route[2]:
                self._special(route[2], caps, scopes)
                continue
            if route[1]:
                self._collect_attr(caps)
            if route[0]:
                buckets[route[0]].append(caps)
        for caps in buckets["reference.method"]:  # method chains: receiver -> the call on it
            self.receiver_of[caps["receiver"][0].id] = caps["reference.method"][0]
        self._place_attrs()
        self._nest(buckets, scopes)
        g = self._guarded
        for kind, n in scopes:
            if kind == "impl":
                g(self._impl_block, n)
        for key in (
            "definition.function",
            "definition.method",
            "definition.class",
            "definition.interface",
            "ffi.decl",
        ):
            for caps in buckets[key]:
                g(self._definition, key, caps)
        for caps in buckets["string"]:
            g(self._const, caps["string"][0])
        for caps in buckets["env.read"]:
            g(self._env_read, caps)
        for spans in self.env_by_fn.values():
            spans.sort()
        for caps in buckets["local"]:
            g(self._local, caps["local"][0])
        for caps in buckets["exit.return"]:
            g(self._exit, caps["exit.return"][0])
        # struct fields set from a call: kept only for the fields this file calls as `(self.f)(..)`
        called = {m.group(1) for caps in buckets["reference.indirect"]
                  if (m := _SELF_FIELD_CALL.match(self.t(caps["callee"][0])))}
        for caps in buckets["fnptr.field"] if called else ():
            if self.t(caps["fnptr.name"][0]) in called:
                g(self._field_value, caps)
        for key in ("import", "import.mod"):
            for caps in buckets[key]:
                g(self._import, key, caps)
        for caps in buckets["definition.macro_rules"]:
            g(self._macro_rules, caps)
        for key in ("reference.call", "reference.method", "reference.indirect", "reference.macro"):
            for caps in buckets[key]:
                g(self._call, key, caps)
        g(self._bindings, buckets["binding.register"])
        for caps in buckets["string"]:
            g(self._string, caps["string"][0])
        self.f.calls.sort(key=lambda c: (c.line, c.col))
        self.f.defs.sort(key=lambda d: (d.line, d.end_line))
        self.f.bindings.sort(key=lambda b: b.line)

    def _special(self, name: str, caps: dict[str, list[ts.Node]], scopes: list[tuple[str, ts.Node]]) -> None:
        """Captures that only feed navigation: scopes, const values, `?` chains, attribute holders."""
        if name.startswith("scope."):
            scopes.append((name[6:], caps[name][0]))
        elif name == "const.value":
            self.const_of[caps[name][0].id] = caps["const.item"][0]
        elif name == "chain.try":
            self.receiver_of[caps["chain.inner"][0].id] = caps["chain.try"][0]
        elif name == "attr.before":
            self.ctx.next_sibling[caps[name][0].id] = caps["attr.next"][0]

    def _guarded(self, fn: Callable[..., object], *args: Any) -> None:
        """Run one record's handler; a failure on odd syntax becomes an Issue, not a lost file."""
        self.check()
        try:
            fn(*args)
        except (RecursionError, BudgetExceeded):
            raise
        except Exception as e:  # noqa: BLE001 - recorded as an Issue and shown, never silent
            node = next((a for a in args if isinstance(a, ts.Node)), None)
            if node is None:
                caps = next((a for a in args if isinstance(a, dict)), {})
                node = next((v[0] for v in caps.values() if v), None)
            at = line(node) if node is not None else 0
            self.f.issues.append(Issue(self.f.file, "query", f"rust extractor: {type(e).__name__}: {e}", at))

    def _collect_attr(self, caps: dict[str, list[ts.Node]]) -> None:
        for name, nodes in caps.items():
            if not name.startswith(("attr.", "binding.pyo3.")) or name == "attr.value":
                continue
            item = nodes[0]
            value = self.t(caps["attr.value"][0]) if "attr.value" in caps else ""
            if name == "binding.pyo3.kind":  # staticmethod / classmethod / classattr
                name = "binding.pyo3." + self.t(item).strip("#![] ")
            if name == "attr.cfg":
                value = cfg_predicate(value)
            if item.type == "inner_attribute_item":
                if name == "attr.cfg":  # placed on its mod / fn / the file once ranges are nested
                    if item.id not in self._inner_cfg_values:
                        self._inner.append(item)
                    self._inner_cfg_values[item.id].append(value)
                continue
            self.attr_flags.setdefault(item.id, []).append((name, value))
            self._attr_nodes[item.id] = item
            if name == "binding.pyo3.module":
                self._pymod_attrs.append(item)

    # -- definitions -----------------------------------------------------------------------

    def _fn_common(self, d: Definition, node: ts.Node, container: ts.Node | None) -> None:
        params = node.child_by_field_name("parameters")
        for p in params.named_children if params else []:
            if p.type == "self_parameter":
                s = _LIFETIME_RE.sub("", self.t(p))
                kind = "&mut self" if "&" in s and "mut" in s else "&self" if "&" in s else "self"
                d.params.append(Param("self", kind))
            elif p.type == "parameter":
                pat = self.t(p.child_by_field_name("pattern")).removeprefix("mut ").strip()
                d.params.append(Param(one_line(pat), self.tl(p.child_by_field_name("type"))))
            elif p.type == "variadic_parameter":
                d.params.append(Param("...", "..."))
        d.return_type = self.tl(node.child_by_field_name("return_type"))
        bounds: dict[str, list[str]] = {}
        for holder in ([container] if container is not None else []) + [node]:
            names = self._generics(holder, bounds)
            if holder is node:
                d.template_params = names
        d.generic_bounds = bounds
        vis = next((c for c in node.named_children if c.type == "visibility_modifier"), None)
        d.visibility = self.tl(vis)
        mods = next((c for c in node.named_children if c.type == "function_modifiers"), None)
        if mods is not None:
            for c in mods.children:
                if c.type in ("async", "unsafe", "const"):
                    d.attrs[c.type] = True
        body = node.child_by_field_name("body")
        kids = [c for c in body.named_children if c.type not in _ITEM_PREFIX] if body is not None else []
        if kids and kids[-1].type == "expression_statement" and kids[-1].named_children \
                and kids[-1].children[-1].type != ";":  # a final `match … {}` without `;`: the value
            kids[-1] = kids[-1].named_children[0]
        if kids and kids[-1].type in ("identifier", "call_expression") \
                and kids[-1].end_byte - kids[-1].start_byte <= ARG_LIMIT:
            d.attrs["tail"] = self.tl(kids[-1])  # the value the function returns (a picker's `Some(f)`)
        elif kids and kids[-1].type in ("match_expression", "if_expression"):
            d.attrs["tail"] = "<tail>"  # the function returns what its final match/if chooses
            self._fn_values(d, "<tail>", kids[-1])

    def _generics(self, holder: ts.Node, bounds: dict[str, list[str]]) -> list[str]:
        """Generic parameter names of ``holder``; adds its bounds and where-clauses to ``bounds``."""
        names: list[str] = []
        tps = holder.child_by_field_name("type_parameters")
        for tp in tps.named_children if tps else []:
            if tp.type in ("lifetime_parameter", "lifetime", "line_comment", "block_comment"):
                continue
            nm = tp.child_by_field_name("name") or (
                tp if tp.type in ("type_identifier", "identifier") else None
            )
            if nm is None:
                nm = next((c for c in tp.named_children if c.type in ("type_identifier", "identifier")), None)
            if nm is None:
                continue
            names.append(self.t(nm))
            self._add_bounds(bounds, self.t(nm), tp.child_by_field_name("bounds"))
        wc = next((c for c in holder.named_children if c.type == "where_clause"), None)
        for wp in wc.named_children if wc else []:
            if wp.type == "where_predicate":
                left = self.tl(wp.child_by_field_name("left"))
                if not left.startswith("'"):
                    self._add_bounds(bounds, left, wp.child_by_field_name("bounds"))
        return names

    def _add_bounds(self, bounds: dict[str, list[str]], name: str, tb: ts.Node | None) -> None:
        if tb is None:
            return
        for b in tb.named_children:
            if b.type not in ("lifetime", "line_comment", "block_comment"):
                lst = bounds.setdefault(name, [])
                bt = self.tl(b)
                if bt not in lst:
                    lst.append(bt)

    def _definition(self, key: str, caps: dict[str, list[ts.Node]]) -> None:
        node = caps[key][0]
        name = self.t(caps["name"][0])
        mod = self.module_of(node)
        attrs = self.item_attrs(node)
        flags = {k for k, _ in attrs}
        d = Definition(
            kind="rust_fn", name=name, qualname=f"{mod}::{name}" if mod else name, file=self.f.file,
            line=line(node), end_line=node.end_point[0] + 1, lang="rust", cfg=self.cfg_chain(node),
        )  # fmt: skip
        if key in ("definition.class", "definition.interface"):
            self._type_def(d, node)
        elif key == "ffi.decl":
            d.kind = "ffi_decl"
            self._fn_common(d, node, None)
            d.symbol = next((literal_content_s(v) for k, v in attrs if k == "attr.link_name"), name)
            block = caps["ffi.block"][0]
            abi = next((c for c in block.named_children if c.type == "extern_modifier"), None)
            d.attrs["abi"] = literal_content_s(self.t(abi).removeprefix("extern").strip()) or "C"
            link = [v for k, v in self.item_attrs(block) if k == "attr.link"]
            if link:
                m = _NAME_RE.search(link[0])
                d.attrs["link"] = m.group(1) if m else cfg_predicate(link[0])
        else:
            container = self.container_of(node)
            self._fn_common(d, node, container)
            if container is not None:
                self._method(d, node, container, mod, key)
            else:
                outer = self.enclosing_fn(node)
                if outer is not None and outer.id in self.fn_defs:
                    d.qualname = f"{self.fn_defs[outer.id].qualname}::{name}"
                    d.attrs["nested_in"] = self.fn_defs[outer.id].qualname
            if node.type == "function_item":
                self._abi(d, node, attrs)
                self.fn_defs[node.id] = d
            self._pyo3_item(d, node, container, attrs, flags)
        self.f.defs.append(d)

    def _abi(self, d: Definition, node: ts.Node, attrs: list[tuple[str, str]]) -> None:
        mods = next((c for c in node.named_children if c.type == "function_modifiers"), None)
        ext = next((c for c in mods.named_children if c.type == "extern_modifier"), None) if mods else None
        export = next((literal_content_s(v) for k, v in attrs if k == "attr.export_name"), "")
        no_mangle = any(k == "attr.no_mangle" for k, _ in attrs)
        if ext is None and not export and not no_mangle:
            return
        d.symbol = export or d.name
        d.attrs["extern_c"] = True
        d.attrs["no_mangle"] = no_mangle or bool(export)
        if ext is not None:
            d.attrs["abi"] = literal_content_s(self.t(ext).removeprefix("extern").strip()) or "C"

    def _impl_block(self, node: ts.Node) -> None:
        """An impl's associated types (``type Output = …``, read by its methods' ``Self::Output``), and
        a trait impl without methods (``impl Tr for B {}``, it runs the trait's defaults): an Import
        of kind ``impl`` (``path`` the type, ``alias`` the trait, ``scope`` the module)."""
        body = node.child_by_field_name("body")
        kids = body.named_children if body is not None else []
        assoc = {self.t(n): self.tl(v) for c in kids if c.type == "type_item"
                 and (n := c.child_by_field_name("name")) is not None
                 and (v := c.child_by_field_name("type")) is not None}
        if assoc:
            self.assoc_types[node.id] = assoc
        tr = node.child_by_field_name("trait")
        ty = node.child_by_field_name("type")
        if tr is None or ty is None or any(c.type == "function_item" for c in kids):
            return
        if strip_generics(self.t(ty)) in self._generics(node, {}):
            return  # a blanket `impl<T: X> Tr for T {}`
        self.f.imports.append(Import("impl", strip_generics(self.t(ty)), strip_generics(self.t(tr)), self.f.file,
                                     line(node), scope=self.module_of(node), cfg=self.cfg_chain(node)))

    def _method(self, d: Definition, node: ts.Node, container: ts.Node, mod: str, key: str) -> None:
        if container.type == "trait_item":
            tname = self.t(container.child_by_field_name("name"))
            d.container = d.trait = tname
            d.attrs["trait_default" if key == "definition.function" else "trait_decl"] = True
        else:
            ty = strip_generics(self.t(container.child_by_field_name("type")))
            d.container = ty.rsplit("::", 1)[-1]
            if "::" in ty:
                d.attrs["type_path"] = ty
            tr = container.child_by_field_name("trait")
            if tr is not None:
                tp = strip_generics(self.t(tr))
                d.trait = tp.rsplit("::", 1)[-1]
                if "::" in tp:
                    d.attrs["trait_path"] = tp
                d.attrs["trait_qualname"] = f"<{d.container} as {d.trait}>::{d.name}"
            assoc = self.assoc_types.get(container.id)
            if assoc and "Self::" in d.return_type:  # `-> Self::Output`, `-> &Self::Target`: the impl's `type X = …`
                names = _SELF_ASSOC_RE.findall(d.return_type)
                if all(n in assoc for n in names):
                    d.attrs["return_assoc"] = _SELF_ASSOC_RE.sub(lambda m: assoc[m.group(1)], d.return_type)
        d.qualname = f"{mod}::{d.container}::{d.name}" if mod else f"{d.container}::{d.name}"

    def _type_def(self, d: Definition, node: ts.Node) -> None:
        d.kind = "rust_type"
        d.attrs["kind"] = {"struct_item": "struct", "enum_item": "enum", "union_item": "union",
                           "type_item": "type_alias", "trait_item": "trait"}[node.type]  # fmt: skip
        vis = next((c for c in node.named_children if c.type == "visibility_modifier"), None)
        d.visibility = self.tl(vis)
        d.template_params = self._generics(node, d.generic_bounds)
        body = node.child_by_field_name("body")
        if node.type in ("struct_item", "union_item") and body is not None:
            d.fields = self._fields(body)
        elif node.type == "enum_item" and body is not None:
            d.attrs["variants"] = [self.t(v.child_by_field_name("name")) for v in body.named_children
                                   if v.type == "enum_variant"]  # fmt: skip
            payload = {}  # tuple variants' field types, for `Enum::Variant(x) => x.m()` receivers
            named = {}  # struct-like variants' field types, for `Enum::Variant { x, .. } => x.m()`
            for v in body.named_children:
                vb = v.child_by_field_name("body") if v.type == "enum_variant" else None
                if vb is not None and vb.type == "ordered_field_declaration_list":
                    payload[self.t(v.child_by_field_name("name"))] = [
                        self.tl(c) for c in vb.children_by_field_name("type")]
                elif vb is not None and vb.type == "field_declaration_list":
                    named[self.t(v.child_by_field_name("name"))] = self._fields(vb)
            if payload:
                d.attrs["variant_types"] = payload
            if named:
                d.attrs["variant_fields"] = named
        elif node.type == "type_item":
            d.attrs["aliased"] = self.tl(node.child_by_field_name("type"))
        elif node.type == "trait_item":
            sup = node.child_by_field_name("bounds")
            if sup is not None:
                d.attrs["supertraits"] = [
                    self.tl(b) for b in sup.named_children if b.type != "lifetime"
                ]
            if body is not None:
                d.attrs["methods"] = [self.t(c.child_by_field_name("name")) for c in body.named_children
                                      if c.type in ("function_item", "function_signature_item")]  # fmt: skip
        attrs = self.item_attrs(node)
        for k, av in attrs:
            if k == "binding.pyo3.class":
                m = _NAME_RE.search(av)
                py = m.group(1) if m else d.name
                self.pyclasses[d.name] = py
                b = Binding("class", py, d.qualname, self.f.file, d.line, rust_type=d.name)
                mm = re.search(r'\bmodule\s*=\s*"([^"]*)"', av)
                if mm:
                    b.attrs["module"] = mm.group(1)
                self.f.bindings.append(b)
                self._export_in_pymodule(node, py, d.name, "class")

    def _fields(self, body: ts.Node) -> dict[str, str]:
        out: dict[str, str] = {}
        if body.type == "ordered_field_declaration_list":
            for i, c in enumerate(c for c in body.children_by_field_name("type")):
                out[str(i)] = self.tl(c)
            return out
        for c in body.named_children:
            if c.type == "field_declaration":
                out[self.t(c.child_by_field_name("name"))] = self.tl(c.child_by_field_name("type"))
        return out

    # -- PyO3 --------------------------------------------------------------------------------

    def _pyo3_item(self, d: Definition, node: ts.Node, container: ts.Node | None,
                   attrs: list[tuple[str, str]], flags: set[str]) -> None:  # fmt: skip
        opts = " ".join(v for k, v in attrs if k == "binding.pyo3.options")
        m = _NAME_RE.search(opts)
        renamed = m.group(1) if m else ""
        if "binding.pyo3.function" in flags:
            fv = next(v for k, v in attrs if k == "binding.pyo3.function")
            m2 = _NAME_RE.search(fv)
            py = renamed or (m2.group(1) if m2 else d.name)
            self.pyfunctions[d.name] = py
            self.f.bindings.append(Binding("function", py, d.qualname, self.f.file, d.line))
            self._export_in_pymodule(node, py, d.name, "function")
        if "binding.pyo3.module" in flags:
            mv = next(v for k, v in attrs if k == "binding.pyo3.module")
            m2 = _NAME_RE.search(mv)
            py = renamed or (m2.group(1) if m2 else d.name)
            self.pymodules[node.id] = py
            self.f.bindings.append(Binding("module", py, d.qualname, self.f.file, d.line, python_module=py))
        if container is None or container.type != "impl_item":
            return
        if not any(k == "binding.pyo3.methods" for k, _ in self.item_attrs(container)):
            return
        py = renamed
        battrs: dict[str, Any] = {}
        for k, v in attrs:
            kind = k.removeprefix("binding.pyo3.")
            if kind == "new":
                battrs["constructor"] = True
            elif kind in ("getter", "setter", "staticmethod", "classmethod", "classattr"):
                battrs[kind] = True
                if kind in ("getter", "setter") and not py:
                    arg = v.strip("() \t\n")
                    py = arg or d.name.removeprefix("get_" if kind == "getter" else "set_")
        b = Binding(
            "method", py or d.name, d.qualname, self.f.file, d.line, rust_type=d.container, attrs=battrs
        )
        b.attrs["_pyclass_pending"] = d.container  # resolved once all pyclasses are known
        self.f.bindings.append(b)

    def _export_in_pymodule(self, node: ts.Node, py: str, rust: str, what: str) -> None:
        """Items defined inside a declarative ``#[pymodule] mod x { … }`` are exported by it."""
        f = self.frame_of.get(node.id)
        g = f.node if f is not None and f.kind == "mod" else None
        if g is None:
            return
        if not any(k == "binding.pyo3.module" for k, _ in self.item_attrs(g)):
            return
        mod = self._declarative_module_name(g)
        self.f.bindings.append(Binding("module_member", py, rust, self.f.file, line(node), python_module=mod,
                                       attrs={"what": what}))  # fmt: skip

    def _declarative_module_name(self, mod: ts.Node) -> str:
        attrs = self.item_attrs(mod)
        for k, v in attrs:
            if k in ("binding.pyo3.module", "binding.pyo3.options"):
                m = _NAME_RE.search(v)
                if m:
                    return m.group(1)
        return self.t(mod.child_by_field_name("name"))

    def _bindings(self, registers: list[dict[str, list[ts.Node]]]) -> None:
        # declarative modules: `#[pymodule] mod x { #[pymodule_export] use …; }`
        for d_node in self._pymodule_mods():
            name = self._declarative_module_name(d_node)
            qual = self.module_of(d_node) + "::" + self.t(d_node.child_by_field_name("name"))
            self.f.bindings.append(Binding("module", name, qual.lstrip(":"), self.f.file, line(d_node),
                                           python_module=name))  # fmt: skip
        for b in self.f.bindings:
            pend = b.attrs.pop("_pyclass_pending", None)
            if pend is not None:
                b.python_class = self.pyclasses.get(pend, pend)
        for caps in registers:
            reg = caps["binding.register"][0]
            fn = self.enclosing_fn(reg)
            mod = self.pymodules.get(fn.id, "") if fn is not None else ""
            for what in ("class", "function", "module"):
                node = caps.get(f"binding.member.{what}", [None])[0]
                if node is None:
                    continue
                if what == "class":
                    path = self.tl(node)
                else:  # token tree of wrap_pyfunction!(path, m) / wrap_pymodule!(path)
                    path = "".join(self.t(node)[1:-1].split(",", 1)[0].split())
                short = strip_generics(path).rsplit("::", 1)[-1]
                table = self.pyclasses if what == "class" else self.pyfunctions
                b = Binding("module_member", table.get(short, short), path, self.f.file, line(reg),
                            python_module=mod, attrs={"what": what})  # fmt: skip
                if not mod:
                    b.attrs["registrar"] = self.caller_of(reg)
                self.f.bindings.append(b)

    def _pymodule_mods(self) -> list[ts.Node]:
        """``mod`` items carrying ``#[pymodule]`` (declarative PyO3 modules)."""
        out = []
        for a in self._pymod_attrs:
            s = self._attr_target.get(a.id)
            if s is not None and s.type == "mod_item":
                out.append(s)
        return out

    # -- imports -----------------------------------------------------------------------------

    def resolve(self, segs: list[str], scope: str) -> list[str]:
        """Resolve ``crate``/``self``/``super`` prefixes against the module ``scope``."""
        if not segs or not scope:
            return segs
        if segs[0] == "crate":
            return [self.crate, *segs[1:]]
        base = scope.split("::")
        if segs[0] == "self":
            return [*base, *segs[1:]]
        if segs[0] == "super":
            i = 0
            while i < len(segs) and segs[i] == "super":
                i += 1
            return [*base[: max(len(base) - i, 1)], *segs[i:]]
        return segs

    def _import(self, key: str, caps: dict[str, list[ts.Node]]) -> None:
        node = caps[key][0]
        module = self.module_of(node)
        fn = self.enclosing_fn(node)  # a `use` in a fn body is visible in that fn only
        scope = self.fn_defs[fn.id].qualname if fn is not None and fn.id in self.fn_defs else module
        cfg = self.cfg_chain(node)
        vis = next((c for c in node.named_children if c.type == "visibility_modifier"), None)
        public = vis is not None and self.t(vis).startswith("pub")
        if key == "import.mod":
            name = self.t(caps["name"][0])
            self.f.imports.append(Import("mod", f"{module}::{name}" if module else name, name, self.f.file,
                                         line(node), scope=scope, public=public, cfg=cfg))  # fmt: skip
            return
        export = any(k == "binding.pyo3.export" for k, _ in self.item_attrs(node))
        for written, alias in self._use_leaves(caps["import.tree"][0], []):
            path = "::".join(self.resolve(written, module))
            self.f.imports.append(Import("use", path, alias, self.f.file, line(node), scope=scope,
                                         public=public, cfg=cfg))  # fmt: skip
            if export:
                self._pymodule_export(node, written, alias, path)

    def _macro_rules(self, caps: dict[str, list[ts.Node]]) -> None:
        """``macro_rules! name { … }``: kept whole (Import kind ``macro_rules``, scope the module) for
        linking to expand item-level invocations that define functions or methods."""
        node = caps["definition.macro_rules"][0]
        if node.end_byte - node.start_byte > 65536:
            return
        fn = self.enclosing_fn(node)  # a macro local to a function: scope is the function
        scope = self.fn_defs[fn.id].qualname if fn is not None and fn.id in self.fn_defs else self.module_of(node)
        self.f.imports.append(Import("macro_rules", self.t(node), self.t(caps["name"][0]), self.f.file, line(node),
                                     scope=scope, cfg=self.cfg_chain(node)))

    def _use_leaves(self, n: ts.Node, prefix: list[str]) -> list[tuple[list[str], str]]:
        t = n.type
        if t == "use_as_clause":
            segs = prefix + split_path(self.t(n.child_by_field_name("path")))[0]
            return [(segs, self.t(n.child_by_field_name("alias")))]
        if t == "use_wildcard":
            inner = self.t(n).rstrip("*").rstrip().removesuffix("::")
            return [(prefix + (split_path(inner)[0] if inner else []), "*")]
        if t == "scoped_use_list":
            p = n.child_by_field_name("path")
            newp = prefix + (split_path(self.t(p))[0] if p is not None else [])
            return self._use_leaves(n.child_by_field_name("list"), newp)  # type: ignore[arg-type]  # grammar: has a list
        if t == "use_list":
            out: list[tuple[list[str], str]] = []
            for c in n.named_children:
                if c.type not in ("line_comment", "block_comment"):
                    out.extend(self._use_leaves(c, prefix))
            return out
        segs = split_path(self.t(n))[0]
        if segs == ["self"] and prefix:
            return [(prefix, prefix[-1])]
        full = prefix + segs
        return [(full, full[-1])] if full else []

    def _pymodule_export(self, node: ts.Node, written: list[str], alias: str, resolved: str) -> None:
        f = self.frame_of.get(node.id)
        g = f.node if f is not None and f.kind == "mod" else None
        if g is None:
            return
        short = written[-1]
        what = "class" if short in self.pyclasses else "function" if short in self.pyfunctions else "item"
        py = self.pyclasses.get(short) or self.pyfunctions.get(short) or alias
        self.f.bindings.append(Binding("module_member", py, "::".join(written), self.f.file, line(node),
                                       python_module=self._declarative_module_name(g),
                                       attrs={"what": what, "resolved": resolved}))  # fmt: skip

    # -- env reads, consts, locals -------------------------------------------------------------

    def _const(self, s: ts.Node) -> None:
        p = self.const_of.get(s.id)
        if p is not None:
            self.consts[self.t(p.child_by_field_name("name"))] = literal_content(s, self.src)

    def _env_read(self, caps: dict[str, list[ts.Node]]) -> None:
        read = caps["env.read"][0]
        arg = caps["env.name"][0]
        if arg.type in ("string_literal", "raw_string_literal"):
            name = literal_content(arg, self.src)
        else:
            # a same-file const, else the expression in <…> (not a literal name)
            name = self.consts.get(self.t(arg).lstrip("&"), f"<{self.tl(arg)}>")
        # the method chain applied to the read: `.unwrap_or(..)`, `.is_ok()`, `?`
        cur = read
        while cur.id in self.receiver_of:
            cur = self.receiver_of[cur.id]
        default = _chain_text(self.src[read.end_byte : cur.end_byte].decode("utf-8", "replace"))
        fn = self.enclosing_fn(read)
        self.f.env_reads.append(EnvRead(name, self.f.file, line(read), self.caller_of(read), default,
                                        _chain_text(self.t(cur), TEXT_LIMIT)))  # fmt: skip
        self.env_by_fn[fn.id if fn is not None else None].append((read.start_byte, read.end_byte, [name]))
        if fn is None:  # `static X: Lazy<bool> = Lazy::new(|| env::var("A").is_ok());`
            f = self.frame_of.get(read.id)
            while f is not None and f.kind != "const":
                f = f.parent
            if f is not None:
                self.env_locals[None].append((0, self.t(f.node.child_by_field_name("name")), [name]))

    def env_in(self, node: ts.Node, fn: ts.Node | None) -> list[str]:
        """Env var names read inside ``node`` directly or via an env-derived local/static."""
        names: list[str] = []
        key = fn.id if fn is not None else None
        spans = self.env_by_fn.get(key, [])
        i = bisect_left(spans, (node.start_byte,))  # spans are added in source order
        while i < len(spans) and spans[i][0] < node.end_byte:
            s, e, ns = spans[i]
            if e <= node.end_byte:
                names.extend(ns)
            i += 1
        if not (self.env_locals.get(key) or self.env_locals.get(None)):
            return list(dict.fromkeys(names)) if names else names
        t = self.t(node)
        for scope in {key, None} if key is not None else {None}:
            for at, var, ns in self.env_locals.get(scope, []):
                if at <= node.start_byte and re.search(rf"(?<![.\w]){re.escape(var)}\b", t):
                    names.extend(ns)
        return list(dict.fromkeys(names))

    def _local(self, let: ts.Node) -> None:
        fn = self.enclosing_fn(let)
        pat = let.child_by_field_name("pattern")
        if pat is not None and pat.type == "tuple_pattern":  # `let (q, k, v) = f()?;` (receiver typing)
            d = self.fn_defs.get(fn.id) if fn is not None else None
            value = let.child_by_field_name("value")
            if d is not None and value is not None:
                names = [self.t(c).removeprefix("mut ").strip() for c in pat.children
                         if c.type not in ("(", ")", ",", "line_comment", "block_comment")]
                entry = {"vars": names, "value": self.tl(value)[:200], "line": let.start_point[0] + 1,
                         **_let_span(let)}
                self._add_tails(entry, value)
                d.attrs.setdefault("tuple_assigns", []).append(entry)
            return
        if pat is not None and pat.type in ("struct_pattern", "tuple_struct_pattern"):
            # `let S { a, b: c, .. } = v;` / `let Some(x) = v else { .. };` (receiver typing)
            d = self.fn_defs.get(fn.id) if fn is not None else None
            value = let.child_by_field_name("value")
            names = _pattern_vars(pat, [])
            if d is not None and value is not None and names:
                d.attrs.setdefault("pattern_assigns", []).append(
                    {"vars": names, "pattern": self.tl(pat)[:300], "value": self.tl(value)[:200],
                     "line": let.start_point[0] + 1, **_let_span(let)})
            return
        if pat is None or pat.type != "identifier":
            return
        var = self.t(pat)
        value = let.child_by_field_name("value")
        if value is not None:
            env = self.env_in(value, fn)
            if env:
                self.env_locals[fn.id if fn is not None else None].append((let.end_byte, var, env))
        d = self.fn_defs.get(fn.id) if fn is not None else None
        if d is None:
            return
        if value is not None:  # `let x = v;` value text (analyses follow per-request scalars)
            entry = {"var": var, "value": self.chain_text(value, 200), "line": let.start_point[0] + 1,
                     **_let_span(let)}
            written = let.child_by_field_name("type")
            if written is not None:
                entry["type"] = self.tl(written)  # `let x: T = …`: the written type wins over the value's
            self._add_tails(entry, value)
            d.attrs.setdefault("assigns", []).append(entry)
            if value.type in ("match_expression", "if_expression"):
                self._fn_values(d, var, value)
        ty = let.child_by_field_name("type")
        if ty is not None:
            d.locals[var] = self.tl(ty)
        elif value is not None:
            inferred = self._value_type(value)
            if inferred:
                d.locals[var] = inferred

    def _exit(self, ret: ts.Node) -> None:
        """``attrs["exits"]`` of the enclosing fn: the if / else / match arm a ``return`` leaves the function
        from (when the return is a statement of the arm's own body: no loop, closure or other arm between),
        with the arm's group and index (as its calls' contexts have them), its condition, the construct's
        last line and the returned value's text.  Calls after that construct run only when another arm ran."""
        frame = self.frame_of.get(ret.id)
        fn = frame.scope.node if frame is not None and frame.scope is not None else None
        d = self.fn_defs.get(fn.id) if fn is not None else None
        if d is None or frame is None:
            return
        contexts = self.ctx.of(frame)
        if not contexts or contexts[-1].kind not in ("if", "else", "match_arm"):
            return
        arm = contexts[-1]
        construct = ret.parent
        while construct is not None and construct.type in ("expression_statement", "block"):
            construct = construct.parent
        if construct is None:
            return
        if arm.kind == "match_arm":
            if construct.type != "match_arm":
                return
            top = construct.parent.parent if construct.parent is not None else None  # match_block → match
        else:
            if construct.type == "else_clause":
                construct = construct.parent
            if construct is None or construct.type != "if_expression":
                return
            top = construct
            while top.parent is not None and top.parent.type == "else_clause" and top.parent.parent is not None:
                top = top.parent.parent  # the head of an else-if chain ends the construct
        value = ret.named_children[0] if ret.named_children else None
        rec = {"kind": arm.kind, "group": arm.group, "arm": arm.arm, "text": arm.text, "subject": arm.subject,
               "end": (top or construct).end_point[0] + 1, "line": line(ret),
               "value": self.tl(value)[:120] if value is not None else ""}
        if arm.kind == "else":
            rec["text"] = "else (not: " + "; ".join(arm.negated) + ")"
        d.attrs.setdefault("exits", []).append(rec)

    def _add_tails(self, entry: dict[str, Any], value: ts.Node) -> None:
        """``let x = if c { a } else { b }``: the branches' values and the lines they are written on
        (``tails``, ``tail_at``: line and column), for typing the variable where each branch's bindings are in scope;
        ``tail_arms``: per tail, the match arm patterns / ``if let`` conditions around it (kind, text, subject)."""
        if value.type in ("if_expression", "match_expression", "block"):  # (a block: its tail sees its lets)
            tails: list[tuple[str, list[int], list[list[str]]]] = []
            self._tails(value, tails, [])
            if tails:
                entry["tails"] = [t for t, _, _ in tails]
                entry["tail_at"] = [at for _, at, _ in tails]
                if any(arms for _, _, arms in tails):
                    entry["tail_arms"] = [arms for _, _, arms in tails]

    def _tails(self, v: ts.Node | None, out: list[tuple[str, list[int], list[list[str]]]],
               arms: list[list[str]]) -> list[tuple[str, list[int], list[list[str]]]]:
        """The values an ``if``/``match`` expression can take (each branch's tail, with its position and the
        arms binding its variables), at most 4."""
        if len(out) >= 4 or v is None:
            return out
        if v.type == "block":
            last = v.named_children[-1] if v.named_children else None
            if last is not None and last.type not in ("expression_statement", "let_declaration", "line_comment",
                                                      "block_comment") and not self.t(v).rstrip("} \n").endswith(";"):
                self._tails(last, out, arms)
        elif v.type == "if_expression":
            cond = v.child_by_field_name("condition")
            bound = [["if", self.tl(cond)[:300], ""]] if cond is not None and cond.type == "let_condition" else []
            self._tails(v.child_by_field_name("consequence"), out, arms + bound)
            alt = v.child_by_field_name("alternative")
            if alt is not None and alt.named_children:
                self._tails(alt.named_children[-1], out, arms)
        elif v.type == "match_expression":
            body = v.child_by_field_name("body")
            subject = self.tl(v.child_by_field_name("value"))[:200]
            for arm in body.named_children if body is not None else []:
                if arm.type == "match_arm":
                    pat = arm.child_by_field_name("pattern")
                    here = [["match_arm", self.tl(pat)[:300], subject]] if pat is not None else []
                    self._tails(arm.child_by_field_name("value"), out, arms + here)
        elif v.type not in ("return_expression", "macro_invocation", "break_expression", "continue_expression"):
            out.append((self.tl(v)[:160], [line(v), v.start_point[1]], arms))
        return out

    def _fn_values(self, d: Definition, var: str, match: ts.Node) -> None:
        """``let f = match x { A => ffi::a, B => ffi::b, _ => bail!() }`` (or ``if c { ffi::a } else
        { ffi::b }``): the function paths a variable may hold, per arm (attrs ``fn_values``: var →
        [{path, arm, subject, line, at}], ``at`` the line of the ``let``: a later ``let`` shadows);
        a call through the variable is a dispatch point over them."""
        group = f"{match.start_point[0] + 1}:{match.start_point[1]}"
        at = match.start_point[0] + 1
        out = []
        if match.type == "if_expression":
            arms: list[tuple[ts.Node | None, str, str, list[str]]] = []
            conds: list[str] = []
            node: ts.Node | None = match
            while node is not None and node.type == "if_expression" and len(arms) < 16:  # an else-if chain
                cond = self.tl(node.child_by_field_name("condition"))
                arms.append((node.child_by_field_name("consequence"), cond, "if", list(conds)))
                conds.append(cond)
                alt = node.child_by_field_name("alternative")
                node = alt.named_children[0] if alt is not None and alt.named_children else None
                if node is not None and node.type != "if_expression":
                    arms.append((node, "else", "else", list(conds)))
            for body, label, kind, negated in arms:
                value = body.named_children[0] if body is not None and body.type == "block" \
                    and len(body.named_children) == 1 else None
                if value is not None and value.type in ("identifier", "scoped_identifier") \
                        and _FN_NAME.match(self.t(value).rsplit("::", 1)[-1]):
                    out.append({"path": self.t(value), "arm": label, "subject": "", "kind": kind, "at": at,
                                "line": value.start_point[0] + 1, "group": group, "negated": negated})
        else:
            block = match.child_by_field_name("body")
            subject = self.tl(match.child_by_field_name("value"))
            for arm in block.named_children if block is not None else []:
                if arm.type != "match_arm":
                    continue
                value = arm.child_by_field_name("value")
                if value is not None and value.type == "block" and len(value.named_children) == 1:
                    value = value.named_children[0]
                if value is None or value.type not in ("identifier", "scoped_identifier") \
                        or not _FN_NAME.match(self.t(value).rsplit("::", 1)[-1]):
                    continue  # not a function (an enum variant, a constant)
                pat = arm.child_by_field_name("pattern")
                out.append({"path": self.t(value), "arm": self.tl(pat), "subject": subject, "at": at,
                            "line": value.start_point[0] + 1, "group": group})
        if out:
            d.attrs.setdefault("fn_values", {}).setdefault(var, []).extend(out)

    def _peel(self, v: ts.Node) -> ts.Node:
        """Strip ``?``, ``.await``, ``.unwrap()`` and ``.expect(..)`` around a value."""
        for _ in range(4):
            if v.type in ("try_expression", "await_expression") and v.named_children:
                v = v.named_children[0]
                continue
            if v.type == "call_expression":
                fe = v.child_by_field_name("function")
                if fe is not None and fe.type == "field_expression":
                    inner = fe.child_by_field_name("value")
                    if inner is not None and self.t(fe.child_by_field_name("field")) in ("unwrap", "expect"):
                        v = inner
                        continue
            break
        return v

    def _value_type(self, v: ts.Node) -> str:
        """Type path of ``Type::new(..)`` / ``Type::from_x(..)?`` / ``Type { .. }``, else ""."""
        v = self._peel(v)
        if v.type == "struct_expression":
            return strip_generics(self.t(v.child_by_field_name("name")))
        if v.type != "call_expression":
            return ""
        fn = v.child_by_field_name("function")
        if fn is not None and fn.type == "generic_function":
            fn = fn.child_by_field_name("function")
        if fn is None or fn.type != "scoped_identifier":
            return ""
        segs = split_path(self.t(fn))[0]
        if len(segs) < 2 or not segs[-1][:1].islower() and not segs[-1].startswith("_"):
            return ""
        head = segs[-2]
        if not (head[:1].isupper() or head.startswith("<")):
            return ""
        return "::".join(strip_generics(s) if not s.startswith("<") else s for s in segs[:-1])

    # -- calls and contexts ------------------------------------------------------------------

    def chain_text(self, n: ts.Node, limit: int) -> str:
        """A value's one-line text (at most ``limit`` characters); a method chain longer than that, or holding a
        comment, written link by link without comments, arguments elided unless short
        (``B::new().with_a(…).with_b(1)?``, at most :data:`CHAIN_LIMIT`): all its type needs."""
        s = self.tl(n, limit)
        if not s.endswith("…") and "//" not in s and "/*" not in s:
            return s
        links: list[str] = []
        cur: ts.Node | None = n
        while cur is not None and len(links) < 200:
            kids = [c for c in cur.named_children if c.type not in ("line_comment", "block_comment")]
            if cur.type in ("try_expression", "await_expression") and kids:
                links.append("?" if cur.type == "try_expression" else ".await")
                cur = kids[0]
            elif cur.type == "field_expression":
                links.append(f".{self.t(cur.child_by_field_name('field'))}")
                cur = cur.child_by_field_name("value")
            elif cur.type == "call_expression":
                fn = cur.child_by_field_name("function")
                targs = ""
                if fn is not None and fn.type == "generic_function":
                    targs = "::" + self.tl(fn.child_by_field_name("type_arguments"), 100)
                    fn = fn.child_by_field_name("function")
                args = self._short_args(cur.child_by_field_name("arguments"))
                if fn is None or fn.type != "field_expression":
                    head = self.tl(fn, 200)
                    if fn is None or fn.type not in ("identifier", "scoped_identifier") or head.endswith("…"):
                        return s
                    call = f"{head}{targs}({args})"
                    # the value is this path call itself (nothing follows it): its arguments elided
                    return self._chain_of(call, links, s) if links else call
                links.append(f".{self.t(fn.child_by_field_name('field'))}{targs}({args})")
                cur = fn.child_by_field_name("value")
            else:
                head = self.tl(cur, 200)
                return s if head.endswith("…") or "//" in head or "/*" in head else self._chain_of(head, links, s)
        return s

    @staticmethod
    def _chain_of(head: str, links: list[str], whole: str) -> str:
        out = head + "".join(reversed(links))
        return out if len(out) <= CHAIN_LIMIT and links else whole

    def _short_args(self, args: ts.Node | None) -> str:
        """A call's arguments on one line when short and free of comments, else ``…``."""
        got = self.tl(args, 42) if args is not None else "()"
        return "…" if got.endswith("…") or "//" in got or "/*" in got else got[1:-1]

    def _call(self, key: str, caps: dict[str, list[ts.Node]]) -> None:
        node = caps[key][0]
        callee_node = caps["callee"][0]
        argsn = caps["args"][0]
        frame = self.frame_of.get(node.id)
        fn = frame.scope.node if frame is not None and frame.scope is not None else None
        contexts = self.ctx.of(frame)
        d = self.fn_defs.get(fn.id) if fn is not None else None
        cs = CallSite(kind="call", callee="", path=[], caller=d.qualname if d else "", file=self.f.file,
                      line=line(node), col=node.start_point[1], text=self.tl(node, TEXT_LIMIT))  # fmt: skip
        if key == "reference.macro":
            segs = split_path(self.t(callee_node))[0]
            cs.kind = "macro"
            cs.path = segs[:-1] + [segs[-1] + "!"]
            cs.callee = "::".join(cs.path)
            cs.args = self._tt_args(argsn)
            cs.attrs["wrapped_calls"] = self._wrapped_calls(argsn)
            if fn is None and argsn.end_byte - argsn.start_byte <= 65536:  # an item: may define functions
                f = self.frame_of.get(node.id)
                while f is not None and f.node is not None and f.node.id == node.id:
                    f = f.parent  # the invocation's own frame
                holder = f.node if f is not None and f.kind in ("impl", "trait") else None
                body = holder.child_by_field_name("body") if holder is not None else None
                cs.attrs["item_level"] = True
                cs.attrs["macro_text"] = self.t(argsn)
                cs.attrs["module"] = self.module_of(node)
                if holder is not None and body is not None:
                    cs.attrs["impl_header"] = one_line(self.src[holder.start_byte : body.start_byte].decode(
                        "utf-8", "replace"), 400)
        else:
            cs.args = [self.tl(a, ARG_LIMIT) for a in argsn.named_children
                       if a.type not in _ITEM_PREFIX]  # fmt: skip
            if "type_args" in caps:
                ta = caps["type_args"][0]
                cs.template_args = [
                    self.tl(a) for a in ta.named_children if a.type not in _ITEM_PREFIX
                ]
            if key == "reference.method":
                cs.kind = "method"
                cs.callee = self.t(callee_node)
                cs.path = [cs.callee]
                cs.receiver = self.chain_text(caps["receiver"][0], RECEIVER_LIMIT)
            elif key == "reference.indirect":
                cs.callee = self.tl(callee_node, ARG_LIMIT)
                cs.path = [cs.callee]
                cs.attrs["indirect"] = True
            else:
                segs, generics = split_path(self.t(callee_node))
                cs.path = segs
                cs.callee = "::".join(segs)
                if generics:
                    cs.attrs["path_type_args"] = generics
        cs.contexts = list(contexts)
        self.f.calls.append(cs)

    def _field_value(self, caps: dict[str, list[ts.Node]]) -> None:
        """``S { launcher: pick(dtype).expect(..), .. }``: a struct field set from a call's value
        (attrs ``field_values``: [{struct, field, value, line}]); a call through ``(self.launcher)(..)``
        in ``S``'s methods is then a dispatch point over what ``pick`` returns."""
        fn = self.enclosing_fn(caps["fnptr.field"][0])
        d = self.fn_defs.get(fn.id) if fn is not None else None
        v = caps["fnptr.value"][0]
        if d is None or v.end_byte - v.start_byte > ARG_LIMIT:
            return
        d.attrs.setdefault("field_values", []).append(
            {"struct": strip_generics(self.t(caps["fnptr.struct"][0])).rsplit("::", 1)[-1],
             "field": self.t(caps["fnptr.name"][0]), "value": self.tl(v)[:200], "line": line(v)})

    def _tt_segments(self, tt: ts.Node) -> list[tuple[int, int]]:
        """Byte ranges of the top-level comma-separated pieces of a token tree."""
        out: list[tuple[int, int]] = []
        start: int | None = None
        end = 0
        for c in tt.children[1:-1]:
            if c.type == ",":
                if start is not None:
                    out.append((start, end))
                start = None
                continue
            if start is None:
                start = c.start_byte
            end = c.end_byte
        if start is not None:
            out.append((start, end))
        return out

    def _tt_args(self, tt: ts.Node) -> list[str]:
        return [
            one_line(self.src[s:e].decode("utf-8", "replace"), ARG_LIMIT) for s, e in self._tt_segments(tt)
        ]

    def _wrapped_calls(self, tt: ts.Node) -> list[str]:
        """Paths followed by ``(`` inside a macro's token tree, in source order (``.m`` after a dot)."""
        out: list[str] = []
        path: list[str] = []
        dot = False
        prev = ""
        for c in tt.children:
            ty = c.type
            if ty in ("identifier", "self", "super", "crate") and (not path or prev == "::"):
                if not path:
                    dot = prev == "."
                path.append(self.t(c))
            elif ty == "::" and path:
                pass
            elif ty == "token_tree":
                if path and prev != "::" and self.t(c).startswith("(") and path[-1] not in _NOT_WRAPPED:
                    name = "::".join(path)
                    out.append("." + name if dot and len(path) == 1 else name)
                out.extend(self._wrapped_calls(c))
                path = []
            else:
                path = []
            prev = ty
        return list(dict.fromkeys(out))

    def _context_env(self, nodes: list[ts.Node], scope: Frame | None) -> list[str]:
        """Env vars read in the nodes of a context (condition, scrutinee, pattern), in order."""
        fn = scope.node if scope is not None else None
        return list(dict.fromkeys(e for n in nodes for e in self.env_in(n, fn)))

    # -- strings -------------------------------------------------------------------------------

    def _string(self, s: ts.Node) -> None:
        content = literal_content(s, self.src)
        if _IDENT_STRING.fullmatch(content):  # a symbol-like literal: a kernel name loaded by name?
            _, _, scope = self._string_frames(self.frame_of.get(s.id))
            d = self.fn_defs.get(scope.node.id) if scope is not None else None
            names = d.attrs.setdefault("ident_strings", []) if d is not None else None
            if names is not None and content not in names and len(names) < 256:
                names.append(content)
        if not _is_tensorish(content):
            return
        rec: dict[str, Any] = {"text": content, "line": line(s), "caller": "", "macro": "", "args": []}
        p = self.const_of.get(s.id)
        if p is not None:
            rec["const"] = self.t(p.child_by_field_name("name"))
        ignored, macro, scope = self._string_frames(self.frame_of.get(s.id))
        if ignored:
            return
        if macro is not None:
            m = macro.node
            rec["macro"] = split_path(self.t(m.child_by_field_name("macro")))[0][-1]
            tt = next((c for c in m.children if c.type == "token_tree"), None)
            if tt is not None and s.id in self._tt_children(m.id, tt):
                segs = self._tt_segments(tt)
                mine = next((i for i, (b, e) in enumerate(segs) if b <= s.start_byte < e), len(segs))
                rec["args"] = [one_line(self.src[b:e].decode("utf-8", "replace"), ARG_LIMIT)
                               for b, e in segs[mine + 1 :]]  # fmt: skip
        if scope is not None:
            d = self.fn_defs.get(scope.node.id)
            rec["caller"] = d.qualname if d else ""
        self.f.strings.append(rec)

    def _string_frames(self, frame: Frame | None) -> tuple[bool, Frame | None, Frame | None]:
        """(inside an attribute / `extern "C"`, innermost macro call, enclosing fn) between
        ``frame`` and its fn, memoised per frame."""
        memo = self._string_memo
        pending: list[Frame] = []
        f = frame
        got: tuple[bool, Frame | None, Frame | None] = (False, None, None)
        while f is not None:
            if id(f) in memo:
                got = memo[id(f)]
                break
            if f.kind == SCOPE:
                got = memo[id(f)] = (False, None, f)
                break
            pending.append(f)
            f = f.parent
        for f in reversed(pending):
            if f.kind == "ignore":
                got = (True, got[1], got[2])
            elif f.kind == "macro":
                got = (got[0], f, got[2])
            memo[id(f)] = got
        return got

    def _tt_children(self, key: int, tt: ts.Node) -> set[int]:
        got = self._macro_args.get(key)
        if got is None:
            got = self._macro_args[key] = {c.id for c in tt.children}
        return got


def literal_content_s(s: str) -> str:
    """Content of a string literal given as text (``"x"`` -> ``x``)."""
    a, b = s.find('"'), s.rfind('"')
    return s[a + 1 : b] if 0 <= a < b else s
