"""A syntax tree as plain data: picklable (cached with a file's facts), read like a tree-sitter tree.

Build scripts are not only scanned for facts: :mod:`apxtui.profile.buildscript` evaluates
their conditions for a target architecture and feature set, walking the syntax.  The
tree-sitter tree cannot be pickled, so a build script's tree is kept as flat arrays
(:class:`PlainTree`, built by :func:`parse`), stored in its :class:`~apxtui.facts.FileFacts`
and so in the fact cache, and read through :class:`PlainNode`, which offers the part of
``tree_sitter.Node`` the evaluator uses (``type``, ``text``, ``children``,
``named_children``, ``child_by_field_name``, ``parent``, positions).  Flat arrays pickle
without recursion, whatever the nesting depth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from apxtui.parse import languages

if TYPE_CHECKING:
    import tree_sitter as ts

#: File names whose facts carry their plain syntax tree (Cargo build scripts).
TREE_FILES = ("build.rs",)


@dataclass
class PlainTree:
    """Node ``i``: ``types[i]``, ``spans[i]`` = (start byte, end byte, start row, start column),
    ``named[i]``, ``parents[i]`` (-1 at the root), ``kids[i]`` (child indices, in order) and
    ``fields[i]`` (each child's field name or "")."""

    src: bytes
    types: list[str] = field(default_factory=list)
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)
    named: list[bool] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    kids: list[tuple[int, ...]] = field(default_factory=list)
    fields: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def root(self) -> PlainNode:
        return PlainNode(self, 0)


class PlainNode:
    """One node of a :class:`PlainTree`, with the ``tree_sitter.Node`` API subset the build-script
    evaluator reads.  Equal (``id``) when it is the same node."""

    __slots__ = ("t", "i")

    def __init__(self, tree: PlainTree, i: int):
        self.t = tree
        self.i = i

    @property
    def id(self) -> int:
        return self.i

    @property
    def type(self) -> str:
        return self.t.types[self.i]

    @property
    def is_named(self) -> bool:
        return self.t.named[self.i]

    @property
    def start_byte(self) -> int:
        return self.t.spans[self.i][0]

    @property
    def end_byte(self) -> int:
        return self.t.spans[self.i][1]

    @property
    def start_point(self) -> tuple[int, int]:
        s = self.t.spans[self.i]
        return s[2], s[3]

    @property
    def text(self) -> bytes:
        s = self.t.spans[self.i]
        return self.t.src[s[0] : s[1]]

    @property
    def parent(self) -> PlainNode | None:
        p = self.t.parents[self.i]
        return PlainNode(self.t, p) if p >= 0 else None

    @property
    def children(self) -> list[PlainNode]:
        return [PlainNode(self.t, k) for k in self.t.kids[self.i]]

    @property
    def named_children(self) -> list[PlainNode]:
        named = self.t.named
        return [PlainNode(self.t, k) for k in self.t.kids[self.i] if named[k]]

    def child_by_field_name(self, name: str) -> PlainNode | None:
        for k, f in zip(self.t.kids[self.i], self.t.fields[self.i], strict=True):
            if f == name:
                return PlainNode(self.t, k)
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlainNode) and other.t is self.t and other.i == self.i

    def __hash__(self) -> int:
        return hash((id(self.t), self.i))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"PlainNode({self.type} {self.start_point})"


def from_tree(root: ts.Node, src: bytes) -> PlainTree:
    """A tree-sitter tree (its root node) as a :class:`PlainTree`: one cursor walk, no recursion."""
    t = PlainTree(src)
    types, spans, named, parents, kids, fields = t.types, t.spans, t.named, t.parents, t.kids, t.fields
    cursor = root.walk()
    stack: list[tuple[list[int], list[str]]] = []  # children and field names of the open nodes
    cur = -1
    while True:
        n = cursor.node
        assert n is not None  # a cursor over a tree always stands on a node
        i = len(types)
        types.append(n.type)
        sp = n.start_point
        spans.append((n.start_byte, n.end_byte, sp[0], sp[1]))
        named.append(n.is_named)
        parents.append(cur)
        kids.append(())
        fields.append(())
        if stack:
            stack[-1][0].append(i)
            stack[-1][1].append(cursor.field_name or "")
        if cursor.goto_first_child():
            stack.append(([], []))
            cur = i
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return t
            ks, fs = stack.pop()
            kids[cur], fields[cur] = tuple(ks), tuple(fs)
            cur = parents[cur]


def parse(lang: str, src: bytes) -> PlainTree:
    """Parse ``src`` and return its tree as plain data."""
    return from_tree(languages.parser(lang).parse(src).root_node, src)
