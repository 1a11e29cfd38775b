"""``apxtui symbols CHECKOUT [--kind K] [--grep TEXT] [--json]``."""

from __future__ import annotations

import argparse
import json

from apxtui.commands.common import Subparsers, add_checkout, load_index, write_output
from apxtui.textsafe import join_lines


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("symbols", help="list indexed symbols", description="List the graph's symbols (definitions, "
                       "PyO3 bindings, vendor APIs, externals), optionally filtered.")
    add_checkout(p)
    p.add_argument("--kind", action="append", help="only this node kind (repeatable), e.g. kernel, rust_fn, abi_fn")
    p.add_argument("--grep", help="only symbols whose qualified name contains TEXT (case-insensitive)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    idx = load_index(args)
    rows = []
    for n, d in idx.graph.nodes(data=True):
        if d.get("kind") == "file":
            continue
        if args.kind and d.get("kind") not in args.kind:
            continue
        if args.grep and args.grep.lower() not in d.get("qualname", "").lower():
            continue
        rows.append({"id": n, "kind": d.get("kind"), "qualname": d.get("qualname"), "lang": d.get("lang"),
                     "file": d.get("file"), "line": d.get("line"), "cfg": d.get("cfg", []), "pp": d.get("pp", [])})
    rows.sort(key=lambda r: (r["kind"] or "", r["qualname"] or ""))
    if args.json:
        write_output(json.dumps(rows, indent=2), None)
    else:
        write_output(join_lines([*(f"{r['kind']:<13} {r['qualname']}  {r['file']}:{r['line']}" for r in rows),
                                 f"{len(rows)} symbols"]), None)
    return 0
