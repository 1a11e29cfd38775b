"""``apxtui [CHECKOUT] [--demo] [--checkpoint PATH]``: open the explorer."""

from __future__ import annotations

import argparse

from apxtui import __version__
from apxtui.commands.common import add_checkout
from apxtui.profile import add_profile_args


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="apxtui",
        description="Explore an inference engine's execution path (Python → PyO3 → Rust → C ABI → CUDA) by static "
                    "analysis. Sub-commands: index, symbols, graph, trace, kernels, capture, checkpoint, config "
                    "(`apxtui COMMAND --help`).",
    )
    p.add_argument("--version", action="version", version=f"apxtui {__version__}")
    add_checkout(p)
    p.add_argument("--checkpoint", metavar="PATH", help="a .safetensors file or a checkpoint directory")
    p.add_argument("--export-dir", metavar="DIR", help="where `e` writes reports (default CHECKOUT/devlocal/<entry>/reports)")
    p.add_argument("--no-mouse", action="store_true", help="leave the mouse to the terminal (text selection)")
    add_profile_args(p)
    return p


def run(args: argparse.Namespace) -> int:
    import sys

    from apxtui.cli import UserError
    from apxtui.commands.common import jobs

    jobs(args)
    if not (sys.stdin and sys.stdin.isatty() and sys.stdout and sys.stdout.isatty()):
        raise UserError("the explorer needs a terminal (stdin or stdout is not one); for output to a file or "
                        "pipe use a sub-command, e.g. `apxtui index CHECKOUT` or `apxtui trace …`")
    try:
        from apxtui.tui.app import run_app
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("apxtui.tui"):
            from apxtui.commands import index

            print("apxtui: the explorer UI is not built yet; index summary instead:")
            args.json = False
            return index.run(args)
        raise
    return run_app(args)
