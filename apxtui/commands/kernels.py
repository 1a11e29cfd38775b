"""``apxtui kernels CHECKOUT [--json]``: every kernel with its launch sites, dtypes and the entries reaching it."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from apxtui.analysis.summary import kernel_short
from apxtui.commands.common import Subparsers, add_checkout, load_index, write_output
from apxtui.textsafe import join_lines

if TYPE_CHECKING:
    from apxtui.analysis.kernelfacts import KernelsReport


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("kernels", help="every __global__ kernel: launch sites, dtypes, entries that reach it",
                       description="List every kernel: definition, template parameters, launch sites with their "
                                   "dtypes, the entry points from which a call path reaches it, and the kernels "
                                   "and adapters no project path reaches. Static analysis.")
    add_checkout(p)
    p.add_argument("--json", action="store_true", help="JSON instead of text")
    p.add_argument("--all", action="store_true", help="include vendored kernels in the text listing")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def render(rep: KernelsReport, include_vendored: bool) -> str:
    lines = [f"# {rep.static_analysis}"]
    hidden = 0
    for k in rep.kernels:
        if k.vendored and not include_vendored:
            hidden += 1
            continue
        tp = f"<{', '.join(k.template_params)}>" if k.template_params else ""
        lines.append(f"{k.kernel}{tp}  {k.definition}" + ("  [vendored]" if k.vendored else ""))
        for s in k.launch_sites:
            ta = f"<{', '.join(s.template_args)}>" if s.template_args else ""
            dt = s.dtypes
            d = kernel_short(dt.input.value, dt.accumulator.value, dt.output.value,
                             [(c.source, c.to) for c in dt.conversions if c.kind == "round"], dt.storage.status.value)
            lines.append(f"  launch{ta} in {s.caller} @ {s.at}: {d}"
                         + (f"  × {' × '.join(s.loops)}" if s.loops else ""))
        if not k.launch_sites:
            lines.append("  no launch site in the index")
        for e in k.entries[:4]:
            lines.append(
                f"  reached from {e.entry}: "
                + " → ".join(e.path[1:-1][:6])
                + (" …" if len(e.path) > 8 else "")
            )
    if hidden:
        lines.append(f"({hidden} vendored kernels not listed; --all shows them)")
    lines.append("")
    lines.append(f"not reached (no edge of any kind): {len(rep.unreached)}")
    for u in rep.unreached:
        lines.append(f"  {u.kind} {u.name}  {u.definition}")
    lines.append("")
    lines.append(f"reached only by name patterns (heuristic): {len(rep.reached_by_name_pattern_only)}")
    for u in rep.reached_by_name_pattern_only:
        at = u.at or ()
        lines.append(f"  kernel {u.name}  {u.definition}  by {'; '.join((u.patterns or ())[:3])} @ "
                     + ", ".join(at[:3]) + (" …" if len(at) > 3 else ""))
    lines.append("")
    lines.append(f"launched, but no entry reaches the launcher: {len(rep.no_entry)}")
    for u in rep.no_entry:
        lines.append(f"  {u.kind} {u.name}  {u.definition}")
    return join_lines(lines)


def run(args: argparse.Namespace) -> int:
    from apxtui.analysis.checkout import kernels_report  # lazy: start-up

    rep = kernels_report(load_index(args))
    write_output(json.dumps(rep.to_dict(), indent=2) if args.json else render(rep, args.all), args.output)
    return 0
