"""Hazards inside a capture body, one entry per site: the paths that reach it and the guards on them.

A body reaches the same ``cudaMalloc`` along many call paths.  :func:`group` keeps one entry
per (kind, api, site) with the number of paths, and decides whether the site is reached only
under a guard: a branch arm on the path whose dispatch point does not lead to the site on
every arm (an ``if`` whose ``else`` does not allocate).  Arms of an ambiguous call
(``candidates``) are not guards, nor is a branch all of whose arms reach the site.

:func:`wrapper_notes` adds what the body's wrappers tell about a guard: a body run inside
``kernels::with_workspace(&ws, || …)``, whose helpers install a thread-local/static
(``ACTIVE_WORKSPACE.with(|a| a.replace(…))``) that the guarded function reads before its
``workspace.is_null()`` test.  Heuristic, and labelled so.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import replace
from typing import Any, NamedTuple

from apxtui.analysis.capturefacts import Hazard, WrapperNote
from apxtui.analysis.evidence import HEURISTIC, loc

_STATE = re.compile(r"^[A-Z][A-Z0-9_]+$")  # a static / thread-local by Rust and C++ naming convention
_CLOSURE_PARAM = re.compile(r"^\s*(?:move\s+)?\|\s*(\w+)")
_NULL_TEST = re.compile(r"\bis_null\(\)|==\s*(nullptr|NULL)\b|\bis_none\(\)")
WRAPPER_DEPTH = 3


class ArmRef(NamedTuple):
    """One dispatch arm on a path: its label and the dispatch point it belongs to."""

    label: str
    key: str
    index: int  # type: ignore[assignment]  # the arm's index; shadows tuple.index, which nothing calls
    construct: str
    live: tuple[int, ...]  # indices of the dispatch's arms that are not deselected (implicit ones included)


class Occurrence(NamedTuple):
    """A host operation (or a default-stream launch) reached along one path of a capture body."""

    kind: str
    api: str
    at: str  # the operation's site
    call_at: str  # the project call site (the Rust call of an extern declaration)
    arms: tuple[ArmRef, ...]  # the dispatch arms from the body call down to it
    via: str  # the nearest project function
    detail: str
    direction: str | None = None  # a copy's
    size: str | None = None


def group(occurrences: list[Occurrence]) -> list[Hazard]:
    """One hazard per (kind, api, site), with ``paths``, ``conditional`` and ``guards``."""
    sites: dict[tuple[str, str, str], list[Occurrence]] = {}
    for h in occurrences:
        sites.setdefault((h.kind, h.api, h.at), []).append(h)
    out = []
    for occ in sites.values():
        reach: dict[str, set[int]] = {}
        info: dict[str, ArmRef] = {}
        for h in occ:
            for a in h.arms:
                reach.setdefault(a.key, set()).add(a.index)
                info[a.key] = a
        decisive = {k for k, idx in reach.items()
                    if info[k].construct != "candidates" and not set(info[k].live) <= idx}
        per_path = [[a for a in h.arms if a.key in decisive] for h in occ]
        conditional = all(per_path)
        first = occ[0]
        out.append(Hazard(
            kind=first.kind, api=first.api, at=first.at, detail=first.detail, paths=len(occ),
            vias=tuple(sorted({h.via for h in occ if h.via})),
            call_sites=tuple(sorted({h.call_at for h in occ if h.call_at})),
            conditional=conditional, guards=tuple(dict.fromkeys(p[-1].label for p in per_path if p)),
            unguarded_paths=sum(1 for p in per_path if not p),
            status="conditional" if conditional else "unconditional", call_at=first.call_at,
            arms=tuple(a.label for a in first.arms), via=first.via, direction=first.direction, size=first.size,
            guard_arms=tuple({(a.key, a.index): a for p in per_path for a in p[-1:]}.values())))
    return out


def _calls_of(index: Any, node: str) -> list[Any]:
    d = index.definition(node)
    if d is None:
        return []
    facts = index.facts.get(d.file) if hasattr(index.facts, "get") else index.facts[d.file]
    return [c for c in (facts.calls if facts else []) if c.caller == d.qualname and d.line <= c.line <= d.end_line]


def installed_state(index: Any, node: str) -> dict[str, str]:
    """Statics/thread-locals a wrapper (or the helpers it calls) sets: name → ``file:line``.

    ``X.with(|p| … p.replace(v) …)``, ``X.with(|p| p.set(v))``, ``X.set(v)``, ``X.store(v, …)``.
    """
    g = index.graph
    out: dict[str, str] = {}
    seen = {node}
    q = deque([(node, 0)])
    while q:
        n, depth = q.popleft()
        calls = _calls_of(index, n)
        for c in calls:
            recv = (c.receiver or "").strip()
            name = c.callee.split(".")[-1]
            if not _STATE.match(recv):
                continue
            if name in ("set", "store", "replace", "swap"):
                out.setdefault(recv, loc(c.file, c.line))
            elif name == "with" and c.args:
                m = _CLOSURE_PARAM.match(c.args[0])
                if not m:
                    continue
                p = m.group(1)
                hit = next((x for x in calls if (x.receiver or "").strip() == p and x.callee.split(".")[-1] in
                            ("replace", "set", "swap") and any(k.kind == "closure" and p in k.text for k in x.contexts)
                            and not re.search(r"\bnull", " ".join(x.args))), None)
                if hit is not None:
                    out.setdefault(recv, loc(hit.file, hit.line))
        if depth >= WRAPPER_DEPTH:
            continue
        for _, v, e in g.out_edges(n, data=True):
            if e.get("kind") == "call" and v not in seen and g.nodes[v].get("kind") in ("rust_fn", "host_fn"):
                seen.add(v)
                q.append((v, depth + 1))
    return out


def state_read(index: Any, node: str) -> set[str]:
    """Statics/thread-locals a function reads (``X.with(…)``, ``X.get()``, ``X.load(…)``, ``X.borrow()``)."""
    return {
        c.receiver.strip()
        for c in _calls_of(index, node)
        if _STATE.match((c.receiver or "").strip()) and c.callee.split(".")[-1] in ("with", "get", "load", "borrow")
    }


def wrapper_notes(index: Any, wrappers: list[tuple[Any, str]], hazards: list[Hazard]) -> list[Hazard]:
    """The hazards, conditional ones whose guard reads state a body wrapper installs annotated.

    ``wrappers``: (stage, call site) of body calls that take the body as a closure.
    """
    if not wrappers:
        return hazards
    installs = [(st, at, installed_state(index, st.node)) for st, at in wrappers]
    installs = [x for x in installs if x[2]]
    if not installs:
        return hazards
    out = []
    for h in hazards:
        notes = []
        for a in h.guard_arms if h.conditional else ():
            fn = a.key.split("#", 1)[0]
            read = state_read(index, fn) if fn in index.graph else set()
            for st, at, inst in installs:
                for name in sorted(read & set(inst)):
                    likely = bool(_NULL_TEST.search(a.label)) and not a.label.startswith("else")
                    notes.append(WrapperNote(
                        guard=a.label, state=name, read_in=index.graph.nodes[fn].get("qualname", fn),
                        installed_by=st.qualname, wrapper_at=at, installed_at=inst[name], status=HEURISTIC,
                        detail=(f"the body runs inside {st.qualname} ({at}), which sets {name} "
                                f"({inst[name]}) before running it; {index.graph.nodes[fn].get('qualname', fn)} "
                                f"reads {name} for `{a.label}`")
                               + (": the guarded path is likely not taken while capturing" if likely else ""),
                        likely_not_taken=likely))
        out.append(replace(h, wrapper=tuple(notes), likely_not_taken=all(n.likely_not_taken for n in notes))
                   if notes else h)
    return out
