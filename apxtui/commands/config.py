"""``apxtui config CHECKOUT [--json] [profile flags]``: the checkout's configuration space
(cfg names and the build-script conditions that emit them, Cargo features per crate, CUDA
architectures mentioned, environment variables read) and, with a profile, its derivation."""

from __future__ import annotations

import argparse
import json
from typing import Any

from apxtui.commands.common import Subparsers, add_checkout, load_index, write_output
from apxtui.commands.profile_flags import add_profile_args, profile_from_args
from apxtui.errors import ProfileError, UserError
from apxtui.profile.bind import resolve
from apxtui.profile.space import ConfigSpace, discover
from apxtui.report.header import header
from apxtui.textsafe import join_lines


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("config", help="the configuration space: cfg names, features, archs, env variables",
                       description="Show the build/run configuration space of a checkout; with profile flags, "
                                   "what the profile enables and how each build-script cfg was derived.")
    add_checkout(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_profile_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    idx = load_index(args)
    space = discover(idx.root, idx.facts)
    try:
        prof = profile_from_args(args, idx.root)
    except ProfileError as e:
        raise UserError(str(e)) from e
    rp = resolve(prof, idx)
    head = header(idx, rp)
    if args.json:
        write_output(json.dumps({**head, **space.to_dict()}, indent=2, default=str), None)
        return 0
    write_output(join_lines(render(space, head)), None)
    return 0


def render(space: ConfigSpace, head: dict[str, Any]) -> list[str]:
    """The text form: ``space`` under the report header ``head`` (checkout, profile, profile_detail)."""
    out = [f"checkout  {head['checkout']}", f"profile   {head['profile']}", "", "crates"]
    for c in space.crates:
        feats = ", ".join(f"{k}{' → ' + ','.join(v) if v else ''}" for k, v in sorted(c.features.items()))
        out.append(f"  {c.name} ({c.dir or '.'})  features: {feats or '(none)'}  "
                   f"default: {','.join(c.default) or '(none)'}" + (f"  build: {c.build}" if c.build else ""))
    out += ["", "cfg names (build scripts and uses)"]
    for name, e in sorted(space.cfg_entries().items()):
        line = f"  {name}"
        if e.crate:
            line += f"  [{e.crate}]"
        if e.declared:
            line += f"  declared {', '.join(e.declared)}"
        if e.used:
            line += f"  used {e.used}× (first {e.first_use})"
        out.append(line)
        for em in e.emitted:
            out.append(f"      emitted {em.at} {em.when()}")
    defines = space.cfg_entries("define")
    if defines:
        out += ["", "C/CUDA macros defined by build scripts"]
        for name, e in sorted(defines.items()):
            for em in e.emitted:
                val = f"={em.value}" if em.value is not None else ""
                out.append(f"  {name}{val}  [{e.crate}] {em.at} {em.when()}")
    out += ["", "CUDA architectures mentioned"]
    by_arch: dict[str, list[str]] = {}
    for a in space.archs:
        by_arch.setdefault(a.arch, []).append(f"{a.at} ({a.how[:60]})")
    for arch, where in sorted(by_arch.items(), key=lambda kv: (len(kv[0]), kv[0])):
        out.append(f"  {arch}  " + "; ".join(where[:3]) + (f"; … {len(where) - 3} more" if len(where) > 3 else ""))
    out += ["", "environment variables read"]
    for name, reads in sorted(space.env.items()):
        dflt = sorted({r.default for r in reads if r.default})
        out.append(f"  {name}  " + ", ".join(f"{r.file}:{r.line}" for r in reads[:4]) + (" …" if len(reads) > 4 else "")
                   + (f"  default/use: {'; '.join(dflt)[:100]}" if dflt else ""))
    if space.problems:
        out += ["", "files not read"] + [f"  {f}: {m}" for f, m in space.problems]
    det = head.get("profile_detail")
    if det:
        out += ["", f"under {det['text']}"]
        out.append("  features on: " + "; ".join(f"{k}: {','.join(v) or '-'}" for k, v in det["features"].items()))
        for d in det["derived_cfg"] + det["derived_defines"]:
            val = {True: "on", False: "off", None: "UNDECIDED"}[d["value"]]
            out.append(f"  {d['name']} [{d['crate']}] {val}")
            for s in d["derivation"]:
                out.append(f"      {s}")
            for s in d.get("assumed", []):
                out.append(f"      {s}")
        for w in det["warnings"]:
            out.append(f"  warning: {w}")
    return out
