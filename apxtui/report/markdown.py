"""Markdown report of a trace (``apxtui trace --format md`` and the TUI's ``e``).

Input is a :class:`apxtui.report.model.MapReport`: the execution map, the checkpoint's typed
facts (:class:`apxtui.checkpoint.ontrace.CheckpointFacts`) and, with ``--detail full``, the
trace document's per-stage dicts; nothing is parsed or resolved here.  Every string from the
checkout or checkpoint goes through :func:`esc` (text) or :func:`code` (inline code) of
:mod:`apxtui.textsafe`: no HTML, link, code span, table-cell break, newline or terminal
control survives into the report.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from apxtui.analysis.capture import hazard_detail
from apxtui.analysis.capturefacts import CaptureRegion, Hazard, RegionError
from apxtui.analysis.hostops import host_op
from apxtui.analysis.summary import capture_short, dtype_short, launches_short, totals_lines
from apxtui.map import Call, iter_calls
from apxtui.map.fold import BlockRef, Heading, fold_blocks, site_short
from apxtui.map.fold import aliases as make_aliases
from apxtui.map.model import PHASE_TITLE, marked
from apxtui.report.capture_lines import cache_line, constant_line, end_lines, hazard_line, lifecycle_lines
from apxtui.report.maptable import FrequencyChange, table_lines
from apxtui.textsafe import md as esc
from apxtui.textsafe import md_code as code
from apxtui.textsafe import one_line
from apxtui.trace import dispatches
from apxtui.vocab import DEVICE_KINDS, CallClass, DtypeKind, FigureStatus, NodeKind, Phase, Resolution

if TYPE_CHECKING:
    from apxtui.analysis.path import AnalysedPath, PathStage
    from apxtui.analysis.stagefacts import StageFacts
    from apxtui.checkpoint.ontrace import CheckpointFacts
    from apxtui.checkpoint.solfacts import SpeedOfLight
    from apxtui.checkpoint.weights import ComputeBelow
    from apxtui.report.model import MapReport, TraceCuts
    from apxtui.trace import Stage, Via

IE, OK = FigureStatus.INSUFFICIENT.value, FigureStatus.OK.value

LANG_TAG = {"python": "Python", "rust": "Rust", "cuda": "CUDA/C++"}
KIND_TAG = {
    "python_fn": "Python", "python_class": "Python", "pyo3_binding": "binding", "cpp_binding": "binding",
    "rust_fn": "Rust",
    "ffi_decl": "FFI", "abi_fn": "ABI", "host_fn": "host", "device_fn": "device", "kernel": "kernel",
    "vendor_api": "library", "external": "external",
}

ALL_STAGES_MAX = 2000  # rows of the "All stages" table (a real engine's full trace has tens of thousands)


def _loc(s: Stage) -> str:
    return f"{s.file}:{s.line}" if s.file else "—"


def _site(s: Stage) -> str:
    return _via_site(s.via)


def _via_site(v: Via | None) -> str:
    return f"{v.file}:{v.line}" if v is not None and v.file else ""


def _nearest(chain: Sequence[Stage], kinds: tuple[str, ...]) -> str:
    return next((c.qualname for c in reversed(chain) if c.kind in kinds), "")


ENTRY_KINDS = (NodeKind.PYTHON_FN, NodeKind.PYO3_BINDING, NodeKind.CPP_BINDING)


def device_rows(stages: Sequence[PathStage]) -> list[tuple[PathStage, str, str, str]]:
    """One row per kernel launch / library call / external call: the stage and the nearest Python/binding
    entry, Rust operator and ABI adapter above it."""
    rows = []
    chain: list[Stage] = []
    for ps in stages:
        s = ps.stage
        chain = chain[: ps.depth]
        chain.append(s)
        if s.kind in DEVICE_KINDS or (s.kind == NodeKind.EXTERNAL and s.lang == "cuda"):
            above = chain[:-1]
            rows.append((ps, _nearest(above, ENTRY_KINDS), _nearest(above, (NodeKind.RUST_FN,)),
                         _nearest(above, (NodeKind.ABI_FN,))))
    return rows


def mermaid(stages: Sequence[PathStage], limit: int = 60) -> str:
    lines = ["```mermaid", "graph TD"]
    stack: list[int] = []
    for i, ps in enumerate(stages[:limit]):
        s = ps.stage
        label = _mermaid_label(f"{KIND_TAG.get(s.kind, s.kind)}: {s.name}")
        lines.append(f'  s{i}["{label}"]')
        stack = stack[: ps.depth]
        if stack:
            tag = s.via.kind if s.via else ""
            if s.via and s.via.loops:
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


def detail_sections(doc: dict[str, Any], path: AnalysedPath, checkpoint: list[str]) -> list[str]:
    """Every device stage and stage (``path``: the analysed path of ``doc``), dispatch points, open
    questions, analyses, the ``checkpoint`` sections (:func:`checkpoint_sections`) and graph."""
    e, stages = doc["entry"], path.stages
    out = ["## Execution order (device work)", ""]
    rows = device_rows(stages)
    if rows:
        out += [
            "| stage | Python/Rust entry | Rust operator | ABI/adapter | kernel or library call | template arguments "
            "| dtypes | launches | frequency | capture role | source |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for i, (ps, entry, rust, abi) in enumerate(rows, 1):
            s, v = ps.stage, ps.stage.via
            what = s.qualname + (" (library call)" if s.kind == NodeKind.VENDOR_API else "") + (
                " (external)" if s.kind == NodeKind.EXTERNAL else "")
            res = v.resolution if v else ""
            dt, la, fr, cap = analysis_cells(ps.facts)
            out.append("| " + " | ".join([
                str(i), code(entry or e["qualname"]), code(rust), code(abi),
                code(what) + (f" ({esc(res)})" if res and res != Resolution.EXACT else ""),
                esc(", ".join(v.template_args if v else ())), dt, la, fr, cap, esc(_site(s) or _loc(s)),
            ]) + " |")
    else:
        out.append("No kernel launch or library call is reached on this path.")
    out += ["", "## All stages", "", "| depth | stage | kind | reached via | conditions | resolution | definition |",
            "|---|---|---|---|---|---|---|"]
    for ps in stages[:ALL_STAGES_MAX]:
        s, v = ps.stage, ps.stage.via
        via = f"{v.kind} @ {_site(s)}" if v else "entry"
        cut = f" ({s.cut}: not expanded)" if s.cut else ""
        out.append("| " + " | ".join([
            str(ps.depth), code(("· " * ps.depth) + s.qualname) + esc(cut), esc(s.kind), esc(via),
            esc("; ".join(c.text for c in v.conditions) if v else ""), esc(v.resolution if v else ""), esc(_loc(s)),
        ]) + " |")
    if len(stages) > ALL_STAGES_MAX:
        out += ["", f"… {len(stages) - ALL_STAGES_MAX:,} more stages not listed here (the device table above has "
                    "every kernel and library call; `apxtui trace --format json` has every stage)."]
    out += ["", "## Dispatch points", ""]
    disp = list(dispatches(path.root))
    if disp:
        for d in disp:
            out.append(f"- **{esc(d.construct)}** {code(d.subject)} at {esc(d.file)}:{d.line}")
            for a in d.arms:
                mark = {True: "chosen", False: "not chosen", None: "shown"}[a.selected]
                out.append(f"  - {code(a.label)} — {mark}")
    else:
        out.append("None on this path.")
    out += ["", "## Ambiguous and unresolved", ""]
    unresolved = [ps.stage for ps in stages if ps.stage.via and ps.stage.via.resolution == Resolution.UNRESOLVED]
    ambiguous = [d for d in disp if d.construct == "candidates"]
    if not ambiguous and not unresolved:
        out.append("Every edge on this path resolved exactly or heuristically.")
    for d in ambiguous:
        out.append(f"- ambiguous {code(d.subject)} at {esc(d.file)}:{d.line}: "
                   + "; ".join(code(a.label) for a in d.arms))
    for s in unresolved:
        out.append(f"- unresolved {code(s.qualname)} called at {esc(_site(s))} ({esc(s.via.how if s.via else '')})")
    out += analysis_sections(path)
    out += checkpoint
    out += ["", "## Graph", "", mermaid(stages), ""]
    return out


def analysis_cells(f: StageFacts | None) -> list[str]:
    """dtype / launch / frequency / capture cells of one device row (empty without facts)."""
    if f is None:
        return ["", "", "", ""]
    return [esc(dtype_short(f.dtypes)), esc(launches_short(f.launches)), esc(f.frequency.label),
            esc(capture_short(f.capture))]


def analysis_sections(path: AnalysedPath) -> list[str]:
    """Launch totals, dtype boundaries, capture regions and the host-transfer audit."""
    out: list[str] = []
    if path.error:
        return ["", "## Analyses", "", f"Analyses failed: {esc(path.error)}"]
    lt = path.summary.launch_totals
    if lt is None:
        return out
    out += ["", "## Launch totals (static)", ""] + [f"- {esc(x)}" for x in totals_lines(lt)]
    for a in lt.alternatives[:20]:
        out.append(f"  - alternatives at {code(a.subject or a.construct)} {esc(a.at)}: " + "; ".join(
            f"{code(arm.label[:60])} → " + ", ".join(
                f"{esc(k)} {esc(v.max)}" for c in arm.counts.values() for k, v in c.items()
                if k in ("device", "library") and v.max != "0") for arm in a.arms))
    out += ["", "## Dtype boundaries", ""]
    bounds = path.summary.dtype_boundaries
    if not bounds:
        out.append("No dtype change established on this path.")
    else:
        out += ["| stage | from | to | kind | phase | status | at | evidence |", "|---|---|---|---|---|---|---|---|"]
        prev = None
        for b in bounds:
            if b.key == prev:
                continue
            prev = b.key
            alt = " (alternative)" if b.alternative else ""
            out.append("| " + " | ".join([code(b.stage) + alt, esc(b.source), esc(b.to), esc(b.kind),
                                          esc(b.phase), esc(b.status), esc(b.at),
                                          esc(", ".join(b.evidence or ()))]) + " |")
    out += ["", "## CUDA Graph capture", ""]
    regions = path.summary.capture_regions
    if not regions:
        out.append("No capture region on this path.")
    for r in regions:
        out += region_lines(r)
        seen = set()
        for launch in r.launches:
            for c in launch.constants:
                if (c.flagged or c.in_graph_key is not None) and (launch.kernel, c.param) not in seen:
                    seen.add((launch.kernel, c.param))
                    out.append(f"  - {esc(constant_line(launch.kernel, c))}")
        for h in r.hazards:
            out.append(f"  - **hazard** {esc(hazard_line(h))}")
    out += ["", "## Host transfers, syncs, allocations", ""]
    tr = path.summary.host_transfers
    if not tr:
        out.append("None reached on this path.")
    else:
        out += ["| kind | api | direction / size | via | phase | in capture | frequency | at |",
                "|---|---|---|---|---|---|---|---|"]
        for t in tr:
            ds = " ".join(x for x in (t.direction, t.size) if x)
            out.append("| " + " | ".join([esc(t.kind), code(t.api), esc(ds), code(t.via[0] if t.via else ""),
                                          esc(t.phase), "yes" if t.in_capture else "no",
                                          esc(t.frequency), esc(t.at)]) + " |")
    return out


def region_lines(r: CaptureRegion | RegionError) -> list[str]:
    """A capture region: begin, every end (failure paths labelled), body calls, instantiate, replay, graph caches."""
    if isinstance(r, RegionError):
        return [f"- **Region** in {code(r.function)}: not analysed ({esc(r.error)})"]
    out = [f"- **Region** in {code(r.function)}: begin {esc(r.begin.at if r.begin else '—')}, "
           f"end {esc(r.end.at if r.end else '—')}" + (f" — {esc(r.note)}" if r.note else "")]
    out += [f"  - {esc(x)}" for x in end_lines(r)]
    out.append("  - body: " + (", ".join(code(c.call) + f" @ {esc(c.at)}" for c in r.body_calls) or "—"))
    out += [f"  - {esc(x)}" for x in lifecycle_lines(r)]
    for c in r.graph_keys or ():
        out.append(f"  - {esc(cache_line(c))}")
    return out


def checkpoint_sections(facts: CheckpointFacts | None, stages: Sequence[PathStage], checkpoint: str | None,
                        error: str = "") -> list[str]:
    """Weight join, stored weights per stage, loop bounds and speed of light (``trace --checkpoint``);
    ``stages``: the analysed path ``facts`` index into; ``checkpoint``/``error``: what was given and why it
    could not be read or joined (no ``facts``)."""
    if facts is None:
        why = (f"checkpoint {code(str(checkpoint))} could not be read: {esc(error)}" if error
               else f"checkpoint {code(checkpoint)} given but not joined" if checkpoint
               else "No checkpoint given (`--checkpoint PATH`).")
        return ["", "## Checkpoint weight join", "", why]
    j, n = facts.join, facts.LIST_MAX
    out = ["", "## Checkpoint weight join", "", f"**{esc(j.status_text())}**", "",
           f"- tensors: {j.tensors} ({j.claimed} claimed, {len(j.unclaimed)} unclaimed, "
           f"{len(j.duplicates)} claimed by more than one pattern)",
           f"- code patterns: {len(j.matches)} ({len(j.matched)} matched, {len(j.unmatched)} match "
           f"nothing, {len(j.prefixes)} prefixes only)", f"- {esc(j.static_analysis)}", ""]
    rows = [(p, "matched") for p in j.matched[:n]] + [(p, "not in checkpoint") for p in j.unmatched[:n]]
    if rows:
        out += ["| pattern | status | tensors | dtype | bytes | source |", "|---|---|---|---|---|---|"]
        for p, st in rows:
            out.append("| " + " | ".join([
                code(p.pattern.text), esc(st), str(len(p.tensors)), esc(",".join(sorted({t.dtype for t in p.tensors}))),
                str(p.nbytes), esc(", ".join(x.at for x in p.pattern.sources[:3]))]) + " |")
    for pat, ts in list(j.unclaimed_groups().items())[:n]:
        out.append(f"- unclaimed: {code(pat)} ×{len(ts)} ({esc(','.join(sorted({t.dtype for t in ts})))})")
    for tensor, pats in list(j.duplicates.items())[:n]:
        out.append(f"- claimed twice: {code(tensor)} by " + ", ".join(code(x) for x in pats))
    out += ["", "## Stored weights per stage (heuristic)", "", f"> {esc(facts.WEIGHTS_NOTE)}", ""]
    ws = [(i, w) for i in sorted(facts.weights) for w in facts.weights[i].rows if w.first_at_site]
    if not ws:
        out.append("No traced operator reads a weight whose tensor name is known.")
    else:
        out += ["| stage | call site | argument | tensor pattern | stored dtype | shape | bytes/tensor | compute "
                "dtypes (analysis) | stored vs compute | how |", "|---|---|---|---|---|---|---|---|---|---|"]
        for i, w in ws:
            comp = "; ".join(_compute_short(x) for x in facts.weights[i].compute) or "not established"
            s, sw = stages[i].stage, w.stored
            out.append("| " + " | ".join([
                code(s.qualname), esc(_via_site(s.via)), code(w.arg), code(w.pattern), esc(",".join(sw.dtype)),
                esc(" | ".join(str(list(x)) for x in sw.shape)), str(sw.bytes_per_tensor), esc(comp),
                esc(w.stored_vs_compute), esc(w.how)]) + " |")
    if facts.bounds.loops:
        out += ["", "## Loop bounds", "", "| loop | value | config field | status | reason |", "|---|---|---|---|---|"]
        for r in facts.bounds.loops:
            out.append("| " + " | ".join([code(r.loop[:80]), esc(r.value if r.value is not None else "—"),
                                          esc(r.config_field or "—"), esc(r.status), esc(r.reason)]) + " |")
        for ph, kinds in (facts.bounds.totals.get("by_phase") or {}).items():
            out.append(f"- {esc(ph)}: " + ", ".join(f"{esc(k)} {esc(v['value'])}" for k, v in kinds.items()))
    if facts.sol is not None:
        out += sol_markdown(facts.sol)
    return out


def _compute_short(c: ComputeBelow) -> str:
    name = c.stage.split("::")[-1]
    if c.kind is DtypeKind.LIBRARY:
        return f"{name}: " + " ".join(f"{k} {v}" for k, v in c.operands.items()) + f", compute {c.compute or '?'}"
    return (f"{name}: in {','.join(c.input) or '?'}, acc {','.join(c.accumulator) or '—'}"
            f", out {','.join(c.output) or '?'}")


def _secs(x: float) -> str:
    return f"{x * 1e6:.3f} µs" if x < 1e-3 else f"{x * 1e3:.3f} ms" if x < 1 else f"{x:.3f} s"


def sol_markdown(sol: SpeedOfLight) -> list[str]:
    """The speed-of-light section: inputs, figures with sources, bound, estimate, KV cache."""
    i = sol.inputs
    out = ["", f"## Speed of light on {esc(sol.device)}", "", f"> {esc(sol.static_analysis)}", "",
           f"- batch {i.batch}, seq {i.seq}, context {i.context} ({esc(i.context_note)})"]
    f = sol.figures
    if f.memory_bandwidth_GBps:
        out.append(f"- memory bandwidth {f.memory_bandwidth_GBps.value:g} GB/s — {esc(f.memory_bandwidth_GBps.source)}")
    for k, v in f.peaks_tflops.items():
        out.append(f"- peak for {esc(k)}: " + (f"{v.value:g} TFLOPS dense — {esc(v.source)}" if v else
                                               "INSUFFICIENT_EVIDENCE (not in the device table)"))
    if f.launch_floor_us:
        out.append(f"- launch floor {f.launch_floor_us.value:g} µs — {esc(f.launch_floor_us.source)}")
    d = sol.demand
    out.append(f"- demand per call: weights {d.weight_bytes:,.0f} B, activations {d.activation_bytes:,.0f} B, "
               f"KV {d.kv_bytes:,.0f} B, FLOPs " + (", ".join(f"{k} {v:,.0f}" for k, v in
                                                              d.flops_by_dtype.items()) or "none counted"))
    bad = [a for a in sol.anchors if not a.consistent]
    out.append(f"- anchors: {len(sol.anchors)} weight patterns checked against the checkpoint, "
               f"{len(bad)} inconsistent" + "".join(f"; {code(a.pattern)} {a.reads_on_path} reads vs "
                                                     f"{a.checkpoint_tensors} tensors" for a in bad))
    b, e = sol.bound, sol.estimate
    out += ["", "| figure | value | status | detail |", "|---|---|---|---|"]
    out.append("| conditional bound | " + (_secs(b.seconds) if b.seconds is not None else "—")
               + f" | {esc(b.status)} | "
               + esc("; ".join([*([f"limited by {b.limiter}"] if b.status != IE else []), *b.missing])) + " |")
    out.append("| serial estimate | " + (_secs(e.seconds) if e.seconds is not None else "—") + f" | {esc(e.status)} | "
               + esc("; ".join(e.missing) or e.meaning) + " |")
    kv = sol.kv_cache
    if kv.status == OK:
        out.append(f"\n- KV cache: {kv.bytes_per_token:,} B per token ({esc(kv.formula)}; "
                   f"{esc(', '.join(kv.fields.values()))}); {kv.bytes_at_context:,} B at context "
                   f"{kv.context} × batch {kv.batch}")
    else:
        out.append("\n- KV cache: INSUFFICIENT_EVIDENCE: " + esc("; ".join(kv.missing)))
    for x in sol.excluded:
        out.append(f"- not priced: {esc(x)}")
    return out


# -- the execution map (default report) ----------------------------------------------------------

MAP_CONDITION_MAX = 70  # characters of a condition in a table cell
UNRESOLVED_MAX = 30  # callees listed in the unresolved section


def _cut(s: str, n: int = MAP_CONDITION_MAX) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def path_line(steps: list[Any]) -> str:
    """``Rust: `language_layer_bf16` → Rust: `gemm_bf16` → … → library: `cublasLtMatmul```."""
    return " → ".join(f"{KIND_TAG.get(s.kind, s.kind)}: {code(s.name or s.qualname)}" for s in steps) or "—"


def work_cell(work: list[Any], base: Any, aliases: dict[str, str]) -> str:
    """Device work of a row: calls in order, alternatives as ``a; or b [condition :line]``."""
    parts: list[str] = []
    for w in work:
        if isinstance(w, Call):
            if w.phase == Phase.PREPARE:
                continue
            name = marked(aliases.get(w.name, w.name), w.resolution) + (
                " (library)" if w.kind.value == "library" else "")
            reps = " ".join(r.label for r in w.repeat if r.value != 1)
            guard = "; ".join(_cut(str(c), 40) for c in w.guard)
            parts.append(code(name) + (f" {esc(reps)}" if reps else "") + (f" [if {esc(guard)}]" if guard else ""))
        else:
            alts = []
            groups: dict[str, list[Any]] = {}
            for a in w.alternatives:
                groups.setdefault(work_cell(a.work, base, aliases) or "no device work", []).append(a)
            if w.construct == "candidates" and len(groups) == 1:
                parts.append(next(iter(groups)) + f" ({len(w.alternatives)} candidate definitions)")
                continue
            for text, arms in groups.items():
                conds = " \\| ".join(esc(_cut(a.condition, 50)) for a in arms[:3]) + (
                    f" (+{len(arms) - 3})" if len(arms) > 3 else "")
                alts.append(f"{text} [{conds} {esc(site_short(arms[0].site, base))}]")
            parts.append("; or ".join(alts) if len(groups) > 1 else alts[0] if alts else "")
    return "; ".join(_folded(p for p in parts if p))


def _folded(parts: Iterable[str]) -> list[str]:
    """Consecutive equal parts as ``2× part``."""
    out: list[list[Any]] = []
    for p in parts:
        if out and out[-1][0] == p:
            out[-1][1] += 1
        else:
            out.append([p, 1])
    return [f"{n}× {p}" if n > 1 else p for p, n in out]


def also_cell(r: Any, aliases: dict[str, str]) -> str:
    """Non-work calls of a row, by class (first-call ones said), and first-call work."""
    by: dict[str, list[Any]] = {}
    for o in r.other:
        by.setdefault(o.cls.value, []).append(o)
    out = []
    for cls, items in by.items():
        names = list(dict.fromkeys(o.name + (f" {o.detail}" if o.detail and cls != "graph" else "") for o in items))
        first = sum(o.count for o in items if o.first_call)
        total = sum(o.count for o in items)
        text = f"{cls} {total}" if cls == "setup" else f"{cls}: " + ", ".join(names[:3]) + (
            f" (+{len(names) - 3})" if len(names) > 3 else "")
        if first:
            text += f" ({first} first call)" if first < total else " (first call)"
        out.append(text)
    fc = [c.name for c in iter_calls(r.work) if c.phase == Phase.PREPARE]
    if fc:
        out.append("first-call work: " + ", ".join(dict.fromkeys(aliases.get(n, n) for n in fc)))
    return esc("; ".join(out))


def _dtypes(r: Any) -> str:
    return "; ".join(dict.fromkeys(c.dtypes for c in iter_calls(r.work) if c.dtypes))


def _heading_cells(h: Any) -> list[str]:
    out = []
    for i, f in enumerate(h.frames):
        reps = " ".join(x.label for x in f.repeat if x.value != 1)
        last = "; ".join(x.last_differs for x in f.repeat if x.last_differs)
        prev = h.frames[i - 1].condition if i else []
        conds = [c for c in f.condition if all(c is not p for p in prev)]
        text = "▸" * (h.depth + i + 1) + " " + code(f.name) + f" ({esc(f.site)})"
        if reps:
            text += f" {esc(reps)}"
        if f.model_phase:
            text += f" — *{esc(f.model_phase)}*"
        if conds:
            text += " [if " + esc("; ".join(_cut(str(c), 60) for c in conds[-2:])) + "]"
        if last:
            text += f" — last iteration differs: {esc(last)}"
        out.append(text)
    return out


def adapter_cell(adapters: list[Any]) -> str:
    """The first two adapters of a row, each with its definition and how its edge was linked
    (``name`` (norm.cu:10, exact)); the rest counted (the JSON lists them all)."""
    cells = [f"{code(a.name)} ({esc(a.definition)}, {esc(a.resolution or 'unknown')})" for a in adapters[:2]]
    return ", ".join(cells) + (f" (+{len(adapters) - 2})" if len(adapters) > 2 else "")


def map_table(t: Any, lines: list[Any], aliases: dict[str, str], ncols: int = 8) -> list[str]:
    """One phase table; ``ncols``: the empty cells after a heading's two (the table has ten columns)."""
    out = ["| # | operation | call site | adapter | device work (kernels, library calls) | launches dev / lib "
           "| dtypes | repeat | condition | also |", "|---|---|---|---|---|---|---|---|---|---|"]
    for ln in table_lines(t, lines):
        if isinstance(ln, FrequencyChange):
            out.append(f"|  | **{esc(ln.frequency)}** |" + " |" * ncols)
        elif isinstance(ln, Heading):
            for text in _heading_cells(ln):
                out.append(f"|  | {text} |" + " |" * ncols)
        elif isinstance(ln, BlockRef):
            more = f" (+{len(ln.frames) - 3})" if len(ln.frames) > 3 else ""
            sites = ", ".join(str(f.site) for f in ln.frames[:3]) + more
            out.append(f"| ↳ | {code(ln.frame.name)} at {esc(sites)}: same {len(ln.rows)} rows as {esc(ln.same_as)} "
                       f"({code(ln.first.name)} at {esc(ln.first.site)}) |" + " |" * ncols)
        else:
            r = ln.row
            reps = " ".join(x.label for x in ln.repeats if x.value != 1)
            last = "; ".join(x.last_differs for x in ln.repeats if x.last_differs)
            work = work_cell(r.work, r.site, aliases) or esc(r.note) or "—"
            out.append("| " + " | ".join([
                str(ln.n), code(marked(r.op, r.resolution)), esc(r.site), adapter_cell(r.adapter),
                work, f"{esc(r.counts.device)} / {esc(r.counts.library)}", esc(_dtypes(r)),
                esc(reps + (f"; last differs: {last}" if last else "")),
                esc("; ".join(_cut(str(c)) for c in ln.conditions)), also_cell(r, aliases)]) + " |")
    return out


