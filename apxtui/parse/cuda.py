"""CUDA / C++ extractor: a tree-sitter-cuda tree → definitions, calls, launches, includes.

The query ``queries/cuda.scm`` points at the constructs (what counts as a
definition, call, launch, vendor call) and at what encloses code (functions,
namespaces, classes, ``extern "C"``, templates: ``@scope.*``; branches, loops, ``#if``
arms: ``@context.*``), nested once by byte range (:mod:`apxtui.parse.nesting`; no
ancestor walks, so the cost is linear whatever the nesting).  This module works out
what a pattern cannot: qualified names, C linkage, local types and CUTLASS operators
through ``using`` aliases.  One query pass per file; callee-name patterns are tested
on each call's called name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import tree_sitter as ts

from apxtui.facts import CallSite, Definition, EnvRead, FileFacts, Import, Param
from apxtui.parse import languages
from apxtui.parse.budget import Budget
from apxtui.parse.contexts import Contexts, Policy
from apxtui.parse.cpp_macros import MAX_INVOCATION, clean_body, invocation_end
from apxtui.parse.nesting import SCOPE, Frame, frame_at, nest
from apxtui.parse.util import SourceText, line, one_line, same, text

Node = ts.Node

_ARG_LIMIT = 120
_CALL_LIMIT = 200
#: Type names a call-like expression converts to (a functional cast ``float(x)``, ``uint8_t(x)``).
_CAST_TYPES = frozenset({
    "int", "float", "double", "char", "bool", "short", "long", "unsigned", "signed", "size_t", "ssize_t",
    "ptrdiff_t", "intptr_t", "uintptr_t", "half", "__half", "__half2", "half2", "__nv_bfloat16", "__nv_bfloat162",
    "nv_bfloat16", "nv_bfloat162", "bfloat16", "__nv_fp8_e4m3", "__nv_fp8_e5m2", "float2", "float3", "float4",
    "int2", "int3", "int4", "uint2", "uint3", "uint4", "double2", "char4", "uchar4", "longlong2", "ulonglong2",
    "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "bit_cast",
})
_INT_TYPE_RE = re.compile(r"^(?:std::)?u?int(?:8|16|32|64)?_t$|^(?:std::)?(?:size_t|ptrdiff_t|bit_cast)$")
_CAST_INNER = ("identifier", "type_identifier", "primitive_type", "qualified_identifier", "type_descriptor",
               "sized_type_specifier")
_TYPE_LIMIT = 1000
_DROP_QUALIFIERS = {"__restrict__", "__restrict", "restrict", "constexpr", "__shared__", "__constant__"}
_PP_KINDS = {"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else"}
_SIMPLE_VALUES = {
    "identifier", "qualified_identifier", "number_literal", "true", "false", "null",
    "char_literal", "string_literal", "concatenated_string", "field_expression",
    "template_function", "sizeof_expression",
}  # fmt: skip
_GETENV_RE = re.compile(r'getenv\s*\(\s*"([^"]+)"')
#: Nodes between a getenv call and the conditional that gives its default.
_ENV_WRAPPERS = frozenset(("call_expression", "argument_list", "binary_expression", "parenthesized_expression",
                           "unary_expression", "cast_expression"))
#: Names taken for macros where no definition is in sight (the C convention: ALL_CAPS).
_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*[A-Z0-9]$")
_MACRO_LIKE = re.compile(rb"\b([A-Z][A-Z0-9_]*[A-Z0-9])[ \t]*\(")
POLICY = Policy(closure_arm=0, if_env_earlier=False, else_env=False,
                paren_wrapped=frozenset(("condition_clause", "parenthesized_expression")))


@dataclass
class _Fn:
    """Per-function state needed while reading calls."""

    defn: Definition
    params: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    values: dict[str, list[Node]] = field(default_factory=lambda: defaultdict(list))

    def var_type(self, name: str) -> str | None:
        if name in self.defn.locals:
            return self.defn.locals[name]
        return self.params.get(name)


# ----------------------------------------------------------------------------- small helpers


def _field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def _named(node: Node | None) -> list[Node]:
    if node is None:
        return []
    return [c for c in node.named_children if c.type != "comment"]


def _targs(node: Node | None, src: bytes) -> list[str]:
    """Texts of a template_argument_list's arguments."""
    return [one_line(text(c, src), _ARG_LIMIT) for c in _named(node)]


def _strip_targs(node: Node, src: bytes) -> str:
    if node.type in ("template_type", "template_function", "template_method"):
        n = _field(node, "name")
        return text(n, src) if n is not None else text(node, src)
    return text(node, src)


def _name_parts(node: Node, src: bytes) -> tuple[list[str], list[str]]:
    """``a::b<X>::f<T>`` → (["a", "b", "f"], ["T"]): path without template args, last args."""
    parts: list[str] = []
    while node.type == "qualified_identifier":
        scope = _field(node, "scope")
        if scope is not None:
            if scope.type == "nested_namespace_specifier":
                parts.extend(text(c, src) for c in _named(scope))
            else:
                parts.append(_strip_targs(scope, src))
        nxt = _field(node, "name")
        if nxt is None:
            return parts, []
        node = nxt
    if node.type == "dependent_name" and node.named_children:
        node = node.named_children[-1]
    targs: list[str] = []
    if node.type in ("template_function", "template_method", "template_type"):
        targs = _targs(_field(node, "arguments"), src)
    parts.append(one_line(_strip_targs(node, src), _ARG_LIMIT))
    return parts, targs


def _scope_targs(node: Node, src: bytes) -> list[str]:
    """``ns::Allreduce<4>::run`` → ["4"]: the template arguments of the class a name is qualified by."""
    args: list[str] = []
    while node.type == "qualified_identifier":
        scope = _field(node, "scope")
        args = _targs(_field(scope, "arguments"), src) if scope is not None and scope.type == "template_type" else []
        nxt = _field(node, "name")
        if nxt is None:
            return []
        node = nxt
    return args


def _declarator_name(node: Node | None, src: bytes) -> tuple[Node | None, str, str]:
    """Follow a declarator chain: (name node, pointer/ref prefix, array suffix)."""
    prefix, arrays = "", ""
    while node is not None:
        t = node.type
        if t in ("pointer_declarator", "abstract_pointer_declarator"):
            prefix += "*"
        elif t in ("reference_declarator", "abstract_reference_declarator"):
            prefix += "&&" if node.child_count and node.children[0].type == "&&" else "&"
            kids = _named(node)
            node = kids[-1] if kids else None
            continue
        elif t in ("array_declarator", "abstract_array_declarator"):
            size = _field(node, "size")
            arrays = f"[{text(size, src)}]" + arrays
        elif t in ("init_declarator", "function_declarator", "abstract_function_declarator"):
            pass
        elif t == "parenthesized_declarator":
            kids = _named(node)
            node = kids[0] if kids else None
            continue
        else:
            return node, prefix, arrays
        node = _field(node, "declarator")
    return None, prefix, arrays


def _has_fn_declarator(node: Node | None) -> bool:
    while node is not None:
        if node.type == "function_declarator":
            return True
        if node.type not in ("pointer_declarator", "reference_declarator", "parenthesized_declarator"):
            return False
        kids = _named(node)
        node = _field(node, "declarator") or (kids[-1] if kids else None)
    return False


