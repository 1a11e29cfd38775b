"""Python extractor: a tree-sitter-python syntax tree → :class:`~apxtui.facts.FileFacts`.

The query (``queries/python.scm``) points at the constructs; this module works out
enclosing scopes, qualified names, contexts and types by walking ancestors.  One
query pass per file; no linking, nothing imported from the analysed code.
"""

from __future__ import annotations

from bisect import bisect_right

import tree_sitter as ts

from apxtui.facts import CallSite, Context, Definition, EnvRead, FileFacts, Import, Param
from apxtui.parse import languages
from apxtui.parse.util import line, one_line, pos_key, text

_DEF_TYPES = ("function_definition", "class_definition")
_COMPREHENSIONS = (
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
)
_EXCEPT = ("except_clause", "except_group_clause")
ARG_LIMIT = 120


def extract(facts: FileFacts, tree: ts.Tree, src: bytes) -> None:
    """Fill ``facts`` (defs, calls, imports, env_reads, strings) from ``tree``."""
    _Extractor(facts, src).run(tree.root_node)


def _is(a: ts.Node | None, b: ts.Node | None) -> bool:
    return a is not None and b is not None and a.id == b.id


def _header(node: ts.Node, body: ts.Node | None, src: bytes) -> str:
    """Text of ``node`` up to its body, on one line, without the trailing colon."""
    end = body.start_byte if body is not None else node.end_byte
    s = one_line(src[node.start_byte : end].decode("utf-8", "replace"))
    return s.rstrip(":").rstrip()


def _dotted(node: ts.Node, src: bytes) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"] when ``node`` is a plain dotted name, else None."""
    if node.type == "identifier":
        return [text(node, src)]
    if node.type == "attribute":
        obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
        head = _dotted(obj, src) if obj is not None else None
        if head is not None and attr is not None:
            return [*head, text(attr, src)]
    return None


def _string_parts(node: ts.Node, src: bytes) -> tuple[str, str] | None:
    """(prefix, content) of a ``string`` node, or None if it is not a plain literal."""
    start = end = None
    for c in node.children:
        if c.type == "string_start":
            start = c
        elif c.type == "string_end":
            end = c
    if start is None or end is None:
        return None
    prefix = text(start, src).rstrip("'\"").lower()
    return prefix, src[start.end_byte : end.start_byte].decode("utf-8", "replace")


