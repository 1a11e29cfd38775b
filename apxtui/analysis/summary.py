"""Short one-line forms of a stage's analysis facts and the path's launch totals (shared by text, Markdown and the
execution map)."""

from __future__ import annotations

from apxtui.analysis.dtypefacts import DtypeFacts, KernelDtypes, LibraryDtypes, OperatorDtypes
from apxtui.analysis.pathfacts import LaunchTotals
from apxtui.analysis.stagefacts import CaptureFacts, Launches
from apxtui.vocab import Evidence


def kernel_short(ins: list[str], acc: list[str], outs: list[str], rounds: list[tuple[str | None, str]],
                 storage_status: str) -> str:
    """``bf16 → acc f32 → bf16 (rounds f32→bf16)`` (``[heuristic]`` when the storage dtypes are not exact)."""
    a = "/".join(acc)
    s = f"{'/'.join(ins) or '?'} → " + (f"acc {a} → " if a else "") + ("/".join(outs) or "?")
    conv = sorted({f"{a}→{b}" for a, b in rounds})
    if conv:
        s += f" (rounds {', '.join(conv)})"
    return s + ("" if storage_status == Evidence.EXACT else f" [{storage_status}]")


def dtype_short(d: DtypeFacts | None) -> str:
    """``bf16 → acc f32 → bf16`` for a kernel, ``A/B bf16, compute f32 → D bf16`` for a library call."""
    if isinstance(d, KernelDtypes):
        return kernel_short(d.input.value, d.accumulator.value, d.output.value,
                            [(c.source, c.to) for c in d.conversions if c.kind == "round"], d.storage.status.value)
    if isinstance(d, LibraryDtypes):
        ops = d.operands.value or {}
        comp = d.compute.value if d.compute is not None else None
        st = d.operands.status.value
        if not ops:
            return f"unknown ({d.operands.reason})"
        if "element" in ops:
            return f"element {ops['element']}" + (f", acc {comp}" if comp else "") + f" [{st}]"
        ab = "/".join(dict.fromkeys(str(ops.get(k)) for k in ("A", "B")))
        out = ops.get("D") or ops.get("C")
        return f"A/B {ab}, compute {comp or '?'} → {out}" + ("" if st == Evidence.EXACT else f" [{st}]")
    if isinstance(d, OperatorDtypes):
        arm = d.dtype_arm.value
        return f"DType arm {', '.join(arm)}" if arm else "DType arm: not selected"
    return ""


_OWN = {"device": "launch", "library": "library call", "library_setup": "library setup call"}


def launches_short(ln: Launches | None) -> str:
    """``launch ×28 (layers)`` for a call that launches itself, else its subtree's counts."""
    if ln is None:
        return ""
    mult = ln.multiplier
    own = _OWN.get(ln.own or "", "")
    if own:
        return own + (f" {mult}" if mult else "")
    parts = []
    if ln.device != "0":
        parts.append(f"{ln.device} launches")
    if ln.library != "0":
        parts.append(f"{ln.library} library calls")
    return ", ".join(parts) + (f" {mult}" if parts and mult else "")


def capture_short(c: CaptureFacts | None) -> str:
    """``captured; frozen per-request scalar(s): …; HAZARD …`` ("" outside capture)."""
    if c is None or not c.shown:
        return ""
    out = str(c.role) if c.region is not None else ""
    if c.role == "body":
        out = "captured"
    flagged = [k for k in c.constants or () if k.flagged]
    if flagged:
        out += "; frozen per-request scalar(s): " + ", ".join(f"{k.param}={k.arg}" for k in flagged)
    for h in c.hazards or ():
        out += f"; HAZARD {h.kind} {h.api}"
    return out


def totals_lines(lt: LaunchTotals | None) -> list[str]:
    """The scope, each phase's non-zero counts and how many dispatch points make them ranges."""
    if lt is None:
        return []
    out = [lt.scope]
    for ph, c in lt.by_phase.items():
        kinds = [f"{k}: {v.range_text}" for k, v in c.items() if v.max != "0"]
        if kinds:
            out.append(f"{ph}: " + "; ".join(kinds))
    n = len(lt.alternatives)
    if n:
        out.append(f"{n} dispatch point(s) with no selection change the counts: ranges are min .. max over their arms")
    return out
