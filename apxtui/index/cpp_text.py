"""C/C++ type and expression text, as the C/C++ resolver reads it: literals and casts, declared
types through aliases (``_norm``), arithmetic result types, template argument lists, ``#if``
conditions and a definition's arity.  Pure functions on strings (and facts records), private to
this module and :mod:`apxtui.index.resolve_cuda`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from apxtui.facts import Context, Definition
from apxtui.index.tables import ALIAS_ARMS
from apxtui.parse.util import split_commas

_INT_LIT_RE = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|\d+)([uU]?[lL]{0,2}|[lL]{0,2}[uU]?)$")
_FLOAT_LIT_RE = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?[fF]$")
_DOUBLE_LIT_RE = re.compile(r"^[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?$")
_CAST_RE = re.compile(r"^(?:static_cast|reinterpret_cast|const_cast)\s*<\s*(.+?)\s*>\s*\(.*\)$"
                      r"|^\(\s*([\w:\s*&<>,]+?)\s*\)\s*[\w(]")


_FIELD_RE = re.compile(r"(.+?)\s*(\.|->)\s*([A-Za-z_]\w*)")
_ELEMENT_RE = re.compile(r"([A-Za-z_][\w.>-]*)\s*\[[^\[\]]*\]")
_BUILTIN_RE = re.compile(
    r"(unsigned |signed )?(char|short|int|long|long long|float|double|bool|void)|u?int(8|16|32|64)_t|size_t"
    r"|(u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]|__half2?|half2?|__nv_bfloat162?|nv_bfloat162?"
    r"|__nv_fp8_e4m3|__nv_fp8_e5m2")


#: Arithmetic types by conversion rank (the usual arithmetic conversions between them).
_ARITH_RANK = {"int32_t": 1, "uint32_t": 2, "int64_t": 3, "uint64_t": 4, "float": 5, "double": 6}
_PROMOTED = {"int8_t", "uint8_t", "int16_t", "uint16_t", "char", "bool"}
#: Types whose operators (CUDA's headers) give the same type when both operands have it.
_SAME_OPERAND = {"__half", "__half2", "__nv_bfloat16", "__nv_bfloat162", "float2", "float4"}


def _arith_result(types: list[str]) -> str:
    """The type of ``a + b - c`` (or ``-a``) from its operands' types; "" when one is unknown or a
    conversion the rule does not model (a vector, a class type, pointer arithmetic)."""
    if not types or not all(types):
        return ""
    if all(t == types[0] for t in types) and types[0] in _SAME_OPERAND:
        return types[0]
    ranks = [_ARITH_RANK.get("int32_t" if t in _PROMOTED else t) for t in types]
    if any(r is None for r in ranks):
        return ""
    best = max(r for r in ranks if r is not None)
    return next(t for t, r in _ARITH_RANK.items() if r == best)


def _balanced(t: str, open_: str = "([{", close: str = ")]}", closed: bool = True) -> bool:
    """No bracket of ``t`` closes before it opens (and, ``closed``, every one that opens closes)."""
    depth = 0
    for ch in t:
        depth += ch in open_
        depth -= ch in close
        if depth < 0:
            return False
    return depth == 0 or not closed


def _split_arith(a: str) -> list[str] | None:
    """``x * s - y`` → its operands at the loosest level (``+``/``-``, else ``*``/``/``) outside
    brackets; None when the text is not such a binary expression (or also holds another operator)."""
    if any(op in a for op in ("<<", ">>", "&&", "||", "==", "!=", "<=", ">=", "?", "->", "%", "^", "|", " & ")) \
            or re.search(r"[<>!=]", a):
        return None
    for ops in ("+-", "*/"):
        cuts, depth = [], 0
        for k, ch in enumerate(a):
            depth += ch in "([{"
            depth -= ch in ")]}"
            if depth or ch not in ops or k == 0:
                continue
            before = a[:k].rstrip()
            if not before or not re.search(r"[\w)\].]$", before) or a[k + 1 : k + 2] == ch:
                continue  # unary, or ++ / --
            if ch in "+-" and re.search(r"(?<![\w.])\d+(\.\d*)?[eE]$", before):
                continue  # an exponent: 1e-5
            cuts.append(k)
        if cuts:
            bounds = [-1, *cuts, len(a)]
            return [a[x + 1 : y].strip() for x, y in zip(bounds, bounds[1:], strict=False)]
    return None


def _file_under(verdict: str | None, x: str, match: list[str], unknown: list[str], assumed: list[str]) -> None:
    """Put ``x`` in the list its verdict names (one that surely differs in none)."""
    if verdict == "same":
        match.append(x)
    elif verdict is None:
        unknown.append(x)
    elif verdict == "assumed":
        assumed.append(x)


def _literal(t: str) -> str | None:
    """An integer or boolean literal's value, as text."""
    if t in ("true", "false"):
        return "1" if t == "true" else "0"  # as a bool or an integer argument alike
    m = _INT_LIT_RE.match(t)
    if m:
        try:
            return str(int(t.rstrip("uUlL"), 0))
        except ValueError:
            return None
    return None


