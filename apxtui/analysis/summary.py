"""Short one-line forms of the analysis fields of a trace document (shared by text and Markdown)."""

from __future__ import annotations

from typing import Any


def dtype_short(d: dict[str, Any] | None) -> str:
    """``bf16 → acc f32 → bf16`` for a kernel, ``A/B bf16, compute f32 → D bf16`` for a library call."""
    if not d:
        return ""
    if d.get("kind") == "kernel":
        ins = "/".join(d["input"]["value"]) or "?"
        acc = "/".join(d["accumulator"]["value"])
        outs = "/".join(d["output"]["value"]) or "?"
        rounds = sorted({f"{c['from']}→{c['to']}" for c in d["conversions"] if c["kind"] == "round"})
        s = f"{ins} → " + (f"acc {acc} → " if acc else "") + outs
        if rounds:
            s += f" (rounds {', '.join(rounds)})"
        return s + ("" if d["storage"]["status"] == "exact" else f" [{d['storage']['status']}]")
    if d.get("kind") == "library":
        ops = d["operands"]["value"] or {}
        comp = (d.get("compute") or {}).get("value")
        if not ops:
            return f"unknown ({d['operands']['reason']})"
        if "element" in ops:
            return f"element {ops['element']}" + (f", acc {comp}" if comp else "") + f" [{d['operands']['status']}]"
        ab = "/".join(dict.fromkeys(str(ops.get(k)) for k in ("A", "B")))
        out = ops.get("D") or ops.get("C")
        return f"A/B {ab}, compute {comp or '?'} → {out}" + (
            "" if d["operands"]["status"] == "exact" else f" [{d['operands']['status']}]")
    if d.get("kind") == "operator":
        arm = d["dtype_arm"]
        return f"DType arm {', '.join(arm['value'])}" if arm["value"] else "DType arm: not selected"
    return ""


def launches_short(s: dict[str, Any]) -> str:
    ln = s.get("launches") or {}
    if not ln:
        return ""
    mult = ln.get("multiplier") or ""
    own = {"device": "launch", "library": "library call", "library_setup": "library setup call"}.get(
        ln.get("self") or "", ""
    )
    if own:
        return own + (f" {mult}" if mult else "")
    parts = []
    if ln.get("device", "0") != "0":
        parts.append(f"{ln['device']} launches")
    if ln.get("library", "0") != "0":
        parts.append(f"{ln['library']} library calls")
    return ", ".join(parts) + (f" {mult}" if parts and mult else "")


def capture_short(s: dict[str, Any]) -> str:
    c = s.get("capture") or {}
    if not c:
        return ""
    out = c.get("role", "")
    if c.get("role") == "body":
        out = "captured"
    flagged = [k for k in c.get("constants", []) if k.get("flagged")]
    if flagged:
        out += "; frozen per-request scalar(s): " + ", ".join(f"{k['param']}={k['arg']}" for k in flagged)
    for h in c.get("hazards", []):
        out += f"; HAZARD {h['kind']} {h['api']}"
    return str(out)


def totals_lines(doc: dict[str, Any]) -> list[str]:
    lt = doc.get("launch_totals") or {}
    out = [lt.get("scope", "")] if lt else []
    for ph, c in (lt.get("by_phase") or {}).items():
        kinds = [f"{k}: {v['max'] if v['exact'] else v['min'] + ' .. ' + v['max']}" for k, v in c.items()
                 if v["max"] != "0"]
        if kinds:
            out.append(f"{ph}: " + "; ".join(kinds))
    n = len(lt.get("alternatives") or [])
    if n:
        out.append(f"{n} dispatch point(s) with no selection change the counts: ranges are min .. max over their arms")
    return out
