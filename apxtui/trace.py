"""The execution tree from an entry symbol, with dispatch points exposed as choices.

Children of a function are its outgoing call/launch/vendor/binding/ffi edges in
call-site order.  Calls under branch constructs (if/else, match, switch, ``#[cfg]``,
``#if``) are grouped into a :class:`Dispatch` per construct, one :class:`Arm` per
branch, labelled with its condition; an ambiguous call becomes a ``candidates``
dispatch with one arm per candidate definition (labelled with its cfg/#if when it
has one); a call linked by the method's name alone (receiver type unknown) is such a
dispatch even with one candidate, plus an arm for "another type", none expanded until chosen.
A selection picks arms: ``choices`` by dispatch key (the TUI's ``[``/``]``)
or ``select`` texts (an arm is chosen when its label contains one).  Unchosen arms
are kept, unexpanded and marked; dispatch points no selection matches keep every arm.
Recursion and depth are cut and marked.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from apxtui.errors import SymbolError
from apxtui.profile import decide
from apxtui.vocab import CALL_EDGE_KINDS, EdgeKind, Resolution

#: The extra arm of a by-name-only choice: the receiver is of a type no candidate belongs to.
NAME_ONLY_OTHER = "another type's method (receiver type unknown; maybe outside the checkout)"

if TYPE_CHECKING:
    import networkx as nx

_IMPLICIT_LABEL = {
    "if": "else (no call)",
    "else": "if (no call)",
    "match_arm": "other arms (no call)",
    "switch_case": "other cases (no call)",
    "pp_if": "#else (no call)",
    "except": "no exception (no call)",
}


@dataclass(frozen=True, slots=True)
class Condition:
    """One branch a call site sits under (an :class:`apxtui.facts.Context` of a branch kind, as linked)."""

    kind: str  # if / else / match_arm / switch_case / cfg / pp_if / except
    text: str
    line: int = 0
    group: str = ""  # the construct within the file (``"<line>:<col>"``)
    arm: int = 0  # the arm's index in its construct
    subject: str = ""
    negated: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    total: int = 0

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Condition:
        return cls(d.get("kind", ""), d.get("text", ""), d.get("line", 0), d.get("group", ""), d.get("arm", 0),
                   d.get("subject", ""), tuple(d.get("negated", ())), tuple(d.get("env", ())), d.get("total", 0))


@dataclass(frozen=True, slots=True)
class Via:
    """The edge a stage is reached by: one call site, as the linker recorded it (``index/link.py``).

    Built once per stage from the graph's edge attributes (which stay plain data for the store)."""

    kind: EdgeKind
    resolution: Resolution
    how: str = ""
    file: str = ""
    line: int = 0
    col: int = 0
    site: str = ""  # the call site's identity within the caller (``file:line:col:callee`` + tags)
    callee: str = ""  # as written
    receiver: str = ""  # a method call's receiver expression
    call_kind: str = ""  # the call site's kind (``call``, ``method``, ``launch``, ``macro`` …)
    text: str = ""  # the call's source text
    args: tuple[str, ...] = ()
    template_args: tuple[str, ...] = ()
    launch_config: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()  # outermost first
    loops: tuple[str, ...] = ()  # loop headers, outermost first
    closures: tuple[str, ...] = ()  # closure headers the call sits in
    candidates: int = 0  # definitions the call site links to
    name_only: bool = False  # linked by the method's name alone
    attrs: Mapping[str, Any] = field(default_factory=dict)  # the call site's extra facts (``library`` …)

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Via:
        """The record of one edge's attributes (a graph edge's data dict)."""
        return cls(EdgeKind(d["kind"]), Resolution(d["resolution"]), d.get("how", ""), d.get("file", ""),
                   d.get("line", 0), d.get("col", 0), d.get("site", ""), d.get("callee", ""), d.get("receiver", ""),
                   d.get("call_kind", ""), d.get("text", ""), tuple(d.get("args", ())),
                   tuple(d.get("template_args", ())), tuple(d.get("launch_config", ())),
                   tuple(Condition.of(c) for c in d.get("conditions", ())), tuple(d.get("loops", ())),
                   tuple(d.get("closures", ())), d.get("candidates", 0), bool(d.get("name_only")),
                   d.get("attrs") or {})

    @property
    def at(self) -> str:
        """``file:line`` of the call site."""
        return f"{self.file}:{self.line}"


