"""Small helpers shared by the per-language extractors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import tree_sitter as ts


class _HasId(Protocol):
    @property
    def id(self) -> int: ...


def same(a: _HasId | None, b: _HasId | None) -> bool:
    """``a`` and ``b`` are the same syntax node (neither None; tree-sitter or :mod:`plain` nodes)."""
    return a is not None and b is not None and a.id == b.id


def split_commas(text: str, open_: str = "([{", close: str = ")]}", quotes: str = "") -> list[str]:
    """``text`` split on commas outside brackets (and outside ``quotes``); an empty last piece dropped."""
    parts: list[str] = []
    depth, start, quote = 0, 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in quotes:
            quote = ch
        elif ch in open_:
            depth += 1
        elif ch in close:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:])
    return parts


def text(node: ts.Node | None, src: bytes, limit: int = 0) -> str:
    """Source text of ``node`` (decoded with replacement), optionally truncated."""
    if node is None:
        return ""
    s = src[node.start_byte : node.end_byte].decode("utf-8", "replace")
    if limit and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


def one_line(s: str, limit: int = 200) -> str:
    """Collapse whitespace so a header or condition fits on one line."""
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def line(node: ts.Node) -> int:
    return node.start_point[0] + 1


def pos_key(node: ts.Node) -> str:
    """Stable id of a construct within its file ("line:col", 1-based line)."""
    return f"{node.start_point[0] + 1}:{node.start_point[1]}"


class SourceText:
    """Text of nodes of one file: ``text``/``one_line`` results, computed cheaply.

    ASCII files (most source) are sliced as ``str`` (byte offsets are char offsets);
    others decode the byte range with replacement, as :func:`text` does.  ``line``
    of a long node collapses only a prefix when that already decides the result.
    """

    __slots__ = ("src", "s")

    def __init__(self, src: bytes) -> None:
        self.src = src
        self.s = src.decode("ascii") if src.isascii() else None

    def slice(self, start: int, end: int) -> str:
        if self.s is not None:
            return self.s[start:end]
        return self.src[start:end].decode("utf-8", "replace")

    def text(self, node: ts.Node | None, limit: int = 0) -> str:
        """Same as :func:`text`."""
        if node is None:
            return ""
        s = self.slice(node.start_byte, node.end_byte)
        if limit and len(s) > limit:
            s = s[: limit - 1] + "…"
        return s

    def line(self, node: ts.Node | None, limit: int = 200) -> str:
        """Same as ``one_line(text(node), limit)``."""
        if node is None:
            return ""
        a, b = node.start_byte, node.end_byte
        if self.s is not None and b - a <= limit:  # short ASCII: no margin logic needed
            s = " ".join(self.s[a:b].split())
            return s
        return self.line_range(a, b, limit)

    def line_range(self, a: int, b: int, limit: int = 200) -> str:
        """Same as ``one_line(text of bytes [a, b), limit)``, reading only a prefix of a long range."""
        if b - a > 4 * limit + 16:
            # whitespace-collapsing a prefix gives a prefix of the collapsed whole; its last
            # few characters may be cut (or a cut multi-byte char), so keep a margin
            head = " ".join(self.slice(a, a + 4 * limit + 16).split())
            if len(head) >= limit + 2:
                return head[: limit - 1] + "…"
        s = " ".join(self.slice(a, b).split())
        return s if len(s) <= limit else s[: limit - 1] + "…"
