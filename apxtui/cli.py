"""Command line: ``apxtui CHECKOUT`` (the TUI) and the headless sub-commands.

Each sub-command lives in ``apxtui/commands/<name>.py`` exposing ``add_parser(sub)``
(which registers an argparse sub-parser and sets ``func``); only the command being run
is imported.  Exit codes: 0 ok, 2 usage error, 1 anything else (one line on stderr;
traceback only with --debug).  The console script (:func:`run`) leaves the process
without tearing down what it built once the output is flushed.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable

from apxtui import __version__
from apxtui.argparser import Parser
from apxtui.cliout import Streams, check_output_path, quiet_broken_pipe
from apxtui.commands import tui
from apxtui.errors import ApxError, OutputError, UserError  # noqa: F401 - UserError: re-exported for older callers
from apxtui.textsafe import one_line

COMMANDS = ("index", "symbols", "graph", "trace", "kernels", "capture", "checkpoint", "config")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every sub-command, or just ``only`` (what a run of that command needs)."""
    p = Parser(
        prog="apxtui",
        description="Explore an inference engine's execution path (Python → PyO3 → Rust → C ABI → CUDA) "
        "by static analysis.",
    )
    p.add_argument("--version", action="version", version=f"apxtui {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"apxtui.commands.{name}").add_parser(sub)
    return p


def split_command(argv: list[str], commands: set[str], takes_value: set[str]) -> tuple[str | None, list[str]]:
    """The sub-command named in ``argv`` and the arguments for it (options given before it moved after it).

    ``apxtui --jobs 2 index --demo`` is the ``index`` command: the ``2`` is the value of ``--jobs``, not a
    checkout.  ``--debug``/``--version``/``-h`` before the command stay where they are (top-level options).
    """
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return None, argv
        if a.startswith("-"):
            i += 2 if a in takes_value else 1
            continue
        if a not in commands:
            return None, argv
        before = argv[:i]
        top = [x for x in before if x in ("--debug", "--version", "-h", "--help")]
        moved = [x for x in before if x not in top]
        return a, [*top, a, *moved, *argv[i + 1 :]]
    return None, argv


def _parse(argv: list[str]) -> tuple[Callable[[argparse.Namespace], int], argparse.Namespace]:
    """(function to run, parsed args) for ``argv``: a sub-command, or the TUI."""
    tui_parser = tui.build_parser()
    takes_value = {o for a in tui_parser._actions if a.nargs != 0 for o in a.option_strings}
    cmd, argv = split_command(argv, set(COMMANDS), takes_value)
    if cmd is None:  # `apxtui CHECKOUT [opts]` (no sub-command) opens the TUI
        return tui.run, tui_parser.parse_args(argv)
    args = build_parser(only=cmd).parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func  # set by the sub-command's add_parser
    return func, args


def main(argv: list[str] | None = None, *, oneshot: bool = False) -> int:
    """Run the command line ``argv``; ``oneshot``: the process ends after it (the console script)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    with Streams() as streams:
        try:
            func, args = _parse(argv)
            check_output_path(getattr(args, "output", None))
            if getattr(args, "command", None) is None:
                streams.release()  # the explorer draws on the real terminal
            elif oneshot:
                gc.disable()  # a headless command makes no cyclic garbage worth the collector's passes
            code = int(func(args) or 0)
            sys.stdout.flush()
            return code
        except (ApxError, OutputError) as e:
            print(f"apxtui: {one_line(e, 0)}", file=sys.stderr)
            return 1
        except BrokenPipeError:
            return quiet_broken_pipe()
        except KeyboardInterrupt:
            return 130
        except Exception as e:  # noqa: BLE001 - one clear line, traceback with --debug
            if debug:
                raise
            print(f"apxtui: error: {type(e).__name__}: {one_line(e, 0)}", file=sys.stderr)
            return 1


def run() -> None:
    """Console-script entry: run, flush, and leave without tearing down the index and trees
    built on the way (their deallocation can take longer than the command)."""
    try:
        code = main(oneshot=True)
    except SystemExit as e:  # argparse errors and --help
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