def _identifiers(node: ts.Node, src: bytes) -> list[tuple[str, int]]:
    """Names (``x``) and ``self.x`` attributes read inside ``node``, with their start byte."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            out.append((text(n, src), n.start_byte))
        elif n.type == "attribute":
            parts = _dotted(n, src)
            if parts is not None and len(parts) == 2:
                out.append((".".join(parts), n.start_byte))
            obj = n.child_by_field_name("object")
            if obj is not None:
                stack.append(obj)
        else:
            stack.extend(n.named_children)
    return out


class _Extractor:
    def __init__(self, facts: FileFacts, src: bytes):
        self.f = facts
        self.src = src
        self.defs: dict[int, Definition] = {}  # def/class node id → Definition
        self.def_nodes: dict[int, ts.Node] = {}
        self.consts: dict[str, str] = {}  # module-level NAME = "string"
        self.env_spans: list[tuple[int, int, str]] = []  # (start, end, var) of env reads
        # scope id (0 = module) → name → [(start byte, env vars)]
        self.env_vals: dict[int, dict[str, list[tuple[int, set[str]]]]] = {}

    # -- driver ------------------------------------------------------------------------

    def run(self, root: ts.Node) -> None:
        groups: dict[str, dict[int, dict[str, list[ts.Node]]]] = {}
        for _, caps in languages.matches("python", root):
            for key in (
                "definition.function",
                "definition.class",
                "reference.call",
                "import",
                "assign",
                "with.item",
                "env.read",
                "string",
                "string.template",
            ):
                if key in caps:
                    node = caps[key][0]
                    groups.setdefault(key, {}).setdefault(node.id, caps)
                    break

        def nodes(*keys: str) -> list[tuple[ts.Node, dict[str, list[ts.Node]]]]:
            out = [(c[k][0], c) for k in keys for c in groups.get(k, {}).values()]
            return sorted(out, key=lambda p: p[0].start_byte)

        for node, _ in nodes("definition.function", "definition.class"):
            self._definition(node)
        for node, _ in nodes("import"):
            self._import(node)
        assigns = nodes("assign", "with.item")
        for node, _ in assigns:
            self._constant(node)
        for node, caps in nodes("env.read"):
            self._env_read(node, caps)
        self.env_spans.sort()
        for node, _ in assigns:
            if node.type == "with_item":
                self._with_item(node)
            else:
                self._assignment(node)
        for node, _ in nodes("reference.call"):
            self._call(node)
        templates = {c["string.template"][0].id: c for c in groups.get("string.template", {}).values()}
        for node, _ in nodes("string"):
            self._string(node, templates.get(node.id))

    # -- scopes ------------------------------------------------------------------------

    def _scope(self, node: ts.Node) -> ts.Node | None:
        """Innermost def/class whose *body* holds ``node`` (decorators/defaults are outside)."""
        prev, n = node, node.parent
        while n is not None:
            if n.type in _DEF_TYPES and _is(n.child_by_field_name("body"), prev):
                return n
            prev, n = n, n.parent
        return None

    def _caller(self, node: ts.Node) -> str:
        return self._qualname(self._scope(node))

    def _qualname(self, scope: ts.Node | None) -> str:
        d = self.defs.get(scope.id) if scope is not None else None
        return d.qualname if d is not None else ""

    # -- definitions -------------------------------------------------------------------

    def _definition(self, node: ts.Node) -> None:
        src = self.src
        name = text(node.child_by_field_name("name"), src)
        parent = self._scope(node)
        pdef = self.defs.get(parent.id) if parent is not None else None
        prefix = pdef.qualname if pdef is not None else self.f.module
        qual = f"{prefix}.{name}" if prefix else name
        is_class = node.type == "class_definition"
        d = Definition(
            kind="python_class" if is_class else "python_fn",
            name=name,
            qualname=qual,
            file=self.f.file,
            line=line(node),
            end_line=node.end_point[0] + 1,
            lang="python",
            container=pdef.name if pdef is not None and pdef.kind == "python_class" else "",
        )
        if node.parent is not None and node.parent.type == "decorated_definition":
            decos = [c for c in node.parent.children if c.type == "decorator"]
            d.attrs["decorators"] = [one_line(text(c, src)).lstrip("@").strip() for c in decos]
        if is_class:
            sup = node.child_by_field_name("superclasses")
            d.attrs["bases"] = (
                [one_line(text(c, src)) for c in sup.named_children if c.type != "comment"] if sup else []
            )
        else:
            d.params = self._params(node.child_by_field_name("parameters"))
            d.return_type = one_line(text(node.child_by_field_name("return_type"), src))
            if any(c.type == "async" for c in node.children):
                d.attrs["async"] = True
        self.defs[node.id] = d
        self.def_nodes[node.id] = node
        self.f.defs.append(d)

    def _params(self, params: ts.Node | None) -> list[Param]:
        out: list[Param] = []
        if params is None:
            return out
        src = self.src
        for p in params.named_children:
            t = p.type
            if t in ("identifier", "list_splat_pattern", "dictionary_splat_pattern"):
                out.append(Param(text(p, src), ""))
            elif t == "typed_parameter":
                name = next((c for c in p.named_children if c.type != "type"), None)
                out.append(Param(text(name, src), one_line(text(p.child_by_field_name("type"), src))))
            elif t in ("default_parameter", "typed_default_parameter"):
                out.append(
                    Param(
                        text(p.child_by_field_name("name"), src),
                        one_line(text(p.child_by_field_name("type"), src)),
                        one_line(text(p.child_by_field_name("value"), src)),
                    )
                )
        return out

    # -- imports -----------------------------------------------------------------------

    def _package(self) -> list[str]:
        parts = self.f.module.split(".") if self.f.module else []
        if self.f.file.endswith(("__init__.py", "__init__.pyi")):
            return parts
        return parts[:-1]

    def _resolve_relative(self, rel: ts.Node) -> str:
        prefix = next((c for c in rel.children if c.type == "import_prefix"), None)
        dots = text(prefix, self.src).count(".")
        name = next((c for c in rel.named_children if c.type == "dotted_name"), None)
        rest = "".join(text(name, self.src).split()) if name is not None else ""
        pkg = self._package()
        if dots > len(pkg):
            return "." * dots + rest  # beyond the top-level package: left as written
        base = pkg[: len(pkg) - (dots - 1)]
        return ".".join([*base, rest] if rest else base)

    def _import(self, node: ts.Node) -> None:
        src, scope = self.src, self._caller(node)

        def add(path: str, alias: str, at: ts.Node) -> None:
            self.f.imports.append(Import("import", path, alias, self.f.file, line(at), scope=scope))

        def dotted(n: ts.Node | None) -> str:
            return "".join(text(n, src).split())

        if node.type == "import_statement":
            for n in node.children_by_field_name("name"):
                if n.type == "aliased_import":
                    add(dotted(n.child_by_field_name("name")), text(n.child_by_field_name("alias"), src), n)
                else:
                    add(dotted(n), dotted(n), n)
            return
        mod = node.child_by_field_name("module_name")
        if mod is None:
            return
        base = self._resolve_relative(mod) if mod.type == "relative_import" else dotted(mod)
        sep = "" if base.endswith(".") else "."
        if any(c.type == "wildcard_import" for c in node.children):
            add(base, "*", node)
        for n in node.children_by_field_name("name"):
            if n.type == "aliased_import":
                name = dotted(n.child_by_field_name("name"))
                add(base + sep + name, text(n.child_by_field_name("alias"), src), n)
            else:
                name = dotted(n)
                add(base + sep + name, name, n)

    # -- environment -------------------------------------------------------------------

    def _env_base_ok(self, base: str) -> bool:
        """Does ``base`` name ``os.environ`` / ``os.getenv`` given this file's imports?"""
        if base in ("os.environ", "os.getenv"):
            return True
        head, _, last = base.rpartition(".")
        for imp in self.f.imports:
            if head and imp.alias == head and imp.path == "os":
                return True
            if not head and imp.alias == base and imp.path == f"os.{last}":
                return True
        return False

    def _env_name(self, node: ts.Node) -> str:
        if node.type == "string":
            parts = _string_parts(node, self.src)
            if parts is not None:
                return parts[1]
        t = one_line(text(node, self.src))
        return self.consts.get(t, t)

    def _env_read(self, node: ts.Node, caps: dict[str, list[ts.Node]]) -> None:
        src = self.src
        base, name = caps.get("env.base", [None])[0], caps.get("env.name", [None])[0]
        if base is None or name is None or not self._env_base_ok("".join(text(base, src).split())):
            return
        parent = node.parent
        if parent is not None and (
            (parent.type == "assignment" and _is(parent.child_by_field_name("left"), node))
            or parent.type == "delete_statement"
        ):
            return  # a write / delete, not a read
        if node.type == "comparison_operator":
            ops = [text(c, src) for c in node.children_by_field_name("operators")]
            if not ops or ops[-1].split()[-1] != "in":
                return
        default = ""
        if "env.default" in caps:
            default = one_line(text(caps["env.default"][0], src))
        elif node.type == "call":
            args = node.child_by_field_name("arguments")
            pos = (
                [a for a in args.named_children if a.type not in ("keyword_argument", "comment")]
                if args
                else []
            )
            kw = [a for a in args.named_children if a.type == "keyword_argument"] if args else []
            if len(pos) > 1:
                default = one_line(text(pos[1], src))
            for k in kw:
                if text(k.child_by_field_name("name"), src) == "default":
                    default = one_line(text(k.child_by_field_name("value"), src))
        var = self._env_name(name)
        self.f.env_reads.append(
            EnvRead(var, self.f.file, line(node), self._caller(node), default, one_line(text(node, src)))
        )
        self.env_spans.append((node.start_byte, node.end_byte, var))

    def _env_in(self, node: ts.Node | None, scope: ts.Node | None) -> set[str]:
        """Env vars read inside ``node``, directly or through a value assigned earlier."""
        if node is None:
            return set()
        out: set[str] = set()
        i = bisect_right(self.env_spans, (node.start_byte, -1, ""))
        while i < len(self.env_spans) and self.env_spans[i][0] < node.end_byte:
            s, e, var = self.env_spans[i]
            if e <= node.end_byte:
                out.add(var)
            i += 1
        if not self.env_vals:
            return out
        fn = scope if scope is not None and scope.type == "function_definition" else None
        cls = self._scope(fn) if fn is not None else None
        for name, pos in _identifiers(node, self.src):
            if name.startswith(("self.", "cls.")):
                table = self.env_vals.get(cls.id, {}) if cls is not None else {}
                entries = [(0, vs) for _, vs in table.get(name, [])]
            elif fn is not None and name in self.env_vals.get(fn.id, {}):
                entries = self.env_vals[fn.id][name]
            else:
                entries = self.env_vals.get(0, {}).get(name, [])
                if fn is not None:
                    entries = [(0, vs) for _, vs in entries]  # module code ran before the call
            for start, vs in entries:
                if start < pos:
                    out |= vs
        return out

    # -- assignments: locals, fields, constants, env-carrying values ------------------

    def _constant(self, node: ts.Node) -> None:
        if node.type != "assignment" or self._scope(node) is not None:
            return
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is not None and left.type == "identifier" and right is not None and right.type == "string":
            parts = _string_parts(right, self.src)
            if parts is not None and "f" not in parts[0]:
                self.consts[text(left, self.src)] = parts[1]

    def _value_type(self, value: ts.Node | None, fn: Definition | None) -> str:
        """Type text of a value: the callee of ``Callee(...)``, or a typed name's type."""
        if value is None:
            return ""
        if value.type == "await":
            value = value.named_children[0] if value.named_children else None
            if value is None:
                return ""
        if value.type == "call":
            return one_line(text(value.child_by_field_name("function"), self.src))
        if value.type == "identifier" and fn is not None:
            name = text(value, self.src)
            for p in fn.params:
                if p.name == name and p.type:
                    return p.type
            return fn.locals.get(name, "")
        return ""

    def _self_name(self, fn_node: ts.Node, fn: Definition) -> str:
        if "staticmethod" in fn.attrs.get("decorators", []) or not fn.params:
            return ""
        parent = self._scope(fn_node)
        return fn.params[0].name if parent is not None and parent.type == "class_definition" else ""

    def _assignment(self, node: ts.Node) -> None:
        src = self.src
        left, ann = node.child_by_field_name("left"), node.child_by_field_name("type")
        right = node.child_by_field_name("right")
        while right is not None and right.type == "assignment":  # a = b = value
            right = right.child_by_field_name("right")
        if left is None:
            return
        scope = self._scope(node)
        sdef = self.defs.get(scope.id) if scope is not None else None
        ann_text = one_line(text(ann, src))
        key = "".join(text(left, src).split())
        # values carrying env vars into later conditions
        env = self._env_in(right, scope) if right is not None else set()
        if env and (left.type == "identifier" or key.count(".") == 1):
            table_id = scope.id if scope is not None else 0
            if left.type == "attribute":
                cls = self._scope(scope) if sdef is not None and sdef.kind == "python_fn" else None
                table_id = cls.id if cls is not None else -1
            if table_id != -1:
                self.env_vals.setdefault(table_id, {}).setdefault(key, []).append((node.start_byte, env))
        if sdef is None:
            return
        if sdef.kind == "python_class":
            if left.type == "identifier" and ann_text:
                sdef.fields[key] = ann_text
            return
        typ = ann_text or self._value_type(right, sdef)
        if left.type == "identifier":
            if typ and (ann_text or key not in sdef.locals):
                sdef.locals[key] = typ
        elif left.type == "attribute":
            parts = _dotted(left, src)
            self_name = self._self_name(scope, sdef)
            cls_node = self._scope(scope) if self_name else None
            cls = self.defs.get(cls_node.id) if cls_node is not None else None
            if cls is not None and parts is not None and len(parts) == 2 and parts[0] == self_name and typ:
                if ann_text or parts[1] not in cls.fields:
                    cls.fields[parts[1]] = typ

    def _with_item(self, node: ts.Node) -> None:
        scope = self._scope(node)
        fn = self.defs.get(scope.id) if scope is not None else None
        pat = node.child_by_field_name("value")
        if fn is None or fn.kind != "python_fn" or pat is None or not pat.named_children:
            return
        target = pat.child_by_field_name("alias")
        ident = target.named_children[0] if target is not None and target.named_children else None
        typ = self._value_type(pat.named_children[0], fn)
        if ident is not None and ident.type == "identifier" and typ:
            fn.locals.setdefault(text(ident, self.src), typ)

    # -- calls and their contexts ------------------------------------------------------

    def _call(self, node: ts.Node) -> None:
        src = self.src
        fn = node.child_by_field_name("function")
        if fn is None:
            return
        kind, receiver = "call", ""
        if fn.type == "attribute":
            kind = "method"
            obj, attr = fn.child_by_field_name("object"), text(fn.child_by_field_name("attribute"), src)
            parts = _dotted(fn, src)
            if parts is not None:
                path, callee, receiver = parts, ".".join(parts), ".".join(parts[:-1])
            else:
                receiver = one_line(text(obj, src))
                path, callee = [receiver, attr], f"{receiver}.{attr}"
        else:
            parts = _dotted(fn, src)
            callee = ".".join(parts) if parts is not None else one_line(text(fn, src))
            path = [callee]
        scope = self._scope(node)
        self.f.calls.append(
            CallSite(
                kind=kind,
                callee=callee,
                path=path,
                caller=self._qualname(scope),
                file=self.f.file,
                line=line(node),
                col=node.start_point[1],
                receiver=receiver,
                args=self._args(node.child_by_field_name("arguments")),
                contexts=self._contexts(node, scope),
                text=one_line(text(node, src), 200),
            )
        )

    def _args(self, args: ts.Node | None) -> list[str]:
        if args is None:
            return []
        src = self.src
        if args.type != "argument_list":  # f(x for x in xs): the generator is the argument
            return [one_line(text(args, src).removeprefix("(").removesuffix(")"), ARG_LIMIT)]
        out = []
        for a in args.named_children:
            if a.type == "comment":
                continue
            if a.type == "keyword_argument":
                s = f"{text(a.child_by_field_name('name'), src)}={text(a.child_by_field_name('value'), src)}"
            else:
                s = text(a, src)
            out.append(one_line(s, ARG_LIMIT))
        return out

    def _contexts(self, node: ts.Node, scope: ts.Node | None) -> list[Context]:
        """Enclosing branch/loop/closure/except constructs of ``node``, outermost first."""
        chunks: list[list[Context]] = []
        prev, n = node, node.parent
        while n is not None:
            if n.type in _DEF_TYPES and _is(n.child_by_field_name("body"), prev):
                break
            got = self._context_at(n, prev, scope)
            if got:
                chunks.append(got)
            prev, n = n, n.parent
        return [c for chunk in reversed(chunks) for c in chunk]

    def _ctx(self, kind: str, txt: str, at: ts.Node, group: ts.Node, arm: int, **kw) -> Context:
        return Context(kind=kind, text=txt, line=line(at), group=pos_key(group), arm=arm, **kw)

    def _context_at(self, n: ts.Node, prev: ts.Node, scope: ts.Node | None) -> list[Context]:
        src, t = self.src, n.type
        field = n.child_by_field_name
        if t == "if_statement" and _is(field("consequence"), prev):
            cond = field("condition")
            return [
                self._ctx("if", one_line(text(cond, src)), n, n, 0, env=sorted(self._env_in(cond, scope)))
            ]
        if t in ("elif_clause", "else_clause") and n.parent is not None and n.parent.type == "if_statement":
            return self._if_arm(n, prev, scope)
        if t == "for_statement" and _is(field("body"), prev):
            return [
                self._ctx(
                    "loop", _header(n, prev, src), n, n, -1, env=sorted(self._env_in(field("right"), scope))
                )
            ]
        if t == "while_statement" and (_is(field("body"), prev) or _is(field("condition"), prev)):
            body = field("body")
            cond = field("condition")
            return [self._ctx("loop", _header(n, body, src), n, n, -1, env=sorted(self._env_in(cond, scope)))]
        if t in _COMPREHENSIONS:
            return self._comprehension(n, prev, scope)
        if t == "conditional_expression":
            kids = n.named_children
            if len(kids) >= 3:
                cond = one_line(text(kids[1], src))
                env = sorted(self._env_in(kids[1], scope))
                if _is(kids[0], prev):
                    return [self._ctx("if", cond, n, n, 0, env=env)]
                if _is(kids[2], prev):
                    return [self._ctx("else", "else", n, n, 1, negated=[cond], env=env)]
        if t == "case_clause" and _is(field("consequence"), prev):
            match = n.parent.parent if n.parent is not None else None
            if match is not None and match.type == "match_statement":
                arms = [c for c in n.parent.named_children if c.type == "case_clause"]
                arm = next((i for i, c in enumerate(arms) if _is(c, n)), 0)
                subject = match.child_by_field_name("subject")
                pat = _header(n, prev, src).removeprefix("case").strip()
                env = self._env_in(subject, scope) | self._env_in(field("guard"), scope)
                return [
                    self._ctx(
                        "match_arm", pat, n, match, arm, subject=one_line(text(subject, src)), env=sorted(env)
                    )
                ]
        if t in _EXCEPT and prev.type == "block" and n.parent is not None:
            handlers = [c for c in n.parent.named_children if c.type in _EXCEPT]
            arm = next((i for i, c in enumerate(handlers) if _is(c, n)), 0)
            return [self._ctx("except", _header(n, prev, src), n, n.parent, arm)]
        if t == "lambda" and _is(field("body"), prev):
            return [self._ctx("closure", _header(n, prev, src), n, n, -1)]
        return []

    def _if_arm(self, n: ts.Node, prev: ts.Node, scope: ts.Node | None) -> list[Context]:
        """Context of an ``elif``/``else`` arm (or of an ``elif`` condition, reached via ``else``)."""
        src, chain = self.src, n.parent
        conds = [chain.child_by_field_name("condition")]
        arm = 0
        for i, alt in enumerate(chain.children_by_field_name("alternative"), start=1):
            if _is(alt, n):
                arm = i
                break
            conds.append(alt.child_by_field_name("condition"))
        negated = [one_line(text(c, src)) for c in conds if c is not None]
        env: set[str] = set()
        for c in conds:
            env |= self._env_in(c, scope)
        if n.type == "else_clause":
            if not _is(n.child_by_field_name("body"), prev):
                return []
            return [self._ctx("else", "else", n, chain, arm, negated=negated, env=sorted(env))]
        cond = n.child_by_field_name("condition")
        if _is(cond, prev):  # evaluated only when every earlier condition was false
            return [self._ctx("else", "else", n, chain, arm, negated=negated, env=sorted(env))]
        if _is(n.child_by_field_name("consequence"), prev):
            env |= self._env_in(cond, scope)
            return [
                self._ctx("if", one_line(text(cond, src)), n, chain, arm, negated=negated, env=sorted(env))
            ]
        return []

    def _comprehension(self, n: ts.Node, prev: ts.Node, scope: ts.Node | None) -> list[Context]:
        """Loop (and filter) contexts of a comprehension clause list, outermost first."""
        src = self.src
        clauses = [c for c in n.named_children if c.type in ("for_in_clause", "if_clause")]
        if _is(n.child_by_field_name("body"), prev):
            upto = len(clauses)
        else:
            upto = next((i for i, c in enumerate(clauses) if _is(c, prev)), 0)
        out = []
        for c in clauses[:upto]:
            if c.type == "for_in_clause":
                env = sorted(self._env_in(c.child_by_field_name("right"), scope))
                out.append(self._ctx("loop", one_line(text(c, src)), c, c, -1, env=env))
            else:
                cond = c.named_children[0] if c.named_children else None
                env = sorted(self._env_in(cond, scope))
                out.append(self._ctx("if", one_line(text(cond, src)), c, c, 0, env=env))
        return out

    # -- strings (weight-name candidates) ---------------------------------------------

    def _string(self, node: ts.Node, template: dict[str, list[ts.Node]] | None) -> None:
        parts = _string_parts(node, self.src)
        if parts is None:
            return
        prefix, content = parts
        if node.parent is not None and node.parent.type == "expression_statement":
            return  # a docstring or a bare string statement
        if "b" in prefix or not content or any(ch.isspace() for ch in content):
            return
        if "." not in content and "{" not in content:
            return
        if not any(ch.isalnum() for ch in content):
            return
        macro, args = ("fstring" if "f" in prefix else ""), []
        if template is not None and "string.args" in template:
            a = template["string.args"][0]
            macro = "format" if a.type == "argument_list" else "percent"
            if a.type == "argument_list":
                args = self._args(a)
            elif a.type == "tuple":
                args = [
                    one_line(text(x, self.src), ARG_LIMIT) for x in a.named_children if x.type != "comment"
                ]
            else:
                args = [one_line(text(a, self.src), ARG_LIMIT)]
        self.f.strings.append(
            {"text": content, "line": line(node), "caller": self._caller(node), "macro": macro, "args": args}
        )
