"""The one place that makes text from input safe to show, in every output of the program.

Text that comes from the checkout (file names, source, symbols), the checkpoint (tensor
names, config keys) or the user (filter text, arguments) may hold terminal control
sequences, newlines, tabs or markup.  None of it may act on the terminal or on a markup
renderer, and one name must never split an output line.

- :func:`neutralise` — multi-line text (source, whole CLI output): controls become
  visible pictures (ESC → ␛, C1 and bidi overrides → �); newlines and tabs are kept
  (CRLF line ends become LF).  Otherwise one character in, one out, so columns and
  line numbers stay right.
- :func:`one_line` — a name, path or message shown on one line: also newline → ␊,
  tab → ␉, carriage return → ␍; capped at ``limit`` characters.
- :func:`join_lines` — a text report built line by line: each line is :func:`one_line`.
- :func:`markup` — a one-line string placed inside Textual markup (``[b]…[/b]``,
  border titles, notifications): every ``[`` is escaped.  Prefer ``Content``/``Text``
  objects, which take no markup at all.
- :func:`md` / :func:`md_code` — Markdown text and inline code (also safe in a table cell).
- :class:`SafeStream` — wraps ``sys.stdout``/``sys.stderr`` of the headless commands so
  nothing written there can carry a raw control character.

Pure string functions; no dependency on Textual or Rich, so every layer can import it.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

_PICTURES = {c: chr(0x2400 + c) for c in range(32)}  # ␀ … ␟ (␛ for ESC, ␊ for LF, ␉ for TAB)
_PICTURES[0x7F] = "\u2421"  # ␡
_BAD = dict.fromkeys((*range(128, 160), *range(8234, 8239), *range(8294, 8298), 8232, 8233), "�")
#: Multi-line text: every control except newline and tab.
_TEXT = str.maketrans({**{c: p for c, p in _PICTURES.items() if c not in (9, 10)}, **_BAD})
#: One line: newline and tab too.
_LINE = str.maketrans({**_PICTURES, **_BAD})
_ANY_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def neutralise(text: Any) -> str:
    """``text`` with control characters shown as pictures (ESC → ␛); newlines and tabs kept, CRLF → LF."""
    s = str(text)
    if not _ANY_CONTROL.search(s):  # the common case, at C speed
        return s
    return s.replace("\r\n", "\n").translate(_TEXT)


def one_line(text: Any, limit: int = 200) -> str:
    """``text`` safe on one line: controls, newlines and tabs visible; at most ``limit`` characters (0: no cap)."""
    s = str(text)
    if _ANY_CONTROL.search(s) or "\n" in s or "\t" in s:
        s = s.translate(_LINE)
    return s if not limit or len(s) <= limit else s[: limit - 1] + "…"


def join_lines(lines: Any) -> str:
    """Lines of a text report joined by newlines, each made safe by :func:`one_line` (no cap)."""
    return "\n".join(one_line(x, 0) for x in lines)


def has_control(text: str) -> bool:
    """True when ``text`` holds a character :func:`neutralise` would replace (besides newline and tab)."""
    return bool(_ANY_CONTROL.search(text))


def markup(text: Any, limit: int = 200) -> str:
    """:func:`one_line` of ``text`` with every ``[`` escaped, for a string Textual parses as markup."""
    return one_line(text, limit).replace("[", "\\[")


_MD_SPECIAL = re.compile(r"([\\`|\[\]])")


def md(text: Any, limit: int = 0) -> str:
    """Markdown text (paragraph or table cell) on one line: no HTML, link, code span or cell break.

    Escapes ``\\ ` | [ ]`` and writes ``& < >`` as entities; emphasis characters are left
    as they are (they change only the look, and names are full of ``_`` and ``*``).
    """
    s = one_line(text, limit).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", s)


def md_code(text: Any, limit: int = 0) -> str:
    """Markdown inline code of ``text`` (one line; pipes escaped for tables); empty text gives ``""``."""
    s = one_line(text, limit).replace("|", "\\|")
    if not s:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


class SafeStream:
    """A text stream that neutralises everything written to it (the CLI's stdout and stderr)."""

    def __init__(self, raw: TextIO):
        self._raw = raw

    def write(self, s: str) -> int:
        return self._raw.write(neutralise(s))

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding …
        return getattr(self._raw, name)
