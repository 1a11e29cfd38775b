"""``apxtui trace CHECKOUT --from SYMBOL [--select TEXT ...] [--format text|md|json] [--view map|tree]
[--detail summary|full] [--budget N] [-o FILE]``.

Text and Markdown show the execution map (:mod:`apxtui.map`) by default; ``--view tree`` prints the
call tree, ``--detail full`` adds every stage and per-call analysis to the Markdown, JSON has both.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from apxtui.commands.common import Subparsers, add_checkout, load_index, write_output
from apxtui.commands.profile_flags import add_profile_args, resolve_from_args
from apxtui.errors import SymbolError, UserError
from apxtui.textsafe import join_lines
from apxtui.trace import DEFAULT_BUDGET, Tracer, find_symbol

if TYPE_CHECKING:
    from apxtui.analysis.path import AnalysedPath
    from apxtui.checkpoint.model import Checkpoint
    from apxtui.checkpoint.ontrace import CheckpointFacts
    from apxtui.index.build import Index
    from apxtui.profile.model import Resolved


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "trace", help="the execution tree from an entry symbol",
        description="Trace the execution tree from SYMBOL: a qualified name, a unique suffix of one "
                    "(norm::rms_norm, Pi05Policy.infer), PATH::NAME, or a node id from `symbols`.")
    add_checkout(p)
    p.add_argument("--from", dest="entry", required=True, metavar="SYMBOL", help="entry symbol")
    p.add_argument("--select", action="append", default=[], metavar="TEXT",
                   help="at each dispatch point choose the arms whose condition contains TEXT (repeatable)")
    p.add_argument("--depth", type=int, default=40, help="maximum call depth of the tree (default 40)")
    p.add_argument("--format", choices=("text", "md", "json"), default="text")
    p.add_argument("--view", choices=("map", "tree"), default="map",
                   help="text output: the execution map (default) or the call tree")
    p.add_argument("--detail", choices=("summary", "full"), default="summary",
                   help="Markdown: the map (default) or also every stage and per-call analysis (slow on big engines)")
    p.add_argument("--budget", type=int, default=None, metavar="N",
                   help=f"stages the call tree may expand (default {DEFAULT_BUDGET}); shared out per branch so one "
                        "branch cannot starve the others; every cut is listed. The map is not budgeted.")
    p.add_argument("--operators", action="append", default=[], metavar="PREFIX",
                   help="the operator layer: functions whose file path or qualified name starts with PREFIX "
                        "(repeatable; default: the packages with launch/vendor/extern \"C\" edges, or [map] "
                        "operators in .apxtui.toml)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    add_profile_args(p)
    g = p.add_argument_group("checkpoint and speed of light")
    g.add_argument("--checkpoint", metavar="PATH", help="join the checkpoint's weights with the code; stored "
                   "weights per stage, layer loops bound to config.json")
    g.add_argument("--weights-under", action="append", default=[], metavar="DIR",
                   help="only tensor names asked for under DIR (relative; repeatable)")
    g.add_argument("--sol", metavar="DEVICE", help="speed of light on DEVICE (see apxtui/checkpoint/devices.toml)")
    g.add_argument("--batch", type=int, metavar="B", help="sequences per call (with --sol)")
    g.add_argument("--seq", type=int, metavar="S", help="new tokens per sequence per call (with --sol)")
    g.add_argument("--context", type=int, metavar="L", help="context length incl. the new tokens (default: S)")
    g.add_argument("--launch-floor-us", type=float, metavar="US", help="launch floor for the serial estimate")
    g.add_argument("--bind", action="append", default=[], metavar="TEXT=N",
                   help="bind a symbolic loop whose header contains TEXT to N iterations (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.depth < 1:
        raise UserError("--depth must be at least 1")
    if args.budget is not None and args.budget < 1:
        raise UserError("--budget must be at least 1")
    ckpt, bind = _checkpoint_args(args)
    idx = load_index(args)
    try:
        entry = find_symbol(idx.graph, args.entry)
    except SymbolError as e:
        more = ("; candidates: " + ", ".join(e.candidates[:12])) if e.candidates else ""
        raise UserError(f"{e}{more}") from e
    profile = resolve_from_args(args, idx)
    if args.format == "text" and args.view == "tree":
        text = _tree_text(args, idx, entry, profile, ckpt, bind)
    else:
        text = _map_text(args, idx, entry, profile, ckpt, bind)
    write_output(text, args.output)
    return 0


def _map_text(args: argparse.Namespace, idx: Index, entry: str, profile: Resolved | None, ckpt: Checkpoint | None,
              bind: dict[str, int]) -> str:
    """The execution map as JSON (with the full trace document), Markdown or text."""
    from apxtui.analysis.calls import CallsFileError  # lazy: start-up
    from apxtui.map.operators import OperatorConfigError  # lazy: start-up
    from apxtui.report.model import map_report  # lazy: start-up

    full = args.format == "json" or args.detail == "full" or ckpt is not None
    if ckpt or bind:
        from apxtui.checkpoint.ontrace import loop_binder  # lazy: only with --checkpoint / --bind
    try:
        rep = map_report(idx, entry, select=args.select, profile=profile, detail=full, depth=args.depth,
                         budget=args.budget, loop_bind=loop_binder(ckpt, bind) if (ckpt or bind) else None,
                         operators=args.operators or None, checkpoint=str(ckpt.path) if ckpt else None)
    except (CallsFileError, OperatorConfigError) as e:
        raise UserError(str(e)) from None
    if rep.trace is not None and rep.analysed is not None and ckpt is not None:
        rep.checkpoint_facts = _checkpoint_facts(args, rep.analysed, idx, ckpt, bind)
    if args.format == "json":
        from apxtui.report.model import add_checkpoint_facts  # lazy: start-up

        if rep.trace is not None and rep.checkpoint_facts is not None:
            add_checkpoint_facts(rep.trace, rep.checkpoint_facts)
        return json.dumps({**rep.trace, "path": [str(s.site) for s in rep.path]} if rep.trace else {}, indent=2)
    if args.format == "md":
        from apxtui.report.markdown import render_map_markdown  # lazy: start-up

        return render_map_markdown(rep, detail=args.detail == "full")
    from apxtui.report.text import render_map_text  # lazy: start-up

    text = render_map_text(rep)
    if rep.checkpoint_facts is not None:
        text += "\n" + _checkpoint_text(rep.checkpoint_facts)
    return text


def _tree_text(args: argparse.Namespace, idx: Index, entry: str, profile: Resolved | None, ckpt: Checkpoint | None,
               bind: dict[str, int]) -> str:
    """Today's call tree with the path-level analyses (``--view tree``)."""
    from apxtui.analysis.path import analyse  # lazy: start-up
    from apxtui.report.model import trace_document  # lazy: start-up
    from apxtui.report.text import render_summary, render_tree  # lazy: start-up

    kw = {"budget": args.budget} if args.budget else {}
    root = Tracer(idx.graph, select=args.select, depth=args.depth, profile=profile, **kw).trace(entry)
    path = analyse(idx, root)
    doc = trace_document(idx, root, args.select, args.depth, profile, path=path)
    text = (f"# {doc['profile']} · {doc['static_analysis']}\n" + render_tree(root) + "\n"
            + render_summary(path))
    if ckpt is not None:
        text += "\n" + _checkpoint_text(_checkpoint_facts(args, path, idx, ckpt, bind))
    return text


