"""``apxtui capture CHECKOUT [--json]``: CUDA Graph capture regions, bodies, constants, hazards, replay sites."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from apxtui.commands.common import Subparsers, add_checkout, load_index, write_output
from apxtui.report.capture_lines import cache_line, constant_line, end_lines, hazard_line, lifecycle_lines
from apxtui.textsafe import join_lines

if TYPE_CHECKING:
    from apxtui.analysis.capturefacts import CaptureAudit


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("capture", help="CUDA Graph capture regions, captured constants, hazards and replay sites",
                       description="Find stream-capture regions (begin/end, followed through wrappers), the body "
                                   "each records, the by-value scalars it freezes, host syncs/copies/allocations "
                                   "inside it, graph caches and replay sites. Static analysis.")
    add_checkout(p)
    p.add_argument("--json", action="store_true", help="JSON instead of text")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def render(rep: CaptureAudit) -> str:
    lines = [f"# {rep.static_analysis}"]
    if not rep.regions:
        lines.append("no capture region found")
    for r in rep.regions:
        lines.append(
            f"region in {r.function}: begin {r.begin.at if r.begin else '-'}"
            f", end {r.end.at if r.end else '-'} [{r.status}]"
            + (f" — {r.note}" if r.note else "")
        )
        lines += [f"  {x}" for x in end_lines(r)]
        lines.append("  body: " + ", ".join(f"{c.call} @ {c.at}" for c in r.body_calls))
        lines += [f"  {x}" for x in lifecycle_lines(r)]
        b = r.body
        assert b is not None  # the audit analyses every region's body
        lines.append(
            f"  kernel-launch sites in body (all arms, not a count): {len(b.launches)}; "
            f"library call sites: {len(b.library_calls)}"
            f"; allocation reachable in body: {'yes' if b.allocations_in_body else 'no'}"
            + ("" if b.complete else f"; INCOMPLETE: body cut at {', '.join(b.cut[:3])}")
        )
        seen = set()
        for launch in b.launches:
            for c in launch.constants:
                key = (launch.kernel, c.param, c.arg, c.flagged)
                if key in seen:
                    continue
                seen.add(key)
                lines.append(f"  {constant_line(launch.kernel, c)}")
        for h in b.hazards:
            lines.append(f"  HAZARD {hazard_line(h)}")
    for s in rep.replay_sites:
        w = "; ".join(f"{x.receiver}.{x.call}({', '.join(x.args)}) @ {x.at}" for x in s.stable_buffer_writes_before)
        g = "; ".join(f"{p.call} @ {p.at}" for p in s.graph_launches)
        lines.append(f"replay {s.call} in {s.function} @ {s.at}" + (f" → {g}" if g else "")
                     + (f" under {'; '.join(s.conditions)}" if s.conditions else "")
                     + (f"; written before: {w}" if w else ""))
    for cache in rep.graph_caches:
        lines.append(cache_line(cache))
    return join_lines(lines)


def run(args: argparse.Namespace) -> int:
    from apxtui.analysis.checkout import capture_report  # lazy: start-up

    rep = capture_report(load_index(args))
    write_output(json.dumps(rep.to_dict(), indent=2) if args.json else render(rep), args.output)
    return 0
