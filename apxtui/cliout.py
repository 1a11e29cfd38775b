"""Output of the headless commands: neutralised streams, broken pipes, a closed stdout, ``-o`` checked first.

:class:`Streams` wraps ``sys.stdout`` and ``sys.stderr`` in :class:`apxtui.textsafe.SafeStream`
while a sub-command runs, so no raw control character from the checkout, the checkpoint or
an argument reaches the terminal on any path (argparse messages included).  A closed stdout
(``>&-``, ``sys.stdout is None``) becomes a clear error when something is written to it; a
reader that goes away (``| head -1``) ends the command quietly (:func:`quiet_broken_pipe`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path
from typing import Any

from apxtui.errors import OutputError
from apxtui.textsafe import SafeStream

#: Exit status after the reader of stdout went away (what a shell reports for SIGPIPE).
EXIT_BROKEN_PIPE = 141


class _Closed:
    """Stands in for a closed standard stream: writing to it is an :class:`OutputError`."""

    def __init__(self, name: str):
        self.name = name

    def write(self, s: str) -> int:
        if not s:
            return 0
        raise OutputError(f"standard {self.name} is closed; nothing written (use -o FILE for a report)")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class Streams:
    """Context manager: neutralising stdout/stderr for a headless command; :meth:`release` for the TUI."""

    def __enter__(self) -> Streams:
        self._saved = (sys.stdout, sys.stderr)
        out = sys.stdout if sys.stdout is not None else _Closed("output")
        err = sys.stderr if sys.stderr is not None else open(os.devnull, "w")  # noqa: SIM115 - lives for the process
        sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)  # type: ignore[arg-type]  # _Closed: a closed stdout
        return self

    def release(self) -> None:
        """Give the real streams back (the TUI writes its own escape sequences)."""
        sys.stdout, sys.stderr = self._saved

    def __exit__(self, *exc: Any) -> None:
        self.release()


def quiet_broken_pipe() -> int:
    """After ``BrokenPipeError`` on stdout: point fd 1 at /dev/null so the exit-time flush stays quiet."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.__stdout__.fileno())  # type: ignore[union-attr]
        os.close(fd)
    return EXIT_BROKEN_PIPE


def check_output_path(path: str | None) -> None:
    """Fail now, before any work, when ``-o PATH`` cannot be written (it is not created or truncated)."""
    if not path:
        return
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError(f"-o {path}: {e.strerror or e}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"-o {path}: is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        return  # a device or FIFO (/dev/stdout, a pipe): opened when the output is written
    try:
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as e:
        raise OutputError(f"-o {path}: cannot write ({e.strerror or e})") from None
    os.close(fd)
    if st is None:
        p.unlink(missing_ok=True)  # created only to test; the command writes it at the end
