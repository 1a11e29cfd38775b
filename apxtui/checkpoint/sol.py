"""Speed of light for a traced path: a conditional bound and, apart from it, a serial estimate.

Method (``seeds/model-sol-analysis-pr.txt``): anchor the counts against the checkpoint
first (each weight pattern read on the path as often as the checkpoint has tensors
for it), then price them on one device for a batch ``B`` of sequences of ``S`` new
tokens each over a context of ``L`` tokens:

* **bound** = max over resources of (total demand / peak rate): memory = (weight +
  activation + KV bytes) / bandwidth; compute = Σ_dtype FLOPs / peak(dtype).  It may
  reject a measured time below it only if the counts are irreducible and the peaks
  are those the device really runs at.
* **estimate** = Σ_stages max(compute, memory, launches × launch floor): serial, no
  overlap; it may only flag a faster result, never reject one.

Counted work: GEMMs (stages reading a 2-D weight, 2·T·N·K FLOPs), embeddings
(T rows of the table), norms (1-D weights: weight + in/out activations),
attention (4·B·heads·head_dim·causal pairs FLOPs; KV read and write).  Other
kernels enter the estimate through their launch floor only.  A missing input
gives ``INSUFFICIENT_EVIDENCE`` naming it; nothing is defaulted.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apxtui.analysis.dtypefacts import KernelDtypes
from apxtui.analysis.loops import LoopCount
from apxtui.analysis.path import AnalysedPath, PathStage
from apxtui.checkpoint.config import dims_for, text_section
from apxtui.checkpoint.dtypes import DTYPE_BITS
from apxtui.checkpoint.model import Checkpoint
from apxtui.checkpoint.solfacts import (
    IE,
    OK,
    PARTIAL,
    Anchor,
    Bound,
    Demand,
    Estimate,
    Figure,
    KvCache,
    SolFigures,
    SolInputs,
    SpeedOfLight,
    StageTime,
    Work,
)
from apxtui.checkpoint.weights import ComputeBelow, KernelCompute, LibraryCompute, LoopBounds, StageWeights, WeightRow
from apxtui.trace import Stage
from apxtui.vocab import dtype_bytes

DEVICES_FILE = Path(__file__).with_name("devices.toml")
ANALYSIS_BYTES = {k: b for k in ("bf16", "f16", "f32", "e4m3", "e5m2", "i8", "u8", "f64") if (b := dtype_bytes(k))}
PEAK_KEY = {"bf16": "bf16", "f16": "f16", "e4m3": "fp8", "e5m2": "fp8", "i8": "int8", "f32": "f32", "tf32": "tf32"}
_ATTN = re.compile(r"attention|attn|fmha|sdpa", re.I)
_EMBED = re.compile(r"embed|embedding|gather|lookup", re.I)
NOTE = ("Static analysis: FLOPs and bytes from the checkpoint shapes and the traced path, priced with datasheet "
        "peaks; not a measurement. The bound and the estimate are different figures and are never merged.")


# -- devices ------------------------------------------------------------------------------------


@dataclass
class Device:
    name: str
    aliases: list[str] = field(default_factory=list)
    bandwidth: Figure | None = None  # GB/s
    peaks: dict[str, Figure] = field(default_factory=dict)  # dtype -> TFLOPS
    launch_floor: Figure | None = None  # µs
    origin: str = ""


def user_devices_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "apxtui" / "devices.toml"


def load_devices(paths: list[Path] | None = None) -> dict[str, Device]:
    """The packaged table, then the user's overrides (figures replaced device by device)."""
    paths = paths if paths is not None else [DEVICES_FILE, user_devices_file()]
    out: dict[str, Device] = {}
    for p in paths:
        if not p.is_file():
            continue
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ValueError(f"{p}: cannot read device table: {e}") from e
        for d in data.get("device", []):
            name = d.get("name")
            if not name:
                continue
            dev = out.setdefault(name, Device(name))
            dev.origin = str(p)
            dev.aliases = list(dict.fromkeys([*dev.aliases, *d.get("aliases", [])]))
            if "memory_bandwidth_GBps" in d:
                dev.bandwidth = _figure(d["memory_bandwidth_GBps"], p)
            if "launch_floor_us" in d:
                dev.launch_floor = _figure(d["launch_floor_us"], p)
            for k, v in (d.get("peak_tflops") or {}).items():
                dev.peaks[k] = _figure(v, p)
    return out


