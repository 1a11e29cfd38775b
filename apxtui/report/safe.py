"""Make text from analysed source safe to print: control characters become visible symbols."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible_controls(text: str) -> str:
    """Replace C0 controls and DEL (not newline/tab) with their Unicode control pictures (ESC → ␛)."""
    return _CONTROL.sub(lambda m: chr(0x2400 + ord(m.group())) if m.group() != "\x7f" else "\u2421", text)
