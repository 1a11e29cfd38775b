"""Arguments and index loading shared by the sub-commands."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TypeAlias

from apxtui.demo import DEMO_CHECKOUT
from apxtui.errors import ScanError, UserError
from apxtui.index.build import Index, build_index
from apxtui.textsafe import neutralise, one_line

#: What ``add_subparsers`` returns: each command's ``add_parser(sub)`` registers its sub-parser on it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_checkout(p: argparse.ArgumentParser) -> None:
    which = p.add_mutually_exclusive_group()
    which.add_argument("checkout", nargs="?", help="path of the checkout to index (omit with --demo)")
    which.add_argument("--demo", action="store_true", help="use the embedded demo checkout")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write the fact cache")
    p.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                   help="parser processes (default and maximum: the number of cores)")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def jobs(args: argparse.Namespace) -> int | None:
    """``--jobs``, capped at the usable cores (said on stderr when capped); None: the default."""
    n = getattr(args, "jobs", None)
    cores = usable_cores()
    if n is not None and n > cores:
        print(f"apxtui: --jobs {n} capped at {cores} (the number of usable cores)", file=sys.stderr)
        n = args.jobs = cores
    return n


def checkout_path(args: argparse.Namespace) -> Path:
    if getattr(args, "demo", False):
        return DEMO_CHECKOUT
    if not args.checkout:
        raise UserError("no checkout given (pass a path, or --demo for the embedded demo)")
    return Path(args.checkout)


def load_index(args: argparse.Namespace, quiet: bool = False) -> Index:
    try:
        idx = build_index(checkout_path(args), use_cache=not args.no_cache, workers=jobs(args))
    except (ScanError, ValueError, FileNotFoundError) as e:  # bad checkout / broken query file
        raise UserError(str(e)) from e
    if not quiet:
        for n in idx.notices:
            print(f"apxtui: {one_line(n, 0)}", file=sys.stderr)
    return idx


def write_output(text: str, out: str | None) -> None:
    """Write CLI output; control characters from the analysed source are made visible."""
    text = neutralise(text)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
