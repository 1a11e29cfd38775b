"""Static launch counts over a trace tree: device launches and library calls kept apart.

A count is a polynomial in loop symbols (``{("for layer in &self.layers",): 16, (): 3}``)
so symbolic trip counts survive; a dispatch point nobody selected contributes its arms
as alternatives, kept as a (min, max) pair computed term by term, never summed.
Counts are static, per call of the stage they are attached to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from apxtui.analysis.calls import bare_name, call_rules
from apxtui.analysis.loops import LoopCount
from apxtui.analysis.pathfacts import ArmCounts, DispatchCounts, KindCount
from apxtui.trace import Arm, Dispatch, Stage
from apxtui.vocab import CallClass, EdgeKind

Expr = dict[tuple[str, ...], int]
KINDS = ("device", "library", "library_setup", "memops", "graph_launches")


class Count:
    """(lo, hi) polynomials per kind."""

    def __init__(self) -> None:
        self.lo: dict[str, Expr] = {k: {} for k in KINDS}
        self.hi: dict[str, Expr] = {k: {} for k in KINDS}

    @classmethod
    def unit(cls, kind: str) -> Count:
        c = cls()
        c.lo[kind] = {(): 1}
        c.hi[kind] = {(): 1}
        return c

    def add(self, other: Count) -> Count:
        for k in KINDS:
            for side, oside in ((self.lo, other.lo), (self.hi, other.hi)):
                for mono, n in oside[k].items():
                    side[k][mono] = side[k].get(mono, 0) + n
        return self

    def scale(self, loops: list[tuple[int | None, str]]) -> Count:
        """These counts run once per iteration of ``loops`` (trip count, or None and the loop's symbol)."""
        factor, syms = 1, []
        for value, symbol in loops:
            if value is not None:
                factor *= value
            else:
                syms.append(symbol)
        out = Count()
        for k in KINDS:
            for side, oside in ((out.lo, self.lo), (out.hi, self.hi)):
                for mono, n in oside[k].items():
                    key = tuple(sorted((*mono, *syms)))
                    if n * factor:
                        side[k][key] = side[k].get(key, 0) + n * factor
        return out

    @classmethod
    def alternatives(cls, options: list[Count]) -> Count:
        out = cls()
        if not options:
            return out
        for k in KINDS:
            monos = {m for o in options for m in (*o.lo[k], *o.hi[k])}
            for m in monos:
                lo = min(o.lo[k].get(m, 0) for o in options)
                hi = max(o.hi[k].get(m, 0) for o in options)
                if lo:
                    out.lo[k][m] = lo
                if hi:
                    out.hi[k][m] = hi
        return out

    def is_zero(self) -> bool:
        return not any(self.hi[k] for k in KINDS)

    def numeric(self, kind: str) -> tuple[int, int] | None:
        """(min, max) of ``kind`` when both are plain numbers (no symbolic loop), else None."""
        lo, hi = self.lo[kind], self.hi[kind]
        if any(lo) or any(hi):  # a non-empty monomial: a symbolic loop count
            return None
        return lo.get((), 0), hi.get((), 0)

    def kinds(self) -> dict[str, KindCount]:
        """Every kind's count, rendered."""
        return {k: KindCount(render(self.lo[k]), render(self.hi[k]), self.lo[k] == self.hi[k],
                             tuple((n, m) for m, n in sorted(self.hi[k].items()))) for k in KINDS}

    def to_dict(self) -> dict[str, Any]:
        return {k: c.to_dict() for k, c in self.kinds().items()}


def render(e: Expr) -> str:
    if not e:
        return "0"
    parts = []
    for mono, n in sorted(e.items(), key=lambda x: (len(x[0]), x[0])):
        parts.append(str(n) if not mono else f"{n} × " + " × ".join(f"[{s}]" for s in mono))
    return " + ".join(parts)


def own_kind(st: Stage, g: Any) -> str | None:
    """What one call of ``st`` (at its call site) submits itself, by the call classes of
    ``queries/calls.toml`` (:mod:`apxtui.analysis.calls`): ``device`` (a kernel launch), ``library`` (a
    library compute call), ``library_setup`` (handles, descriptors, heuristics, algorithm checks),
    ``memops`` (a copy or memset on a stream), ``graph_launches`` (a graph replay); None otherwise."""
    ekind = st.via.kind if st.via else ""
    if ekind == EdgeKind.LAUNCH or st.kind == "kernel" and ekind != EdgeKind.CALL:
        return "device"
    vendor = st.kind == "vendor_api" or ekind == EdgeKind.VENDOR
    if not vendor and st.kind != "external":
        return None  # a function the checkout defines: never classified by its name
    cls = call_rules().classify(st.kind, st.qualname or st.name, ekind, defined=False).cls
    if cls == CallClass.LIBRARY:
        return "library"
    if cls == CallClass.SETUP:
        return "library_setup" if vendor else None
    family = call_rules().family(bare_name(st.qualname or st.name))  # calls.toml [families]
    if cls in (CallClass.MEMORY, CallClass.TRANSFER) and family in ("copy", "memset"):
        return "memops"
    if cls == CallClass.GRAPH and family == "replay":
        return "graph_launches"
    return "library_setup" if vendor else None


class LaunchCounter:
    """Counts per stage (per one call of it) with a phase filter for capture bodies."""

    def __init__(self, g: Any, mults: Callable[[Stage], list[LoopCount]],
                 phase_of: Callable[[Stage], str] | None = None):
        self.g = g
        self.mults = mults
        self.phase_of = phase_of or (lambda st: "eager")
        self.per_stage: dict[int, dict[str, Count]] = {}
        self.alternatives: list[DispatchCounts] = []

    def stage(self, st: Stage) -> dict[str, Count]:
        """Counts of one call of ``st`` (its subtree), split by phase."""
        if id(st) in self.per_stage:
            return self.per_stage[id(st)]
        res: dict[str, Count] = {}
        if not st.cut:
            res = self.items(st.children)
        self.per_stage[id(st)] = res
        return res

    def _child(self, st: Stage) -> dict[str, Count]:
        out: dict[str, Count] = {}
        k = own_kind(st, self.g)
        if k:
            out.setdefault(self.phase_of(st), Count()).add(Count.unit(k))
        for ph, c in self.stage(st).items():
            out.setdefault(ph, Count()).add(c)
        m = [(x.value, x.label) for x in self.mults(st)]
        return {ph: c.scale(m) for ph, c in out.items()}

    def items(self, items: list[Stage | Dispatch]) -> dict[str, Count]:
        total: dict[str, Count] = {}
        paired = complementary_cfg(items)
        for i, it in enumerate(items):
            if i in paired.values():
                continue
            if i in paired:
                other = items[paired[i]]
                assert isinstance(it, Dispatch) and isinstance(other, Dispatch)  # only dispatches are paired
                part = self._cfg_pair(it, other)
            else:
                part = self._child(it) if isinstance(it, Stage) else self._dispatch(it)
            for ph, c in part.items():
                total.setdefault(ph, Count()).add(c)
        return total

    def _cfg_pair(self, a: Dispatch, b: Dispatch) -> dict[str, Count]:
        """``#[cfg(X)] {…}`` next to ``#[cfg(not(X))] {…}``: one choice between the two blocks."""
        arms = [x for d in (a, b) for x in d.arms if not x.implicit]
        if any(x.selected for x in arms):
            out: dict[str, Count] = {}
            for x in arms:
                if x.selected:
                    for ph, c in self.items(x.children).items():
                        out.setdefault(ph, Count()).add(c)
            return out
        merged = Dispatch(a.key, "cfg", a.subject, a.file, a.line, arms)
        return self._dispatch(merged)

    def _dispatch(self, d: Dispatch) -> dict[str, Count]:
        arms = [a for a in d.arms if a.selected is not False]
        per_arm = [(a, self.items(a.children)) for a in arms]
        chosen = [a for a in arms if a.selected]
        if len(chosen) == 1:
            return per_arm[0][1]
        phases = list(dict.fromkeys(ph for _, r in per_arm for ph in r))  # first-seen order: deterministic
        out = {ph: Count.alternatives([r.get(ph, Count()) for _, r in per_arm]) for ph in phases}
        if _differs(per_arm):
            self.alternatives.append(DispatchCounts(
                d.key, d.construct, d.subject, f"{d.file}:{d.line}",
                tuple(ArmCounts(a.label, {ph: c.kinds() for ph, c in r.items()}) for a, r in per_arm)))
        return out


def _differs(per_arm: list[tuple[Arm, dict[str, Count]]]) -> bool:
    """Arms that submit different device launches or library calls."""
    seen = set()
    for _, r in per_arm:
        seen.add(tuple(sorted((ph, k, tuple(sorted(c.hi[k].items()))) for ph, c in r.items()
                              for k in ("device", "library", "graph_launches") if c.hi[k])))
    return len(seen) > 1


def _cfg_key(d: Dispatch) -> str | None:
    arms = [a for a in d.arms if not a.implicit]
    return arms[0].label.strip() if d.construct == "cfg" and len(arms) == 1 else None


def complementary_cfg(items: Sequence[object]) -> dict[int, int]:
    """Index pairs of sibling cfg dispatches whose predicates are ``X`` and ``not(X)``."""
    out: dict[int, int] = {}
    keys = {i: _cfg_key(it) for i, it in enumerate(items) if isinstance(it, Dispatch)}
    used: set[int] = set()
    for i, k in keys.items():
        if k is None or i in used:
            continue
        for j, k2 in keys.items():
            if j > i and j not in used and k2 and (k2 == f"not({k})" or k == f"not({k2})"):
                out[i] = j
                used |= {i, j}
                break
    return out
