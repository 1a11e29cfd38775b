"""``apxtui index CHECKOUT [--json]``: what was indexed, what was skipped, what links."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from apxtui.commands.common import Subparsers, add_checkout, load_index, write_output
from apxtui.commands.profile_flags import add_profile_args, resolve_from_args
from apxtui.textsafe import join_lines

if TYPE_CHECKING:
    from apxtui.facts import Issue
    from apxtui.index.build import Index
    from apxtui.profile.model import Resolved


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("index", help="index a checkout and summarise it",
                       description="Index a checkout: files by language, skipped files with reasons, "
                                   "symbols by kind, edges by kind and resolution, revision, seconds.")
    add_checkout(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--all-dropped", action="store_true",
                   help="with --json: also every reason a call was not drawn, with its count (thousands of keys)")
    add_profile_args(p)
    p.set_defaults(func=run)


def summary(idx: Index, profile: Resolved | None = None, all_dropped: bool = False) -> dict[str, Any]:
    """What ``index`` prints; the counts come from the stored summary (no graph is read)."""
    from apxtui.report.header import header  # lazy: start-up (not the report model: map, trace, analyses)

    files = Counter(sf.lang for sf in idx.scan.files if not sf.vendored)
    vendored = Counter(sf.lang for sf in idx.scan.files if sf.vendored)
    counts = idx.summary()
    return {
        **header(idx, profile),
        "files": dict(files),
        "vendored_files": {"listed": dict(vendored), "indexed_lazily": list(idx.vendored_indexed)},
        "other_files": idx.scan.other_files,
        "skipped": [{"file": i.file, "kind": i.kind, "message": i.message, "line": i.line,
                     **({"end_line": i.end_line} if i.end_line else {})} for i in idx.issues],
        "parse_errors": _parse_errors(idx.issues),
        "symbols": dict(counts["symbols"]),
        "edges": {k: dict(v) for k, v in counts["edges"].items()},
        "dropped_calls": {"total": sum(counts["dropped"].values()), "by_category": dict(counts["dropped"]),
                          "sample": idx.dropped_sample(),
                          **({"by_reason": dict(sorted(idx.graph.graph["dropped"].items()))} if all_dropped else {})},
        "parsed_this_run": len(idx.parsed),
        "seconds": {k: round(v, 3) for k, v in idx.timings.items()},
    }


def _parse_errors(issues: list[Issue]) -> dict[str, Any]:
    """Code the parser could not read: files, regions and lines left out of the facts."""
    syntax = [i for i in issues if i.kind == "syntax"]
    return {"files": len({i.file for i in syntax}), "regions": sum(1 for i in syntax if i.lines_lost),
            "lines_lost": sum(i.lines_lost for i in syntax),
            "over_budget": sorted({i.file for i in issues if i.kind == "budget"})}


def _one_line_per_file(issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issues for the text report, a file's parse-error regions folded into one line."""
    out: list[dict[str, Any]] = []
    folded: dict[str, dict[str, Any]] = {}
    for i in issues:
        if i["kind"] != "syntax" or not i.get("end_line"):
            out.append(i)
            continue
        span = str(i["line"]) if i["end_line"] == i["line"] else f"{i['line']}-{i['end_line']}"
        f = folded.get(i["file"])
        if f is None:
            f = folded[i["file"]] = {**i, "spans": [], "lost": 0}
            out.append(f)
        f["spans"].append(span)
        f["lost"] += i["end_line"] - i["line"] + 1
    for f in folded.values():
        spans = f["spans"]
        where = ", ".join(spans[:6]) + (f", … ({len(spans)} regions)" if len(spans) > 6 else "")
        f["message"] = (f"parse error: line{'s' if len(spans) > 1 or '-' in spans[0] else ''} {where} not "
                        f"understood ({f['lost']} line{'s' if f['lost'] != 1 else ''} left out of the facts)")
    return out


def run(args: argparse.Namespace) -> int:
    idx = load_index(args)
    s = summary(idx, resolve_from_args(args, idx), all_dropped=args.all_dropped)
    if args.json:
        write_output(json.dumps(s, indent=2), None)
        return 0
    lines = [f"checkout  {s['checkout']}",
             f"revision  {s['revision']}" + (f" ({s['branch']})" if s["branch"] else "")]
    wt = s["working_tree"]
    if wt:
        lines.append(f"changes   {len(wt['modified'])} modified, {len(wt['untracked'])} untracked")
    lines.append(f"profile   {s['profile']}")
    lines.append("files     " + ", ".join(f"{k} {v}" for k, v in sorted(s["files"].items())) +
                 f"  (vendored listed: {sum(s['vendored_files']['listed'].values())}, "
                 f"indexed lazily: {len(s['vendored_files']['indexed_lazily'])})")
    lines.append("symbols   " + ", ".join(f"{k} {v}" for k, v in sorted(s["symbols"].items())))
    lines.append("edges")
    for k, v in sorted(s["edges"].items()):
        lines.append(f"  {k:<8} " + ", ".join(f"{r} {n}" for r, n in sorted(v.items())))
    dropped = s["dropped_calls"]
    lines.append(f"not drawn {dropped['total']} calls to std/prelude/builtins or unknown-method names "
                 "(counted per caller)")
    for cat, n in list(dropped["by_category"].items())[:8]:
        at = next(iter(dropped["sample"].get(cat, [])), None)
        lines.append(f"  {n:>7}  {cat}" + (f"  (e.g. {at['file']}:{at['line']})" if at else ""))
    if len(dropped["by_category"]) > 8:
        lines.append(f"  … {len(dropped['by_category']) - 8} more categories (--json lists all)")
    nfiles = len({i["file"] for i in s["skipped"]})
    lines.append(f"issues    {len(s['skipped'])} in {nfiles} files skipped or parsed with recovery")
    pe = s["parse_errors"]
    if pe["files"]:
        lines.append(f"  parse errors in {pe['files']} files: {pe['regions']} regions, {pe['lines_lost']} lines "
                     "left out of the facts")
    if pe["over_budget"]:
        lines.append(f"  {len(pe['over_budget'])} files over the per-file time budget, skipped")
    shown = _one_line_per_file(s["skipped"])
    for i in shown[:20]:
        lines.append(f"  {i['file']}:{i['line'] or ''} {i['kind']}: {i['message']}")
    if len(shown) > 20:
        lines.append(f"  … {len(shown) - 20} more (--json lists all)")
    secs = s["seconds"]
    lines.append(f"seconds   total {secs.get('total')} (scan {secs.get('scan')}, parse {secs.get('parse')}, "
                 f"macros {secs.get('macros', 0)}, link {secs.get('link')}, "
                 f"vendored search {secs.get('vendored_search')}, "
                 f"vendored parse {secs.get('vendored_parse', 0)}); parsed {s['parsed_this_run']} files this run")
    write_output(join_lines(lines), None)
    return 0
