"""Command line: ``apxtui CHECKOUT`` (the TUI) and the headless sub-commands.

Each sub-command lives in ``apxtui/commands/<name>.py`` exposing ``add_parser(sub)``
(which registers an argparse sub-parser and sets ``func``).  Exit codes: 0 ok,
2 usage error, 1 anything else (one line on stderr; traceback only with --debug).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from apxtui import __version__

COMMANDS = ("index", "symbols", "graph", "trace", "kernels", "capture", "checkpoint", "config")


class UserError(Exception):
    """An error to report as one line on stderr with exit code 1."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="apxtui",
        description="Explore an inference engine's execution path (Python → PyO3 → Rust → C ABI → CUDA) by static analysis.",
    )
    p.add_argument("--version", action="version", version=f"apxtui {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"apxtui.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"apxtui.commands.{name}":
                continue  # command not built yet
            raise
        mod.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    parser = build_parser()
    # `apxtui CHECKOUT [opts]` (no sub-command) opens the TUI.
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is None or first not in parser._subparsers._group_actions[0].choices:  # type: ignore[union-attr]
        from apxtui.commands import tui

        sub_parser = tui.build_parser()
        args = sub_parser.parse_args(argv)
        func = tui.run
    else:
        args = parser.parse_args(argv)
        func = args.func
    try:
        return int(func(args) or 0)
    except UserError as e:
        print(f"apxtui: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - one clear line, traceback with --debug
        if debug:
            raise
        print(f"apxtui: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
