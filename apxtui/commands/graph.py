"""``apxtui graph CHECKOUT [--format json|dot]``: the whole linked graph, for scripting."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from apxtui.commands.common import Subparsers, add_checkout, load_index, write_output
from apxtui.textsafe import one_line


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("graph", help="dump the linked graph", description="Dump the whole linked graph: networkx "
                       "node-link JSON (default) or Graphviz dot.")
    add_checkout(p)
    p.add_argument("--format", choices=("json", "dot"), default="json")
    p.add_argument("-o", "--output", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


if TYPE_CHECKING:
    import networkx as nx


def _dot_id(s: str) -> str:
    """A quoted DOT string: one line (controls visible), backslash and quote escaped."""
    return '"' + one_line(s, 0).replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(g: nx.MultiDiGraph[str]) -> str:
    lines = ["digraph apxtui {", "  rankdir=LR;", "  node [shape=box, fontsize=10];"]
    for n, d in g.nodes(data=True):
        label = _dot_id(d.get("qualname", n))[:-1] + "\\n" + d.get("kind", "") + '"'  # \n: DOT's line break
        lines.append(f"  {_dot_id(n)} [label={label}];")
    for u, v, d in g.edges(data=True):
        style = {"exact": "solid", "heuristic": "dashed", "ambiguous": "dotted", "unresolved": "dotted"}.get(
            d.get("resolution", ""), "solid")
        lines.append(f"  {_dot_id(u)} -> {_dot_id(v)} [label={_dot_id(d.get('kind', ''))}, style={style}];")
    lines.append("}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import networkx as nx

    idx = load_index(args)
    graph = idx.full_graph()
    if args.format == "dot":
        text = to_dot(graph)
    else:
        data = nx.node_link_data(graph, edges="edges")
        text = json.dumps(data, default=str)
    write_output(text, args.output)
    return 0
