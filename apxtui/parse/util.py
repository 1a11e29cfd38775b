"""Small helpers shared by the per-language extractors."""

from __future__ import annotations

import tree_sitter as ts


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
