"""Contexts as data: the ``@context.*`` captures of ``queries/<lang>.scm`` → :class:`Context`.

Every language's query says which constructs put a context around the code inside
them (an ``if`` arm, a loop body, a match arm, a ``#[cfg]`` on a statement, an ``#if``
arm…).  This module reads those captures the same way for all languages, turns each
construct into frames (the byte ranges where it applies, see
:mod:`apxtui.parse.nesting`) and builds its :class:`~apxtui.facts.Context` once, when a
call (or definition) inside it first asks.  A call's contexts are the context frames
around it up to its function (a frame of kind ``scope``), outermost first; calls of one
block share one tuple.  Nothing here climbs the tree.

Capture names (one construct per query match):

``@context.if``
    an arm of a conditional chain (``if``/``else if``/``elif``, a conditional
    expression's first operand, a comprehension filter), with ``@context.condition``
    and ``@context.body`` (the code the arm guards; several allowed).
``@context.else``
    a final ``else`` arm, with ``@context.body``.  An ``else`` whose body is itself a
    captured ``if`` arm is an ``else if``: it is dropped, the inner ``if`` carries the arm.
``@context.pp_if``
    a preprocessor arm (``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``): condition
    from ``@context.condition`` (``#if``), ``@context.defined`` / ``@context.undefined``
    (``#ifdef X`` → ``defined(X)``, ``#ifndef X`` → ``!defined(X)``), none for ``#else``;
    it covers its code but the condition and the arms after it.
``@context.chain`` + ``@context.link``
    chain structure: the node captured as ``link`` continues the chain of the node
    captured as ``chain`` (an ``else`` clause continues its ``if``; the ``if`` inside an
    ``else`` continues that clause; a Python ``elif`` names its ``if`` directly).  Arms
    reached from one head form one dispatch point, numbered in source order.
``@context.continues``
    (on an arm) it continues the chain of the innermost captured arm around it (an
    ``#elif``/``#else`` is the last child of the arm before it).  Tree-sitter queries
    that wait for a late child (``alternative:`` after a body) cost time in proportion
    to nesting depth on every node; found by nesting instead, it stays linear.
``@context.elif_condition``
    (with ``@context.if``) an ``elif`` condition: code in it runs only when the earlier
    conditions were false, so it gets the ``else`` context of that arm (Python).
``@context.loop``
    a loop; ``@context.body`` (several allowed: Python's ``while`` condition runs each
    iteration too), ``@context.condition`` (env reads; a condition after the body is a
    ``do … while``).  Text: the header, from the loop to its body.
``@context.closure``
    a closure / lambda with ``@context.body``; text: its header.
``@context.arm`` / ``@context.case`` / ``@context.except``
    an arm of a match construct (Rust ``match``, Python ``match``, C ``switch``, Python
    ``try``): the innermost node captured as ``@context.match`` around it (a pattern of
    its own, with ``@context.subject`` the matched value), numbered in source order
    within it; ``@context.pattern`` the arm's pattern (``case`` value; an arm without
    ``@context.body`` covers the code after its pattern), ``@context.guard`` more env reads.
``@context.cfg``
    a ``#[cfg(…)]`` attribute (``@context.condition`` its token tree) that applies to
    ``@context.target`` (the match arm or field holding it) or else to the item after
    it, ``@context.next`` being its next named sibling (other attributes and comments
    in between are skipped through the language module's sibling map).
``@context.rest``
    (any construct) it also covers the code from its own end to the end of this node
    (a comprehension clause guards the clauses after it).

Texts are one line, 200 characters (``cfg`` 400); ``(…)`` around a condition is
dropped where the language's :class:`Policy` says so (C conditions, cfg predicates).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import tree_sitter as ts

from apxtui.facts import Context
from apxtui.parse.nesting import Frame, nest
from apxtui.parse.util import SourceText, line, one_line, pos_key

Node = ts.Node

#: Frame kind of a context construct's range.
CONTEXT = "context"
#: Node types skipped when finding the item an attribute applies to.
ATTR_SKIP = frozenset(("attribute_item", "inner_attribute_item", "line_comment", "block_comment", "comment"))
_PRIMARY = ("context.if", "context.else", "context.pp_if", "context.loop", "context.closure",
            "context.arm", "context.case", "context.except", "context.cfg")  # fmt: skip
_CHAINED = ("if", "else", "pp_if")
_GROUP_KIND = {"arm": "match_arm", "case": "switch_case", "except": "except"}

#: env hook: (nodes whose env reads count, the scope frame) → env var names, in order
EnvHook = Callable[[list[Node], Frame | None], list[str]]


@dataclass(frozen=True)
class Policy:
    """What differs between languages in how chain arms are described."""

    closure_arm: int = -1  # arm index of closure contexts
    if_negated: bool = True  # an else-if arm lists the earlier conditions as negated
    if_env_earlier: bool = True  # … and their env reads
    else_env: bool = True  # an else arm lists the env reads of the earlier conditions
    sort_env: bool = False  # env names sorted (else in order of appearance)
    paren_wrapped: frozenset[str] = frozenset()  # condition node types whose ``(…)`` is dropped


class _Rec:
    """One captured construct."""

    __slots__ = ("kind", "node", "cond", "bodies", "ranges", "head", "index", "subject", "pattern",
                 "extra", "until", "rest", "of", "ctx", "chain_conds", "elif_cond", "neg", "total")  # fmt: skip

    def __init__(self, kind: str, node: Node):
        self.kind = kind
        self.node = node
        self.cond: Node | None = None
        self.bodies: list[Node] = []
        self.ranges: list[tuple[int, int]] = []
        self.head: Node = node  # chain head / match construct: the dispatch point's anchor
        self.index = 0
        self.subject: Node | None = None
        self.pattern: Node | None = None
        self.extra: list[Node] = []  # more env sources (guard)
        self.until: Node | None = None
        self.rest: Node | None = None
        self.of: _Rec | None = None  # elif-condition record: the arm it belongs to
        self.ctx: Context | None = None
        self.chain_conds: list[_Rec] = []  # earlier arms of the chain
        self.elif_cond: Node | None = None
        self.neg = ""  # "defined" / "undefined" for #ifdef / #ifndef
        self.total = 0  # match arms / switch cases (default included) of the construct


class Contexts:
    """Collects the context captures of one file and builds their frames and contexts."""

    def __init__(self, st: SourceText, policy: Policy, env: EnvHook | None = None):
        self.st = st
        self.policy = policy
        self.env = env
        self.recs: dict[tuple[str, int], _Rec] = {}
        self.links: dict[int, Node] = {}  # node id → the node whose chain it continues
        self.matches: dict[int, Node | None] = {}  # match construct id → its subject
        self.match_nodes: dict[int, Node] = {}
        self.continuing: list[_Rec] = []  # arms continuing the chain of the arm around them
        #: node id → its next named sibling (filled by the language module: how a cfg
        #: attribute followed by other attributes or comments reaches its item)
        self.next_sibling: dict[int, Node] = {}
        self._tuples: dict[int, tuple[Context, ...]] = {}  # id(frame) → its contexts
        self._item_after: dict[int, Node | None] = {}
        self._conds: dict[int, str] = {}  # id(record) → its condition text

    # -- collecting ---------------------------------------------------------------------

    def add(self, caps: dict[str, list[Node]]) -> bool:
        """Take one query match; True when it was a context match."""
        if "context.link" in caps and "context.chain" in caps:
            self.links[caps["context.link"][0].id] = caps["context.chain"][0]
            if not any(k in caps for k in _PRIMARY):
                return True
        name = next((k for k in _PRIMARY if k in caps), None)
        if name is None:
            if "context.match" in caps:  # a match / switch / try construct: its arms name it by nesting
                m = caps["context.match"][0]
                if m.id not in self.match_nodes:  # several subjects (`match a, b:`): the first
                    self.match_nodes[m.id] = m
                    self.matches[m.id] = caps["context.subject"][0] if "context.subject" in caps else None
                return True
            return False
        node = caps[name][0]
        kind = name[8:]
        key = (kind, node.id)
        rec = self.recs.get(key)
        if rec is not None:  # the same construct matched again (a comment child, several subjects)
            for b in caps.get("context.body", ()):
                if all(b.id != x.id for x in rec.bodies):
                    rec.bodies.append(b)
            if "context.target" in caps:  # an attribute holder's own flag beats "the next item"
                rec.ranges = [(caps["context.target"][0].start_byte, caps["context.target"][0].end_byte)]
                rec.until = None
            return True
        rec = self.recs[key] = _Rec(kind, node)
        get = caps.get
        rec.bodies = list(get("context.body", ()))
        if "context.condition" in caps:
            rec.cond = caps["context.condition"][0]
        elif "context.defined" in caps or "context.undefined" in caps:
            rec.neg = "defined" if "context.defined" in caps else "undefined"
            rec.cond = caps["context.defined" if rec.neg == "defined" else "context.undefined"][0]
        if "context.chain" in caps and "context.link" not in caps:
            self.links[node.id] = caps["context.chain"][0]
        if "context.continues" in caps:
            self.continuing.append(rec)
        if "context.match" in caps:
            rec.head = caps["context.match"][0]
        if "context.subject" in caps:
            rec.subject = caps["context.subject"][0]
        if "context.pattern" in caps:
            rec.pattern = caps["context.pattern"][0]
        if "context.guard" in caps:
            rec.extra = caps["context.guard"]
        if "context.rest" in caps:
            rec.rest = caps["context.rest"][0]
        if "context.elif_condition" in caps:
            rec.elif_cond = caps["context.elif_condition"][0]
        if kind == "cfg":
            if "context.target" in caps:
                t = caps["context.target"][0]
                rec.ranges = [(t.start_byte, t.end_byte)]
            elif "context.next" in caps:
                rec.until = caps["context.next"][0]  # resolved past attributes/comments in frames()
        return True

    # -- frames -------------------------------------------------------------------------

    def frames(self) -> list[Frame]:
        """Frames of every captured construct (chains and arm numbers resolved)."""
        recs = list(self.recs.values())
        self._place_cfg(recs)
        self._by_nesting(recs)
        self._chains([r for r in recs if r.kind in _CHAINED])
        self._groups([r for r in recs if r.kind in _GROUP_KIND])
        out: list[Frame] = []
        for r in recs:
            if r.kind == "dropped":
                continue
            ranges = r.ranges or self._ranges(r)
            if r.rest is not None:
                ranges = [*ranges, (r.node.end_byte, r.rest.end_byte)]
            rank = r.node.start_byte
            for s, e in ranges:
                out.append(Frame(s, e, CONTEXT, r.node, r, rank))
            if r.elif_cond is not None:
                g = _Rec("else", r.node)
                g.of = r
                out.append(Frame(r.elif_cond.start_byte, r.elif_cond.end_byte, CONTEXT, r.node, g, rank))
        return out

    def _by_nesting(self, recs: list[_Rec]) -> None:
        """What the innermost construct around a node tells: the chain an ``@context.continues``
        arm continues (and where the arm before it ends), the match an arm belongs to."""
        if self.continuing:
            kinds = {r.kind for r in self.continuing}
            around = [Frame(r.node.start_byte, r.node.end_byte, r.kind, r.node, r) for r in recs
                      if r.kind in kinds]  # fmt: skip
            for r, f in zip(self.continuing, nest(around, [(r.node.start_byte, r.node.end_byte, True)
                                                            for r in self.continuing]), strict=True):  # fmt: skip
                if f is not None:
                    self.links[r.node.id] = f.node
                    f.data.until = r.node
        loose = [r for r in recs if r.kind in _GROUP_KIND and r.head is r.node]
        if loose and self.match_nodes:
            around = [Frame(m.start_byte, m.end_byte, "match", m) for m in self.match_nodes.values()]
            for r, f in zip(loose, nest(around, [(r.node.start_byte, r.node.end_byte, True) for r in loose]),
                            strict=True):  # fmt: skip
                if f is not None:
                    r.head = f.node
                    if r.subject is None:
                        r.subject = self.matches.get(f.node.id)

    def _ranges(self, r: _Rec) -> list[tuple[int, int]]:
        if r.bodies:
            return [(b.start_byte, b.end_byte) for b in r.bodies]
        n = r.node
        if r.kind == "pp_if":  # all but the condition and the next arm (a parse error may sit before the condition)
            end = r.until.start_byte if r.until is not None else n.end_byte
            if r.cond is None:
                return [(n.start_byte, end)]
            return [(n.start_byte, r.cond.start_byte), (r.cond.end_byte, end)]
        if r.kind in _GROUP_KIND:
            return [(r.pattern.end_byte if r.pattern is not None else n.start_byte, n.end_byte)]
        return []

    def item_after(self, n: Node | None) -> Node | None:
        """The first node from ``n`` on (through :attr:`next_sibling`) that is not an attribute or
        a comment: the item an attribute applies to.  Memoised along the run, so linear."""
        run: list[int] = []
        item = self._item_after
        while n is not None and n.type in ATTR_SKIP and n.id not in item:
            run.append(n.id)
            n = self.next_sibling.get(n.id)
        if n is not None and n.id in item:
            n = item[n.id]
        for k in run:
            item[k] = n
        return n

    def _place_cfg(self, recs: list[_Rec]) -> None:
        """A cfg attribute applies to the next item after it (attributes and comments skipped)."""
        for r in recs:
            if r.kind != "cfg" or r.ranges:
                continue
            t = self.item_after(r.until)
            if t is None or t.type in ATTR_SKIP:
                r.kind = "dropped"
            else:
                r.ranges = [(t.start_byte, t.end_byte)]
            r.until = None

    def _chains(self, arms: list[_Rec]) -> None:
        """Head, arm number and earlier arms of every chained arm; else-ifs' else dropped."""
        if_nodes = {r.node.id for r in arms if r.kind != "else"}
        links = self.links
        heads: dict[int, Any] = {}
        groups: dict[int, list[_Rec]] = {}
        for r in arms:
            if r.kind == "else" and any(b.id in if_nodes for b in r.bodies):
                r.kind = "dropped"  # `else if`: the inner if is the arm
                continue
            path, n = [], r.node
            while n.id in links and n.id not in heads:
                path.append(n.id)
                n = links[n.id]
            head = heads.get(n.id, n)
            for k in path:
                heads[k] = head
            r.head = head
            groups.setdefault(head.id, []).append(r)
        for members in groups.values():
            members.sort(key=lambda r: (r.node.start_byte, r.bodies[0].start_byte if r.bodies else r.node.start_byte))
            for i, r in enumerate(members):
                r.index = i
                r.chain_conds = members[:i]

    def _groups(self, arms: list[_Rec]) -> None:
        groups: dict[int, list[_Rec]] = {}
        for r in arms:
            groups.setdefault(r.head.id, []).append(r)
        for members in groups.values():
            members.sort(key=lambda r: r.node.start_byte)
            for i, r in enumerate(members):
                r.index = i
                r.total = len(members)

    # -- contexts -----------------------------------------------------------------------

    def of(self, frame: Frame | None) -> tuple[Context, ...]:
        """Contexts of the code directly in ``frame``, outermost first (memoised per frame).

        Frames keep their contexts as a linked chain (the context, the chain above), so
        nesting n deep costs n links, not n tuples of up to n; a tuple is made only for
        a frame that holds code asking for it."""
        if frame is None:
            return ()
        got = self._tuples.get(id(frame))
        if got is not None:
            return got
        link = self._link(frame)
        out: list[Context] = []
        while link:
            out.append(link[0])
            link = link[1]
        out.reverse()
        got = self._tuples[id(frame)] = tuple(out)
        return got

    def _link(self, frame: Frame) -> tuple[Any, ...]:
        pending: list[Frame] = []
        f: Frame | None = frame
        above: tuple[Any, ...] = ()
        while f is not None:
            if f.ctx is not None:
                above = f.ctx
                break
            if f.kind == "scope":
                f.ctx = ()
                break
            pending.append(f)
            f = f.parent
        for f in reversed(pending):
            if f.kind == CONTEXT:
                above = (self._context(f.data, f), above)
            f.ctx = above
        return above

    def _env(self, nodes: Sequence[Node | None], frame: Frame) -> list[str]:
        if self.env is None:
            return []
        got = self.env([n for n in nodes if n is not None], frame.scope)
        return sorted(set(got)) if self.policy.sort_env else got

    def text(self, n: Node | None, limit: int = 200) -> str:
        """One-line text of ``n``; ``(…)`` around it dropped when the language says so for its type."""
        if n is None:
            return ""
        if n.type in self.policy.paren_wrapped:
            s = self.st.slice(n.start_byte, n.end_byte).strip()
            if s.startswith("(") and s.endswith(")"):
                s = s[1:-1]
            return one_line(s, limit)
        return self.st.line(n, limit)

    def _cond_text(self, r: _Rec) -> str:
        """The arm's condition as shown (memoised: every later arm of a chain lists it)."""
        got = self._conds.get(id(r))
        if got is None:
            if r.neg:
                name = self.st.text(r.cond)
                got = f"defined({name})" if r.neg == "defined" else f"!defined({name})"
            else:
                got = self.text(r.cond) if r.cond is not None else "else"
            self._conds[id(r)] = got
        return got

    def _header(self, r: _Rec) -> str:
        """Text of the construct up to its (last) body; all of it when the body is outside."""
        n = r.node
        inside = [b for b in r.bodies if n.start_byte <= b.start_byte < n.end_byte]
        if not inside:
            return self.st.line(n).rstrip(":").rstrip()
        body = max(inside, key=lambda b: b.start_byte)
        s = self.st.line_range(n.start_byte, body.start_byte)
        if r.cond is not None and r.cond.start_byte > body.start_byte:  # do … while (cond)
            return f"{s} … while ({self.text(r.cond)})"
        return s.rstrip(":").rstrip()

    def _context(self, r: _Rec, frame: Frame) -> Context:
        if r.ctx is not None:
            return r.ctx
        p = self.policy
        k = r.kind
        n = r.node
        if r.of is not None:  # an elif condition: the else of the earlier arms
            arm = r.of
            conds = [a.cond for a in arm.chain_conds if a.cond is not None]
            c = Context("else", "else", line(n), pos_key(arm.head), arm.index,
                        negated=[self._cond_text(a) for a in arm.chain_conds if a.cond is not None],
                        env=self._env(conds, frame))  # fmt: skip
        elif k in _CHAINED:
            earlier = [a for a in r.chain_conds if a.cond is not None]
            negated = [self._cond_text(a) for a in earlier]
            if k == "else" or (k == "pp_if" and r.cond is None):
                env = self._env([a.cond for a in earlier], frame) if p.else_env else []
                c = Context("pp_if" if k == "pp_if" else "else", "else", line(n), pos_key(r.head), r.index,
                            negated=negated, env=env)  # fmt: skip
            else:
                text = self._cond_text(r)
                if k == "pp_if":
                    env = self._env([r.cond], frame) if not r.neg else []
                else:
                    env = self._env([*(a.cond for a in earlier), r.cond] if p.if_env_earlier else [r.cond], frame)
                c = Context(k, text, line(n), pos_key(r.head), r.index,
                            negated=negated if (p.if_negated or k == "pp_if") else [], env=env)  # fmt: skip
        elif k == "loop":
            c = Context("loop", self._header(r), line(n), pos_key(n), -1, env=self._env([r.cond], frame))
        elif k == "closure":
            c = Context("closure", self._header(r), line(n), pos_key(n), p.closure_arm)
        elif k == "cfg":
            c = Context("cfg", self.text(r.cond, 400), line(n), pos_key(n), 0)
        else:  # match arm / switch case / except handler
            kind = _GROUP_KIND[k]
            if kind == "switch_case":
                text = f"case {self.st.line(r.pattern)}" if r.pattern is not None else "default"
            elif kind == "match_arm" and r.pattern is not None:
                text = self.st.line(r.pattern)
            else:
                text = self._header(r)
                text = text.removeprefix("case").strip() if kind == "match_arm" else text
            env = self._env([r.subject, r.pattern if kind == "match_arm" else None, *r.extra], frame) \
                if kind != "except" else []  # fmt: skip
            c = Context(kind, text, line(n), pos_key(r.head), r.index, subject=self.text(r.subject), env=env,
                        total=r.total if kind != "except" else 0)
        r.ctx = c
        return c
