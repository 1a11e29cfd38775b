"""Rust ``cfg`` predicates: parse ``all(…)``/``any(…)``/``not(…)``/``name``/``key = "value"``
and evaluate them three-valued (True, False, None = undecided).

The value of one option comes from a callback ``lookup(name, value)`` (``value`` is
None for a bare name) returning True/False/None, so the caller decides what is known.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from apxtui.errors import CfgSyntaxError

Tri = bool | None
Lookup = Callable[[str, str | None], Tri]

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<p>[(),=]))')


@dataclass(frozen=True)
class Opt:
    name: str
    value: str | None = None


@dataclass(frozen=True)
class Op:
    op: str  # all | any | not
    args: tuple[Expr, ...]


Expr = Opt | Op


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CfgSyntaxError(f"cannot read cfg predicate at {text[pos:pos + 20]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def parse(text: str) -> Expr:
    """Parse a predicate (the text inside ``#[cfg(…)]`` or ``cfg!(…)``); ``cfg(…)`` wrappers are peeled."""
    t = text.strip()
    for prefix in ("#[cfg(", "cfg!(", "cfg("):
        if t.startswith(prefix):
            t = t[len(prefix):]
            t = t[:-2] if prefix == "#[cfg(" and t.endswith(")]") else t[:-1] if t.endswith(")") else t
    toks = _tokens(t)
    expr, i = _parse(toks, 0)
    if i != len(toks):
        raise CfgSyntaxError(f"trailing text in cfg predicate {text!r}")
    return expr


def _parse(toks: list[tuple[str, str]], i: int) -> tuple[Expr, int]:
    if i >= len(toks) or toks[i][0] != "id":
        raise CfgSyntaxError("expected a cfg option name")
    name = toks[i][1]
    i += 1
    if name in ("all", "any", "not") and i < len(toks) and toks[i][1] == "(":
        i += 1
        args: list[Expr] = []
        while i < len(toks) and toks[i][1] != ")":
            a, i = _parse(toks, i)
            args.append(a)
            if i < len(toks) and toks[i][1] == ",":
                i += 1
        if i >= len(toks):
            raise CfgSyntaxError("unclosed parenthesis")
        if name == "not" and len(args) != 1:
            raise CfgSyntaxError("not() takes exactly one predicate")
        return Op(name, tuple(args)), i + 1
    if i < len(toks) and toks[i][1] == "=":
        if i + 1 >= len(toks) or toks[i + 1][0] != "str":
            raise CfgSyntaxError(f"expected a string after {name} =")
        return Opt(name, toks[i + 1][1][1:-1]), i + 2
    return Opt(name), i


def evaluate(expr: Expr | str, lookup: Lookup) -> Tri:
    """Three-valued evaluation (Kleene logic); an unparsable text is undecided."""
    if isinstance(expr, str):
        try:
            expr = parse(expr)
        except CfgSyntaxError:
            return None
    if isinstance(expr, Opt):
        return lookup(expr.name, expr.value)
    vals = [evaluate(a, lookup) for a in expr.args]
    if expr.op == "not":
        return None if vals[0] is None else not vals[0]
    if expr.op == "all":
        return False if False in vals else (None if None in vals else True)
    return True if True in vals else (None if None in vals else False)


def options(expr: Expr | str) -> list[Opt]:
    """Every option the predicate mentions, in order."""
    if isinstance(expr, str):
        try:
            expr = parse(expr)
        except CfgSyntaxError:
            return []
    if isinstance(expr, Opt):
        return [expr]
    return [o for a in expr.args for o in options(a)]
