"""Rust ``macro_rules!`` that generate functions: item-level invocations expanded before linking.

``impl Tensor { unary_op!(silu, Silu); }`` with ``macro_rules! unary_op { ($fn_name:ident,
$op_name:ident) => { pub fn $fn_name(&self) -> Result<Self> { … } } }`` defines
``Tensor::silu``: the invocation's arguments are bound to the first rule whose matcher is a
plain comma-separated list of ``$name:fragment`` with as many entries, the transcriber is
substituted and read as Rust inside the invocation's ``impl`` header, and the functions it
defines (with the calls in their bodies) are added to the file's facts at the invocation's
line (``macro``, ``macro_at``, ``macro_defs`` in their attributes).  Rules with repetitions
(``$( … )*``) or literal tokens in the matcher are not expanded.  The macro is looked up by
name in the invocation's file, then its crate, then the checkout, keeping every definition at that
level (:func:`macro_candidates`): definitions that expand alike are expanded once (``macro_defs``
lists them all), others each.  The body is extracted with its lines as in its definition
(``let`` positions, arms), its calls placed at the invocation (``macro_pos``: where in the body).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

from apxtui.facts import CallSite, Definition, FileFacts, Issue
from apxtui.index.tables import MacroRule, macro_candidates, module_macro_rules
from apxtui.parse import extract_file, languages

_BINDING = re.compile(r"^\$(\w+)\s*:\s*\w+$")


class RustMacros:
    """``macro_rules!`` definitions of the checkout, by name: from the symbol tables' ``macro_rules``
    (``table``, read as a whole) or gathered from every file's facts on first use."""

    def __init__(self, facts: Mapping[str, FileFacts], table: Mapping[str, list[MacroRule]] | None = None):
        self.facts = facts
        self._by_name: Mapping[str, list[MacroRule]] | None = table  # name → (file, crate, line, text)

    def table(self) -> Mapping[str, list[MacroRule]]:
        """Name → (file, crate, line, text) of every module-level ``macro_rules!``."""
        return self._table()

    def _table(self) -> Mapping[str, list[MacroRule]]:
        if self._by_name is None:
            t: dict[str, list[MacroRule]] = defaultdict(list)
            for f in self.facts.values():
                if f.lang == "rust":
                    for name, row in module_macro_rules(f):
                        t[name].append(row)
            self._by_name = t
        return self._by_name

    def lookup(self, name: str, file: str, crate: str) -> list[MacroRule]:
        """Every ``macro_rules! name`` an invocation in ``file`` (of crate ``crate``) may be (see
        :func:`macro_candidates`)."""
        return macro_candidates(self._table().get(name, ()), file, lambda r: r[1] == crate)


def path_templates(text: str) -> list[tuple[str, int]]:
    """``ffi::$ffi_fn(`` in a macro's first plain rule: (path prefix, argument index) pairs — the
    function an argument names, called inside the macro through a path."""
    for names, body in rules(text):
        if names is None:
            continue
        out = []
        for m in re.finditer(r"((?:\w+::)+)\$(\w+)\s*(?:::<[^()]*>)?\s*\(", body):
            if m.group(2) in names:
                out.append((m.group(1), names.index(m.group(2))))
        return out
    return []


_BODY_CALL = re.compile(r"(?<![\w$:])((?:\w+::)+\w+)\s*(?:::<[^()]*>)?\s*\(")


def body_calls(text: str) -> tuple[dict[str, int], int]:
    """Paths called literally (``ffi::launch_bf16(``, no ``$`` in them) in a macro's rules: path →
    how many rules call it, and the number of rules."""
    got = rules(text)
    out: dict[str, int] = {}
    for _, body in got:
        for path in dict.fromkeys(m.group(1) for m in _BODY_CALL.finditer(body)):
            out[path] = out.get(path, 0) + 1
    return out, len(got)


