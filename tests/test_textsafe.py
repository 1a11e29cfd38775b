"""The one text-safety module: controls visible, one line per name, markup and Markdown neutralised."""

from __future__ import annotations

import io

import pytest
from textual.markup import to_content

from apxtui.textsafe import SafeStream, has_control, join_lines, markup, md, md_code, neutralise, one_line

HOSTILE = ["[/", "x[/]y.py", "[red]esc_mod.py", "[@click=app.quit]", "a\\[b]", "[b]x[/b]", "]y[", "\\", "[[", "$var"]


def test_controls_become_pictures_newlines_kept_only_in_multiline_text():
    raw = "a\x1b[2Jb\x9bc\u202ed\x7f\te\nf\r\ng"
    assert neutralise(raw) == "a␛[2Jb\ufffdc\ufffdd␡\te\nf\ng"
    assert one_line(raw, 0) == "a␛[2Jb\ufffdc\ufffdd␡␉e␊f␍␊g"
    assert not has_control(neutralise(raw)) and has_control(raw)
    assert one_line("x" * 10, 5) == "xxxx…" and one_line("x" * 10, 0) == "x" * 10
    assert join_lines(["a\nb", "c"]) == "a␊b\nc"


@pytest.mark.parametrize("text", HOSTILE)
def test_markup_shows_the_text_literally_in_textual(text):
    assert to_content(markup(text)).plain == text  # never a style, never an action, never a MarkupError
    assert to_content(f"[b]{markup(text)} [/b]").plain == text + " "


def test_markdown_text_and_code_spans():
    assert md("a|b<i>[x](y)&`z\\") == "a\\|b&lt;i&gt;\\[x\\](y)&amp;\\`z\\\\"
    assert md_code("x") == "`x`" and md_code("") == ""
    assert md_code("a``b|c") == "```a``b\\|c```"
    assert md_code("`edge`") == "`` `edge` ``"
    assert md_code("new\nline") == "`new␊line`"


def test_safe_stream_neutralises_every_write():
    buf = io.StringIO()
    s = SafeStream(buf)
    s.write("\x1b]0;title\x07\n")
    s.writelines(["\x1b[2J"])
    s.flush()
    assert buf.getvalue() == "␛]0;title␇\n␛[2J"
