"""Markdown report of a trace document (``apxtui trace --format md`` and the TUI's ``e``).

Input is the dict of :func:`apxtui.report.model.trace_document`; nothing is parsed or
resolved here.  Every string from the checkout or checkpoint goes through :func:`esc`
(text) or :func:`code` (inline code) of :mod:`apxtui.textsafe`: no HTML, link, code
span, table-cell break, newline or terminal control survives into the report.
"""

from __future__ import annotations

from typing import Any

from apxtui.analysis.summary import capture_short, dtype_short, launches_short, totals_lines
from apxtui.report.capture_lines import cache_line, constant_line, end_lines, hazard_line, lifecycle_lines
from apxtui.textsafe import md as esc
from apxtui.textsafe import md_code as code
from apxtui.textsafe import one_line
from apxtui.vocab import DEVICE_KINDS

LANG_TAG = {"python": "Python", "rust": "Rust", "cuda": "CUDA/C++"}
KIND_TAG = {
    "python_fn": "Python", "python_class": "Python", "pyo3_binding": "binding", "rust_fn": "Rust",
    "ffi_decl": "FFI", "abi_fn": "ABI", "host_fn": "host", "device_fn": "device", "kernel": "kernel",
    "vendor_api": "library", "external": "external",
}

ALL_STAGES_MAX = 2000  # rows of the "All stages" table (a real engine's full trace has tens of thousands)


def breadcrumb(stages: list[dict[str, Any]]) -> str:
    """Language-tagged chain along the deepest device stage (or the deepest stage)."""
    if not stages:
        return ""
    target = next((i for i, s in enumerate(stages) if s["kind"] in DEVICE_KINDS), len(stages) - 1)
    chain: list[dict[str, Any]] = []
    depth = stages[target]["depth"]
    for s in reversed(stages[: target + 1]):
        if s["depth"] <= depth:
            chain.append(s)
            depth = s["depth"] - 1
    chain.reverse()
    return " → ".join(f"{KIND_TAG.get(s['kind'], s['kind'])}: {code(s['name'])}" for s in chain)


def _loc(s: dict[str, Any]) -> str:
    return f"{s['file']}:{s['line']}" if s.get("file") else "—"


def _site(s: dict[str, Any]) -> str:
    v = s.get("via") or {}
    return f"{v.get('file')}:{v.get('line')}" if v.get("file") else ""