def render_map_markdown(rep: MapReport, detail: bool = False) -> str:
    """The default Markdown report: summary, phase tables, boundaries, capture, open questions;
    ``detail`` (and ``rep.trace``): also every stage and the per-call analyses of the full trace."""
    h, m = rep.header, rep.map
    e = h.entry
    wt = h.working_tree
    changes = "not a git checkout" if wt is None else (
        f"{len(wt[0])} modified, {len(wt[1])} untracked" if (wt[0] or wt[1]) else "clean")
    out = [f"# apxtui execution map: `{e.qualname}`", "",
           f"- **Checkout:** {code(h.checkout)}",
           f"- **Revision:** {code(h.revision)}" + (f" (branch {code(h.branch)})" if h.branch else ""),
           f"- **Working tree:** {changes}",
           f"- **Checkpoint:** {esc(h.checkpoint or 'none given')}",
           f"- **Profile:** {esc(h.profile)}",
           f"- **Selection:** {', '.join(code(s) for s in h.select) or 'none (every arm shown)'}",
           *map_choice_lines(h.choices, m),
           f"- **Operator layer:** {esc(m.operator_rule)}",
           f"- **Entry:** {code(e.qualname)} at {esc(e.file)}:{e.line}",
           f"- **apxtui:** {h.apxtui}", "",
           f"> {m.static_note}", "", "## Summary", ""]
    out += [f"- {esc(x)}" for x in m.lead]
    out.append(f"- cuts: {len(m.cuts)} subtree(s) not followed (listed under Cuts)" if m.cuts
               else "- cuts: none — every reached call was followed")
    out += ["", f"**Path:** {path_line(rep.path)}", ""]
    al = make_aliases(m)
    folded = fold_blocks(m)
    for t in m.phases:
        tot = t.totals
        out += ["", f"## {PHASE_TITLE[t.phase]} — {esc(t.frequency)}", "",
                f"Totals (static): **{esc(tot.device)}** device launches, **{esc(tot.library)}** library calls"
                + ("" if tot.exact else " — a range: alternatives at " + ", ".join(esc(a) for a in tot.arms[:8])
                   + (f" (+{len(tot.arms) - 8})" if len(tot.arms) > 8 else "")) + f"; {len(t.rows)} rows.", ""]
        out += map_table(t, folded.get(t.phase.value, []), al)
    if not m.phases:
        out += ["", "## No device work", "",
                "No kernel launch, library call, memory, transfer or graph call is reached "
                f"from this entry. Dispatch points passed with no selection: {len(m.undecided)}"]
        for c in m.undecided[:30]:
            out.append(f"- {esc(c.construct)} {code(_cut(c.subject, 60))} at {esc(c.site)}: "
                       + "; ".join(code(_cut(a, 60)) for a in c.chosen))
    if al:
        out += ["", "Aliases: " + "; ".join(f"`{a}` = `{n}`" for n, a in al.items())]
    out += map_boundaries(m) + map_capture(m) + map_transfers(m) + map_open(m)
    stages = rep.analysed.stages if rep.analysed is not None else []
    ckpt = checkpoint_sections(rep.checkpoint_facts, stages, h.checkpoint, rep.checkpoint_error)
    if rep.cuts is not None:
        out += trace_cut_lines(rep.cuts)
    if detail and rep.trace is not None and rep.analysed is not None:
        out += ["", "# Full detail (every stage of the call tree)", ""] + detail_sections(rep.trace, rep.analysed,
                                                                                          ckpt)
    else:
        out += ckpt
    return "\n".join(out) + "\n"