@dataclass
class Stage:
    node: str
    kind: str
    name: str
    qualname: str
    lang: str
    file: str
    line: int
    via: Via | None = None
    children: list[Stage | Dispatch] = field(default_factory=list)
    cut: str = ""  # "recursion" | "depth" | "budget" | ""
    expanded: bool = False

    @property
    def call_at(self) -> str:
        """``file:line`` of the call site reaching this stage; "" for the entry (or a site with no file)."""
        v = self.via
        return f"{v.file}:{v.line}" if v is not None and v.file else ""


@dataclass
class Arm:
    label: str
    kind: str
    index: int
    children: list[Stage | Dispatch] = field(default_factory=list)
    selected: bool | None = None  # None: no selection at this dispatch point
    implicit: bool = False  # synthesised "no call" arm
    env: list[str] = field(default_factory=list)


@dataclass
class Dispatch:
    key: str  # stable id: caller node + construct position (or call site for candidates)
    construct: str  # if / match / switch / cfg / pp_if / except / candidates
    subject: str
    file: str
    line: int
    arms: list[Arm] = field(default_factory=list)
    note: str = ""  # under a profile: "runtime" / "undecided under profile" (arms it could not decide)

    @property
    def chosen(self) -> list[int]:
        return [a.index for a in self.arms if a.selected]


#: Stages a whole trace may create (``trace --budget``); shared out per branch (see :meth:`Tracer.trace`).
DEFAULT_BUDGET = 20000


def _segments(s: str) -> list[str]:
    return [x for x in re.split(r"::|\.", s) if x]


#: ``path/to/file.rs::Type::method`` (also ``file.py::Class.method``, ``file.cu::fn``).
_PATH_ENTRY_RE = re.compile(r"^(?P<path>[^:]*?\.(?:rs|pyi?|cuh?|h|hpp|cpp|cc|cxx|inl))(?:::|:)(?P<name>.+)$")


def _entry_rank(d: dict[str, Any], want: list[str], text: str, path: str, any_crate: bool) -> int | None:
    """How exactly a node matches an entry: 0 the whole qualified name, 1 + k a suffix leaving k
    leading segments, 1000 + k the same ignoring case; None no match."""
    if path and not (d.get("file") == path or d.get("file", "").endswith("/" + path)):
        return None
    q = d.get("qualname", "")
    segs = _segments(q)
    if any_crate:
        return 0 if segs[1:] == want else None
    if q == text:
        return 0
    if want and segs[-len(want):] == want:
        return 1 + len(segs) - len(want)
    low = [w.lower() for w in want]
    if want and [x.lower() for x in segs[-len(want):]] == low:
        return 1000 + len(segs) - len(want)
    return None