@lru_cache(maxsize=512)
def rules(text: str) -> list[tuple[list[str] | None, str]]:
    """(matcher parameter names, transcriber text) of each rule of a ``macro_rules!`` text; a rule
    whose matcher is not a plain comma-separated list of ``$name:fragment`` has no names (None)."""
    tree = languages.parser("rust").parse(text.encode("utf-8", "replace"))
    src = text.encode("utf-8", "replace")
    out: list[tuple[list[str] | None, str]] = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type == "macro_rule":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if left is None or right is None:
                continue
            inner = src[left.start_byte + 1 : left.end_byte - 1].decode("utf-8", "replace")
            parts = [p.strip() for p in inner.split(",")]
            if parts and parts[-1] == "":
                parts.pop()
            names = [m.group(1) for p in parts if (m := _BINDING.match(p))]
            body = src[right.start_byte + 1 : right.end_byte - 1].decode("utf-8", "replace")
            out.append((names if len(names) == len(parts) else None, body))
        elif n.type in ("source_file", "macro_definition"):
            stack.extend(reversed(n.named_children))
    return out


def _args(text: str) -> list[str]:
    """Top-level comma-separated arguments of a token tree ``(a, b<C, D>, e)``."""
    inner = text.strip()[1:-1]
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in inner:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _substitute(text: str, args: list[str]) -> tuple[str, int] | None:
    """The transcriber of the first rule of ``macro_rules!`` ``text`` taking ``len(args)`` plain arguments
    and defining a ``fn``, with the arguments substituted, and the line (from 0) in ``text`` it starts on;
    None when no rule fits."""
    for names, transcriber in rules(text):
        if names is not None and len(names) == len(args) and re.search(r"\bfn\b", transcriber):
            body = transcriber
            for n, a in sorted(zip(names, args, strict=True), key=lambda x: -len(x[0])):
                a = " ".join(a.split()) if "\n" in a else a  # (one line: the body's lines stay the definition's)
                body = re.sub(rf"\${re.escape(n)}\b", a.replace("\\", "\\\\"), body)
            at = text.find(transcriber)
            return body, text.count("\n", 0, at) if at >= 0 else 0
    return None


def expand_rust_file(f: FileFacts, macros: RustMacros) -> FileFacts:
    """``f`` with the functions its item-level ``macro_rules!`` invocations define added."""
    invs = [c for c in f.calls if c.kind == "macro" and c.attrs.get("item_level") and "macro_text" in c.attrs
            and "macro_expanded" not in c.attrs]
    if not invs:
        return f
    defs: list[Definition] = []
    calls: list[CallSite] = []
    issues: list[Issue] = []
    done: set[int] = set()
    for k, c in enumerate(invs):
        name = c.callee.split("::")[-1].rstrip("!")
        module = c.attrs.get("module", f.module)
        args = _args(c.attrs["macro_text"])
        bodies: dict[str, list[tuple[str, int, int]]] = {}  # expanded body → its definitions (file, line, body line)
        for mfile, _, mline, text in macros.lookup(name, f.file, module.split("::")[0]):
            got_body = _substitute(text, args)
            if got_body is not None:
                bodies.setdefault(got_body[0], []).append((mfile, mline, mline + got_body[1]))
        for j, (body, where) in enumerate(bodies.items()):  # alike definitions expand once; others each
            header = c.attrs.get("impl_header", "")
            # the body's lines as in its definition (its `let`s and arms are placed where they are written)
            pad = "\n" * max(0, where[0][2] - (2 if header else 1))
            snippet = pad + (f"{header} {{\n{body}\n}}\n" if header else body + "\n")
            got = extract_file(f.file, snippet.encode("utf-8", "replace"), "rust", module)
            attrs = {"macro": f"{name}!", "macro_at": f"{f.file}:{c.line}",
                     "macro_defs": [f"{mf}:{ml}" for mf, ml, _ in where], "macro_args": args}
            for d in got.defs:
                if d.kind == "rust_fn":
                    defs.append(replace(d, line=c.line, end_line=c.line, attrs={**d.attrs, **attrs}))
            for i, cs in enumerate(got.calls):
                site = f"r{k}.{i}" if j == 0 else f"r{k}.{j}.{i}"
                calls.append(replace(cs, line=c.line, col=c.col, contexts=list(cs.contexts),
                                     attrs={**cs.attrs, **attrs, "macro_site": site, "macro_pos": [cs.line, cs.col]}))
            done.add(id(c))
    if not done:
        return f
    kept = [replace(c, attrs={**c.attrs, "macro_expanded": True}) if id(c) in done else c for c in f.calls]
    return replace(f, defs=sorted([*f.defs, *defs], key=lambda d: (d.line, d.end_line)),
                   calls=sorted([*kept, *calls], key=lambda c: (c.line, c.col)), issues=[*f.issues, *issues])
