"""The source pane's documents: parsed from bytes in one call, they have Textual's syntax tree exactly."""

from __future__ import annotations

import pytest
from textual._tree_sitter import get_language
from textual.document._syntax_aware_document import SyntaxAwareDocument

from apxtui.tui.widgets.source_view import _BytesParsedDocument

RUST = 'fn f(x: u32) -> u32 {\n    let s = "é ✓";  // ünïcode\n    x + 1\n}\n'


def nodes(doc: SyntaxAwareDocument) -> list[tuple[str, tuple[int, int], tuple[int, int], int, int]]:
    out, stack = [], [doc._syntax_tree.root_node]
    while stack:
        n = stack.pop()
        out.append((n.type, n.start_point, n.end_point, n.start_byte, n.end_byte))
        stack.extend(n.children)
    return out


@pytest.mark.parametrize("text", [RUST, RUST.replace("\n", "\r\n"), RUST.rstrip("\n"), "", "fn broken( {\n"])
def test_bytes_parsed_document_has_textuals_tree(text: str):
    lang = get_language("rust")
    assert lang is not None
    ours, theirs = _BytesParsedDocument(text, lang), SyntaxAwareDocument(text, lang)
    assert nodes(ours) == nodes(theirs)
    assert len(nodes(ours)) > 1 or not text


MULTILINE = 'fn g() {\n    let s = "a\nb\nc";  /* x\n y */\n}\n'


@pytest.mark.parametrize("text", [RUST, MULTILINE, ""])
def test_highlight_map_is_textareas(text: str):
    """Documents built ahead (off the TextArea) get the highlights the TextArea itself builds, in its order."""
    from textual.widgets import TextArea

    from apxtui.tui.widgets.source_view import highlight_map

    ta = TextArea("", language="rust")
    ta.document = doc = _BytesParsedDocument(text, get_language("rust"))
    ta._build_highlight_map()
    ours = highlight_map(doc, ta._highlight_query)
    assert dict(ours) == dict(ta._highlights)
    assert any(len(v) > 1 for v in ours.values()) or not text  # several highlights on a line, order compared