def device_rows(stages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per kernel launch / library call / external call, with the chain that reached it."""
    rows = []
    chain: list[dict[str, Any]] = []
    for s in stages:
        chain = chain[: s["depth"]]
        chain.append(s)
        if s["kind"] in DEVICE_KINDS or (s["kind"] == "external" and s["lang"] == "cuda"):
            def nearest(kinds: tuple[str, ...], _chain: tuple[dict[str, Any], ...] = tuple(chain)) -> str:
                for c in reversed(_chain[:-1]):
                    if c["kind"] in kinds:
                        return str(c["qualname"])
                return ""
            rows.append({"stage": s, "entry": nearest(("python_fn", "pyo3_binding")),
                         "rust": nearest(("rust_fn",)), "abi": nearest(("abi_fn",))})
    return rows


def mermaid(stages: list[dict[str, Any]], limit: int = 60) -> str:
    lines = ["```mermaid", "graph TD"]
    ids: dict[int, str] = {}
    stack: list[int] = []
    for i, s in enumerate(stages[:limit]):
        ids[i] = f"s{i}"
        label = _mermaid_label(f"{KIND_TAG.get(s['kind'], s['kind'])}: {s['name']}")
        lines.append(f'  s{i}["{label}"]')
        stack = stack[: s["depth"]]
        if stack:
            v = s.get("via") or {}
            tag = v.get("kind", "")
            if v.get("loops"):
                tag += " ×"
            lines.append(f"  s{stack[-1]} -->|{tag}| s{i}" if tag else f"  s{stack[-1]} --> s{i}")
        stack.append(i)
    if len(stages) > limit:
        lines.append(f'  more["… {len(stages) - limit} more stages"]')
    lines.append("```")
    return "\n".join(lines)


def _mermaid_label(text: str) -> str:
    """A quoted Mermaid node label: one line, no quote, HTML or Markdown-string delimiter."""
    for ch, ent in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("`", "#96;")):
        text = text.replace(ch, ent)
    return one_line(text, 120)


def render_markdown(doc: dict[str, Any]) -> str:
    stages = doc["stages"]
    e = doc["entry"]
    out = [f"# apxtui trace: {code(e['qualname'])}", ""]
    wt = doc.get("working_tree")
    changes = "not a git checkout" if wt is None else (
        f"{len(wt['modified'])} modified, {len(wt['untracked'])} untracked" if (wt["modified"] or wt["untracked"])
        else "clean")
    out += [
        f"- **Checkout:** {code(doc['checkout'])}",
        f"- **Revision:** {code(doc['revision'])}" + (f" (branch {code(doc['branch'])})" if doc.get("branch") else ""),
        f"- **Working tree:** {changes}",
        f"- **Checkpoint:** {esc(doc['checkpoint']) if doc.get('checkpoint') else 'none given'}",
        f"- **Profile:** {esc(doc['profile'])}",
        f"- **Selection:** {', '.join(code(s) for s in doc['select']) or 'none (every arm shown)'}",
        *choice_lines(doc),
        f"- **apxtui:** {doc['apxtui']}",
        "",
        f"> {doc['static_analysis']}",
        "",
        f"**Path:** {breadcrumb(stages)}",
        "",
        "## Execution order (device work)",
        "",
    ]
    rows = device_rows(stages)
    if rows:
        out += [
            "| stage | Python/Rust entry | Rust operator | ABI/adapter | kernel or library call | template arguments "
            "| dtypes | launches | frequency | capture role | source |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for i, r in enumerate(rows, 1):
            s = r["stage"]
            v = s.get("via") or {}
            what = s["qualname"] + (" (library call)" if s["kind"] == "vendor_api" else "") + (
                " (external)" if s["kind"] == "external" else "")
            res = v.get("resolution", "")
            dt, la, fr, cap = analysis_cells(s)
            out.append("| " + " | ".join([
                str(i), code(r["entry"] or e["qualname"]), code(r["rust"]), code(r["abi"]),
                code(what) + (f" ({esc(res)})" if res and res != "exact" else ""),
                esc(", ".join(v.get("template_args", []))), dt, la, fr, cap, esc(_site(s) or _loc(s)),
            ]) + " |")
    else:
        out.append("No kernel launch or library call is reached on this path.")
    out += ["", "## All stages", "", "| depth | stage | kind | reached via | conditions | resolution | definition |",
            "|---|---|---|---|---|---|---|"]
    for s in stages[:ALL_STAGES_MAX]:
        v = s.get("via") or {}
        via = f"{v.get('kind', '')} @ {_site(s)}" if v else "entry"
        cut = f" ({s['cut']}: not expanded)" if s.get("cut") else ""
        out.append("| " + " | ".join([
            str(s["depth"]), code(("· " * s["depth"]) + s["qualname"]) + esc(cut), esc(s["kind"]), esc(via),
            esc("; ".join(v.get("conditions", []))), esc(v.get("resolution", "")), esc(_loc(s)),
        ]) + " |")
    if len(stages) > ALL_STAGES_MAX:
        out += ["", f"… {len(stages) - ALL_STAGES_MAX:,} more stages not listed here (the device table above has "
                    "every kernel and library call; `apxtui trace --format json` has every stage)."]
    out += ["", "## Dispatch points", ""]
    if doc["dispatch_points"]:
        for d in doc["dispatch_points"]:
            out.append(f"- **{esc(d['construct'])}** {code(d['subject'])} at {esc(d['file'])}:{d['line']}")
            for a in d["arms"]:
                mark = {True: "chosen", False: "not chosen", None: "shown"}[a["selected"]]
                out.append(f"  - {code(a['label'])} — {mark}")
    else:
        out.append("None on this path.")
    out += ["", "## Ambiguous and unresolved", ""]
    if not doc["ambiguous"] and not doc["unresolved"]:
        out.append("Every edge on this path resolved exactly or heuristically.")
    for a in doc["ambiguous"]:
        out.append(
            f"- ambiguous {code(a['callee'])} at {esc(a['file'])}:{a['line']}: "
            + "; ".join(code(c) for c in a["candidates"])
        )
    for s in doc["unresolved"]:
        v = s.get("via") or {}
        out.append(f"- unresolved {code(s['qualname'])} called at {esc(_site(s))} ({esc(v.get('how', ''))})")
    out += analysis_sections(doc)
    out += checkpoint_sections(doc)
    out += ["", "## Graph", "", mermaid(stages), ""]
    return "\n".join(out)


def choice_lines(doc: dict[str, Any]) -> list[str]:
    """The explorer's arm choices (``[``/``]``) by dispatch point, in path order."""
    chosen = doc.get("choices") or {}
    if not chosen:
        return []
    picks = [f"{code(d['subject'] or d['construct'])} at {esc(d['file'])}:{d['line']} → "
             + ", ".join(code(a["label"][:60]) for a in d["arms"] if a["selected"])
             for d in doc["dispatch_points"] if d["key"] in chosen]
    return [f"- **Arm choices:** {'; '.join(dict.fromkeys(picks)) or 'none on this path'}"]


def analysis_cells(s: dict[str, Any]) -> list[str]:
    """dtype / launch / frequency / capture cells of one device row."""
    return [esc(dtype_short(s.get("dtypes"))), esc(launches_short(s)),
            esc((s.get("frequency") or {}).get("label", "")), esc(capture_short(s))]


def analysis_sections(doc: dict[str, Any]) -> list[str]:
    """Launch totals, dtype boundaries, capture regions and the host-transfer audit."""
    out: list[str] = []
    if doc.get("analysis_error"):
        return ["", "## Analyses", "", f"Analyses failed: {esc(doc['analysis_error'])}"]
    if "launch_totals" not in doc:
        return out
    out += ["", "## Launch totals (static)", ""] + [f"- {esc(x)}" for x in totals_lines(doc)]
    for a in doc["launch_totals"].get("alternatives", [])[:20]:
        out.append(f"  - alternatives at {code(a['subject'] or a['construct'])} {esc(a['at'])}: " + "; ".join(
            f"{code(arm['label'][:60])} → " + ", ".join(
                f"{esc(k)} {esc(v['max'])}" for c in arm["counts"].values() for k, v in c.items()
                if k in ("device", "library") and v["max"] != "0") for arm in a["arms"]))
    out += ["", "## Dtype boundaries", ""]
    bounds = doc.get("dtype_boundaries") or []
    if not bounds:
        out.append("No dtype change established on this path.")
    else:
        out += ["| stage | from | to | kind | phase | status | at | evidence |", "|---|---|---|---|---|---|---|---|"]
        prev = None
        for b in bounds:
            key = (b["stage"], b["from"], b["to"], b["kind"], b["at"])
            if key == prev:
                continue
            prev = key
            alt = " (alternative)" if b.get("alternative") else ""
            out.append("| " + " | ".join([code(b["stage"]) + alt, esc(b["from"]), esc(b["to"]), esc(b["kind"]),
                                          esc(b["phase"]), esc(b["status"]), esc(b["at"]),
                                          esc(", ".join(b.get("evidence", [])))]) + " |")
    out += ["", "## CUDA Graph capture", ""]
    regions = doc.get("capture_regions") or []
    if not regions:
        out.append("No capture region on this path.")
    for r in regions:
        out.append(
            f"- **Region** in {code(r['function'])}: begin {esc((r.get('begin') or {}).get('at', '—'))}, "
            f"end {esc((r.get('end') or {}).get('at', '—'))}" + (f" — {esc(r['note'])}" if r.get("note") else "")
        )
        out += [f"  - {esc(x)}" for x in end_lines(r)]
        out.append("  - body: " + (", ".join(code(c["call"]) + f" @ {esc(c['at'])}" for c in r["body_calls"]) or "—"))
        out += [f"  - {esc(x)}" for x in lifecycle_lines(r)]
        for c in r.get("graph_keys", []):
            out.append(f"  - {esc(cache_line(c))}")
        seen = set()
        for launch in r.get("launches", []):
            for c in launch["constants"]:
                if (c.get("flagged") or c.get("in_graph_key")) and (launch["kernel"], c["param"]) not in seen:
                    seen.add((launch["kernel"], c["param"]))
                    out.append(f"  - {esc(constant_line(launch['kernel'], c))}")
        for h in r.get("hazards", []):
            out.append(f"  - **hazard** {esc(hazard_line(h))}")
    out += ["", "## Host transfers, syncs, allocations", ""]
    tr = doc.get("host_transfers") or []
    if not tr:
        out.append("None reached on this path.")
    else:
        out += ["| kind | api | direction / size | via | phase | in capture | frequency | at |",
                "|---|---|---|---|---|---|---|---|"]
        for t in tr:
            ds = " ".join(x for x in (t.get("direction", ""), t.get("size", "")) if x)
            out.append("| " + " | ".join([esc(t["kind"]), code(t["api"]), esc(ds), code((t.get("via") or [""])[0]),
                                          esc(t["phase"]), "yes" if t.get("in_capture") else "no",
                                          esc(t["frequency"]), esc(t["at"])]) + " |")
    return out


def checkpoint_sections(doc: dict[str, Any]) -> list[str]:
    """Weight join, stored weights per stage, loop bounds and speed of light (``trace --checkpoint``)."""
    cj = doc.get("checkpoint_join")
    if not cj:
        why = (f"checkpoint {code(doc['checkpoint'])} could not be read: {esc(doc['checkpoint_error'])}"
               if doc.get("checkpoint_error")
               else f"checkpoint {code(doc['checkpoint'])} given but not joined" if doc.get("checkpoint")
               else "No checkpoint given (`--checkpoint PATH`).")
        return ["", "## Checkpoint weight join", "", why]
    j = cj["join"]
    c = j["counts"]
    out = ["", "## Checkpoint weight join", "", f"**{esc(j['status_text'])}**", "",
           f"- tensors: {c['tensors']} ({c['claimed']} claimed, {c['unclaimed']} unclaimed, "
           f"{c['duplicate_claims']} claimed by more than one pattern)",
           f"- code patterns: {c['patterns']} ({c['matched_patterns']} matched, {c['unmatched_patterns']} match "
           f"nothing, {c['prefix_patterns']} prefixes only)", f"- {esc(j['static_analysis'])}", ""]
    rows = [(p, "matched") for p in j["matched"]] + [(p, "not in checkpoint") for p in j["unmatched"]]
    if rows:
        out += ["| pattern | status | tensors | dtype | bytes | source |", "|---|---|---|---|---|---|"]
        for p, st in rows:
            out.append("| " + " | ".join([code(p["pattern"]), esc(st), str(p["tensors"]), esc(",".join(p["dtypes"])),
                                          str(p["bytes"]), esc(", ".join(x["at"] for x in p["sources"][:3]))]) + " |")
    for u in j["unclaimed"]:
        out.append(f"- unclaimed: {code(u['pattern'])} ×{u['count']} ({esc(','.join(u['dtypes']))})")
    for d in j["duplicates"]:
        out.append(f"- claimed twice: {code(d['tensor'])} by " + ", ".join(code(x) for x in d["patterns"]))
    out += ["", "## Stored weights per stage (heuristic)", "", f"> {esc(cj['weights_note'])}", ""]
    ws = [(s, w) for s in doc["stages"] for w in s.get("weights", []) if w.get("first_at_site")]
    if not ws:
        out.append("No traced operator reads a weight whose tensor name is known.")
    else:
        out += ["| stage | call site | argument | tensor pattern | stored dtype | shape | bytes/tensor | compute "
                "dtypes (analysis) | stored vs compute | how |", "|---|---|---|---|---|---|---|---|---|---|"]
        for s, w in ws:
            comp = "; ".join(_compute_short(x) for x in s.get("weights_compute", [])) or "not established"
            st = w["stored"]
            out.append("| " + " | ".join([
                code(s["qualname"]), esc(_site(s)), code(w["arg"]), code(w["pattern"]), esc(",".join(st["dtype"])),
                esc(" | ".join(str(x) for x in st["shape"])), str(st["bytes_per_tensor"]), esc(comp),
                esc(w.get("stored_vs_compute", "")), esc(w["how"])]) + " |")
    lb = doc.get("loop_bounds") or []
    if lb:
        out += ["", "## Loop bounds", "", "| loop | value | config field | status | reason |", "|---|---|---|---|---|"]
        for r in lb:
            out.append("| " + " | ".join([code(r["loop"][:80]), esc(r["value"] if r["value"] is not None else "—"),
                                          esc(r["config_field"] or "—"), esc(r["status"]),
                                          esc(r.get("reason", ""))]) + " |")
        for ph, kinds in ((doc.get("launch_totals_bound") or {}).get("by_phase") or {}).items():
            out.append(f"- {esc(ph)}: " + ", ".join(f"{esc(k)} {esc(v['value'])}" for k, v in kinds.items()))
    sol = doc.get("speed_of_light")
    if sol:
        out += sol_markdown(sol)
    return out


def _compute_short(c: dict[str, Any]) -> str:
    name = c["stage"].split("::")[-1]
    if c["kind"] == "library":
        ops = c.get("operands") or {}
        return f"{name}: " + " ".join(f"{k} {v}" for k, v in ops.items()) + f", compute {c.get('compute') or '?'}"
    return (f"{name}: in {','.join(c.get('input') or []) or '?'}, acc {','.join(c.get('accumulator') or []) or '—'}"
            f", out {','.join(c.get('output') or []) or '?'}")


def _secs(x: float) -> str:
    return f"{x * 1e6:.3f} µs" if x < 1e-3 else f"{x * 1e3:.3f} ms" if x < 1 else f"{x:.3f} s"


def sol_markdown(sol: dict[str, Any]) -> list[str]:
    """The speed-of-light section: inputs, figures with sources, bound, estimate, KV cache."""
    i = sol["inputs"]
    out = ["", f"## Speed of light on {esc(sol['device'])}", "", f"> {esc(sol['static_analysis'])}", "",
           f"- batch {i['batch']}, seq {i['seq']}, context {i['context']} ({esc(i['context_note'])})"]
    f = sol["figures"]
    if f.get("memory_bandwidth_GBps"):
        out.append(f"- memory bandwidth {f['memory_bandwidth_GBps']['value']:g} GB/s — "
                   f"{esc(f['memory_bandwidth_GBps']['source'])}")
    for k, v in f.get("peaks_tflops", {}).items():
        out.append(f"- peak for {esc(k)}: " + (f"{v['value']:g} TFLOPS dense — {esc(v['source'])}" if v else
                                               "INSUFFICIENT_EVIDENCE (not in the device table)"))
    if f.get("launch_floor_us"):
        out.append(f"- launch floor {f['launch_floor_us']['value']:g} µs — {esc(f['launch_floor_us']['source'])}")
    d = sol["demand"]
    out.append(f"- demand per call: weights {d['weight_bytes']:,.0f} B, activations {d['activation_bytes']:,.0f} B, "
               f"KV {d['kv_bytes']:,.0f} B, FLOPs " + (", ".join(f"{k} {v:,.0f}" for k, v in
                                                              d["flops_by_dtype"].items()) or "none counted"))
    bad = [a for a in sol.get("anchors", []) if not a["consistent"]]
    out.append(f"- anchors: {len(sol.get('anchors', []))} weight patterns checked against the checkpoint, "
               f"{len(bad)} inconsistent" + "".join(f"; {code(a['pattern'])} {a['reads_on_path']} reads vs "
                                                     f"{a['checkpoint_tensors']} tensors" for a in bad))
    b, e = sol["bound"], sol["estimate"]
    out += ["", "| figure | value | status | detail |", "|---|---|---|---|"]
    out.append("| conditional bound | " + (_secs(b["seconds"]) if "seconds" in b else "—") + f" | {esc(b['status'])} | "
               + esc("; ".join([*([f"limited by {b['limiter']}"] if "limiter" in b else []), *b.get("missing", [])]))
               + " |")
    out.append("| serial estimate | " + (_secs(e["seconds"]) if "seconds" in e else "—") + f" | {esc(e['status'])} | "
               + esc("; ".join(e.get("missing", [])) or e.get("meaning", "")) + " |")
    kv = sol.get("kv_cache") or {}
    if kv.get("status") == "ok":
        out.append(f"\n- KV cache: {kv['bytes_per_token']:,} B per token ({esc(kv['formula'])}; "
                   f"{esc(', '.join(kv['fields'].values()))}); {kv['bytes_at_context']:,} B at context "
                   f"{kv['context']} × batch {kv['batch']}")
    elif kv:
        out.append("\n- KV cache: INSUFFICIENT_EVIDENCE: " + esc("; ".join(kv.get("missing", []))))
    for x in sol.get("excluded", []):
        out.append(f"- not priced: {esc(x)}")
    return out
