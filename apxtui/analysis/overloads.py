"""C++ overloads at an ambiguous call: the candidate whose parameter types match the arguments.

Two ``rms_norm_bf16_kernel`` overloads, ``(…, uint32_t cols, uint32_t rows, …)`` and
``(…, int rows, int cols, …)``, are both visible at a launch; pairing the arguments with the
wrong one swaps their names.  :func:`best_candidates` scores each candidate by how many
arguments have a known type (declared parameter or local of the caller, a cast, a literal)
equal to the parameter's, and keeps the best when it is unique.  Heuristic, labelled so.
"""

from __future__ import annotations

import re
from typing import Any

from apxtui.analysis import types as ty

_CAST = re.compile(
    r"^\s*(?:static_cast|reinterpret_cast|const_cast)<\s*(.+?)\s*>\s*\(|^\s*\(\s*([\w:\s*]+?)\s*\)\s*[\w(]"
)


def arg_type(caller: Any, arg: str) -> str | None:
    """Canonical type of an argument expression, when the caller's declarations or the text show it."""
    a = arg.strip()
    m = _CAST.match(a)
    if m:
        t = m.group(1) or m.group(2)
        return ("ptr:" + (ty.canonical(t) or ty.strip_type(t))) if ty.is_pointer(t) else ty.canonical(t)
    if re.fullmatch(r"-?\d+[uU]?", a):
        return "u32" if a[-1] in "uU" else "i32"
    if re.fullmatch(r"-?\d*\.\d*f", a):
        return "f32"
    if re.fullmatch(r"[A-Za-z_]\w*", a) and caller is not None:
        t = caller.locals.get(a) or next((p.type for p in caller.params if p.name == a), None)
        if t:
            return ("ptr:" + (ty.canonical(t) or ty.strip_type(t))) if ty.is_pointer(t) else ty.canonical(t)
    return None


def param_type(t: str) -> str | None:
    return ("ptr:" + (ty.canonical(t) or ty.strip_type(t))) if ty.is_pointer(t) else ty.canonical(t)


def score(caller: Any, cand: Any, args: list[str]) -> int:
    """Arguments whose known type equals the candidate's parameter type; -1 when the arity differs."""
    if cand is None or len(cand.params) != len(args):
        return -1
    n = 0
    for p, a in zip(cand.params, args, strict=True):
        at = arg_type(caller, a)
        if at is not None and at == param_type(p.type):
            n += 1
    return n


def best_candidates(index: Any, caller_node: str, site: str, args: list[str]) -> set[str] | None:
    """Node ids of the best-matching candidates at ``site`` (None when the call is not ambiguous)."""
    g = index.graph
    cands = [v for _, v, e in g.out_edges(caller_node, data=True) if e.get("site") == site]
    if len(cands) < 2:
        return None
    caller = index.definition(caller_node)
    scores = {v: score(caller, index.definition(v), args) for v in cands}
    top = max(scores.values())
    best = {v for v, s in scores.items() if s == top}
    return best if top > 0 and len(best) < len(cands) else None
