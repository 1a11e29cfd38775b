"""``apxtui checkpoint PATH [--json]``: safetensors headers, config dims, shape checks.

Exit status: 0 when every file of the checkpoint was read; 1 when any could not be used
(an error-severity problem: a broken shard, an index that is not valid JSON or names a
missing shard, an unreadable config) — what could be read is still printed — or when
nothing could be read.  ``--json`` prints the dict documented in :mod:`apxtui.checkpoint.export`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from apxtui.checkpoint import CheckpointError, check_shapes, read_checkpoint, summarize, to_dict
from apxtui.checkpoint.model import Checkpoint
from apxtui.checkpoint.names import pattern
from apxtui.checkpoint.shapes import Finding
from apxtui.checkpoint.summary import Summary
from apxtui.commands.common import Subparsers
from apxtui.errors import ScanError, UserError
from apxtui.index.build import build_index
from apxtui.textsafe import join_lines, one_line


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "checkpoint",
        help="summarise a safetensors checkpoint (headers only) and check config dims against shapes",
        description="Read the headers of a .safetensors file or a directory of shards (with or without "
        "model.safetensors.index.json) and config.json beside them. No tensor data is loaded.",
    )
    p.add_argument("path", metavar="PATH", help=".safetensors file, index JSON, or directory of shards")
    p.add_argument("--json", action="store_true", help="print the documented JSON dict instead of text")
    p.add_argument("--code", metavar="CHECKOUT",
                   help="join the checkpoint's tensors with the tensor names the code in CHECKOUT asks for")
    p.add_argument("--under", action="append", default=[], metavar="DIR",
                   help="with --code: only names asked for in files under DIR (relative; repeatable)")
    p.add_argument("--no-cache", action="store_true", help="with --code: ignore the fact cache")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.code:
        return run_join(args)
    try:
        ckpt = read_checkpoint(args.path)
    except CheckpointError as e:
        raise UserError(str(e)) from None
    nothing = not ckpt.tensors
    if args.json:
        json.dump(to_dict(ckpt), sys.stdout, indent=1, default=str)
        print()
        return 1 if nothing or ckpt.errors else 0
    if nothing:
        errors = ckpt.errors or ckpt.problems
        if len(errors) == 1:
            raise UserError(f"{errors[0]}")
        for p in ckpt.problems:
            print(f"apxtui: {p.severity}: {one_line(p, 0)}", file=sys.stderr)
        print("apxtui: no tensor could be read", file=sys.stderr)
        return 1
    print(render_text(ckpt, summarize(ckpt), check_shapes(ckpt)))
    return _errors_exit(ckpt)


def _errors_exit(ckpt: Checkpoint) -> int:
    """1 (with one line per error on stderr) when a file of the checkpoint could not be used."""
    for p in ckpt.errors:
        print(f"apxtui: error: {one_line(p, 0)}", file=sys.stderr)
    return 1 if ckpt.errors else 0


def run_join(args: argparse.Namespace) -> int:
    """``--code CHECKOUT``: the weight join, as text or JSON; exit 1 when nothing was joined or a file
    of the checkpoint could not be used."""
    from apxtui.checkpoint.join import CLEAN, PARTIAL, join_dict, join_index  # lazy: start-up
    try:
        ckpt = read_checkpoint(args.path)
    except CheckpointError as e:
        raise UserError(str(e)) from None
    try:
        idx = build_index(args.code, use_cache=not args.no_cache)
    except (ScanError, ValueError, FileNotFoundError) as e:
        raise UserError(str(e)) from e
    j = join_index(idx, ckpt, args.under)
    d = join_dict(j)
    d["checkpoint"], d["checkout"] = str(ckpt.path), str(idx.root)
    if args.json:
        json.dump(d, sys.stdout, indent=1, default=str)
        print()
    else:
        print(render_join(d))
    broken = _errors_exit(ckpt)
    return 0 if j.status in (CLEAN, PARTIAL) and not broken else 1


def render_join(d: dict[str, Any]) -> str:
    """The join as text: counts, then matched / unmatched / prefix patterns, unclaimed, duplicates."""
    c = d["counts"]
    out = [
        f"weight join  {d.get('checkpoint', '')}  ↔  {d.get('checkout', '')}",
        f"status       {d['status_text']}",
        f"tensors      {c['tensors']:,}: {c['claimed']:,} claimed, {c['unclaimed']:,} unclaimed, "
        f"{c['duplicate_claims']:,} claimed by more than one pattern",
        f"patterns     {c['patterns']:,}: {c['matched_patterns']:,} matched, {c['unmatched_patterns']:,} needed and "
        f"missing, {c.get('optional_absent', 0):,} optional and absent, {c.get('alternatives_unused', 0):,} unused "
        f"alternatives, {c.get('not_applicable_patterns', 0):,} of loader families that do not apply, "
        f"{c['prefix_patterns']:,} name only a prefix",
        f"             {c['ignored_non_loader_strings']:,} name-like strings outside loaders ignored; "
        f"{c.get('too_generic_patterns', 0):,} mostly-wildcard patterns not used as claims; "
        f"{c.get('skipped_message_args', 0):,} names built only for messages; "
        f"{c.get('skipped_scripts', 0):,} strings in scripts/tools not taken as claims",
        d["static_analysis"],
    ]
    if d.get("families"):
        out += _section("Loader families (a family applies when its names claim a tensor)",
                        ["family", "applies", "patterns", "matched", "tensors"],
                        [[f["family"] or "-", "yes" if f["applies"] else "no", str(f["patterns"]),
                          str(f["matched_patterns"]), str(f["tensors"])] for f in d["families"]])

    def src(p: dict[str, Any]) -> str:
        s = p["sources"]
        first: str = s[0]["at"]
        return first + (f" (+{len(s) - 1})" if len(s) > 1 else "")

    out += _section("Matched", ["pattern", "tensors", "dtype", "bytes", "source"],
                    [[p["pattern"], str(p["tensors"]), ",".join(p["dtypes"]), _bytes(p["bytes"]), src(p)]
                     for p in d["matched"]] or [["-", "-", "-", "-", "no pattern matched"]])
    if d["unmatched"]:
        out += _section("Needed by the code, not in the checkpoint", ["pattern", "source", "written"],
                        [[p["pattern"], src(p), p["sources"][0]["written"]] for p in d["unmatched"]])
    if d.get("optional_absent"):
        out += _section("Read only under a condition, absent", ["pattern", "condition", "source"],
                        [[p["pattern"], p["condition"], src(p)] for p in d["optional_absent"]])
    if d.get("alternatives_unused"):
        out += _section("Alternatives not needed (another name of the group matched)", ["pattern", "group", "source"],
                        [[p["pattern"], p["group"], src(p)] for p in d["alternatives_unused"]])
    if d["prefixes"]:
        out += _section("Prefixes only (no tensor of that exact name)", ["pattern", "source"],
                        [[p["pattern"], src(p)] for p in d["prefixes"]])
    if d["unclaimed"]:
        out += _section("In the checkpoint, claimed by no pattern", ["tensors", "count", "dtype", "bytes"],
                        [[u["pattern"], str(u["count"]), ",".join(u["dtypes"]), _bytes(u["bytes"])]
                         for u in d["unclaimed"]])
    if d["duplicates"]:
        out += _section("Claimed by more than one pattern", ["tensor", "patterns"],
                        [[x["tensor"], " | ".join(x["patterns"])] for x in d["duplicates"]])
    return join_lines(out)


def render_text(ckpt: Checkpoint, s: Summary, findings: list[Finding]) -> str:
    """Compact summary, then the dtype, module, block, dims and findings tables."""
    out = [
        f"checkpoint  {ckpt.path}",
        f"            {s.tensors:,} tensors in {s.shards} shard(s), {_params(s.params)} params, {_bytes(s.bytes)}",
        f"index       {ckpt.index_file or '-'}",
        f"config      {ckpt.config_file or '- (none found)'}"
        + (f"  sections: {', '.join(ckpt.config)}" if ckpt.config else ""),
        "static: headers only, no tensor data loaded",
    ]
    out += _section("By dtype", ["dtype", "tensors", "params", "bytes"],
                    [[t.key, f"{t.tensors:,}", _params(t.params), _bytes(t.bytes)] for t in s.by_dtype])
    out += _section("By module", ["module", "tensors", "params", "bytes"],
                    [[t.key, f"{t.tensors:,}", _params(t.params), _bytes(t.bytes)] for t in s.by_module])
    out += _section(
        "Tensors (repeated blocks collapsed)",
        ["pattern", "count", "indices", "dtype", "shape", "bytes"],
        [[r.pattern, str(r.count), " × ".join(r.indices) or "-", ",".join(r.dtypes),
          " | ".join(_shape(x) for x in r.shapes[:3]) + (" …" if len(r.shapes) > 3 else ""), _bytes(r.bytes)]
         for r in s.rows],
    )
    for sec, dims in s.dims.items():
        out += _section(f"Dims [{sec}]", ["dim", "value", "source"],
                        [[k, _val(d.value), d.source] for k, d in dims.items()])
    shown = [f for f in findings if f.kind != "ok"]
    oks = sum(1 for f in findings if f.kind == "ok")
    out += _section(
        f"Shape checks ({oks} passed)", ["kind", "section", "×", "tensor", "finding"],
        [[f.kind, f.section, str(f.count), _where(f), f.message] for f in shown]
        or [["-", "-", "-", "-", "no mismatch or gap"]],
    )
    if ckpt.problems:
        out += _section("Problems", ["severity", "problem"], [[p.severity, str(p)] for p in ckpt.problems])
    return join_lines(out)


def _where(f: Finding) -> str:
    if not f.tensor:
        return "-"
    return pattern(f.tensor) if f.count > 1 else f.tensor


def _section(title: str, headers: list[str], rows: list[list[str]]) -> list[str]:
    rows = [[one_line(c, 0) for c in r] for r in rows]  # a name with a newline or escape stays in its cell
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]
    widths[-1] = 0  # last column is not padded

    def fmt(r: list[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)).rstrip()

    return ["", title, "  " + fmt(headers), *("  " + fmt(r) for r in rows)]


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1024
    return str(n)


def _params(n: int) -> str:
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:.2f}{unit}"
    return str(n)


def _shape(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _val(v: Any) -> str:
    if isinstance(v, dict):
        keys = ("quant_method", "fmt", "bits", "weight_block_size", "format")
        return json.dumps({k: v[k] for k in keys if k in v} or v)[:80]
    return str(v)
