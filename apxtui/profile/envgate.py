"""Environment gates in branch conditions, evaluated for given variable values.

``evaluate(cond, env, lang, cfg)`` returns True/False when every leaf of the condition
is an environment read the profile decides (the variable's value, or unset when the
profile does not set it, so the code's default applies) or a ``cfg!(…)``; None when
any needed leaf is something else (a runtime condition).
"""

from __future__ import annotations

import re
from collections.abc import Callable

Tri = bool | None

_RUST_READ = re.compile(r'(?:std::)?env::var(?:_os)?\(\s*"([^"]+)"\s*\)')
_PY_READ = re.compile(
    r'os\.(?:environ\.get|getenv)\(\s*["\']([^"\']+)["\']\s*(?:,\s*(["\'][^"\']*["\']|None|\w+))?\s*\)'
    r'|os\.environ\[\s*["\']([^"\']+)["\']\s*\]'
)
_C_READ = re.compile(r'(?:std::)?getenv\(\s*"([^"]+)"\s*\)')
_LIT = r'"((?:[^"\\]|\\.)*)"'


def split_top(text: str, ops: tuple[str, ...]) -> tuple[str, list[str]] | None:
    """Split ``text`` on the first of ``ops`` found at paren depth 0 (all parts on that op)."""
    for op in ops:
        parts, depth, cur, i, quote = [], 0, [], 0, ""
        while i < len(text):
            ch = text[i]
            if quote:
                cur.append(ch)
                if ch == "\\" and i + 1 < len(text):
                    cur.append(text[i + 1])
                    i += 2
                    continue
                if ch == quote:
                    quote = ""
            elif ch in "\"'" and not (ch == "'" and re.match(r"'[a-z_]+\b(?!')", text[i:])):
                quote = ch
                cur.append(ch)
            elif ch in "([{":
                depth += 1
                cur.append(ch)
            elif ch in ")]}":
                depth -= 1
                cur.append(ch)
            elif depth == 0 and text.startswith(op, i) and (op.isalpha() is False or _word_at(text, i, op)):
                parts.append("".join(cur))
                cur = []
                i += len(op)
                continue
            else:
                cur.append(ch)
            i += 1
        parts.append("".join(cur))
        if len(parts) > 1:
            return op, [p.strip() for p in parts]
    return None


def _word_at(text: str, i: int, op: str) -> bool:
    before = text[i - 1] if i > 0 else " "
    after = text[i + len(op)] if i + len(op) < len(text) else " "
    return not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")


def _strip_parens(t: str) -> str:
    t = t.strip()
    while t.startswith("(") and t.endswith(")"):
        depth, close = 0, -1
        for i, ch in enumerate(t):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                close = i
                break
        if close != len(t) - 1:
            break
        t = t[1:-1].strip()
    return t


def evaluate(cond: str, env: dict[str, str | None], lang: str, cfg: Callable[[str], Tri] | None = None) -> Tri:
    """Truth of ``cond`` with ``env`` (name → value, None = unset); None when not decidable."""
    t = _strip_parens(cond)
    for ops in (("||", " or "), ("&&", " and ")):
        sp = split_top(t, ops)
        if sp:
            op, parts = sp
            vals = [evaluate(p, env, lang, cfg) for p in parts]
            if op.strip() in ("||", "or"):
                return True if True in vals else (None if None in vals else False)
            return False if False in vals else (None if None in vals else True)
    if t.startswith("!") and not t.startswith("!="):
        v = evaluate(t[1:], env, lang, cfg)
        return None if v is None else not v
    if lang == "python" and t.startswith("not "):
        v = evaluate(t[4:], env, lang, cfg)
        return None if v is None else not v
    return _leaf(t, env, lang, cfg)


def _leaf(t: str, env: dict[str, str | None], lang: str, cfg: Callable[[str], Tri] | None) -> Tri:
    m = re.fullmatch(r"cfg!\((.*)\)", t, re.S)
    if m:
        return cfg(m.group(1)) if cfg is not None else None
    if lang == "rust":
        return _rust(t, env)
    if lang == "python":
        return _python(t, env)
    return _c(t, env)


