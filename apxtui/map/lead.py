"""The lead of a map: the main implementation choices a reader wants first (GEMM path, attention,
dtypes, launches per layer), read off the steady-state rows."""

from __future__ import annotations

import re
from collections import Counter

from apxtui.map.model import Call, ExecutionMap, Row, iter_calls
from apxtui.vocab import Phase

_GEMM = re.compile(r"gemm|matmul|linear", re.I)
_ATTN = re.compile(r"attn|attention|mha|flash|sdpa", re.I)


def _names(rows: list[Row], pat: re.Pattern[str]) -> list[str]:
    out: dict[str, None] = {}
    hit: dict[str, bool] = {}
    for r in rows:
        row_hit = bool(pat.search(r.op))
        for c in iter_calls(r.work):
            name = c.name
            if name not in out and (row_hit or hit.setdefault(name, bool(pat.search(name)))):
                out[name] = None
    return list(out)


def per_layer(rows: list[Row]) -> list[str]:
    """Device launches and library calls of one iteration of each layer loop (rows under it summed)."""
    loops: dict[str, list[Row]] = {}
    for r in rows:
        for rep in r.repeat:
            if rep.unit == "per layer":
                loops.setdefault(f"{rep.header}` in `{rep.function.split('::')[-1] or '?'}", []).append(r)
                break
    out = []
    for loop, rs in loops.items():
        tot = [0, 0, 0, 0]
        ok = True
        for r in rs:
            dr, lr = r.counts.device_range, r.counts.library_range
            if dr is None or lr is None:
                ok = False
                break
            tot = [tot[0] + dr[0], tot[1] + dr[1], tot[2] + lr[0], tot[3] + lr[1]]
        if ok and tot[1] + tot[3]:
            dev = str(tot[0]) if tot[0] == tot[1] else f"{tot[0]} .. {tot[1]}"
            lib = str(tot[2]) if tot[2] == tot[3] else f"{tot[2]} .. {tot[3]}"
            out.append(f"per iteration of `{loop}`: {dev} device launches, {lib} library calls ({len(rs)} rows)")
    return out


def lead_lines(m: ExecutionMap) -> list[str]:
    if not m.phases:
        return ["No device work or library call is reached from this entry."]
    steady = next((t for t in m.phases if t.phase == Phase.EAGER), None)
    if steady is None:
        return [f"no steady-state rows: only {', '.join(t.phase.value for t in m.phases)} tables"]
    rows = steady.rows
    out = [f"steady state ({steady.frequency}): {len(rows)} rows; {steady.totals.device} device launches, "
           f"{steady.totals.library} library calls"]
    for label, pat in (("GEMM path", _GEMM), ("attention", _ATTN)):  # picked by name: said so
        names = _names(rows, pat)
        if names:
            out.append(f"{label} (by name): " + ", ".join(names[:6]) + (f" (+{len(names) - 6} more)"
                                                                         if len(names) > 6 else ""))
    dts = Counter(c.dtypes for r in rows for c in iter_calls(r.work) if isinstance(c, Call) and c.dtypes)
    if dts:
        out.append("dtypes: " + "; ".join(f"{t} ×{n}" for t, n in dts.most_common(3)))
    out += per_layer(rows)
    return out