def find_symbol(graph: nx.MultiDiGraph[str], text: str) -> str:
    """Node id for an entry: a node id, a qualified name (``crate::module::Type::method``, ``pkg.mod.f``;
    ``crate::`` also stands for any crate), a suffix of one on ``::``/``.`` boundaries
    (``Type::method``, ``Class.method``), or ``path/to/file.rs::Type::method`` (the file, or a
    suffix of its path, and a name in it).  Several equally exact matches raise
    :class:`SymbolError` listing the candidates ranked by exactness (whole name, shortest
    suffix, then case-insensitive)."""
    if text in graph:
        return text
    text = text.strip()
    path = ""
    m = _PATH_ENTRY_RE.match(text)
    if m:
        path, text = m.group("path").removeprefix("./"), m.group("name")
    want = _segments(text)
    any_crate = want[:1] == ["crate"] and len(want) > 1
    if any_crate:
        want = want[1:]

    def rank(candidates: Iterable[Any]) -> list[tuple[int, str, str]]:
        out = [(r, d.get("qualname", ""), n) for n, d in candidates
               if d.get("kind") not in ("file", "external") and not d.get("decl_only")
               and (r := _entry_rank(d, want, text, path, any_crate)) is not None]
        return sorted(out)

    def tiers(ranked: list[tuple[int, str, str]]) -> list[int]:
        return [r // 1000 if r else -1 for r, _, _ in ranked]  # whole name / suffix / case-insensitive

    named = getattr(graph, "nodes_named", None)  # a stored graph looks the last segment up in its index
    if named is not None and want:
        ranked = rank(named(want[-1]))
        tier = tiers(ranked)
        if ranked and (len(ranked) == 1 or tier[0] < tier[1]):
            return ranked[0][2]  # a unique exact-case match; otherwise the full scan decides and explains
    ranked = rank(graph.nodes(data=True))
    tier = tiers(ranked)
    if ranked and (len(ranked) == 1 or tier[0] < tier[1]):
        return ranked[0][2]
    if not ranked:
        names = sorted({d.get("qualname", "") for _, d in graph.nodes(data=True)
                        if d.get("kind") not in ("file", "external")})
        close = difflib.get_close_matches(text, names, n=8, cutoff=0.5)
        close += [q for q in names if want and want[-1] in q and q not in close][: 8 - len(close)]
        where = f" in {path}" if path else ""
        raise SymbolError(f"no symbol matches {text!r}{where}", close)
    tied = sum(1 for t in tier if t == tier[0])
    raise SymbolError(f"{text!r} is ambiguous ({tied} symbols match equally; most exact first)",
                      [n for _, _, n in ranked])


class Tracer:
    """Builds the execution tree lazily (``expand``) or whole (``trace``)."""

    def __init__(self, graph: nx.MultiDiGraph[str], select: list[str] | None = None,
                 choices: dict[str, int] | None = None, depth: int = 40, budget: int = DEFAULT_BUDGET,
                 profile: Any = None):
        self.g = graph
        self.profile = profile  # apxtui.profile.Resolved: drops what the build/run profile excludes
        self.excluded: list[str] = []  # "site -> node" edges the profile removed
        self.select = [s for s in (select or []) if s]
        self.choices = dict(choices or {})
        self.depth = depth
        self.budget = budget
        self.count = 0
        self._out_cache: dict[str, list[Any]] = {}
        self._sizes: dict[str, int] = {}
        self._direct: dict[str, int] = {}  # stages one expand() of a node creates
        self._filling = False

    # -- building ----------------------------------------------------------------------

    def stage(self, node: str, via: Via | None = None) -> Stage:
        d = self.g.nodes[node]
        return Stage(node, d.get("kind", ""), d.get("name", ""), d.get("qualname", ""), d.get("lang", ""),
                     d.get("file", ""), int(d.get("line", 0) or 0), via)

    def trace(self, entry: str) -> Stage:
        """The whole tree from ``entry`` within the stage budget.

        The budget is shared out per branch (water-filling over estimated subtree sizes): at each
        stage, children whose subtrees fit in an equal share are expanded whole and the rest split
        what is left, recursively; so a huge branch (capture preparation) cannot starve its siblings
        (the forward pass).  A stage not expanded for the budget is cut ``budget``; see :func:`cuts`.
        """
        self.count = 0
        root = self.stage(entry)
        self._filling = True
        try:
            self._fill(root, (entry,), 0, self.budget)
        finally:
            self._filling = False
        return root

    def _fill(self, st: Stage, path: tuple[str, ...], depth: int, budget: int) -> int:
        """Expand ``st`` and below with at most ``budget`` new stages; returns the stages created."""
        before = self.count
        self.expand(st, path, depth)
        kids = [c for c in iter_stages(st.children, selected_only=True) if not c.cut and self._has_calls(c.node)]
        left = budget - (self.count - before)
        sizes = [self.estimate(c.node) for c in kids]
        alloc = [0] * len(kids)
        order = sorted(range(len(kids)), key=lambda i: sizes[i])
        for k, i in enumerate(order):
            share = max(left, 0) // (len(kids) - k)
            alloc[i] = min(sizes[i], share)
            left -= alloc[i]
        for i in range(len(kids)):  # what is left (estimates are lower bounds) goes to every child alike
            alloc[i] += max(left, 0) // len(kids)
        for c, a in zip(kids, alloc, strict=True):
            if a < self._direct.get(c.node, 1):  # cannot afford even its own call sites
                c.cut = "budget"
                continue
            self._fill(c, (*path, c.node), depth + 1, a)
        return self.count - before

    def estimate(self, node: str, stack: tuple[str, ...] = ()) -> int:
        """Stages a full expansion below ``node`` creates (memoised; recursion counted once; saturates)."""
        got = self._sizes.get(node)
        if got is not None:
            return got
        if node in stack or len(stack) >= self.depth:
            return 0
        total = 0
        items = self._children(node)
        total = self._direct[node] = sum(1 for _ in iter_stages(items, selected_only=False))  # every arm's stages
        for c in iter_stages(items, selected_only=True):
            total += self.estimate(c.node, (*stack, node))
            if total > self.budget:
                break
        total = min(total, self.budget + 1)
        self._sizes[node] = total
        return total

    def expand(self, st: Stage, path: tuple[str, ...], depth: int) -> None:
        """Fill ``st.children`` (one level); recursion/depth/budget cuts are marked."""
        if st.expanded:
            return
        st.expanded = True
        st.children = self._children(st.node)
        for child in iter_stages(st.children, selected_only=False):
            self.count += 1
            if child.node in path:
                child.cut = "recursion"
            elif depth + 1 >= self.depth:
                child.cut = "depth" if self._has_calls(child.node) else ""
            elif self.count > self.budget and not self._filling:  # lazy expansion (the explorer)
                child.cut = "budget"

    def _has_calls(self, node: str) -> bool:
        kinds: Iterable[tuple[str, str, str]] = self.g.out_edges(node, data="kind")
        return any(k in CALL_EDGE_KINDS for _, _, k in kinds)

    def children_of(self, node: str) -> list[Stage | Dispatch]:
        """The call sites of ``node`` (new stages, unexpanded) with dispatch points, selection and profile
        applied; path-independent, so a caller may memoise it per node (the execution map does)."""
        return self._children(node)

    def _children(self, node: str) -> list[Stage | Dispatch]:
        edges = [(v, d) for _, v, d in self.g.out_edges(node, data=True) if d.get("kind") in CALL_EDGE_KINDS]
        edges.sort(key=lambda e: (e[1].get("line", 0), e[1].get("col", 0), self.g.nodes[e[0]].get("qualname", "")))
        sites: dict[str, list[tuple[str, Via]]] = {}
        conds_of: dict[str, list[dict[str, Any]]] = {}
        for v, d in edges:
            site = d.get("site", f"{v}")
            sites.setdefault(site, []).append((v, Via.of(d)))
            conds_of.setdefault(site, d.get("conditions", []))
        items: list[tuple[list[dict[str, Any]], Stage | Dispatch]] = []
        for site, group in sites.items():
            conds = conds_of[site]
            if self.profile is not None:  # profile hook: definitions the profile compiles out
                group = self._profile_defs(site, group)
                if not group:
                    continue
            if len(group) == 1 and not group[0][1].name_only:
                v, via = group[0]
                items.append((conds, self.stage(v, via)))
            else:
                items.append((conds, self._candidates(node, site, group)))
        return self._group(node, items, 0)

    def _profile_defs(self, site: str, group: list[tuple[str, Via]]) -> list[tuple[str, Via]]:
        keep = [(v, d) for v, d in group if decide.definition(self.profile, v, self.g.nodes[v]) is not False]
        self.excluded += [f"{site} -> {v}" for v, d in group if all(v != k for k, _ in keep)]
        if len(keep) == 1 < len(group):  # the other cfg/#if alternatives are compiled out
            v, d = keep[0]
            keep = [(v, replace(d, resolution=Resolution.EXACT,
                                how=f"{d.how}; profile: 1 of {len(group)} alternatives"))]
        return keep or (group if len(group) > 1 else [])

    def _candidates(self, node: str, site: str, group: list[tuple[str, Via]]) -> Dispatch:
        d0 = group[0][1]
        disp = Dispatch(f"{node}#site:{site}", "candidates", d0.callee, d0.file, d0.line)
        for i, (v, d) in enumerate(group):
            nd = self.g.nodes[v]
            cond = " && ".join([*(f"cfg({c})" for c in nd.get("cfg", [])), *nd.get("pp", [])])
            label = f"{nd.get('qualname')} @ {nd.get('file')}:{nd.get('line')}" + (f" [{cond}]" if cond else "")
            arm = Arm(label, "candidate", i, [self.stage(v, d)])
            disp.arms.append(arm)
        if self.profile is not None:
            disp.note = "undecided under profile"
        if d0.name_only:
            # linked by the method's name alone: the receiver may be a type outside the checkout too,
            # and nothing is expanded until an arm is chosen ([ / ], --select)
            disp.arms.append(Arm(NAME_ONLY_OTHER, "implicit", len(disp.arms), implicit=True))
            disp.note = "by name only: not expanded until chosen"
        self._apply_selection(disp)
        if d0.name_only and all(a.selected is None for a in disp.arms):
            for a in disp.arms:
                a.selected = False
        return disp

    def _group(self, node: str, items: list[tuple[list[dict[str, Any]], Stage | Dispatch]],
               level: int) -> list[Stage | Dispatch]:
        out: list[Stage | Dispatch] = []
        builders: dict[str, tuple[Dispatch, dict[int, list[Any]]]] = {}
        for conds, item in items:
            if len(conds) <= level:
                out.append(item)
                continue
            c = conds[level]
            key = f"{node}#{c['kind'] if c['kind'] not in ('if', 'else') else 'if'}:{c['group']}"
            if key not in builders:
                construct = {"match_arm": "match", "switch_case": "switch", "else": "if"}.get(c["kind"], c["kind"])
                disp = Dispatch(key, construct, c.get("subject", ""), item_file(item), c.get("line", 0))
                builders[key] = (disp, {})
                out.append(disp)
            disp, arms = builders[key]
            arms.setdefault(c.get("arm", 0), []).append((c, conds, item))
        for disp, arms in builders.values():
            for idx in sorted(arms):
                entries = arms[idx]
                c = entries[0][0]
                label = c.get("text", "")
                if c["kind"] == "else" and c.get("negated"):
                    label = "else (not: " + "; ".join(c["negated"]) + ")"
                arm = Arm(label, c["kind"], idx, self._group(node, [(cs, it) for _, cs, it in entries], level + 1),
                          env=list(c.get("env", [])))
                disp.arms.append(arm)
            self._add_implicit(disp, max((e[0].get("total", 0) for es in arms.values() for e in es), default=0))
            if self.profile is not None:  # profile hook: arms decided by cfg/#if/env gates
                ctxs = {idx: entries[0][0] for idx, entries in arms.items()}
                flat = self._profile_arms(node, disp, ctxs)
                if flat is not None:
                    out = [x for it in out for x in (flat if it is disp else [it])]
                    continue
            self._apply_selection(disp)
        return out

    def _profile_arms(self, node: str, disp: Dispatch, ctxs: dict[int, dict[str, Any]]) -> list[Any] | None:
        """Drop arms the profile decides False; the children of a lone True arm replace the dispatch."""
        dev = decide.device_pass(self.profile, node, self.g.nodes[node])
        vals, implicit = decide.arms(self.profile, disp.construct, ctxs, disp.file, dev)
        value = {a.index: (implicit if a.implicit else vals.get(a.index)) for a in disp.arms}
        disp.arms = [a for a in disp.arms if value[a.index] is not False]
        if len(disp.arms) == 1 and value[disp.arms[0].index] is True:
            return disp.arms[0].children
        if not disp.arms:
            return []
        disp.note = "undecided under profile" if disp.construct in decide.COMPILE_TIME else "runtime"
        return None

    def _add_implicit(self, disp: Dispatch, total: int = 0) -> None:
        """An arm for the branches with no call: ``else``, the other match arms / switch cases (only
        when some stay uncovered: a match whose every arm calls something has no other arm)."""
        kinds = {a.kind for a in disp.arms}
        labels = {a.label.strip() for a in disp.arms}
        if "else" in kinds or "default" in labels or "_" in labels or disp.construct == "candidates":
            return
        if total and disp.construct == "match" and len({a.index for a in disp.arms}) >= total:
            return  # every arm of the (exhaustive) match is listed
        if any(a.label.startswith("#else") or a.label == "else" for a in disp.arms):
            return
        k = disp.arms[0].kind
        if k == "cfg":
            label = f"not({disp.arms[0].label}) (statement compiled out)"
        else:
            label = _IMPLICIT_LABEL.get(k, "otherwise (no call)")
        disp.arms.append(Arm(label, "implicit", len(disp.arms) and max(a.index for a in disp.arms) + 1, implicit=True))

    def _apply_selection(self, disp: Dispatch) -> None:
        if disp.key in self.choices:
            want = self.choices[disp.key]
            for a in disp.arms:
                a.selected = a.index == want
            if any(a.selected for a in disp.arms):
                return
        if self.select:
            hits = [a for a in disp.arms if any(select_matches(a, s) for s in self.select)]
            if hits:
                for a in disp.arms:
                    a.selected = a in hits
                return
        for a in disp.arms:
            a.selected = None


def select_matches(arm: Arm, text: str) -> bool:
    """Does ``--select TEXT`` choose this arm?  Matched against the arm's own condition
    (an ``else`` arm is ``else``, not the conditions it negates) and never inside a
    negation: ``X`` does not choose ``not(X)`` or ``!X`` unless TEXT itself says ``not``."""
    if arm.implicit and not arm.label.endswith(" (statement compiled out)"):
        return False  # a synthesised "no call" arm is chosen by key (the TUI), not by text
    label = "else" if arm.kind == "else" else arm.label.removesuffix(" (statement compiled out)")
    start = label.find(text)
    while start != -1:
        before = label[:start]
        if not before.endswith(("not(", "!")):
            return True
        start = label.find(text, start + 1)
    return False


def stage_key(st: Stage) -> str:
    """A stage's identity under its parent: node id and call site (a chain of them locates a stage)."""
    return f"{st.node}@{st.via.site if st.via else ''}"


def item_file(item: Stage | Dispatch) -> str:
    if isinstance(item, Stage):
        return item.via.file if item.via else item.file
    return item.file


def iter_stages(items: list[Stage | Dispatch], selected_only: bool = True) -> Iterator[Stage]:
    """Stages directly under ``items`` (descending into dispatch arms, not into stages)."""
    for it in items:
        if isinstance(it, Stage):
            yield it
        else:
            for arm in it.arms:
                if selected_only and arm.selected is False:
                    continue
                yield from iter_stages(arm.children, selected_only)


def walk(stage: Stage, depth: int = 0, arms: tuple[str, ...] = ()) -> Iterator[tuple[int, Stage, tuple[str, ...]]]:
    """Pre-order (execution order) over the selected path: (depth, stage, arm labels)."""
    yield depth, stage, arms
    yield from _walk_items(stage.children, depth + 1, arms)


def _walk_items(items: list[Stage | Dispatch], depth: int,
                arms: tuple[str, ...]) -> Iterator[tuple[int, Stage, tuple[str, ...]]]:
    for it in items:
        if isinstance(it, Stage):
            yield from walk(it, depth, arms)
        else:
            for arm in it.arms:
                if arm.selected is False:
                    continue
                yield from _walk_items(arm.children, depth, (*arms, arm.label))


def cuts(root: Stage) -> list[tuple[Stage, tuple[str, ...]]]:
    """Stages of the selected path not expanded (``recursion``, ``depth``, ``budget``), each with the stage
    keys from the entry to it, in execution order."""
    out = []
    keys: list[str] = []
    for depth, st, _arms in walk(root):
        del keys[depth:]
        keys.append(stage_key(st))
        if st.cut:
            out.append((st, tuple(keys)))
    return out


def dispatches(node: Stage | list[Stage | Dispatch]) -> Iterator[Dispatch]:
    """Every dispatch point in the expanded tree (under a stage, or a list of items), pre-order."""
    for it in node.children if isinstance(node, Stage) else node:
        if isinstance(it, Dispatch):
            yield it
            for arm in it.arms:
                yield from dispatches(arm.children)
        else:
            yield from dispatches(it)
