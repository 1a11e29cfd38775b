"""Static counts of map work: device launches and library calls apart, alternatives as (min, max),
symbolic loops kept as terms (:class:`apxtui.analysis.launches.Count`)."""

from __future__ import annotations

import re

from apxtui.analysis.launches import Count
from apxtui.map.model import Call, Choice, Counts, Repeat, Work
from apxtui.vocab import CallClass, Phase

PhaseCounts = dict[Phase, Count]
COUNT_KIND = {CallClass.DEVICE: "device", CallClass.LIBRARY: "library"}


def add_counts(into: PhaseCounts, other: PhaseCounts) -> PhaseCounts:
    """``into`` += ``other``, phase by phase."""
    for ph, c in other.items():
        into.setdefault(ph, Count()).add(c)
    return into


def scale(pc: PhaseCounts, reps: list[Repeat]) -> PhaseCounts:
    """``pc`` run ``reps`` times (numeric loops multiply, symbolic ones become terms)."""
    if not reps:
        return pc
    m = [(r.value, loop_symbol(r)) for r in reps]
    return {ph: c.scale(m) for ph, c in pc.items()}


def loop_symbol(r: Repeat) -> str:
    """Short name of a symbolic loop for count formulas (``language_layers``, ``num_steps``)."""
    h = r.header
    m = re.search(r"\bin\s+(?:&mut\s+|&)?(.+?)\s*\)?\s*$", h)
    expr = m.group(1) if m else h
    rng = re.search(r"\.\.=?\s*(.+)$", expr)
    if rng:
        expr = rng.group(1)
    expr = re.sub(r"\.(iter|iter_mut|into_iter|enumerate|rev|chunks\w*|windows)\(\)?[^.]*", "", expr)
    ids = re.findall(r"[A-Za-z_]\w*", expr)
    return ids[-1] if ids else h[:40]


def to_counts(pc: Count | None, arms: list[str] | None = None) -> Counts:
    """A :class:`Count` as the display record (``min .. max`` where alternatives differ)."""
    if pc is None:
        return Counts()
    kinds = pc.kinds()
    dev, lib = kinds["device"], kinds["library"]
    return Counts(dev.range_text, lib.range_text, dev.exact and lib.exact, list(arms or []),
                  pc.numeric("device"), pc.numeric("library"))


def work_count(work: list[Work]) -> Count:
    """One execution of ``work``: calls with their loops, one arm of each choice (min..max)."""
    total = Count()
    for w in work:
        if isinstance(w, Call):
            total.add(scale({Phase.EAGER: Count.unit(COUNT_KIND[w.kind])}, w.repeat)[Phase.EAGER])
        else:
            total.add(choice_count(w))
    return total


def choice_count(c: Choice) -> Count:
    """One execution of a choice: one arm's :func:`work_count`, min..max over the arms (kept on the choice;
    never modified by the caller)."""
    if c.count is None:
        c.count = Count.alternatives([work_count(a.work) for a in c.alternatives])
    return c.count


def choice_range(c: Choice) -> str:
    """Launches + library calls of one execution of a choice: one arm's, as ``lo..hi`` over the arms."""
    k = work_count([c]).kinds()
    lo = " + ".join(x for x in (k["device"].min, k["library"].min) if x != "0") or "0"
    hi = " + ".join(x for x in (k["device"].max, k["library"].max) if x != "0") or "0"
    return lo if lo == hi else f"{lo}..{hi}"
