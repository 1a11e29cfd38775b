"""Profile decisions for the tracer: which candidate definitions exist, which arms run.

Pure functions over graph attribute dicts and Context dicts; ``apxtui/trace.py`` calls
them at its two hook points (candidates, grouped branch arms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apxtui.profile.model import Resolved

Tri = bool | None
#: constructs the build decides; the others are decided at run time (env gates aside)
COMPILE_TIME = ("cfg", "pp_if", "candidates")


def device_pass(rp: Resolved, node: str, attrs: dict[str, Any]) -> bool | None:
    """True: device code only (kernel, ``__device__``); False: host code; None: both/unknown."""
    kind = attrs.get("kind")
    if kind == "kernel":
        return True
    if kind == "device_fn":
        d = rp.defs.get(node) if rp.defs else None
        return None if d is None or d.attrs.get("host") else True
    if kind in ("host_fn", "abi_fn"):
        return False
    return None


def definition(rp: Resolved, node: str, attrs: dict[str, Any]) -> Tri:
    """Does the definition exist under the profile (its ``#[cfg]`` and ``#if`` chain)?"""
    file = attrs.get("file", "")
    vals: list[Tri] = [rp.cfg_all(list(attrs.get("cfg", [])), file)] if attrs.get("cfg") else []
    d = rp.defs.get(node) if rp.defs else None
    if d is not None and d.pp:
        dev = device_pass(rp, node, attrs)
        vals += [rp.pp(c.text, file, dev, list(c.negated)) for c in d.pp]
    elif attrs.get("pp"):
        dev = device_pass(rp, node, attrs)
        vals += [None if t == "else" else rp.pp(t, file, dev) for t in attrs["pp"]]
    return False if False in vals else (None if None in vals else True)


def arms(rp: Resolved, construct: str, ctxs: dict[int, dict[str, Any]], file: str,
         device: bool | None) -> tuple[dict[int, Tri], Tri]:
    """Value of each present arm (by index) and of the synthesised "no call" arm."""
    out: dict[int, Tri] = {}
    if construct == "cfg":
        for i, c in ctxs.items():
            out[i] = rp.cfg(c.get("text", ""), file)
    elif construct == "pp_if":
        for i, c in ctxs.items():
            out[i] = rp.pp(c.get("text", ""), file, device, list(c.get("negated", [])))
    elif construct == "if":
        conds = {i: rp.env_gate(c.get("text", ""), file) for i, c in ctxs.items() if c.get("kind") == "if"}
        for i, c in ctxs.items():
            if c.get("kind") == "else":
                neg = [rp.env_gate(t, file) for t in c.get("negated", [])]
                out[i] = True if all(v is False for v in neg) else (False if True in neg else None)
                continue
            own = conds[i]
            earlier = [conds.get(j, "absent") for j in range(i)]
            if own is False or True in earlier:
                out[i] = False
            elif own is True and all(v is False for v in earlier):
                out[i] = True
            else:
                out[i] = None
    else:
        return dict.fromkeys(ctxs), None
    vals = list(out.values())
    implicit = False if True in vals else (True if all(v is False for v in vals) else None)
    return out, implicit
