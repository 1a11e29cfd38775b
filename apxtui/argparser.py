"""The argument parser class of the command line: argparse's, without importing ``shutil``.

argparse makes a help formatter for every ``add_argument`` (to check the metavar), and the
formatter imports ``shutil`` (and with it ``bz2``, ``lzma``, ``fnmatch``) to learn the terminal
width.  :class:`Parser` hands the formatter that width itself, found as
``shutil.get_terminal_size`` finds it, so no command pays for those imports.
"""

from __future__ import annotations

import argparse
import os
import sys


def help_width() -> int:
    """The width argparse would use: ``$COLUMNS``, else the terminal's columns, else 80; less 2."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns if columns > 0 else 80) - 2


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose formatters are given the width (sub-parsers are of this class too)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=help_width())  # type: ignore[call-arg]
