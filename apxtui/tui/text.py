"""Rich ``Text`` for the explorer's titles and cells, made from :mod:`apxtui.textsafe` (the one
implementation of text safety): shown as typed, never read as markup, never a control sequence."""

from __future__ import annotations

from rich.text import Text

from apxtui.textsafe import one_line


def label(text: object, limit: int = 200, style: str = "") -> Text:
    """A one-line ``Text`` for titles, subtitles and cells: shown as typed, never read as markup."""
    return Text(one_line(str(text), limit), style=style)