def _base_type(node: Node, src: bytes) -> str:
    """Qualifiers + type of a declaration/parameter (without the declarator)."""
    parts = []
    for i, c in enumerate(node.children):
        fname = node.field_name_for_child(i)
        if fname == "type" or c.type == "type_qualifier" and fname is None and text(c, src) not in _DROP_QUALIFIERS:
            parts.append(text(c, src))
    return one_line(" ".join(parts), _TYPE_LIMIT)


def _decl_type(base: str, prefix: str, arrays: str) -> str:
    return f"{base}{prefix}{arrays}" if base else f"{prefix}{arrays}"


def _string_value(node: Node, src: bytes) -> str | None:
    if node.type == "string_literal":
        return "".join(
            text(c, src) for c in node.named_children if c.type in ("string_content", "escape_sequence")
        )
    if node.type == "concatenated_string":
        vals = [_string_value(c, src) for c in node.named_children]
        return None if any(v is None for v in vals) else "".join(v or "" for v in vals)
    return None


def _called_name(fexpr: Node) -> Node:
    """The name a call expression calls: ``f`` in ``ns::f<T>(…)`` (the expression itself otherwise)."""
    n = fexpr
    while n.type in ("template_function", "qualified_identifier"):
        nxt = _field(n, "name")
        if nxt is None:
            break
        n = nxt
    return n


def _pp_body(node: Node, src: bytes) -> str:
    """Text of a preprocessor block without its directive lines."""
    return "".join(ln for ln in text(node, src).splitlines() if not ln.lstrip().startswith("#")).strip()


def _open_extern_c_ranges(err: Node, src: bytes) -> list[tuple[int, int]]:
    """Byte ranges of the children of an ERROR node that follow an unclosed ``extern "C" {``.

    The common header idiom ``#ifdef __cplusplus / extern "C" { / #endif`` leaves the
    brace unbalanced inside the ``#ifdef``, which the grammar cannot parse.
    """
    out: list[tuple[int, int]] = []
    depth, prev_c = 0, False
    kids = err.children
    for i, c in enumerate(kids):
        if depth > 0:
            if out and out[-1][1] == -1:
                out[-1] = (out[-1][0], -1)
            else:
                out.append((c.start_byte, -1))
        elif out and out[-1][1] == -1:
            out[-1] = (out[-1][0], kids[i - 1].end_byte)
        if c.type == "{" and prev_c:
            depth += 1
        elif depth and (c.type == "}" or (c.type in _PP_KINDS and _pp_body(c, src) == "}")):
            depth -= 1
        prev_c = (
            c.type == "string_literal"
            and i > 0
            and kids[i - 1].type == "extern"
            and (_string_value(c, src) == "C")
        )
    if out and out[-1][1] == -1:
        out[-1] = (out[-1][0], kids[-1].end_byte)
    return out


def _is_simple(node: Node) -> bool:
    t = node.type
    if t in _SIMPLE_VALUES:
        return True
    if t == "conditional_expression":
        a, b = _field(node, "consequence"), _field(node, "alternative")
        return a is not None and b is not None and _is_simple(a) and _is_simple(b)
    if t in ("parenthesized_expression", "unary_expression", "initializer_list"):
        kids = _named(node)
        return len(kids) == 1 and _is_simple(kids[0])
    if t == "cast_expression":
        v = _field(node, "value")
        return v is not None and _is_simple(v)
    return False


def _unwrap_fn_value(node: Node | None, src: bytes) -> Node | None:
    """Strip casts, ``&``, parentheses and ``static_cast<...>(...)`` around a kernel expression."""
    while node is not None:
        t = node.type
        if t == "cast_expression":
            node = _field(node, "value")
        elif t == "pointer_expression" and text(_field(node, "operator"), src) == "&":
            node = _field(node, "argument")
        elif t == "parenthesized_expression":
            kids = _named(node)
            node = kids[0] if len(kids) == 1 else None
        elif t == "call_expression":
            fn = _field(node, "function")
            name = _strip_targs(fn, src) if fn is not None else ""
            if name not in ("static_cast", "reinterpret_cast", "const_cast"):
                return node
            args = _named(_field(node, "arguments"))
            node = args[0] if len(args) == 1 else None
        else:
            return node
    return None


#: Capture families whose patterns name a callee: kept only where the name is a call's
#: called name (see queries/cuda.scm), so they run on call function expressions only.
_CALLEE_FAMILIES = ("launch.api.", "call.vendor.", "env.read")


@cache
def _context_patterns() -> tuple[bool, ...]:
    return tuple(any(n.startswith("context.") for n in names) for names in languages.pattern_captures("cuda"))


def queries() -> tuple[ts.Query, ts.Query | None]:
    """(the query without the callee-name patterns, those patterns alone or None)."""
    return languages.split_query("cuda", _CALLEE_FAMILIES)


_API_CAPTURE = re.compile(r"launch\.api\.kernel(\d+)\.config([\d_]*)$")


_QUALIFIER_MARKS = {b"__global__": "definition.kernel", b"__device__": "definition.device",
                    b"__host__": "definition.host"}


def _stray_marks(node: Node, src: bytes) -> set[str]:
    """``__global__`` (``__device__``, ``__host__``) the grammar put at the end of the parse error
    just before a definition: ``COUNT_OP(float, f32)`` lines without ``;`` above ``__global__ void
    k(..)`` (mistral.rs ops.cu:111-113) take the qualifier into their error node."""
    prev = node.prev_sibling
    if prev is None or prev.type != "ERROR" or src[prev.end_byte:node.start_byte].strip():
        return set()
    n = prev
    for _ in range(4):  # the error's last descendants, outermost first
        out: set[str] = set()
        for c in reversed(n.children):
            mark = _QUALIFIER_MARKS.get(src[c.start_byte:c.end_byte]) if c.type == "type_qualifier" else None
            if mark is None:
                break
            out.add(mark)
        if out or not n.children:
            return out
        n = n.children[-1]
    return set()


def _capture_settings(name: str) -> tuple[str, dict[str, Any]]:
    """Split a parameterised capture name: ``call.vendor.cublas`` → ("call.vendor", {"library": …})."""
    for base in ("call.vendor.", "type.vendor."):
        if name.startswith(base):
            return base[:-1], {"library": name[len(base) :]}
    m = _API_CAPTURE.match(name)
    if m:
        config = [int(i) for i in m.group(2).split("_") if i]
        return "launch.api", {"kernel_arg": int(m.group(1)), "config_args": config}
    return name, {}


# ----------------------------------------------------------------------------- extractor