def trace_cut_lines(tc: TraceCuts) -> list[str]:
    """The call tree's cuts (budget, depth, recursion): how many and the first few, never silent."""
    out = ["", "## Call-tree cuts", ""]
    if not tc.count:
        return out + ["None: the call tree was expanded whole."]
    out.append(f"{tc.count} subtree(s) of the call tree not expanded (`--budget` {tc.budget} stages, "
               f"shared per branch; the map above is not budgeted): "
               + ", ".join(f"{k} {v}" for k, v in tc.by_reason.items()))
    for st, _key in tc.first:
        out.append(f"- {esc(st.cut)}: {code(st.qualname)} called at {esc(tc.site(st))}")
    return out


def map_choice_lines(choices: dict[str, int], m: Any) -> list[str]:
    """Every arm choice: the explorer's (``choices``, ``[``/``]``) and the selection's, each with its dispatch
    point."""
    mine = {c.dispatch for c in m.choices}
    lines = []
    for c in m.choices:
        lines.append(f"  - {code(_cut(c.subject or c.construct, 60))} at {esc(c.site)} → "
                     + ", ".join(code(_cut(x, 60)) for x in c.chosen) + f" ({esc(c.by)})")
    for key, arm in choices.items():
        if key not in mine:
            lines.append(f"  - {code(key)} → arm #{arm} (not reached on this path)")
    if not lines:
        return ["- **Choices:** none"]
    return [f"- **Choices:** {len(lines)} dispatch point(s)", *lines]


