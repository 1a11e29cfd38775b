"""Python extractor: a tree-sitter-python syntax tree → :class:`~apxtui.facts.FileFacts`.

The query (``queries/python.scm``) points at the constructs; scopes and contexts come
from captured ranges nested by :mod:`apxtui.parse.nesting` (no ancestor walks, so the
cost does not grow with nesting depth).  One query pass per file; no linking, nothing
imported from the analysed code.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import cache

import tree_sitter as ts

from apxtui.facts import CallSite, Definition, EnvRead, FileFacts, Import, Param
from apxtui.parse import languages
from apxtui.parse.budget import Budget
from apxtui.parse.contexts import Contexts, Policy
from apxtui.parse.nesting import SCOPE, Frame, nest
from apxtui.parse.util import SourceText, line, one_line

ARG_LIMIT = 120
POLICY = Policy(sort_env=True)
_GROUPS = ("definition.function", "definition.class", "reference.call", "import", "assign", "with.item",
           "env.read", "string", "string.template")  # fmt: skip


@cache
def _context_patterns() -> tuple[bool, ...]:
    return tuple(any(n.startswith("context.") for n in names) for names in languages.pattern_captures("python"))


def extract(facts: FileFacts, tree: ts.Tree, src: bytes, budget: Budget | None = None) -> None:
    """Fill ``facts`` (defs, calls, imports, env_reads, strings) from ``tree``."""
    _Extractor(facts, src, budget or Budget(float("inf"))).run(tree.root_node)


def _string_parts(node: ts.Node, st: SourceText) -> tuple[str, str] | None:
    """(prefix, content) of a ``string`` node, or None if it is not a plain literal."""
    start = end = None
    for c in node.children:
        if c.type == "string_start":
            start = c
        elif c.type == "string_end":
            end = c
    if start is None or end is None:
        return None
    prefix = st.text(start).rstrip("'\"").lower()
    return prefix, st.slice(start.end_byte, end.start_byte)


def _dotted(node: ts.Node, st: SourceText) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"] when ``node`` is a plain dotted name, else None."""
    tail: list[str] = []
    while node.type == "attribute":
        obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
        if obj is None or attr is None:
            return None
        tail.append(st.text(attr))
        node = obj
    if node.type != "identifier":
        return None
    tail.append(st.text(node))
    tail.reverse()
    return tail


