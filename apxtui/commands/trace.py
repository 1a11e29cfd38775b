"""``apxtui trace CHECKOUT --from SYMBOL [--select TEXT ...] [--depth N] [--format text|md|json] [-o FILE]``."""

from __future__ import annotations

import json

from apxtui.cli import UserError
from apxtui.commands.common import add_checkout, load_index, write_output
from apxtui.profile import add_profile_args, resolve_from_args
from apxtui.trace import SymbolError, Tracer, find_symbol


def add_parser(sub) -> None:
    p = sub.add_parser(
        "trace", help="the execution tree from an entry symbol",
        description="Trace the execution tree from SYMBOL: a qualified name, a unique suffix of one "
                    "(norm::rms_norm, Pi05Policy.infer), PATH::NAME, or a node id from `symbols`.")
    add_checkout(p)
    p.add_argument("--from", dest="entry", required=True, metavar="SYMBOL", help="entry symbol")
    p.add_argument("--select", action="append", default=[], metavar="TEXT",
                   help="at each dispatch point choose the arms whose condition contains TEXT (repeatable)")
    p.add_argument("--depth", type=int, default=40, help="maximum call depth (default 40)")
    p.add_argument("--format", choices=("text", "md", "json"), default="text")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    add_profile_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.depth < 1:
        raise UserError("--depth must be at least 1")
    idx = load_index(args)
    try:
        entry = find_symbol(idx.graph, args.entry)
    except SymbolError as e:
        more = ("; candidates: " + ", ".join(e.candidates[:12])) if e.candidates else ""
        raise UserError(f"{e}{more}") from e
    profile = resolve_from_args(args, idx)
    root = Tracer(idx.graph, select=args.select, depth=args.depth, profile=profile).trace(entry)
    from apxtui.report.model import trace_document

    doc = trace_document(idx, root, args.select, args.depth, profile)
    if args.format == "json":
        text = json.dumps(doc, indent=2)
    elif args.format == "md":
        from apxtui.report.markdown import render_markdown

        text = render_markdown(doc)
    else:
        from apxtui.report.text import render_summary, render_tree

        text = f"# {doc['profile']} · {doc['static_analysis']}\n" + render_tree(root) + "\n" + render_summary(doc)
    write_output(text, args.output)
    return 0