def _figure(v: Any, p: Path) -> Figure:
    if isinstance(v, dict):
        return Figure(float(v["value"]), v.get("source") or f"{p} (no source given)")
    return Figure(float(v), f"{p} (no source given)")


def find_device(name: str, devices: dict[str, Device]) -> Device:
    key = re.sub(r"[\s_]+", "-", name.strip().lower())
    for d in devices.values():
        if key in (re.sub(r"[\s_]+", "-", d.name.lower()), *(a.lower() for a in d.aliases)):
            return d
    raise KeyError(f"unknown device {name!r}; known: {', '.join(devices)}")


# -- demand -------------------------------------------------------------------------------------


def _ints(text: Any) -> int | None:
    m = re.search(r"(\d+)\s*$", str(text))
    return int(m.group(1)) if m and re.fullmatch(r"\s*(\d+\s*\.\.\s*)?\d+\s*", str(text)) else None


def _path_multipliers(stages: list[PathStage], bounds: dict[str, int],
                      bind: dict[str, int]) -> list[tuple[int, list[str]]]:
    """Per stage index: (numeric multiplier, [unbound loop labels])."""
    stack: list[tuple[int, tuple[LoopCount, ...]]] = []
    out: list[tuple[int, list[str]]] = []
    for ps in stages:
        d = ps.depth
        del stack[d:]
        stack.append((d, ps.facts.launches.loops if ps.facts else ()))
        n, missing = 1, list[str]()
        for _, mults in stack:
            for m in mults:
                v = m.value
                if v is None:
                    v = bounds.get(m.label)
                if v is None:
                    v = next((x for k, x in bind.items() if k in m.label), None)
                if v is None:
                    missing.append(m.label)
                else:
                    n *= int(v)
        out.append((n, missing))
    return out


def _act_dtype(comp: Sequence[ComputeBelow]) -> str | None:
    for c in comp:
        vals = (c.input if isinstance(c, KernelCompute) else ()) or [
            c.operands.get("A") if isinstance(c, LibraryCompute) else None]
        for v in vals:
            if v in ANALYSIS_BYTES:
                return str(v)
    return None


def _gemm_dtype(comp: Sequence[ComputeBelow]) -> str | None:
    for c in comp:
        if isinstance(c, LibraryCompute):
            a = c.operands.get("A")
            if a:
                return str(a)
    for c in comp:
        for v in c.input if isinstance(c, KernelCompute) else ():
            if v in PEAK_KEY:
                return str(v)
    return None


def _dims(ckpt: Checkpoint) -> tuple[dict[str, Any], str]:
    dims = dims_for(ckpt.config) if ckpt.config else {}
    sec = text_section(ckpt.config) if ckpt.config else "top"
    return (dict(dims.get(sec, {})), sec)