def _arg_type(arg: str, caller: Definition | None) -> str:
    """The declared type of an argument expression, where it is plain to see."""
    a = arg.strip()
    m = _INT_LIT_RE.match(a)
    if m:
        suffix = m.group(2).lower()
        return ("unsigned " if "u" in suffix else "") + ("long" if "l" in suffix else "int")
    if _FLOAT_LIT_RE.match(a):
        return "float"
    if _DOUBLE_LIT_RE.match(a):
        return "double"
    if a in ("true", "false"):
        return "bool"
    if a == "nullptr":
        return "nullptr"
    m = _CAST_RE.match(a)
    if m:
        return m.group(1) or m.group(2) or ""
    m = _FUNCTIONAL_CAST_RE.fullmatch(a)
    if m and _balanced(m.group(2)):
        return m.group(1)  # `float(x)`: a built-in type applied is a conversion to it
    if caller is not None and re.fullmatch(r"\w+", a):
        for p in caller.params:
            if p.name == a:
                return p.type
        return caller.locals.get(a, "")
    return ""


#: Built-in arithmetic types (after :func:`_norm`) and the CUDA half/bfloat16 classes.
_ARITHMETIC = {"bool", "char", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
               "uint64_t", "long", "unsigned long", "long long", "unsigned long long", "size_t", "float", "double"}
_HALF_CLASSES = {"__half", "__half2", "__nv_bfloat16", "__nv_bfloat162"}
_FUNCTIONAL_CAST_RE = re.compile(r"(float|double|int|unsigned|bool|char|long|size_t|u?int(?:8|16|32|64)_t)\((.*)\)")


def _conversion_rank(at: str, pt: str) -> int:
    """How an argument of type ``at`` reaches a parameter of another type ``pt``: 1 a standard
    conversion (between built-in arithmetic types) or not known, 2 a user-defined one (a built-in
    arithmetic type to or from CUDA's ``__half``/``__nv_bfloat16`` classes: their constructors and
    conversion operators) — worse than any standard conversion."""
    if (at in _ARITHMETIC and pt in _HALF_CLASSES) or (at in _HALF_CLASSES and pt in _ARITHMETIC):
        return 2
    return 1


def _pp_literals(ctxs: list[Context]) -> dict[str, set[bool]]:
    """The conditions ``#if`` arms require, by their text: {condition: {True (holds) / False (fails)}}
    (an ``#else`` or ``#elif`` arm requires the earlier conditions of its chain to fail)."""
    out: dict[str, set[bool]] = {}
    for c in ctxs:
        for text, holds in ([] if c.text == "else" else [(c.text, True)]) + [(n, False) for n in c.negated]:
            key, flip = _pp_key(text)
            out.setdefault(key, set()).add(holds != flip)
    return out


def _pp_key(cond: str) -> tuple[str, bool]:
    """A condition's text for comparison (spaces and enclosing brackets dropped, ``defined X`` as
    ``defined(X)``) and whether it was negated (``!defined(X)``, ``!(A)``)."""
    t = re.sub(r"\s+", "", re.sub(r"\bdefined\s+(\w+)", r"defined(\1)", cond))
    flip = False
    while True:
        if t.startswith("(") and t.endswith(")") and _balanced(t[1:-1]):
            t = t[1:-1]
        elif t.startswith("!") and (re.fullmatch(r"!defined\(\w+\)", t) or t[1:2] == "(" and t.endswith(")")
                                    and _balanced(t[2:-1])):
            t, flip = t[1:], not flip
        else:
            return t, flip


