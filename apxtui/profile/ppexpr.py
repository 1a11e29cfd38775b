"""C preprocessor ``#if`` expressions evaluated three-valued.

Values are integers or None (unknown).  ``lookup(name)`` returns ``(defined, value)``:
``defined`` True/False/None and the macro's integer value when known.  An identifier
that is not a macro evaluates to 0 (as in C) only when ``lookup`` says it is not
defined; unknown stays unknown, and ``&&``/``||``/``?:`` short-circuit on known sides.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from apxtui.errors import PPSyntaxError

Val = int | None
Lookup = Callable[[str], tuple[bool | None, int | None]]

_TOK = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:()]))"
)

_BIN = {  # precedence, lowest first
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}


def _tokens(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/|//.*", " ", text)
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOK.match(text, pos)
        if not m:
            raise PPSyntaxError(f"cannot read #if expression at {text[pos:pos + 20]!r}")
        out.append(m.group("num") or m.group("id") or m.group("op"))
        pos = m.end()
    return out


class _P:
    def __init__(self, toks: list[str], lookup: Lookup):
        self.t, self.i, self.lookup = toks, 0, lookup

    def peek(self) -> str | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise PPSyntaxError(f"expected {want or 'a token'}")
        self.i += 1
        return tok

    def expr(self, min_prec: int = 0) -> Val:
        left = self.unary()
        while True:
            op = self.peek()
            if op == "?" and min_prec == 0:
                self.take()
                a = self.expr()
                self.take(":")
                b = self.expr()
                left = None if left is None else (a if left else b)
                continue
            prec = _BIN.get(op or "")
            if prec is None or prec <= min_prec:
                return left
            self.take()
            right = self.expr(prec)
            left = _binop(op or "", left, right)

    def unary(self) -> Val:
        tok = self.take()
        if tok == "(":
            v = self.expr()
            self.take(")")
            return v
        if tok in ("!", "~", "-", "+"):
            v = self.unary()
            if v is None:
                return None
            return {"!": int(not v), "~": ~v, "-": -v, "+": v}[tok]
        if tok == "defined":
            paren = self.peek() == "("
            if paren:
                self.take()
            name = self.take()
            if paren:
                self.take(")")
            d, _ = self.lookup(name)
            return None if d is None else int(d)
        if tok[0].isdigit():
            return int(tok, 0) if not tok.startswith("0") or tok.lower().startswith("0x") or tok == "0" else int(tok, 8)
        if re.match(r"[A-Za-z_]", tok):
            if self.peek() == "(":  # function-like macro call: unknown
                depth = 0
                while self.peek() is not None:
                    t = self.take()
                    depth += t == "("
                    depth -= t == ")"
                    if depth == 0:
                        break
                return None
            d, v = self.lookup(tok)
            if d is False:
                return 0
            return v if d else None
        raise PPSyntaxError(f"unexpected {tok!r}")


def _binop(op: str, a: Val, b: Val) -> Val:
    if op == "&&":
        if a == 0 or b == 0:
            return 0
        return None if a is None or b is None else 1
    if op == "||":
        if (a is not None and a != 0) or (b is not None and b != 0):
            return 1
        return None if a is None or b is None else 0
    if a is None or b is None:
        return None
    if op in ("/", "%") and b == 0:
        return None
    return {
        "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
        ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
        "<<": lambda: a << b, ">>": lambda: a >> b, "+": lambda: a + b, "-": lambda: a - b,
        "*": lambda: a * b, "/": lambda: int(a / b), "%": lambda: a % b,
    }[op]()


def evaluate(text: str, lookup: Lookup) -> bool | None:
    """Truth of an ``#if``/``#elif`` condition (``defined(X)`` texts from ``#ifdef`` included)."""
    try:
        toks = _tokens(text)
        if not toks:
            return None
        p = _P(toks, lookup)
        v = p.expr()
        if p.peek() is not None:
            return None
    except (PPSyntaxError, ValueError):
        return None
    return None if v is None else bool(v)


def identifiers(text: str) -> list[str]:
    """Macro names an ``#if`` condition mentions (``defined`` excluded)."""
    try:
        toks = _tokens(text)
    except PPSyntaxError:
        return []
    return list(dict.fromkeys(t for t in toks if re.match(r"[A-Za-z_]", t) and t != "defined"))