def collect_work(path: AnalysedPath, weights: dict[int, StageWeights], bounds: LoopBounds | None,
                 ckpt: Checkpoint, batch: int, seq: int, context: int,
                 bind: dict[str, int] | None = None) -> tuple[list[Work], list[str], list[Anchor]]:
    """(work items, exclusions, anchors) for one call of the traced entry: ``weights`` the stored weights
    per stage (by index in ``path.stages``), ``bounds`` the loops bound to the config."""
    stages = path.stages
    mults = _path_multipliers(stages, bounds.values() if bounds else {}, bind or {})
    dims, sec = _dims(ckpt)
    tokens = batch * seq
    work: list[Work] = []
    excluded: list[str] = []
    calls_per_pattern: dict[str, int] = {}
    tensors_per_pattern: dict[str, int] = {}
    attn_depth: int | None = None
    for i, ps in enumerate(stages):
        st, facts = ps.stage, ps.facts
        phase = facts.frequency.phase if facts else "eager"
        depth = ps.depth
        if attn_depth is not None and depth <= attn_depth:
            attn_depth = None
        if phase in ("load", "capture"):
            continue
        at = st.via.at if st.via else ":0"
        mult, missing = mults[i]
        launches = (_ints(facts.launches.device) or 0) + (_ints(facts.launches.library) or 0) if facts else 0
        sw = weights.get(i)
        rows = [r for r in sw.rows if r.first_at_site] if sw else []
        if rows:
            by_arg: dict[str, list[WeightRow]] = {}
            for r in rows:
                by_arg.setdefault(r.arg, []).append(r)
            comp = sw.compute if sw else ()
            for arg, rs in by_arg.items():
                if len(rs) > 1:
                    excluded.append(f"{st.qualname} at {at}: `{arg}` has {len(rs)} candidate weights; not priced")
                    continue
                r = rs[0]
                w = _weight_work(st, at, r, comp, tokens, mult, launches)
                w.missing += [f"unbound loop `{x}`" for x in missing]
                work.append(w)
                launches = 0  # the stage's launches are counted once
                calls_per_pattern[r.pattern] = calls_per_pattern.get(r.pattern, 0) + (0 if missing else mult)
                tensors_per_pattern[r.pattern] = r.stored.tensors
            continue
        if attn_depth is None and _ATTN.search(st.name or "") and st.kind in ("rust_fn", "python_fn"):
            attn_depth = depth
            w = _attention_work(st, at, dims, sec, batch, seq, context, mult, launches, stages, i)
            w.missing += [f"unbound loop `{x}`" for x in missing]
            work.append(w)
    anchors = [Anchor(p, t, n, n == t or t == 1 and n >= 1)
               for p, n in calls_per_pattern.items() for t in (tensors_per_pattern[p],)]
    return work, excluded, anchors


def _weight_work(st: Stage, at: str, r: WeightRow, comp: Sequence[ComputeBelow], tokens: int,
                 mult: int, launches: int) -> Work:
    s = r.stored
    shape = s.shape[0] if s.shape else ()
    w = Work(st.qualname, at, "weight", mult, weight=r.pattern, launches=launches)
    per = s.bytes_per_tensor
    if not s.uniform:
        w.missing.append(f"`{r.pattern}` tensors differ in dtype/shape")
    act = _act_dtype(comp)
    ab = ANALYSIS_BYTES.get(act or "")
    name = (st.name or "") + " " + r.field
    if len(shape) == 2 and _EMBED.search(name):
        w.kind = "embedding"
        rows, cols = shape
        elt = per / max(1, rows * cols)
        w.weight_bytes = min(per, tokens * cols * elt)
        if ab is None:
            w.missing.append(f"activation dtype at {st.qualname} not established")
        else:
            w.act_bytes = tokens * cols * ab
    elif len(shape) == 2:
        w.kind = "gemm"
        n_out, k_in = shape
        elt_bits = DTYPE_BITS.get((s.dtype or ("?",))[0])
        if elt_bits and per * 8 != n_out * k_in * elt_bits:
            w.missing.append(f"`{r.pattern}` is packed ({list(s.dtype)}): logical GEMM shape not established")
        w.weight_bytes = per
        w.flops = 2.0 * tokens * n_out * k_in
        w.dtype = _gemm_dtype(comp)
        if w.dtype is None:
            w.missing.append(f"compute dtype at {st.qualname} not established")
        if ab is None:
            w.missing.append(f"activation dtype at {st.qualname} not established")
        else:
            w.act_bytes = tokens * (n_out + k_in) * ab
    else:
        w.kind = "elementwise"
        width = shape[0] if shape else 0
        w.weight_bytes = per
        if ab is None:
            w.missing.append(f"activation dtype at {st.qualname} not established")
        else:
            w.act_bytes = 2 * tokens * width * ab
    return w


