"""Make text from the analysed checkout safe to show: no markup, no terminal control sequences."""

from __future__ import annotations

_CONTROL = {c: chr(0x2400 + c) for c in range(32) if c not in (9, 10)}  # control pictures: ␛ ␀ …
_CONTROL[0x7F] = "\u2421"  # ␡
for _c in range(0x80, 0xA0):  # C1 controls (CSI 0x9b etc.) become a visible replacement
    _CONTROL[_c] = "\ufffd"
_TABLE = str.maketrans(_CONTROL)


def neutralise(text: str) -> str:
    """Replace control characters (ESC, CR, C1 …) by visible pictures; keeps tabs and newlines.

    One character in, one character out, so columns and line numbers stay right.
    """
    return text.replace("\r\n", "\n").translate(_TABLE)


def one_line(text: str, limit: int = 200) -> str:
    """A label-safe single line: control characters neutralised, newlines folded, length capped."""
    s = neutralise(str(text)).replace("\n", " ").replace("\t", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"
