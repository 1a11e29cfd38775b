"""Text from the analysed checkout made safe to show: see :mod:`apxtui.textsafe` (the one implementation)."""

from apxtui.textsafe import markup, neutralise, one_line

__all__ = ["markup", "neutralise", "one_line"]