def _attention_work(st: Stage, at: str, dims: dict[str, Any], sec: str, batch: int, seq: int, ctx: int,
                    mult: int, launches: int, stages: list[PathStage], i: int) -> Work:
    w = Work(st.qualname, at, "attention", mult, launches=launches)
    need = {k: dims.get(k) for k in ("num_attention_heads", "num_key_value_heads", "head_dim")}
    for k, d in need.items():
        if d is None:
            w.missing.append(f"config {sec}.{k}")
    dt = None
    depth = stages[i].depth
    for s2 in stages[i + 1:]:
        if s2.depth <= depth:
            break
        d = s2.facts.dtypes if s2.facts else None
        if isinstance(d, KernelDtypes):
            dt = next((x for x in d.input.value if x in ANALYSIS_BYTES), None)
            if dt:
                break
    if dt is None:
        w.missing.append(f"KV/activation dtype under {st.qualname} not established")
    if w.missing:
        return w
    assert dt is not None  # established above, else w.missing
    vals = []
    for k in ("num_attention_heads", "num_key_value_heads", "head_dim"):
        dim = need[k]
        assert dim is not None  # a missing dimension returned above
        vals.append(dim.value)
    h, kvh, hd = vals
    pairs = seq * (ctx - seq) + seq * (seq + 1) / 2  # causal: new token j sees ctx - seq + j keys
    w.flops = 4.0 * batch * h * hd * pairs
    w.dtype = dt
    b = ANALYSIS_BYTES[dt]
    w.kv_bytes = batch * (ctx + seq) * 2 * kvh * hd * b  # read the context's K,V; write the new tokens'
    w.act_bytes = 2 * batch * seq * h * hd * b  # Q in, O out
    return w


# -- pricing ------------------------------------------------------------------------------------


def kv_cache(ckpt: Checkpoint, dtype_bytes: int | None, batch: int, context: int) -> KvCache:
    dims, sec = _dims(ckpt)
    need = ("num_hidden_layers", "num_key_value_heads", "head_dim")
    miss = [f"config {sec}.{k}" for k in need if k not in dims]
    if dtype_bytes is None:
        miss.append("KV dtype (attention kernel input dtype not established)")
    if miss:
        return KvCache(IE, tuple(miss))
    lay, kvh, hd = (dims[k].value for k in need)
    per_tok = 2 * lay * kvh * hd * dtype_bytes
    return KvCache(OK, bytes_per_token=per_tok, bytes_at_context=per_tok * context * batch,
                   formula="2 (K,V) × layers × kv_heads × head_dim × dtype bytes",
                   fields={k: dims[k].source for k in need}, context=context, batch=batch)


BOUND_MEANING = ("no run of this path on this device at these sizes can be faster, if the counts are irreducible "
                 "and the device runs at the datasheet peaks")
ESTIMATE_MEANING = ("serial sum of per-stage maxima with no overlap; may flag a faster run, never reject it; "
                    "kernels without modelled traffic enter by their launch floor only; a library call "
                    "counts as one launch")
NOTHING_PRICED = "no stage of this path has modelled traffic or FLOPs (nothing could be priced)"