class _Extractor:
    def __init__(self, facts: FileFacts, src: bytes, budget: Budget) -> None:
        self.facts = facts
        self.check = budget.check
        self.src = src
        self.st = SourceText(src)
        self.caps: dict[str, list[tuple[Node, dict[str, Any]]]] = defaultdict(list)
        self.marks: dict[int, set[str]] = defaultdict(set)
        self.abi_scopes: set[int] = set()
        self.namespaces: set[str] = set()
        self.vendor_ns: dict[str, str] = {}
        self.fns: dict[int, _Fn] = {}
        self.scope_aliases: dict[str, str] = {}
        self._env_seen: set[tuple[str, int]] = set()
        self.fn_macros: dict[str, Node] = {}
        self.callee_caps: dict[int, list[tuple[str, Node, dict[str, Any]]]] = defaultdict(list)  # call id → captures
        self.ctx = Contexts(self.st, POLICY, self._context_env)
        self.frame_of: dict[int, Frame | None] = {}  # node id → innermost frame around it
        self.frames: list[Frame] = []  # sorted by start (for positions that are not points)
        self._picked_by = ""  # set by _kernel_candidates: the picker a kernel variable's value calls

    # -- driver ------------------------------------------------------------------------

    def run(self, root: Node) -> None:
        seen: set[tuple[str, int]] = set()
        rest, _ = queries()
        self._collect(ts.QueryCursor(rest).matches(root), seen)
        # callee-name patterns only count where the name is the called one: tested on each
        # call's called name (as Python tests of its type and text; a pattern these cannot
        # express runs as a query on the call's function expression)
        tests, fallback = languages.name_tests("cuda", _CALLEE_FAMILIES)
        cursor = ts.QueryCursor(fallback) if fallback is not None else None
        st = self.st
        call_of: dict[int, int] = {}  # called name's node id → call id
        for call, _ in self.caps["reference.call"]:
            fexpr = _field(call, "function")
            if fexpr is None:
                continue
            called = _called_name(fexpr)
            call_of[called.id] = call.id
            ctype, ctext = called.type, None
            for t in tests:
                if ctype == t.node_type:
                    ctext = st.text(called) if ctext is None else ctext
                    if t(ctype, ctext):
                        key, settings = _capture_settings(t.capture)
                        self.callee_caps[call.id].append((key, called, settings))
            if cursor is not None:
                for _, caps in cursor.matches(fexpr):
                    for name, nodes in caps.items():
                        if not name.startswith("_") and any(n.id == called.id for n in nodes):
                            key, settings = _capture_settings(name)
                            self.callee_caps[call.id].append((key, called, settings))
        # a callee-name pattern of several nodes (`cub::DeviceReduce::Sum`: the name under its
        # scopes) ran with the whole-file query: kept where its capture is a call's called name
        for key in ("call.vendor", "launch.api", "env.read"):
            for n, settings in self.caps.get(key, ()):
                if n.id in call_of:
                    self.callee_caps[call_of[n.id]].append((key, n, settings))
        for mark in ("definition.kernel", "definition.device", "definition.host"):
            for n, _ in self.caps[mark]:
                self.marks[n.id].add(mark)
        self.abi_scopes = {n.id for n, _ in self.caps["abi.scope"]}
        for n, settings in self.caps["type.vendor"]:
            self.vendor_ns[text(n, self.src)] = str(settings.get("library") or text(n, self.src))
        self._collect_namespaces(root)
        self._nest()
        for n, _ in self.caps["definition.function"]:
            self.check()
            self._function(n)
        for n, _ in self.caps["definition.prototype"]:
            self.check()
            self._prototype(n)
        for n, _ in self.caps["definition.class"]:
            self.check()
            self._class(n)
        for n, _ in self.caps["definition.typedef"]:
            self.check()
            self._typedef(n)
        for n, _ in self.caps["definition.enum"]:
            self.check()
            self._enum(n)
        for n, _ in self.caps["definition.macro"]:
            self.check()
            self._macro(n)
        for n, _ in self.caps["include"]:
            self.check()
            self._include(n)
        for n, _ in self.caps["local.declaration"]:
            self.check()
            self._local_decl(n)
        for n, _ in self.caps["local.assignment"]:
            self.check()
            self._local_assign(n)
        for n, _ in self.caps["local.update"]:
            self.check()
            self._local_update(n)
        for n, _ in self.caps["local.return"]:
            self.check()
            self._returned(n)
        self._calls()
        self._line_invocations(root)
        for call, _ in self.caps["reference.call"]:
            for key, ident, _ in self.callee_caps.get(call.id, ()):
                if key == "env.read":
                    self._env_read(ident, call)
        self.facts.defs.sort(key=lambda d: (d.line, d.name))
        self.facts.calls.sort(key=lambda c: (c.line, c.col))
        self.facts.imports.sort(key=lambda i: i.line)

    def _collect(self, matches: list[tuple[int, dict[str, list[Node]]]], seen: set[tuple[str, int]]) -> None:
        add = self.ctx.add
        is_ctx = _context_patterns()
        for i, caps in matches:
            if is_ctx[i]:
                add(caps)
                continue
            for name, nodes in caps.items():
                if name.startswith("_"):
                    continue
                key, settings = _capture_settings(name)
                for n in nodes:
                    if (key, n.id) not in seen:  # several patterns may capture one node
                        seen.add((key, n.id))
                        self.caps[key].append((n, settings))

    def _collect_namespaces(self, root: Node) -> None:
        """Namespace names seen in the file (``void detail::f()`` has no class container)."""
        stack = [root]
        while stack:
            n = stack.pop()
            if n.type == "namespace_definition":
                name = _field(n, "name")
                if name is not None:
                    self.namespaces.update(text(name, self.src).split("::"))
                body = _field(n, "body")
                if body is not None:
                    stack.append(body)
            elif (
                n.type in ("translation_unit", "declaration_list", "linkage_specification")
                or n.type in _PP_KINDS
            ):
                stack.extend(n.named_children)

    # -- scopes --------------------------------------------------------------------------

    def _nest(self) -> None:
        """Frames of the scopes and contexts; the innermost one around every node read later."""
        frames = self.ctx.frames()
        caps = self.caps
        for n, _ in caps["definition.function"]:
            frames.append(Frame(n.start_byte, n.end_byte, SCOPE, n))
        for kind in ("namespace", "class", "template", "conditional"):
            for n, _ in caps["scope." + kind]:
                frames.append(Frame(n.start_byte, n.end_byte, kind, n))
        for n, _ in caps["abi.scope"]:
            frames.append(Frame(n.start_byte, n.end_byte, "abi", n))
        for n, _ in caps["scope.error"]:
            for a, b in _open_extern_c_ranges(n, self.src):
                frames.append(Frame(a, b, "abi", n))
        outside = ("definition.function", "definition.prototype", "definition.class")
        points: list[Node] = []
        flags: list[tuple[int, int, bool]] = []
        for key in (*outside, "definition.typedef", "definition.macro", "include", "local.declaration",
                    "local.assignment", "local.update", "local.return", "reference.call"):
            out = key in outside
            for n, _ in caps[key]:
                points.append(n)
                flags.append((n.start_byte, n.end_byte, out))
        for n, f in zip(points, nest(frames, flags), strict=True):
            self.frame_of[n.id] = f
        frames.sort(key=lambda f: (f.start, -f.end, f.rank))
        self.frames = frames

    def _frame(self, node: Node) -> Frame | None:
        """Innermost frame around ``node`` (a point, or any node by its start byte)."""
        if node.id in self.frame_of:
            return self.frame_of[node.id]
        return frame_at(self.frames, node.start_byte)

    def _scope(self, node: Node) -> dict[str, Any]:
        """What encloses a file-level item: names, linkage, #if arms, class (memoised per frame)."""
        return self._scope_of(self._frame(node))

    def _scope_of(self, frame: Frame | None) -> dict[str, Any]:
        pending: list[Frame] = []
        f = frame
        info: dict[str, Any] = {"abi": False, "anon": False, "cls": "", "in_fn": None, "names": ()}
        while f is not None:
            if f.memo is not None:
                info = f.memo
                break
            if f.kind == SCOPE:
                info = f.memo = {**info, "in_fn": f.node}
                break
            pending.append(f)
            f = f.parent
        for f in reversed(pending):  # names as a linked chain (parts, chain above): linear in depth
            if f.kind == "namespace":
                name = _field(f.node, "name")
                if name is None:
                    info = {**info, "anon": True}
                else:
                    info = {**info, "names": (text(name, self.src).split("::"), info["names"])}
            elif f.kind == "class":
                name = _field(f.node, "name")
                cname = _strip_targs(name, self.src) if name is not None else ""
                if cname:
                    info = {**info, "names": ([cname], info["names"]), "cls": cname}
            elif f.kind == "abi":
                info = {**info, "abi": True}
            f.memo = info
        names: list[str] = []
        link = info["names"]
        while link:
            names[:0] = link[0]
            link = link[1]
        pp = [c for c in self.ctx.of(frame) if c.kind == "pp_if"]
        return {**info, "names": names, "pp": pp}

    def _explicit_specialization(self, node: Node) -> bool:
        """Is ``node`` declared under ``template <>``?"""
        f = self._frame(node)
        return f is not None and f.kind == "template" and any(c.id == node.id for c in f.node.named_children) \
            and not _named(_field(f.node, "parameters"))

    def _template_params(self, node: Node) -> tuple[list[str], list[str]]:
        """Names and declarations of the template parameters of the ``template<…>`` around ``node``."""
        names: list[str] = []
        decls: list[str] = []
        f = self._frame(node)
        while f is not None and f.kind == "template" and any(c.id == node.id for c in f.node.named_children):
            p = f.node
            for c in _named(_field(p, "parameters")):
                decls.append(self.st.line(c))
                if c.type in ("type_parameter_declaration", "variadic_type_parameter_declaration"):
                    ids = [k for k in c.named_children if k.type == "type_identifier"]
                    if ids:
                        names.append(text(ids[-1], self.src))
                elif c.type in (
                    "optional_type_parameter_declaration",
                    "template_template_parameter_declaration",
                ):
                    n = _field(c, "name") or next(
                        (k for k in c.named_children if k.type == "type_identifier"), None
                    )
                    if n is not None:
                        names.append(text(n, self.src))
                else:
                    n, _, _ = _declarator_name(_field(c, "declarator"), self.src)
                    if n is None:
                        n = next((k for k in c.named_children if k.type == "identifier"), None)
                    if n is not None:
                        names.append(text(n, self.src))
            node, f = p, f.parent
        return names, decls

    # -- definitions -----------------------------------------------------------------------

    def _params(self, fdecl: Node | None) -> list[Param]:
        out: list[Param] = []
        for c in _named(_field(fdecl, "parameters") if fdecl is not None else None):
            if c.type not in (
                "parameter_declaration",
                "optional_parameter_declaration",
                "variadic_parameter_declaration",
            ):
                continue
            name, prefix, arrays = _declarator_name(_field(c, "declarator"), self.src)
            ptype = _decl_type(_base_type(c, self.src), prefix, arrays)
            if c.type == "variadic_parameter_declaration":
                ptype += "..."
            if ptype == "void" and name is None:
                continue
            default = self.st.line(_field(c, "default_value"), _ARG_LIMIT)
            out.append(Param(text(name, self.src) if name is not None else "", ptype, default))
        return out

    def _signature(self, node: Node) -> tuple[Node | None, Node | None, str]:
        """(function_declarator, name node, return-type declarator prefix)."""
        d = _field(node, "declarator")
        prefix = ""
        while d is not None and d.type != "function_declarator":
            if d.type == "pointer_declarator":
                prefix += "*"
                d = _field(d, "declarator")
            elif d.type == "reference_declarator":
                prefix += "&"
                kids = _named(d)
                d = kids[-1] if kids else None
            elif d.type == "parenthesized_declarator":
                kids = _named(d)
                d = kids[0] if kids else None
            else:
                return None, None, prefix
        if d is None:
            return None, None, prefix
        return d, _field(d, "declarator"), prefix

    def _make_def(self, node: Node, decl_only: bool) -> Definition | None:
        fdecl, name_node, ret_prefix = self._signature(node)
        if fdecl is None or name_node is None:
            return None
        parts, spec_args = _name_parts(name_node, self.src)
        if name_node.type == "destructor_name" or name_node.type == "operator_name":
            parts = [self.st.line(name_node)]
        name = parts[-1]
        written_scope = parts[:-1]
        sc = self._scope(node)
        qualname = "::".join(sc["names"] + written_scope + [name])
        container = sc["cls"]
        if written_scope and written_scope[-1] not in self.namespaces:
            container = written_scope[-1]
        marks = self.marks.get(node.id, set()) | _stray_marks(node, self.src)
        attrs: dict[str, Any] = {}
        if "definition.kernel" in marks:
            kind = "kernel"
        elif "definition.device" in marks:
            kind = "device_fn"
            if "definition.host" in marks:
                attrs["host"] = True
        elif sc["abi"]:
            kind = "abi_fn"
        else:
            kind = "host_fn"
        if decl_only:
            attrs["decl_only"] = True
        if spec_args:
            attrs["specialization_args"] = spec_args
        if self._explicit_specialization(node):
            attrs["explicit_specialization"] = True  # `template <> R f(…)` (its arguments written or deduced)
        tparams, tdecls = self._template_params(node)
        if tdecls:
            attrs["template_param_decls"] = tdecls
        for c in node.named_children:
            if c.type == "launch_bounds":
                attrs["launch_bounds"] = [self.st.line(k) for k in _named(c)]
        is_static = any(
            c.type == "storage_class_specifier" and text(c, self.src) == "static" for c in node.named_children
        )
        visibility = ""
        if is_static and sc["cls"]:
            attrs["static"] = True
        elif is_static or sc["anon"]:
            visibility = "static"
        base = _base_type(node, self.src)
        if not base and not sc["cls"] and not written_scope and name.isupper():
            attrs["macro_like"] = True  # `DEFINE_KERNEL(name, ...) { ... }`: a macro invocation, not expanded
        trailing = next((c for c in fdecl.named_children if c.type == "trailing_return_type"), None)
        ret = _decl_type(base, ret_prefix, "") if base else ""
        if trailing is not None and base == "auto":
            ret = one_line(text(trailing, self.src).lstrip("->").strip())
        return Definition(
            kind=kind,
            name=name,
            qualname=qualname,
            file=self.facts.file,
            line=line(node),
            end_line=node.end_point[0] + 1,
            lang="cuda",
            container=container,
            params=self._params(fdecl),
            return_type=ret,
            template_params=tparams,
            pp=sc["pp"],
            visibility=visibility,
            symbol=name if sc["abi"] else "",
            attrs=attrs,
        )

    def _function(self, node: Node) -> None:
        d = self._make_def(node, decl_only=False)
        if d is None:
            return
        self.facts.defs.append(d)
        self.fns[node.id] = _Fn(d, params={p.name: p.type for p in d.params if p.name})

    def _prototype(self, node: Node) -> None:
        if self._enclosing_fn(node) is not None:
            return
        d = self._make_def(node, decl_only=True)
        if d is not None:
            self.facts.defs.append(d)

    def _class(self, node: Node) -> None:
        name_node = _field(node, "name")
        if name_node is None or self._enclosing_fn(node) is not None:
            return
        name = _strip_targs(name_node, self.src)
        sc = self._scope(node)
        fields: dict[str, str] = {}
        methods: list[str] = []
        for c in _named(_field(node, "body")):
            if c.type == "function_definition":
                _, n, _ = self._signature(c)
                if n is not None:
                    methods.append(self.st.line(n))
            elif c.type == "field_declaration":
                base = _base_type(c, self.src)
                for i, d in enumerate(c.children):
                    if c.field_name_for_child(i) != "declarator":
                        continue
                    n, prefix, arrays = _declarator_name(d, self.src)
                    if n is None:
                        continue
                    if _has_fn_declarator(d):
                        methods.append(text(n, self.src))
                    else:
                        fields[text(n, self.src)] = _decl_type(base, prefix, arrays)
        tparams, tdecls = self._template_params(node)
        attrs: dict[str, Any] = {"class_key": node.type.split("_")[0]}
        if name_node.type == "template_type":  # `template <> struct Allreduce<2>`, `… struct tile<16, T>`
            attrs["specialization_args"] = _targs(_field(name_node, "arguments"), self.src)
        if methods:
            attrs["methods"] = methods
        if tdecls:
            attrs["template_param_decls"] = tdecls
        bases = next((c for c in node.named_children if c.type == "base_class_clause"), None)
        if bases is not None:
            attrs["bases"] = [
                self.st.line(b) for b in _named(bases) if b.type != "access_specifier"
            ]
        self.facts.defs.append(
            Definition(
                kind="cpp_type",
                name=name,
                qualname="::".join(sc["names"] + [name]),
                file=self.facts.file,
                line=line(node),
                end_line=node.end_point[0] + 1,
                lang="cuda",
                container=sc["cls"],
                template_params=tparams,
                pp=sc["pp"],
                fields=fields,
                attrs=attrs,
            )
        )

    # -- imports: typedefs, macros, includes ------------------------------------------------

    def _item_scope(self, node: Node) -> tuple[str, list[str], _Fn | None]:
        """(scope qualname, pp condition texts, enclosing function) of a non-function item."""
        sc = self._scope(node)
        fn_node = sc["in_fn"]
        fn = self.fns.get(fn_node.id) if fn_node is not None else None
        if fn is not None:
            return fn.defn.qualname, [], fn
        scope = "::".join(sc["names"]) if sc["cls"] else ""
        cfg = []
        for ctx in sc["pp"]:
            neg = [f"!({c})" for c in ctx.negated]
            cfg.append(" && ".join(neg) if ctx.text == "else" else ctx.text)
        return scope, cfg, None

    def _typedef(self, node: Node) -> None:
        scope, cfg, fn = self._item_scope(node)
        pairs: list[tuple[str, str]] = []
        if node.type == "alias_declaration":
            name = _field(node, "name")
            pairs.append((text(name, self.src), self.st.line(_field(node, "type"), _TYPE_LIMIT)))
        else:
            base = _base_type(node, self.src)
            for i, d in enumerate(node.children):
                if node.field_name_for_child(i) != "declarator":
                    continue
                n, prefix, arrays = _declarator_name(d, self.src)
                if n is None:
                    continue
                if d.type in ("function_declarator", "parenthesized_declarator") or "(" in text(d, self.src):
                    body = text(node, self.src).strip().removeprefix("typedef").rstrip(";")
                    pairs.append((text(n, self.src), one_line(body, _TYPE_LIMIT)))
                else:
                    pairs.append((text(n, self.src), _decl_type(base, prefix, arrays)))
        for alias, path in pairs:
            if not alias:
                continue
            self.facts.imports.append(
                Import(
                    kind="typedef",
                    path=path,
                    alias=alias,
                    file=self.facts.file,
                    line=line(node),
                    scope=scope,
                    cfg=cfg,
                )
            )
            if fn is not None:
                fn.aliases[alias] = path
            else:
                self.scope_aliases.setdefault(alias, path)

    def _enum(self, node: Node) -> None:
        """``enum E { A = 0, B, C = 10 }``: one Import of kind ``enumerator`` per enumerator (alias its
        name, path ``E=value``; the value empty where it is not an integer literal or counted on from one)."""
        body, name = _field(node, "body"), _field(node, "name")
        if body is None:
            return
        scope, cfg, _ = self._item_scope(node)
        ename = "::".join([*self._scope(node)["names"], text(name, self.src)]) if name is not None else ""
        value: int | None = -1
        for e in _named(body):
            n, v = _field(e, "name"), _field(e, "value")
            if e.type != "enumerator" or n is None:
                continue
            if v is None:
                value = None if value is None else value + 1
            else:
                try:
                    value = int(text(v, self.src).rstrip("uUlL"), 0)
                except ValueError:
                    value = None
            self.facts.imports.append(Import(kind="enumerator", path=f"{ename}={'' if value is None else value}",
                                             alias=text(n, self.src), file=self.facts.file, line=line(e),
                                             scope=scope, cfg=cfg))

    def _macro(self, node: Node) -> None:
        scope, cfg, _ = self._item_scope(node)
        name = text(_field(node, "name"), self.src)
        value = text(_field(node, "value"), self.src).strip()
        kind = "define"
        if node.type == "preproc_function_def":  # kept whole: linking expands its invocations
            self.fn_macros[name] = node
            value = clean_body(text(_field(node, "parameters"), self.src) + " " + value)
            kind = "macro"
        else:
            value = one_line(value, _TYPE_LIMIT)
        self.facts.imports.append(
            Import(
                kind=kind,
                path=value,
                alias=name,
                file=self.facts.file,
                line=line(node),
                scope=scope,
                cfg=cfg,
            )
        )

    def _include(self, node: Node) -> None:
        path = _field(node, "path")
        if path is None:
            return
        raw = text(path, self.src).strip()
        system = path.type == "system_lib_string"
        if system:
            raw = raw.strip("<>")
        elif path.type == "string_literal":
            raw = _string_value(path, self.src) or raw.strip('"')
        _, cfg, _ = self._item_scope(node)
        self.facts.imports.append(
            Import(
                kind="include",
                path=raw,
                alias="",
                file=self.facts.file,
                line=line(node),
                system=system,
                cfg=cfg,
            )
        )

    # -- locals ---------------------------------------------------------------------------------

    def _enclosing_fn(self, node: Node) -> Node | None:
        f = self._frame(node)
        return f.scope.node if f is not None and f.scope is not None else None

    def _fn_of(self, node: Node) -> _Fn | None:
        fn_node = self._enclosing_fn(node)
        return self.fns.get(fn_node.id) if fn_node is not None else None

    def _assign(self, fn: _Fn, var: str, value: Node, at: Node) -> None:
        fn.values[var].append(value)
        if _is_simple(value):
            fn.defn.attrs.setdefault("assigns", []).append(
                {"var": var, "value": self.st.line(value, _ARG_LIMIT), "line": line(at)}
            )

    def _local_decl(self, node: Node) -> None:
        fn = self._fn_of(node)
        if fn is None:
            return
        base = _base_type(node, self.src)
        for i, d in enumerate(node.children):
            if node.field_name_for_child(i) != "declarator":
                continue
            if d.type == "function_declarator" and not self._constructed(d, fn):
                continue
            n, prefix, arrays = _declarator_name(d, self.src)
            if n is None or n.type != "identifier":
                continue
            var = text(n, self.src)
            fn.defn.locals[var] = _decl_type(base, prefix, arrays)
            value = _field(d, "value") if d.type == "init_declarator" else None
            if value is not None:
                if value.type == "initializer_list" and len(_named(value)) == 1:
                    value = _named(value)[0]
                self._assign(fn, var, value, node)

    def _constructed(self, d: Node, fn: _Fn) -> bool:
        """Is ``T x(a, b);`` in a function body a local built by a constructor, not a prototype?
        The parser reads it as a function declarator when every argument is a bare name; it is a
        local when each name is a parameter or local of the function (a variable, not a type)."""
        params = _field(d, "parameters")
        kids = _named(params) if params is not None else []
        if not kids:
            return False  # `T x();`: a prototype (the most vexing parse)
        for p in kids:
            named = _named(p)
            if p.type != "parameter_declaration" or len(named) != 1 or named[0].type != "type_identifier" \
                    or fn.var_type(text(named[0], self.src)) is None:
                return False
        return True

    def _local_assign(self, node: Node) -> None:
        left, right = _field(node, "left"), _field(node, "right")
        if left is None or right is None or left.type != "identifier":
            return
        fn = self._fn_of(node)
        if fn is not None:
            self._assign(fn, text(left, self.src), right, node)

    def _returned(self, node: Node) -> None:
        """``return name;`` of a function or kernel name (not a local): the function is a picker
        whose result may be called or launched (attrs ``returns``: value, template args, contexts)."""
        fn = self._fn_of(node)
        kids = _named(node)
        if fn is None or not kids:
            return
        value = _unwrap_fn_value(kids[0], self.src)
        if value is None or value.type not in ("identifier", "qualified_identifier", "template_function"):
            return
        if value.type == "identifier" and (fn.var_type(text(value, self.src)) is not None
                                           or text(value, self.src) in ("nullptr", "NULL")):
            return
        parts, targs = _name_parts(value, self.src)
        ctxs = [dict(vars(c)) for c in self.ctx.of(self.frame_of.get(node.id))]
        fn.defn.attrs.setdefault("returns", []).append(
            {"value": "::".join(parts), "template_args": targs, "line": line(node), "contexts": ctxs})

    def _local_update(self, node: Node) -> None:
        """Accumulations (``x += v``, ``x = f(x)``) and stores (``a[i] = v``, ``*p = v``)."""
        left, right, op = _field(node, "left"), _field(node, "right"), _field(node, "operator")
        fn = self._fn_of(node)
        if fn is None or left is None or right is None or op is None:
            return
        op_text, value = text(op, self.src), self.st.line(right, _ARG_LIMIT)
        root = left
        while root.type in ("subscript_expression", "field_expression", "pointer_expression",
                            "parenthesized_expression") and _named(root):
            root = _field(root, "argument") or _named(root)[0]
        var = text(root, self.src) if root.type == "identifier" else ""
        if left.type == "identifier" or (op_text != "=" and var):
            self_ref = re.search(rf"(?<![.\w]){re.escape(var)}\b", text(right, self.src)) if var else None
            if op_text != "=" or self_ref:
                fn.defn.attrs.setdefault("accumulates", []).append(
                    {"var": var, "op": op_text, "value": value, "line": line(node),
                     "target": self.st.line(left, _ARG_LIMIT)})
        if left.type != "identifier" and var:
            store: dict[str, Any] = {"target": self.st.line(left, _ARG_LIMIT), "base": var, "op": op_text,
                                     "value": value, "line": line(node)}
            conv = right
            while conv.type == "parenthesized_expression" and _named(conv):
                conv = _named(conv)[0]
            f = _field(conv, "function") if conv.type == "call_expression" else None
            if f is not None:
                store["conversion"] = _strip_targs(f, self.src) if f.type == "template_function" else text(f, self.src)
                store["conversion_targs"] = (
                    _targs(_field(f, "arguments"), self.src) if f.type == "template_function" else []
                )
            elif conv.type == "cast_expression" and _field(conv, "type") is not None:
                store["conversion"] = "cast"
                store["conversion_targs"] = [self.st.line(_field(conv, "type"))]
            fn.defn.attrs.setdefault("stores", []).append(store)

    # -- contexts -----------------------------------------------------------------------------------

    def _context_env(self, nodes: list[Node], scope: Frame | None) -> list[str]:
        """Env vars a context's condition reads (``getenv("X")`` in its text)."""
        out: list[str] = []
        for n in nodes:
            cond = self.ctx.text(n)
            if "getenv" in cond:
                out.extend(_GETENV_RE.findall(cond))
        return out

    # -- calls ------------------------------------------------------------------------------------------

    def _resolve_type(self, type_text: str, fn: _Fn | None) -> str:
        t = type_text
        for _ in range(6):
            base = re.sub(r"^(const|volatile|typename)\s+|[\s*&]+$|\s+const$", "", t.strip()).strip()
            base = re.sub(r"^(const|volatile|typename)\s+", "", base)
            nxt = (fn.aliases.get(base) if fn is not None else None) or self.scope_aliases.get(base)
            if nxt is None or nxt == t:
                break
            t = nxt
        return t

    def _vendor_type(self, type_text: str, fn: _Fn | None) -> tuple[str, str] | None:
        """(library, resolved type) when a type names a vendor namespace, directly or via aliases."""
        if not self.vendor_ns:
            return None
        resolved = self._resolve_type(type_text, fn)
        for ns, lib in self.vendor_ns.items():
            if re.search(rf"(^|[^\w]){re.escape(ns)}::", resolved):
                return lib, resolved
        return None

    def _kernel_candidates(self, expr: Node, fn: _Fn | None) -> tuple[list[tuple[str, list[str]]], str]:
        """Kernel names an expression may denote: ([(callee, template_args)], variable name)."""
        node = _unwrap_fn_value(expr, self.src)
        if node is None:
            return [], ""
        if node.type == "identifier" and fn is not None and fn.var_type(text(node, self.src)) is not None:
            var = text(node, self.src)
            out: list[tuple[str, list[str]]] = []
            for v in fn.values.get(var, []):
                for cand in (
                    [_field(v, "consequence"), _field(v, "alternative")]
                    if v.type == "conditional_expression"
                    else [v]
                ):
                    inner = _unwrap_fn_value(cand, self.src)
                    if inner is not None and inner.type in (
                        "identifier",
                        "qualified_identifier",
                        "template_function",
                    ):
                        if inner.type == "identifier" and fn.var_type(text(inner, self.src)) is not None:
                            continue
                        parts, targs = _name_parts(inner, self.src)
                        if (c := ("::".join(parts), targs)) not in out:
                            out.append(c)
                    elif (inner is not None and inner.type == "call_expression"
                          and (picker := _field(inner, "function")) is not None):
                        parts, _ = _name_parts(picker, self.src)
                        self._picked_by = "::".join(parts)  # a picker's result: linking reads its returns
            return out, var
        if node.type in ("identifier", "qualified_identifier", "template_function"):
            parts, targs = _name_parts(node, self.src)
            return [("::".join(parts), targs)], ""
        table = _field(node, "argument") if node.type == "subscript_expression" else None
        if table is not None and table.type == "identifier" and fn is not None:  # `kernels[i]<<<…>>>`
            name = text(table, self.src)
            out = []
            for v in fn.values.get(name, []):
                for item in _named(v) if v.type == "initializer_list" else []:
                    inner = _unwrap_fn_value(item, self.src)
                    if inner is None or inner.type not in ("identifier", "qualified_identifier", "template_function"):
                        return [], ""  # an entry that is not a function name: the table is not known
                    parts, targs = _name_parts(inner, self.src)
                    if (c := ("::".join(parts), targs)) not in out:
                        out.append(c)
            return out, f"{name}[…]" if out else ""
        return [], ""

    def _set_kernel(self, cs: CallSite, expr: Node | None, fn: _Fn | None) -> None:
        if expr is None:
            return
        self._picked_by = ""
        cands, var = self._kernel_candidates(expr, fn)
        if var:
            cs.attrs["kernel_var"] = var
        if self._picked_by:
            cs.attrs["picked_by"] = self._picked_by
        if len(cands) == 1:
            cs.callee, cs.template_args = cands[0]
        else:
            cs.callee, cs.template_args = "", []
            cs.attrs["kernel_expr"] = self.st.line(expr, _ARG_LIMIT)
            if cands:
                cs.attrs["kernel_candidates"] = [{"callee": c, "template_args": t} for c, t in cands]
        cs.path = cs.callee.split("::") if cs.callee else []

    def _calls(self) -> None:
        launches = {n.id for n, _ in self.caps["launch.kernel"]}
        for node, _ in self.caps["reference.call"]:
            api, library = None, None
            for key, ident, st in self.callee_caps.get(node.id, ()):
                if key == "launch.api" and api is None:
                    api = (text(ident, self.src), st)
                elif key == "call.vendor" and library is None:
                    library = str(st.get("library") or "")
            self.check()
            self._call(node, node.id in launches, api, library)

    def _call(
        self, node: Node, is_launch: bool, api: tuple[str, dict[str, Any]] | None, library: str | None
    ) -> None:
        src = self.src
        fnode = _field(node, "function")
        if fnode is None or fnode.type == "lambda_expression":
            return  # `[&] { … }()` (a BOOL_SWITCH expansion): the lambda's calls are sites of their own
        frame = self.frame_of.get(node.id)
        contexts = list(self.ctx.of(frame))
        fn_node = frame.scope.node if frame is not None and frame.scope is not None else None
        fn = self.fns.get(fn_node.id) if fn_node is not None else None
        kind, receiver = "call", ""
        targs: list[str] = []
        scope_args: list[str] = []
        if fnode.type in ("identifier", "qualified_identifier", "template_function"):
            parts, targs = _name_parts(fnode, src)
            scope_args = _scope_targs(fnode, src) if fnode.type == "qualified_identifier" else []
            callee = "::".join(parts)
        elif fnode.type == "field_expression":
            kind = "method"
            receiver = self.st.line(_field(fnode, "argument"), _ARG_LIMIT)
            fld = _field(fnode, "field")
            parts, targs = _name_parts(fld, src) if fld is not None else ([""], [])
            callee = parts[-1]
        else:
            callee = self.st.line(fnode, _ARG_LIMIT)
        args_nodes = _named(_field(node, "arguments"))
        cs = CallSite(
            kind=kind,
            callee=callee,
            path=callee.split("::") if kind == "call" else [callee],
            caller=fn.defn.qualname if fn is not None else "",
            file=self.facts.file,
            line=line(node),
            col=node.start_point[1],
            receiver=receiver,
            args=[self.st.line(a, _ARG_LIMIT) for a in args_nodes],
            template_args=targs,
            contexts=contexts,
            text=self.st.line(node, _CALL_LIMIT),
        )
        if scope_args:
            cs.attrs["scope_args"] = scope_args  # `Allreduce<4>::run`: which class specialisation's
        if is_launch:
            cs.kind = "launch"
            cfg = next((c for c in node.named_children if c.type == "kernel_call_syntax"), None)
            cs.launch_config = [self.st.line(c, _ARG_LIMIT) for c in _named(cfg)]
            if fnode.type == "identifier" and fn is not None and fn.var_type(callee) is not None \
                    or fnode.type == "subscript_expression" and self._kernel_candidates(fnode, fn)[0]:
                self._set_kernel(cs, fnode, fn)  # a kernel variable; a local table of kernels
        elif api is not None:
            name, st = api
            cs.kind = "launch"
            cs.attrs["api"] = name
            k = st["kernel_arg"]
            self._set_kernel(cs, args_nodes[k] if k < len(args_nodes) else None, fn)
            cs.launch_config = [cs.args[i] for i in st["config_args"] if i < len(cs.args)]
        elif library:
            cs.kind = "vendor"
            cs.attrs["library"] = library
        elif self._is_cast(fnode, callee, fn):
            cs.kind = "cast"  # `(T)(x)`, `float(x)`, `static_cast<T>(x)`: a conversion, not a call
        else:
            self._cutlass(cs, fnode, fn)
            if cs.kind == "call" and fnode.type == "identifier" and fn is not None \
                    and (callee in self.fn_macros or _MACRO_NAME.match(callee)):
                self._macro_call(cs, node)
        self.facts.calls.append(cs)

    def _is_cast(self, fnode: Node, callee: str, fn: _Fn | None) -> bool:
        """Is this call-shaped expression a cast: a parenthesised type, a builtin / fixed-width / CUDA
        vector type, a typedef or ``using`` alias, or a template parameter of the function?"""
        if fnode.type == "parenthesized_expression":
            inner = _named(fnode)
            return len(inner) == 1 and inner[0].type in _CAST_INNER
        if fnode.type in ("primitive_type", "sized_type_specifier"):
            return True
        name = callee.split("::")[-1]
        if name in _CAST_TYPES or _INT_TYPE_RE.match(callee):
            return True
        if fn is not None and (name in fn.aliases or name in fn.defn.template_params):
            return True
        return "::" not in callee and name in self.scope_aliases

    def _macro_call(self, cs: CallSite, node: Node) -> None:
        """A call that may be a function-like macro (defined here or in an included file): its whole
        text and end, for linking to expand (``apxtui/index/macros.py``)."""
        if node.end_byte - node.start_byte > MAX_INVOCATION:
            return
        cs.attrs["macro_call"] = self.st.slice(node.start_byte, node.end_byte)
        cs.attrs["macro_end"] = [node.end_point[0] + 1, node.end_point[1]]
        if cs.callee in self.fn_macros:
            cs.kind = "macro"

    def _line_invocations(self, root: Node) -> None:
        """Macro-like ``NAME(args)`` that no call site covers: at the start of a line outside any
        function (``BINARY_OP(float, badd_f32, x + y)``, a macro that may define kernels or
        functions), or inside one where the parser could not read it (``CALL(__nv_bfloat16,
        uint8_t);``: a type as an argument).  Recorded as call sites with their scope (namespaces,
        ``extern "C"``, contexts) and ``macro_call`` text for linking to expand."""
        src = self.src
        seen = {(c.line, c.col) for c in self.facts.calls}
        found: set[tuple[int, int, str]] = set()
        pats = [_MACRO_LIKE]
        lower = sorted(n for n in self.fn_macros if not _MACRO_NAME.match(n) and n.isidentifier())
        if lower:
            pats.append(re.compile(rb"\b(" + b"|".join(re.escape(n.encode()) for n in lower) + rb")[ \t]*\("))
        for pat in pats:
            lno, pos = 1, 0  # lines counted as the matches advance: linear in the file
            for m in pat.finditer(src):
                lno += src.count(b"\n", pos, m.start(1))
                pos = m.start(1)
                self._line_invocation(root, m, lno, seen, found)
        if found:  # the parser may read a file-level invocation as a call: it is the invocation
            self.facts.calls = [c for c in self.facts.calls if c.caller or c.kind == "macro"
                                or (c.line, c.col, c.callee) not in found]

    def _line_invocation(self, root: Node, m: re.Match[bytes], lno: int, seen: set[tuple[int, int]],
                         found: set[tuple[int, int, str]]) -> None:
        src = self.src
        name = m.group(1).decode("ascii")
        start = m.start(1)
        line_start = src.rfind(b"\n", 0, start) + 1
        col = start - line_start
        prev_end = line_start - 1
        if prev_end > 0 and src[max(0, prev_end - 2) : prev_end].rstrip(b"\r").endswith(b"\\"):
            return  # a continuation line of a #define
        if src[line_start:start].lstrip().startswith(b"#"):
            return  # a directive (`#define NAME(args)`, `#if FOO(x)`)
        frame = frame_at(self.frames, start)
        sc = self._scope_of(frame)
        fn = self.fns.get(sc["in_fn"].id) if sc["in_fn"] is not None else None
        if fn is None and (sc["in_fn"] is not None or sc["cls"] or src[line_start:start].strip()):
            return  # file level: only at the start of a line
        if fn is not None and ((lno, col) in seen or sc["in_fn"].start_byte == start):
            return  # read as a call (it carries its macro text already), or `NAME(args) { … }` itself
        at = root.descendant_for_byte_range(start, start)
        if at is not None and at.type not in ("identifier", "ERROR", "type_identifier", "primitive_type"):
            return  # in a comment, a string, a #define or a directive
        end = invocation_end(src, m.end() - 1)
        if end is None:
            return
        self.check()
        end_pt = [lno + src.count(b"\n", start, end), end - (src.rfind(b"\n", 0, end) + 1)]
        attrs: dict[str, Any] = {"macro_call": self.st.slice(start, end), "macro_end": end_pt}
        if fn is None:
            ctxs = [c for c in self.ctx.of(frame) if c.kind == "pp_if"]
            attrs.update({"file_level": True, "scope": list(sc["names"]), "abi": bool(sc["abi"])})
            found.add((lno, col, name))
        else:
            ctxs = list(self.ctx.of(frame))
            attrs["unparsed"] = True
        self.facts.calls.append(CallSite(
            kind="macro" if fn is None or name in self.fn_macros else "call", callee=name, path=[name],
            caller=fn.defn.qualname if fn is not None else "", file=self.facts.file, line=lno, col=col,
            text=one_line(self.st.slice(start, end), _CALL_LIMIT), contexts=ctxs, attrs=attrs))

    def _cutlass(self, cs: CallSite, fnode: Node, fn: _Fn | None) -> None:
        """Calls on a vendor-typed operator object (``op(args)``, ``op.run()``, ``Gemm::can_implement``)."""
        if not self.vendor_ns:
            return
        src = self.src
        hit = None
        if fnode.type == "identifier" and fn is not None:
            t = fn.var_type(text(fnode, src))
            if t is not None:
                hit = self._vendor_type(t, fn)
                cs.receiver = cs.callee
                method = "operator()"
        elif fnode.type == "field_expression" and fn is not None:
            recv = _field(fnode, "argument")
            if recv is not None and recv.type == "identifier":
                t = fn.var_type(text(recv, src))
                if t is not None:
                    hit = self._vendor_type(t, fn)
                    method = cs.callee
        elif fnode.type == "qualified_identifier" and len(cs.path) == 2:
            scope = cs.path[0]
            if (fn is not None and scope in fn.aliases) or scope in self.scope_aliases:
                hit = self._vendor_type(scope, fn)
                method = cs.path[1]
        if hit is None:
            if fnode.type == "identifier":
                cs.receiver = ""
            return
        cs.kind = "vendor"
        cs.attrs.update({"library": hit[0], "operator_type": hit[1], "method": method})

    # -- environment ---------------------------------------------------------------------------------------

    def _env_read(self, ident: Node, call: Node) -> None:
        args = _named(_field(call, "arguments"))
        if not args:
            return
        name = _string_value(args[0], self.src)
        if name is None:
            name = self.st.line(args[0], _ARG_LIMIT)
        default, outer = "", call
        cond = self._around_conditional(call)
        if cond is not None:
            branch, alt, outer = cond
            if alt is not None and not same(alt, branch) and _is_simple(alt):
                default = self.st.line(alt, _ARG_LIMIT)
        fn = self._fn_of(call)
        key = (name, line(call))
        if key in self._env_seen:
            return
        self._env_seen.add(key)
        self.facts.env_reads.append(
            EnvRead(
                name=name,
                file=self.facts.file,
                line=line(call),
                caller=fn.defn.qualname if fn is not None else "",
                default=default,
                text=self.st.line(outer, _CALL_LIMIT),
            )
        )

    def _around_conditional(self, call: Node) -> tuple[Node, Node | None, Node] | None:
        """``getenv(X) ? a : b`` (through up to 5 calls, argument lists, operators, casts or
        parentheses): (the operand holding the call, the alternative, the conditional), else None."""
        f = self._frame(call)
        for _ in range(8):  # the conditional is at most 6 nodes up: only a few frames between
            if f is None or f.kind in ("conditional", SCOPE):
                break
            f = f.parent
        if f is None or f.kind != "conditional":
            return None
        path: list[Node] = []
        n = f.node
        while n.id != call.id and len(path) < 6:
            c = n.child_with_descendant(call)
            if c is None:
                return None
            path.append(c)
            n = c
        if n.id != call.id or any(p.type not in _ENV_WRAPPERS for p in path[:-1]):
            return None
        return path[0], _field(f.node, "alternative"), f.node

def extract(facts: FileFacts, tree: ts.Tree, src: bytes, budget: Budget | None = None) -> None:
    """Fill ``facts`` (defs, calls, imports, env_reads) from a tree-sitter-cuda tree."""
    _Extractor(facts, src, budget or Budget(float("inf"))).run(tree.root_node)