def _checkpoint_args(args: argparse.Namespace) -> tuple[Checkpoint | None, dict[str, int]]:
    """(Checkpoint or None, loop bindings) after checking the --checkpoint/--sol flags."""
    if getattr(args, "sol", None) is not None and (not args.checkpoint or not args.batch or not args.seq):
        raise UserError("--sol needs --checkpoint PATH, --batch B and --seq S")
    if getattr(args, "checkpoint", None) is None:
        return None, {}
    from apxtui.checkpoint import CheckpointError, read_checkpoint  # lazy: only with --checkpoint
    from apxtui.checkpoint.ontrace import parse_bind  # lazy: start-up

    try:
        bind = parse_bind(args.bind)
        ckpt = read_checkpoint(args.checkpoint)
    except (CheckpointError, ValueError) as e:
        raise UserError(str(e)) from None
    return ckpt, bind


def _checkpoint_facts(args: argparse.Namespace, path: AnalysedPath, idx: Index, ckpt: Checkpoint,
                      bind: dict[str, int]) -> CheckpointFacts:
    """The checkpoint facts of the analysed ``path`` (and the speed of light with ``--sol``)."""
    from apxtui.checkpoint.ontrace import checkpoint_facts, price_path  # lazy: start-up

    facts = checkpoint_facts(path, idx, ckpt, args.weights_under, bind)
    if args.sol:
        try:
            facts.sol = price_path(path, facts, args.sol, args.batch, args.seq, args.context, args.launch_floor_us)
        except (KeyError, ValueError) as e:
            raise UserError(str(e).strip("'\"")) from None
    return facts


def _checkpoint_text(facts: CheckpointFacts) -> str:
    """Short plain-text summary of the checkpoint facts (full detail: --format md/json)."""
    out = [f"checkpoint join: {facts.join.status_text()}",
           f"stages reading a known weight: {len(facts.weights)} (heuristic)"]
    out += [f"loop `{r.loop[:60]}`: {r.value} from {r.config_field or r.status}"
            for r in facts.bounds.loops if r.value is not None]
    sol = facts.sol
    if sol is not None:
        for name, r in (("bound", sol.bound), ("estimate", sol.estimate)):
            val = f"{r.seconds * 1e6:.3f} µs" if r.seconds is not None else "—"
            out.append(f"speed of light on {sol.device}: {name} {val} [{r.status}]"
                       + (f" missing: {'; '.join(r.missing)}" if r.missing else ""))
    return join_lines(out)