def _identifiers(node: ts.Node, st: SourceText) -> list[tuple[str, int]]:
    """Names (``x``) and ``self.x`` attributes read inside ``node``, with their start byte."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            out.append((st.text(n), n.start_byte))
        elif n.type == "attribute":
            obj, attr = n.child_by_field_name("object"), n.child_by_field_name("attribute")
            if obj is not None and obj.type == "identifier" and attr is not None:
                out.append((f"{st.text(obj)}.{st.text(attr)}", n.start_byte))
            if obj is not None:
                stack.append(obj)
        else:
            stack.extend(n.named_children)
    return out


class _Extractor:
    def __init__(self, facts: FileFacts, src: bytes, budget: Budget):
        self.f = facts
        self.check = budget.check
        self.src = src
        self.st = SourceText(src)
        self.t = self.st.text
        self.defs: dict[int, Definition] = {}  # def/class node id → Definition
        self.consts: dict[str, str] = {}  # module-level NAME = "string"
        self.env_spans: list[tuple[int, int, str]] = []  # (start, end, var) of env reads
        # scope id (0 = module) → name → [(start byte, env vars)]
        self.env_vals: dict[int, dict[str, list[tuple[int, set[str]]]]] = {}
        self.frame_of: dict[int, Frame | None] = {}  # node id → innermost frame around it
        self.decorators: dict[int, list[ts.Node]] = {}  # def id → its decorators
        self.ctx = Contexts(self.st, POLICY, self._context_env)

    # -- driver ------------------------------------------------------------------------

    def run(self, root: ts.Node) -> None:
        groups: dict[str, dict[int, dict[str, list[ts.Node]]]] = {}
        scopes: list[Frame] = []
        skip: set[int] = set()  # env writes and bare strings
        ctx = self.ctx
        is_ctx = _context_patterns()
        for i, caps in languages.matches("python", root):
            if is_ctx[i]:
                ctx.add(caps)
                continue
            if "decorated" in caps:
                self.decorators.setdefault(caps["decorated"][0].id, []).extend(caps["decorator"])
                continue
            if "env.write" in caps or "string.bare" in caps:
                skip.add(caps["env.write" if "env.write" in caps else "string.bare"][0].id)
                continue
            for key in _GROUPS:
                if key in caps:
                    node = caps[key][0]
                    g = groups.setdefault(key, {})
                    if node.id not in g:
                        g[node.id] = caps
                        if "definition.body" in caps:
                            b = caps["definition.body"][0]
                            scopes.append(Frame(b.start_byte, b.end_byte, SCOPE, node))
                    break

        def nodes(*keys: str) -> list[tuple[ts.Node, dict[str, list[ts.Node]]]]:
            out = [(c[k][0], c) for k in keys for c in groups.get(k, {}).values()]
            return sorted(out, key=lambda p: p[0].start_byte)

        defs = nodes("definition.function", "definition.class")
        imports = nodes("import")
        assigns = nodes("assign", "with.item")
        envs = [(n, c) for n, c in nodes("env.read") if n.id not in skip]
        calls = nodes("reference.call")
        templates = {c["string.template"][0].id: c for c in groups.get("string.template", {}).values()}
        strings = [(n, c) for n, c in nodes("string") if n.id not in skip]
        points = [n for group in (defs, imports, assigns, envs, calls, strings) for n, _ in group]
        for n, f in zip(points, nest([*scopes, *ctx.frames()], [(n.start_byte, n.end_byte, False) for n in points]),
                        strict=True):
            self.frame_of[n.id] = f
        check = self.check
        for node, _ in defs:
            check()
            self._definition(node)
        for node, _ in imports:
            check()
            self._import(node)
        for node, _ in assigns:
            self._constant(node)
        for node, caps in envs:
            check()
            self._env_read(node, caps)
        self.env_spans.sort()
        for node, _ in assigns:
            check()
            if node.type == "with_item":
                self._with_item(node)
            else:
                self._assignment(node)
        for node, _ in calls:
            check()
            self._call(node)
        for node, _ in strings:
            check()
            self._string(node, templates.get(node.id))

    # -- scopes ------------------------------------------------------------------------

    def _scope(self, node: ts.Node) -> ts.Node | None:
        """Innermost def/class whose *body* holds ``node`` (decorators/defaults are outside)."""
        f = self.frame_of.get(node.id)
        return f.scope.node if f is not None and f.scope is not None else None

    def _caller(self, node: ts.Node) -> str:
        return self._qualname(self._scope(node))

    def _qualname(self, scope: ts.Node | None) -> str:
        d = self.defs.get(scope.id) if scope is not None else None
        return d.qualname if d is not None else ""

    # -- definitions -------------------------------------------------------------------

    def _definition(self, node: ts.Node) -> None:
        name = self.t(node.child_by_field_name("name"))
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
        if node.id in self.decorators:
            decos = sorted(self.decorators[node.id], key=lambda c: c.start_byte)
            d.attrs["decorators"] = [self.st.line(c).lstrip("@").strip() for c in decos]
        if is_class:
            sup = node.child_by_field_name("superclasses")
            d.attrs["bases"] = (
                [self.st.line(c) for c in sup.named_children if c.type != "comment"] if sup else []
            )
        else:
            d.params = self._params(node.child_by_field_name("parameters"))
            d.return_type = self.st.line(node.child_by_field_name("return_type"))
            if any(c.type == "async" for c in node.children):
                d.attrs["async"] = True
        self.defs[node.id] = d
        self.f.defs.append(d)

    def _params(self, params: ts.Node | None) -> list[Param]:
        out: list[Param] = []
        if params is None:
            return out
        for p in params.named_children:
            t = p.type
            if t in ("identifier", "list_splat_pattern", "dictionary_splat_pattern"):
                out.append(Param(self.t(p), ""))
            elif t == "typed_parameter":
                name = next((c for c in p.named_children if c.type != "type"), None)
                out.append(Param(self.t(name), self.st.line(p.child_by_field_name("type"))))
            elif t in ("default_parameter", "typed_default_parameter"):
                out.append(
                    Param(
                        self.t(p.child_by_field_name("name")),
                        self.st.line(p.child_by_field_name("type")),
                        self.st.line(p.child_by_field_name("value")),
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
        dots = self.t(prefix).count(".")
        name = next((c for c in rel.named_children if c.type == "dotted_name"), None)
        rest = "".join(self.t(name).split()) if name is not None else ""
        pkg = self._package()
        if dots > len(pkg):
            return "." * dots + rest  # beyond the top-level package: left as written
        base = pkg[: len(pkg) - (dots - 1)]
        return ".".join([*base, rest] if rest else base)

    def _import(self, node: ts.Node) -> None:
        scope = self._caller(node)

        def add(path: str, alias: str, at: ts.Node) -> None:
            self.f.imports.append(Import("import", path, alias, self.f.file, line(at), scope=scope))

        def dotted(n: ts.Node | None) -> str:
            return "".join(self.t(n).split())

        if node.type == "import_statement":
            for n in node.children_by_field_name("name"):
                if n.type == "aliased_import":
                    add(dotted(n.child_by_field_name("name")), self.t(n.child_by_field_name("alias")), n)
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
                add(base + sep + name, self.t(n.child_by_field_name("alias")), n)
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
            parts = _string_parts(node, self.st)
            if parts is not None:
                return parts[1]
        t = self.st.line(node)
        return self.consts.get(t, t)

    def _env_read(self, node: ts.Node, caps: dict[str, list[ts.Node]]) -> None:
        base, name = caps.get("env.base", [None])[0], caps.get("env.name", [None])[0]
        if base is None or name is None or not self._env_base_ok("".join(self.t(base).split())):
            return
        if node.type == "comparison_operator":
            ops = [self.t(c) for c in node.children_by_field_name("operators")]
            if not ops or ops[-1].split()[-1] != "in":
                return
        default = ""
        if "env.default" in caps:
            default = self.st.line(caps["env.default"][0])
        elif node.type == "call":
            args = node.child_by_field_name("arguments")
            pos = (
                [a for a in args.named_children if a.type not in ("keyword_argument", "comment")]
                if args
                else []
            )
            kw = [a for a in args.named_children if a.type == "keyword_argument"] if args else []
            if len(pos) > 1:
                default = self.st.line(pos[1])
            for k in kw:
                if self.t(k.child_by_field_name("name")) == "default":
                    default = self.st.line(k.child_by_field_name("value"))
        var = self._env_name(name)
        self.f.env_reads.append(
            EnvRead(var, self.f.file, line(node), self._caller(node), default, self.st.line(node))
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
        for name, pos in _identifiers(node, self.st):
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
            parts = _string_parts(right, self.st)
            if parts is not None and "f" not in parts[0]:
                self.consts[self.t(left)] = parts[1]

    def _value_type(self, value: ts.Node | None, fn: Definition | None) -> str:
        """Type text of a value: the callee of ``Callee(...)``, or a typed name's type."""
        if value is None:
            return ""
        if value.type == "await":
            value = value.named_children[0] if value.named_children else None
            if value is None:
                return ""
        if value.type == "call":
            return self.st.line(value.child_by_field_name("function"))
        if value.type == "identifier" and fn is not None:
            name = self.t(value)
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
        left, ann = node.child_by_field_name("left"), node.child_by_field_name("type")
        right = node.child_by_field_name("right")
        while right is not None and right.type == "assignment":  # a = b = value
            right = right.child_by_field_name("right")
        if left is None:
            return
        scope = self._scope(node)
        sdef = self.defs.get(scope.id) if scope is not None else None
        ann_text = self.st.line(ann)
        key = "".join(self.t(left).split())
        # values carrying env vars into later conditions
        env = self._env_in(right, scope) if right is not None else set()
        if env and (left.type == "identifier" or key.count(".") == 1):
            table_id = scope.id if scope is not None else 0
            if left.type == "attribute":
                # a definition (sdef) has a scope node
                cls_scope = self._scope(scope) if sdef is not None and sdef.kind == "python_fn" else None  # type: ignore[arg-type]
                table_id = cls_scope.id if cls_scope is not None else -1
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
            parts = _dotted(left, self.st)
            self_name = self._self_name(scope, sdef)  # type: ignore[arg-type]  # sdef is scope's definition
            cls_node = self._scope(scope) if self_name else None  # type: ignore[arg-type]
            cls = self.defs.get(cls_node.id) if cls_node is not None else None
            if (cls is not None and parts is not None and len(parts) == 2 and parts[0] == self_name and typ
                    and (ann_text or parts[1] not in cls.fields)):
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
            fn.locals.setdefault(self.t(ident), typ)

    # -- calls and their contexts ------------------------------------------------------

    def _call(self, node: ts.Node) -> None:
        fn = node.child_by_field_name("function")
        if fn is None:
            return
        kind, receiver = "call", ""
        if fn.type == "attribute":
            kind = "method"
            obj, attr = fn.child_by_field_name("object"), self.t(fn.child_by_field_name("attribute"))
            parts = _dotted(fn, self.st)
            if parts is not None:
                path, callee, receiver = parts, ".".join(parts), ".".join(parts[:-1])
            else:
                receiver = self.st.line(obj)
                path, callee = [receiver, attr], f"{receiver}.{attr}"
        else:
            parts = _dotted(fn, self.st)
            callee = ".".join(parts) if parts is not None else self.st.line(fn)
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
                contexts=list(self.ctx.of(self.frame_of.get(node.id))),
                text=self.st.line(node, 200),
            )
        )

    def _args(self, args: ts.Node | None) -> list[str]:
        if args is None:
            return []
        st = self.st
        if args.type != "argument_list":  # f(x for x in xs): the generator is the argument
            a, b = args.start_byte, args.end_byte
            a += self.src[a : a + 1] == b"("
            b -= b > a and self.src[b - 1 : b] == b")"
            return [st.line_range(a, b, ARG_LIMIT)]
        out = []
        for arg in args.named_children:
            if arg.type == "comment":
                continue
            if arg.type == "keyword_argument":
                name = st.text(arg.child_by_field_name("name"))
                out.append(one_line(f"{name}={st.line(arg.child_by_field_name('value'), ARG_LIMIT)}", ARG_LIMIT))
            else:
                out.append(st.line(arg, ARG_LIMIT))
        return out

    def _context_env(self, nodes: list[ts.Node], scope: Frame | None) -> list[str]:
        """Env vars read in the nodes of a context (condition, subject, guard…)."""
        sc = scope.node if scope is not None else None
        out: set[str] = set()
        for n in nodes:
            out |= self._env_in(n, sc)
        return sorted(out)

    # -- strings (weight-name candidates) ---------------------------------------------

    def _string(self, node: ts.Node, template: dict[str, list[ts.Node]] | None) -> None:
        parts = _string_parts(node, self.st)
        if parts is None:
            return
        prefix, content = parts
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
                    self.st.line(x, ARG_LIMIT) for x in a.named_children if x.type != "comment"
                ]
            else:
                args = [self.st.line(a, ARG_LIMIT)]
        self.f.strings.append(
            {"text": content, "line": line(node), "caller": self._caller(node), "macro": macro, "args": args}
        )
