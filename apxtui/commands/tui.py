"""``apxtui [CHECKOUT] [--demo] [--checkpoint PATH]``: open the explorer."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from apxtui import __version__
from apxtui.argparser import Parser
from apxtui.commands.common import add_checkout, checkout_path, jobs
from apxtui.commands.profile_flags import add_profile_args, profile_from_args
from apxtui.demo import DEMO_CHECKPOINT
from apxtui.errors import ProfileError, UserError
from apxtui.tui.config import ExplorerConfig


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="apxtui",
        description="Explore an inference engine's execution path (Python → PyO3 → Rust → C ABI → CUDA) by static "
                    "analysis. Sub-commands: index, symbols, graph, trace, kernels, capture, checkpoint, config "
                    "(`apxtui COMMAND --help`).",
    )
    p.add_argument("--version", action="version", version=f"apxtui {__version__}")
    add_checkout(p)
    p.add_argument("--checkpoint", metavar="PATH", help="a .safetensors file or a checkpoint directory")
    p.add_argument(
        "--export-dir", metavar="DIR", help="where `e` writes reports (default CHECKOUT/devlocal/<entry>/reports)"
    )
    p.add_argument("--no-mouse", action="store_true", help="leave the mouse to the terminal (text selection)")
    add_profile_args(p)
    return p


def explorer_config(args: argparse.Namespace) -> ExplorerConfig:
    """The explorer's configuration from the ``apxtui`` arguments (raises UserError for a bad checkout)."""
    root = checkout_path(args).resolve()
    if not root.is_dir():
        raise UserError(f"checkout not found or not a directory: {root}")
    checkpoint: Path | None = None
    if args.checkpoint:
        checkpoint = Path(args.checkpoint).resolve()
        if not checkpoint.exists():
            raise UserError(f"checkpoint not found: {checkpoint}")
    elif args.demo:
        checkpoint = DEMO_CHECKPOINT
    try:
        profile = profile_from_args(args, root)
    except ProfileError as e:
        raise UserError(str(e)) from e
    return ExplorerConfig(root, demo=args.demo, checkpoint=checkpoint, export_dir=args.export_dir,
                          use_cache=not args.no_cache, jobs=args.jobs, profile=profile, mouse=not args.no_mouse)


def run(args: argparse.Namespace) -> int:
    jobs(args)
    if not (sys.stdin and sys.stdin.isatty() and sys.stdout and sys.stdout.isatty()):
        raise UserError("the explorer needs a terminal (stdin or stdout is not one); for output to a file or "
                        "pipe use a sub-command, e.g. `apxtui index CHECKOUT` or `apxtui trace …`")
    config = explorer_config(args)
    from apxtui.tui.app import run_app  # lazy: Textual loads only when the explorer opens

    return run_app(config)
