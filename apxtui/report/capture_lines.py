"""Plain-text lines describing one analysed capture region (for ``apxtui capture`` and the reports).

The caller escapes them for its format; nothing here reads source or the index.
"""

from __future__ import annotations

from typing import Any


def _through(p: dict[str, Any]) -> str:
    chain = [x.split("::")[-2] + "::" + x.split("::")[-1] if "::" in x else x for x in p.get("through", [])]
    return f" (through {' → '.join(chain)})" if chain else ""


def end_lines(r: dict[str, Any]) -> list[str]:
    out = []
    for e in r.get("ends") or []:
        prim = "; ".join(f"{p['call']} @ {p['at']}" for p in e.get("primitive", []))
        out.append(f"end @ {e['at']} ({e.get('path', 'normal')} path"
                   + (f", under {e['condition']}" if e.get("condition") else "") + f"): {e['target']}"
                   + (f" → {prim}" if prim else ""))
    return out


def lifecycle_lines(r: dict[str, Any]) -> list[str]:
    out = []
    inst = []
    for c in r.get("instantiate") or []:
        if c.get("primitive"):
            inst += [f"{p['call']} @ {p['at']}{_through(p)}, called @ {c['at']}" for p in c["primitive"]]
        elif c.get("from_end"):
            inst.append(f"{c['call']} @ {c['at']}{_through(c)}, inside the end @ {c['from_end']}")
        else:
            inst.append(f"{c['call']} @ {c['at']}")
    out.append("instantiate: " + ("; ".join(inst) or "— (not found in this function or below its end calls)"))
    rep = []
    for c in r.get("replay_after_capture") or []:
        prims = "; ".join(f"{p['call']} @ {p['at']}" for p in c.get("primitive", []))
        rep.append(f"{c['call']} @ {c['at']} in the same function" + (f" → {prims}" if prims else ""))
    for m in r.get("replay") or []:
        prims = "; ".join(f"{p['call']} @ {p['at']}{_through(p)}" for p in m.get("launches", []))
        rep.append(f"{m['method']} @ {m['at']} ({m['how']}) → {prims}")
    out.append("replay: " + ("; ".join(rep) or "— (no replay found in this function or on the type it returns)"))
    return out


def hazard_line(h: dict[str, Any]) -> str:
    where = f"{h['kind']} {h['api']} at {h['at']}"
    if h.get("call_sites") and h["call_sites"] != [h["at"]]:
        where += f" (called at {', '.join(h['call_sites'][:3])}{' …' if len(h['call_sites']) > 3 else ''})"
    paths = h.get("paths", 1)
    vias = h.get("vias") or ([h["via"]] if h.get("via") else [])
    txt = f"{where}; {paths} path{'s' if paths != 1 else ''}" + (f" via {', '.join(vias[:3])}" if vias else "")
    if h.get("conditional"):
        txt += f"; CONDITIONAL under {' | '.join(h.get('guards', []))}"
    elif h.get("guards"):
        txt += f"; unconditional on {h.get('unguarded_paths', 0)} path(s), else under {' | '.join(h['guards'])}"
    else:
        txt += "; unconditional"
    txt += f": {h.get('detail', '')}"
    for w in h.get("wrapper", []):
        txt += f" [{w['status']}: {w['detail']}]"
    return txt


def constant_line(kernel: str, c: dict[str, Any]) -> str:
    if c.get("in_graph_key"):
        k = c["in_graph_key"]
        mark = f"in graph key {k.get('key_type') or k['key']}{'.' + k['field'] if k.get('field') else ''}: safe"
    else:
        mark = "FLAG per-request" if c.get("flagged") else c.get("status", "")
    return f"constant {kernel}.{c['param']} = {c['arg']} [{mark}] " + " ← ".join(c.get("derivation", [])[-2:])


def cache_line(c: dict[str, Any]) -> str:
    key = c["key"] + (f": {c['key_type']}" if c.get("key_type") else "") + (
        f" ({c['key_type_at']})" if c.get("key_type_at") else "")
    fields = f" {{{', '.join(c['key_fields'])}}}" if c.get("key_fields") else ""
    deriv = f" ({'; '.join(c['key_derivation'])})" if c.get("key_derivation") else ""
    tail = f", lookups @ {', '.join(c['lookups'])}" if c.get("lookups") else ""
    builds = f", builds via {', '.join(c['builds'][:3])}" if c.get("builds") else ""
    return (f"graph cache ({c['kind']}) {c.get('cache') or c.get('call', '')} in {c['function']} @ {c['at']} "
            f"keyed by {key}{fields}{deriv}{builds}{tail}")