def speed_of_light(path: AnalysedPath, weights: dict[int, StageWeights], bounds: LoopBounds | None,
                   ckpt: Checkpoint, device: Device, batch: int, seq: int, context: int | None = None,
                   launch_floor_us: float | None = None, bind: dict[str, int] | None = None) -> SpeedOfLight:
    """Bound and estimate for one call of the traced entry (pure; see the module docstring): ``weights``
    the stored weights per stage of ``path``, ``bounds`` its loops bound to the config (None: unbound)."""
    if batch < 1 or seq < 1:
        raise ValueError("batch and seq must be at least 1")
    ctx = context if context is not None else seq
    if ctx < seq:
        raise ValueError("context must be at least seq")
    work, excluded, anchors = collect_work(path, weights, bounds, ckpt, batch, seq, ctx, bind)
    floor = (Figure(launch_floor_us, "user (--launch-floor-us)") if launch_floor_us is not None
             else device.launch_floor)
    bw = device.bandwidth
    missing_inputs = sorted({m for w in work for m in w.missing})
    priced = [w for w in work if not w.missing]
    flops_by: dict[str, float] = {}
    for w in priced:
        if w.flops:
            flops_by[w.dtype or "?"] = flops_by.get(w.dtype or "?", 0.0) + w.flops * w.mult
    demand = Demand(sum(w.weight_bytes * w.mult for w in priced), sum(w.act_bytes * w.mult for w in priced),
                    sum(w.kv_bytes * w.mult for w in priced), flops_by)
    total_bytes = demand.weight_bytes + demand.activation_bytes + demand.kv_bytes
    terms: dict[str, float] = {}
    missing_figs: list[str] = []
    if bw is None:
        missing_figs.append(f"{device.name}: memory bandwidth")
    else:
        terms["memory"] = total_bytes / (bw.value * 1e9)
    comp_t, comp_ok = 0.0, True
    for dt, f in flops_by.items():
        pk = device.peaks.get(PEAK_KEY.get(dt, dt))
        if pk is None:
            missing_figs.append(f"{device.name}: peak for {PEAK_KEY.get(dt, dt)} (stage compute dtype {dt})")
            comp_ok = False
        else:
            comp_t += f / (pk.value * 1e12)
    if flops_by and comp_ok:
        terms["compute"] = comp_t
    bound: Bound
    if not priced:
        # no stage of the path could be priced: a zero bound would be a default dressed up as a fact
        bound = Bound(IE, tuple(missing_figs + missing_inputs + [NOTHING_PRICED]))
    elif not terms:
        bound = Bound(IE, tuple(missing_figs + missing_inputs))
    else:
        lim = max(terms, key=lambda k: terms[k])
        partial = bool(missing_figs or missing_inputs or excluded)
        bound = Bound(PARTIAL if partial else OK, tuple(missing_figs + missing_inputs), terms[lim], lim, terms,
                      BOUND_MEANING + ("; partial: computed over the resources and stages with evidence only"
                                       if partial else ""))
    estimate = _estimate(work, device, bw, floor, bounds.totals if bounds else {}, missing_figs, missing_inputs)
    act = next((w.dtype for w in priced if w.kind == "attention"), None)
    return SpeedOfLight(
        device=device.name, device_table=device.origin,
        inputs=SolInputs(batch, seq, ctx, batch * seq,
                         "context = seq (no --context given)" if context is None else "given", bind or {}),
        figures=SolFigures(bw, {k: device.peaks.get(PEAK_KEY.get(k, k)) for k in flops_by}, floor),
        anchors=tuple(anchors), demand=demand, bound=bound, estimate=estimate,
        kv_cache=kv_cache(ckpt, ANALYSIS_BYTES.get(act or ""), batch, ctx),
        stages=tuple(work), excluded=tuple(excluded), static_analysis=NOTE)


def _estimate(work: list[Work], device: Device, bw: Figure | None, floor: Figure | None,
              totals_bound: dict[str, Any], missing_figs: list[str], missing_inputs: list[str]) -> Estimate:
    miss = list(missing_figs) + list(missing_inputs)
    if floor is None:
        miss.append(f"{device.name}: launch floor (no datasheet figure; add launch_floor_us or pass "
                    "--launch-floor-us)")
    other = _other_launches(totals_bound, work)
    if other is None:
        miss.append("total launch count of the path is symbolic (bind the loop, e.g. --bind num_steps=N)")
    if not [w for w in work if not w.missing]:
        miss.append(NOTHING_PRICED)
    if miss:
        return Estimate(IE, tuple(miss))
    assert bw is not None and floor is not None and other is not None  # else named missing above
    total = 0.0
    per: list[StageTime] = []
    for w in work:
        c = w.flops / (device.peaks[PEAK_KEY.get(w.dtype or "", w.dtype or "")].value * 1e12) if w.flops else 0.0
        m = w.bytes / (bw.value * 1e9)
        lt = w.launches * floor.value * 1e-6
        t = max(c, m, lt)
        total += t * w.mult
        per.append(StageTime(w.stage, w.at, c, m, lt, ("compute", "memory", "launch")[[c, m, lt].index(t)], w.mult))
    o = other * floor.value * 1e-6
    total += o
    return Estimate(OK, (), total, tuple(per), other, o, ESTIMATE_MEANING)


def _other_launches(totals_bound: dict[str, Any], work: list[Work]) -> int | None:
    """Device launches + library calls of the path not attributed to a priced stage (None: symbolic);
    ``totals_bound``: the launch totals with the loops bound (:class:`~apxtui.checkpoint.weights.LoopBounds`)."""
    lt = totals_bound.get("by_phase") or {}
    total = 0
    for ph, kinds in lt.items():
        if ph in ("load", "capture"):
            continue
        for k in ("device", "library"):
            c = kinds.get(k)
            if c is None:
                continue
            if not c["numeric"]:
                return None
            total += int(c["value"])
    return max(0, total - sum(w.launches * w.mult for w in work))