def _rust(t: str, env: dict[str, str | None]) -> Tri:
    m = re.fullmatch(r"let\s+(?:Ok|Some)\s*\(\s*\w+\s*\)\s*=\s*(.+)", t, re.S)
    if m:
        r = _RUST_READ.fullmatch(m.group(1).strip())
        return None if r is None else env.get(r.group(1)) is not None
    m = _RUST_READ.match(t)
    if m is None:
        return None
    val = env.get(m.group(1))
    rest = re.sub(r"\s+", " ", t[m.end():]).strip()
    if rest in (".is_ok()", ".is_some()"):
        return val is not None
    if rest in (".is_err()", ".is_none()"):
        return val is None
    m2 = re.fullmatch(r"(?:\.ok\(\))?\.as_deref\(\) ?(==|!=) ?(?:Ok|Some)\(" + _LIT + r"\)", rest)
    if m2:
        eq = val == m2.group(2)
        return eq if m2.group(1) == "==" else not eq
    m2 = re.fullmatch(r"\.(?:unwrap_or_default\(\)|unwrap_or\(" + _LIT + r"(?:\.(?:into|to_string|to_owned)\(\))?\))"
                      r"(?:\.as_str\(\))? ?(==|!=) ?" + _LIT, rest)
    if m2:
        v = val if val is not None else (m2.group(1) if m2.group(1) is not None else "")
        eq = v == m2.group(3)
        return eq if m2.group(2) == "==" else not eq
    m2 = re.fullmatch(r"\.map\(\|(\w+)\| ?(.+)\)\.unwrap_or\((true|false)\)", rest)
    if m2:
        return _closure(m2.group(1), m2.group(2), val) if val is not None else m2.group(3) == "true"
    m2 = re.fullmatch(r"\.map\(\|(\w+)\| ?(.+)\)\.unwrap_or_default\(\)", rest)
    if m2:
        return _closure(m2.group(1), m2.group(2), val) if val is not None else False
    m2 = re.fullmatch(r"\.is_ok_and\(\|(\w+)\| ?(.+)\)", rest)
    if m2:
        return _closure(m2.group(1), m2.group(2), val) if val is not None else False
    m2 = re.fullmatch(r"\.map_or\((true|false), ?\|(\w+)\| ?(.+)\)", rest)
    if m2:
        return _closure(m2.group(2), m2.group(3), val) if val is not None else m2.group(1) == "true"
    return None


def _closure(var: str, body: str, val: str) -> Tri:
    """A closure body over the variable's value: comparisons with literals, ||, &&, !."""
    t = _strip_parens(body.strip())
    for ops in (("||",), ("&&",)):
        sp = split_top(t, ops)
        if sp:
            vals = [_closure(var, p, val) for p in sp[1]]
            if sp[0] == "||":
                return True if True in vals else (None if None in vals else False)
            return False if False in vals else (None if None in vals else True)
    if t.startswith("!") and not t.startswith("!="):
        v = _closure(var, t[1:], val)
        return None if v is None else not v
    pre = re.escape(var) + r"(?:\.(?:as_str|trim|as_ref|to_lowercase|to_ascii_lowercase)\(\))*"
    m = re.fullmatch(r"\*?" + pre + r" ?(==|!=) ?\*?" + _LIT, t)
    if m:
        sv = val.strip() if ".trim()" in t else val
        sv = sv.lower() if "lowercase" in t else sv
        return (sv == m.group(2)) if m.group(1) == "==" else (sv != m.group(2))
    m = re.fullmatch(r"matches!\(" + pre + r", ?(.+)\)", t)
    if m:
        lits = [x.strip() for x in m.group(1).split("|")]
        if all(re.fullmatch(_LIT, x) for x in lits):
            return val in [x[1:-1] for x in lits]
    if re.fullmatch(pre + r"\.is_empty\(\)", t):
        return val == ""
    return None


def _python(t: str, env: dict[str, str | None]) -> Tri:
    m = re.fullmatch(r'["\']([^"\']+)["\'] (not )?in os\.environ', t)
    if m:
        v = env.get(m.group(1)) is not None
        return not v if m.group(2) else v
    m = _PY_READ.match(t)
    if m is None:
        return None
    name = m.group(1) or m.group(3)
    default = m.group(2)
    val = env.get(name)
    if val is None:
        if m.group(3):
            return None  # os.environ[...] raises when unset
        if default is None or default == "None":
            val_or_none: str | None = None
        elif default[0] in "\"'":
            val_or_none = default[1:-1]
        else:
            return None
    else:
        val_or_none = val
    rest = t[m.end():].strip()
    if rest == "":
        return bool(val_or_none)
    if rest in ("is None", "is not None"):
        return (val_or_none is None) == (rest == "is None")
    m2 = re.fullmatch(r"(==|!=)\s*[\"']([^\"']*)[\"']", rest)
    if m2:
        eq = val_or_none == m2.group(2)
        return eq if m2.group(1) == "==" else not eq
    return None


def _c(t: str, env: dict[str, str | None]) -> Tri:
    m = _C_READ.fullmatch(t)
    if m:
        return env.get(m.group(1)) is not None
    m = re.fullmatch(r"(?:std::)?getenv\(\s*\"([^\"]+)\"\s*\)\s*(==|!=)\s*(?:nullptr|NULL|0)", t)
    if m:
        setv = env.get(m.group(1)) is not None
        return setv if m.group(2) == "!=" else not setv
    return None


def env_names(cond: str) -> list[str]:
    """Variables a condition reads directly."""
    names = [m.group(1) for m in _RUST_READ.finditer(cond)] + [m.group(1) for m in _C_READ.finditer(cond)]
    names += [m.group(1) or m.group(3) for m in _PY_READ.finditer(cond)]
    return list(dict.fromkeys(names))
