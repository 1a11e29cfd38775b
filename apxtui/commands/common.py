"""Arguments and index loading shared by the sub-commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from apxtui.cli import UserError
from apxtui.scan import ScanError


def add_checkout(p: argparse.ArgumentParser) -> None:
    p.add_argument("checkout", nargs="?", help="path of the checkout to index (omit with --demo)")
    p.add_argument("--demo", action="store_true", help="use the embedded demo checkout")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write the fact cache")
    p.add_argument("--jobs", type=int, default=None, help="parser processes (default: all cores)")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def checkout_path(args: argparse.Namespace) -> Path:
    if getattr(args, "demo", False):
        from apxtui.demo import DEMO_CHECKOUT

        return DEMO_CHECKOUT
    if not args.checkout:
        raise UserError("no checkout given (pass a path, or --demo for the embedded demo)")
    return Path(args.checkout)


def load_index(args: argparse.Namespace, quiet: bool = False):
    from apxtui.index.build import build_index

    try:
        idx = build_index(checkout_path(args), use_cache=not args.no_cache, workers=args.jobs)
    except (ScanError, ValueError, FileNotFoundError) as e:  # bad checkout / broken query file
        raise UserError(str(e)) from e
    if not quiet:
        for n in idx.notices:
            print(f"apxtui: {n}", file=sys.stderr)
    return idx


def write_output(text: str, out: str | None) -> None:
    """Write CLI output; control characters from the analysed source are made visible."""
    from apxtui.report.safe import visible_controls

    text = visible_controls(text)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