def map_boundaries(m: Any) -> list[str]:
    """Dtypes of the steady-state rows where they change from the previous row: one line per call site
    (a site reached on several paths is listed once)."""
    out = ["", "## Dtype boundaries", ""]
    if not m.phases:
        return out + ["No row."]
    prev = None
    seen: set[tuple[str, str]] = set()
    for i, r in enumerate(m.phases[0].rows, 1):
        dts = list(dict.fromkeys(c.dtypes for c in iter_calls(r.work) if c.dtypes))
        text = "; ".join(dts)
        if text and text != prev and (str(r.site), text) not in seen:
            seen.add((str(r.site), text))
            out.append(f"- row {i} {code(r.op)} ({esc(r.site)}): {esc(text)}")
        prev = text or prev
    if not seen:
        out.append("No dtype established on the steady-state rows.")
    return out


def map_capture(m: Any) -> list[str]:
    """Capture regions of the walked functions (every end, instantiate, replay, graph keys), graph lifecycle
    calls grouped by site, and the hazards inside the captured body grouped by site with their guards."""
    out = ["", "## CUDA Graph capture (by site)", ""]
    seen_regions: set[str] = set()
    for r in m.capture_regions:
        rid = r.function if isinstance(r, RegionError) else r.id or r.function
        if rid not in seen_regions:
            seen_regions.add(rid)
            out += region_lines(r)
    graph: dict[tuple[str, str], list[Any]] = {}
    for t in m.phases:
        for r in t.rows:
            for o in r.other:
                if o.cls == CallClass.GRAPH:
                    graph.setdefault((r.note or o.detail or o.name, str(r.site)), []).append(t.phase.value)
                    break  # one per row (a row of candidates has one call per candidate)
    for (what, site), phases in graph.items():
        out.append(f"- {esc(what)}: {code(site)} ({len(phases)} path(s); {', '.join(dict.fromkeys(phases))})")
    cap = next((t for t in m.phases if t.phase == Phase.CAPTURED), None)
    if cap is not None:
        out.append(f"- captured body: {len(cap.rows)} rows, {esc(cap.totals.device)} device launches, "
                   f"{esc(cap.totals.library)} library calls recorded per capture")
        hz: dict[tuple[str, str, str], Hazard] = {}
        for r in cap.rows:
            for o in r.other:
                if o.cls not in (CallClass.MEMORY, CallClass.TRANSFER):
                    continue
                op = host_op(o.name, [])
                if op is None:
                    continue
                if op.kind == "copy":
                    op = replace(op, direction=o.detail or op.direction)
                d = hazard_detail(op)
                if d is None:
                    continue
                k = (op.kind, o.name, str(o.site))
                h = hz.get(k) or Hazard(op.kind, o.name, str(o.site), d, paths=0, conditional=True)
                hz[k] = replace(h, paths=h.paths + o.count, conditional=h.conditional and o.first_call,
                                guards=h.guards + ((o.guard,) if o.guard and o.guard not in h.guards else ()),
                                vias=h.vias + ((r.op,) if r.op not in h.vias else ()))
        for h in hz.values():
            if not h.conditional:
                h = replace(h, unguarded_paths=h.paths)
            out.append(f"  - **hazard** {esc(hazard_line(h))}")
    if not graph and cap is None and not m.capture_regions:
        out.append("No capture lifecycle call on this path.")
    return out