def _declared(name: str, caller: Definition) -> str:
    """The declared type of a parameter or local named ``name`` ("" when not one)."""
    if not re.fullmatch(r"\w+", name):
        return ""
    for p in caller.params:
        if p.name == name:
            return p.type
    return caller.locals.get(name, "")


def _split_template(t: str) -> tuple[str, list[str]]:
    """``ns::tile<16, 8, int>`` → (``ns::tile``, [``16``, ``8``, ``int``]); (t, []) without arguments."""
    t = re.sub(r"\b(const|volatile)\b", "", t).strip()
    lt = t.find("<")
    if lt < 0 or not t.endswith(">"):
        return t, []
    inner = t[lt + 1 : -1]
    if not _balanced(inner, "<([{", ">)]}", closed=False):
        return t, []
    args = [a.strip() for a in split_commas(inner, "<([{", ">)]}")]
    return t[:lt].strip(), [a for a in args if a]


def _is_arms(t: str) -> bool:
    """Is ``t`` (from :func:`_norm`) an alias whose ``#if`` arms disagree (``(one of: A | B)``)?"""
    return t.startswith("(" + ALIAS_ARMS)


def _bare_type(t: str) -> str:
    """``typename cutlass::Gemm<A, B>*`` → ``cutlass::Gemm``: the type's name without qualifiers,
    template arguments, pointers or references."""
    t = re.sub(r"\b(typename|struct|class|const|volatile)\b", "", t)
    t = re.sub(r"<.*>", "", t)
    return t.replace("*", "").replace("&", "").replace(" ", "").removeprefix("::")


def _norm(ty: str, typedefs: Mapping[str, str]) -> str:
    """A type for comparison: aliases expanded, ``const``/``volatile``/references and spaces dropped."""
    t = ty.strip()
    for _ in range(4):
        base = t.replace("const ", "").replace("volatile ", "").strip().rstrip("&").strip()
        bare = base.rstrip("*").strip()
        if _is_arms(f"({typedefs.get(bare, '')})"):
            return f"({typedefs[bare]})"  # its arms disagree: which type is not known
        if bare in typedefs and typedefs[bare] != bare:
            t = typedefs[bare] + base[len(bare):]
            continue
        break
    t = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict)\b", "", t).replace("&", "")
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s*\*\s*", "*", t)
    bare = t.rstrip("*")
    return _SAME_TYPE.get(bare, bare) + t[len(bare):]


#: Spellings of one type (CUDA's headers: ``uint32_t`` is ``unsigned int``, ``half`` is ``__half``).
_SAME_TYPE = {"unsigned int": "uint32_t", "unsigned": "uint32_t", "int": "int32_t", "signed int": "int32_t",
              "unsigned short": "uint16_t", "short": "int16_t", "unsigned char": "uint8_t", "signed char": "int8_t",
              "half": "__half", "half2": "__half2", "nv_bfloat16": "__nv_bfloat16",
              "nv_bfloat162": "__nv_bfloat162"}
#: Element type of the CUDA vector types' ``x``/``y``/``z``/``w`` fields.
_VECTOR_FIELD = {"uint": "uint32_t", "int": "int32_t", "float": "float", "double": "double", "ushort": "uint16_t",
                 "short": "int16_t", "uchar": "uint8_t", "char": "char", "__half": "__half",
                 "__nv_bfloat16": "__nv_bfloat16"}
_VECTOR_RE = re.compile(r"(uint|int|float|double|ushort|short|uchar|char)([1-4])|(__half|__nv_bfloat16)(2)")


def _arity_fits(d: Definition, n: int) -> bool:
    params = d.params
    if any(p.type.endswith("...") for p in params):
        return n >= len(params) - 1
    if d.attrs.get("explicit_specialization"):
        return n <= len(params)  # its default arguments are the primary template's, not written here
    required = sum(1 for p in params if not p.default)
    return required <= n <= len(params)
