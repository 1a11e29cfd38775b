"""Plain-text lines describing one analysed capture region (for ``apxtui capture`` and the reports).

The caller escapes them for its format; nothing here reads source or the index.
"""

from __future__ import annotations

from apxtui.analysis.capturefacts import CapturedConstant, CaptureRegion, GraphCache, Hazard


def _through(through: tuple[str, ...] | None) -> str:
    chain = [x.split("::")[-2] + "::" + x.split("::")[-1] if "::" in x else x for x in through or ()]
    return f" (through {' → '.join(chain)})" if chain else ""


def end_lines(r: CaptureRegion) -> list[str]:
    out = []
    for e in r.ends:
        prim = "; ".join(f"{p.call} @ {p.at}" for p in e.primitive or ())
        out.append(f"end @ {e.at} ({e.path or 'normal'} path"
                   + (f", under {e.condition}" if e.condition else "") + f"): {e.target}"
                   + (f" → {prim}" if prim else ""))
    return out


def lifecycle_lines(r: CaptureRegion) -> list[str]:
    out = []
    inst = []
    for c in r.instantiate:
        if c.primitive:
            inst += [f"{p.call} @ {p.at}{_through(p.through)}, called @ {c.at}" for p in c.primitive]
        elif c.from_end:
            inst.append(f"{c.call} @ {c.at}{_through(c.through)}, inside the end @ {c.from_end}")
        else:
            inst.append(f"{c.call} @ {c.at}")
    out.append("instantiate: " + ("; ".join(inst) or "— (not found in this function or below its end calls)"))
    rep = []
    for c in r.replay_after_capture:
        prims = "; ".join(f"{p.call} @ {p.at}" for p in c.primitive or ())
        rep.append(f"{c.call} @ {c.at} in the same function" + (f" → {prims}" if prims else ""))
    for m in r.replay:
        prims = "; ".join(f"{p.call} @ {p.at}{_through(p.through)}" for p in m.launches)
        rep.append(f"{m.method} @ {m.at} ({m.how}) → {prims}")
    out.append("replay: " + ("; ".join(rep) or "— (no replay found in this function or on the type it returns)"))
    return out


def hazard_line(h: Hazard) -> str:
    where = f"{h.kind} {h.api} at {h.at}"
    if h.call_sites and h.call_sites != (h.at,):
        where += f" (called at {', '.join(h.call_sites[:3])}{' …' if len(h.call_sites) > 3 else ''})"
    paths = h.paths
    vias = h.vias or ((h.via,) if h.via else ())
    txt = f"{where}; {paths} path{'s' if paths != 1 else ''}" + (f" via {', '.join(vias[:3])}" if vias else "")
    if h.conditional:
        txt += f"; CONDITIONAL under {' | '.join(h.guards)}"
    elif h.guards:
        txt += f"; unconditional on {h.unguarded_paths} path(s), else under {' | '.join(h.guards)}"
    else:
        txt += "; unconditional"
    txt += f": {h.detail}"
    for w in h.wrapper or ():
        txt += f" [{w.status}: {w.detail}]"
    return txt


def constant_line(kernel: str, c: CapturedConstant) -> str:
    if c.in_graph_key is not None:
        k = c.in_graph_key
        mark = f"in graph key {k.key_type or k.key}{'.' + k.field if k.field else ''}: safe"
    else:
        mark = "FLAG per-request" if c.flagged else c.status
    return f"constant {kernel}.{c.param} = {c.arg} [{mark}] " + " ← ".join(c.derivation[-2:])


def cache_line(c: GraphCache) -> str:
    key = c.key + (f": {c.key_type}" if c.key_type else "") + (f" ({c.key_type_at})" if c.key_type_at else "")
    fields = f" {{{', '.join(c.key_fields)}}}" if c.key_fields else ""
    deriv = f" ({'; '.join(c.key_derivation)})" if c.key_derivation else ""
    tail = f", lookups @ {', '.join(c.lookups)}" if c.lookups else ""
    builds = f", builds via {', '.join(c.builds[:3])}" if c.builds else ""
    return (f"graph cache ({c.kind}) {c.cache or c.call} in {c.function} @ {c.at} "
            f"keyed by {key}{fields}{deriv}{builds}{tail}")