def map_transfers(m: Any) -> list[str]:
    """Memory, transfer and synchronisation calls grouped by site, with their phases."""
    groups: dict[tuple[str, str, str], dict[str, int]] = {}
    for t in m.phases:
        for r in t.rows:
            for o in r.other:
                if o.cls in (CallClass.MEMORY, CallClass.TRANSFER):
                    ph = t.phase.value + (" (first call)" if o.first_call else "")
                    g = groups.setdefault((o.cls.value, o.name + (f" {o.detail}" if o.detail else ""), str(o.site)), {})
                    g[ph] = g.get(ph, 0) + o.count
    out = ["", "## Host transfers, syncs, allocations (by site)", ""]
    if not groups:
        return out + ["None reached."]
    out += ["| class | call | site | paths by phase |", "|---|---|---|---|"]
    for (cls, name, site), phs in groups.items():
        out.append(f"| {esc(cls)} | {code(name)} | {esc(site)} | " + esc(", ".join(f"{k} ×{v}" for k, v in phs.items()))
                   + " |")
    return out


def map_open(m: Any) -> list[str]:
    """Ambiguous calls and unresolved callees grouped with counts, and the cuts."""
    out = ["", "## Ambiguous and unresolved", ""]
    if m.ambiguous:
        out.append(f"Ambiguous calls (several candidate definitions, all kept as alternatives): {len(m.ambiguous)}")
        for callee, sites in sorted(m.ambiguous.items(), key=lambda x: -len(x[1])):
            out.append(f"- {code(callee)} at " + ", ".join(esc(s) for s in sites[:3])
                       + (f" (+{len(sites) - 3})" if len(sites) > 3 else ""))
    un = sorted(m.unresolved.items(), key=lambda x: (-len(x[1]), x[0]))
    if un:
        out.append(f"Unresolved callees (no definition in the checkout; classified by calls.toml): {len(un)}, "
                   f"{sum(len(v) for v in m.unresolved.values())} call paths")
        for callee, sites in un[:UNRESOLVED_MAX]:
            out.append(f"- {code(callee)} ×{len(sites)} (first at {esc(sites[0])})")
        if len(un) > UNRESOLVED_MAX:
            out.append(f"- … {len(un) - UNRESOLVED_MAX} more (JSON `execution_map.unresolved` has all)")
    if not m.ambiguous and not un:
        out.append("Every call on this path resolved.")
    out += ["", "## Cuts", ""]
    if not m.cuts:
        out.append("None: every reached call was followed.")
    for c in m.cuts[:20]:
        out.append(f"- {esc(c.reason)}: {code(c.name)} at {esc(c.site)}")
    if len(m.cuts) > 20:
        out.append(f"- … {len(m.cuts) - 20} more (JSON `execution_map.cuts`)")
    return out
