"""The one exception hierarchy, at the bottom of the stack (imports nothing from apxtui).

An :class:`ApxError` is a problem with the user's input that the user can act on: the
command line prints it as one line on stderr (exit 1), the explorer as a notification.
Any other exception is a bug (the command line names its type; ``--debug`` shows the
traceback).  Modules raise the subclass for their domain; the classes are re-exported
where they were first defined (``apxtui.scan.ScanError``, ``apxtui.trace.SymbolError`` …).

    ApxError
    ├── UserError          bad command-line usage: no checkout, --depth 0, --sol without --batch
    ├── ScanError          the checkout cannot be walked (not a directory, unreadable)
    ├── SymbolError        an unknown or ambiguous symbol name (also a LookupError; .candidates)
    ├── ProfileError       a bad profile flag or named profile (also a ValueError)
    ├── ExprSyntaxError    a cfg / #if expression that cannot be read (also a ValueError)
    │   ├── CfgSyntaxError
    │   └── PPSyntaxError
    ├── CheckpointError    the path cannot be opened as a checkpoint at all
    ├── HeaderError        a safetensors header defect that makes one file unusable (.tensor)
    ├── InputFileError     a file named by input cannot be used: outside its root, not a regular file,
    │                      too large, malformed (also a ValueError)
    └── OutputError        the output cannot be written (closed stdout, unwritable ``-o`` path)
"""

from __future__ import annotations


class ApxError(Exception):
    """A problem with the input, reported as one clear line (never a traceback)."""


class UserError(ApxError):
    """Bad command-line usage or arguments."""


class ScanError(ApxError):
    """The checkout cannot be scanned at all (not a directory, unreadable)."""


class SymbolError(ApxError, LookupError):
    """A symbol name that matches no node, or several (``candidates`` lists them or the closest names)."""

    def __init__(self, message: str, candidates: list[str]):
        super().__init__(message)
        self.candidates = candidates


class ProfileError(ApxError, ValueError):
    """A bad profile flag, named profile or profiles file."""


class ExprSyntaxError(ApxError, ValueError):
    """A configuration expression (``#[cfg(…)]``, ``#if …``) that cannot be read."""


class CfgSyntaxError(ExprSyntaxError):
    """A ``cfg(…)`` predicate that cannot be read."""


class PPSyntaxError(ExprSyntaxError):
    """A preprocessor ``#if`` expression that cannot be read."""


class CheckpointError(ApxError):
    """The path cannot be opened as a checkpoint at all."""


class HeaderError(ApxError):
    """A defect that makes one safetensors file unusable; ``tensor`` names the entry when one is at fault."""

    def __init__(self, message: str, tensor: str | None = None) -> None:
        super().__init__(message)
        self.tensor = tensor


class InputFileError(ApxError, ValueError):
    """A file named by input cannot be used: outside its root, not a regular file, too large, malformed."""


class OutputError(ApxError):
    """The output cannot be written (closed stdout, unwritable ``-o`` path): one line, exit 1."""
