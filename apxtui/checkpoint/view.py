"""Plain rows for the explorer's checkpoint screen and speed-of-light panel (no Textual).

* :func:`tensor_claims` — each tensor's join status (matched / unclaimed / claimed by
  several patterns) with the claiming patterns and their source ``path:line``.
* :func:`pattern_rows` — every loader pattern, the ones that match nothing first.
* :func:`sol_request` — the panel's text inputs checked; a missing one is named, never defaulted.
* :func:`sol_sections` — a :func:`~apxtui.checkpoint.sol.speed_of_light` result as
  (title, rows): the bound and the serial estimate in separate sections.
* :func:`stage_weight_rows` — a stage's stored weights (checkpoint) and the compute
  dtypes below it (analysis), as two kinds of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from apxtui.checkpoint.join import JoinResult, PatternMatch
from apxtui.checkpoint.model import Checkpoint
from apxtui.checkpoint.solfacts import IE, OK, Bound, Estimate, Figure, SpeedOfLight
from apxtui.checkpoint.weights import ComputeBelow, KernelCompute, StageWeights, WeightRow

MATCHED, UNCLAIMED, MULTI = "matched", "unclaimed", "claimed twice"


@dataclass
class Claim:
    """How the join sees one tensor: ``status`` and ``patterns`` as (pattern text, first source ``path:line``)."""

    status: str
    patterns: list[tuple[str, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        if self.status == MULTI:
            return f"claimed ×{len(self.patterns)}"
        return self.status


def _at(m: PatternMatch) -> str:
    s = m.pattern.sources
    return (s[0].at + (f" (+{len(s) - 1})" if len(s) > 1 else "")) if s else "?"


def tensor_claims(ckpt: Checkpoint, join: JoinResult) -> dict[str, Claim]:
    """Tensor name -> :class:`Claim` (every tensor of ``ckpt``)."""
    claims: dict[str, list[tuple[str, str]]] = {}
    for m in join.matched:
        for t in m.tensors:
            claims.setdefault(t.name, []).append((m.pattern.text, _at(m)))
    out: dict[str, Claim] = {}
    for t in ckpt.tensors:
        ps = claims.get(t.name, [])
        out[t.name] = Claim(UNCLAIMED if not ps else MATCHED if len(ps) == 1 else MULTI, ps)
    return out


PATTERN_ORDER = {"unmatched": 0, "prefix": 1, "matched": 2}
PATTERN_LABEL = {"unmatched": "matches nothing", "prefix": "prefix only", "matched": "matched"}


def pattern_rows(join: JoinResult) -> list[tuple[str, str, int, int, str]]:
    """(status label, pattern, tensors, bytes, source) per pattern; the ones matching nothing first."""
    ms = sorted(join.matches, key=lambda m: PATTERN_ORDER.get(m.status, 3))
    return [(PATTERN_LABEL.get(m.status, m.status), m.pattern.text, len(m.tensors), m.nbytes, _at(m)) for m in ms]


# -- speed of light ------------------------------------------------------------------------------


@dataclass
class SolRequest:
    """The panel's inputs, checked: ``missing`` names every input the computation cannot do without."""

    device: str | None
    batch: int | None
    seq: int | None
    context: int | None
    launch_floor_us: float | None
    bind: dict[str, int]
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _num(text: str, name: str, errors: list[str], kind: type = int, minimum: float = 1) -> Any:
    text = (text or "").strip().replace("_", "").replace(",", "")
    if not text:
        return None
    try:
        v = kind(text)
    except ValueError:
        errors.append(f"{name}: {text!r} is not {'an integer' if kind is int else 'a number'}")
        return None
    if v < minimum:
        errors.append(f"{name}: must be at least {minimum}")
        return None
    return v


def sol_request(device: str | None, batch: str, seq: str, context: str = "", floor: str = "",
                bind: str = "") -> SolRequest:
    """Check the text inputs (empty context = seq; empty floor = the device table's figure)."""
    errors: list[str] = []
    b = _num(batch, "batch", errors)
    s = _num(seq, "seq", errors)
    c = _num(context, "context", errors)
    f = _num(floor, "launch floor (µs)", errors, float, 0)
    binds: dict[str, int] = {}
    for item in (x for x in bind.replace(";", ",").split(",") if x.strip()):
        k, sep, v = item.rpartition("=")
        if not sep or not k.strip() or not v.strip().isdigit():
            errors.append(f"bind {item.strip()!r}: expected TEXT=N")
        else:
            binds[k.strip()] = int(v)
    if c is not None and s is not None and c < s:
        errors.append("context: must be at least seq (it includes the new tokens)")
    missing = [n for n, v in (("device", device), ("batch", b), ("seq", s)) if v is None]
    return SolRequest(device or None, b, s, c, f, binds, missing, errors)


def _seconds(x: float) -> str:
    if x >= 1:
        return f"{x:.3f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.3f} ms"
    return f"{x * 1e6:.3f} µs"


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


Row = tuple[str, str]


def _result(r: Bound | Estimate, what: str) -> list[Row]:
    rows: list[Row] = []
    if r.status == IE or r.seconds is None:
        rows.append((what, IE))
    else:
        rows.append((what, f"{_seconds(r.seconds)}  [{r.status}]"))
    for m in r.missing:
        rows.append(("missing", m))
    return rows


def _figure(f: Figure | None, unit: str, absent: str) -> str:
    return f"{f.value:g} {unit} — {f.source}" if f else absent


def sol_sections(sol: SpeedOfLight) -> list[tuple[str, list[Row]]]:
    """The bound, then the estimate, then demand, KV cache, anchors and figure sources."""
    inp = sol.inputs
    head: list[Row] = [("device", sol.device),
                       ("inputs", f"batch {inp.batch} × seq {inp.seq} = {inp.tokens} tokens; context "
                                  f"{inp.context}" + (" (= seq)" if inp.context_note.startswith("context = seq")
                                                      else ""))]
    if inp.bind:
        head.append(("bound loops", ", ".join(f"{k}={v}" for k, v in inp.bind.items())))
    b = sol.bound
    d = sol.demand
    bound = _result(b, "bound")
    if b.terms:
        bound[1:1] = [("limiter", b.limiter or ""), *((f"  {k}", _seconds(v)) for k, v in b.terms.items())]
    e = sol.estimate
    est = _result(e, "estimate")
    if e.status == OK:
        est.insert(1, ("other launches", f"{e.other_launches} × floor = {_seconds(e.other_launches_s)}"))
    demand: list[Row] = [("weights", _bytes(d.weight_bytes)), ("activations", _bytes(d.activation_bytes)),
                         ("KV", _bytes(d.kv_bytes))]
    demand += [(f"FLOPs {k}", f"{v:,.0f}") for k, v in d.flops_by_dtype.items()]
    kv = sol.kv_cache
    kv_rows: list[Row] = ([("per token", _bytes(kv.bytes_per_token)),
                           ("at context", f"{_bytes(kv.bytes_at_context)} (batch {kv.batch} × "
                                          f"{kv.context} tokens)"),
                           ("fields", ", ".join(kv.fields.values()))] if kv.status == OK else
                          [("KV cache", IE), *(("missing", m) for m in kv.missing)])
    anchors: list[Row] = [(a.pattern, f"{a.reads_on_path} reads on the path, {a.checkpoint_tensors} "
                                      f"tensor(s): " + ("consistent" if a.consistent else "differ"))
                          for a in sol.anchors]
    figs = sol.figures
    fig_rows: list[Row] = []
    if figs.memory_bandwidth_GBps:
        fig_rows.append(("bandwidth", _figure(figs.memory_bandwidth_GBps, "GB/s", "")))
    for k, f in figs.peaks_tflops.items():
        fig_rows.append((f"peak {k}", _figure(f, "TFLOPS", "not in the device table")))
    fig_rows.append(("launch floor", _figure(figs.launch_floor_us, "µs", "not given")))
    out = [("Conditional bound", bound), ("Serial estimate (separate figure)", est), ("Inputs", head),
           ("Demand on the path", demand), ("KV cache", kv_rows)]
    if anchors:
        out.append(("Anchors: weight reads vs checkpoint tensors", anchors))
    if sol.excluded:
        out.append(("Not priced", [("", x) for x in sol.excluded]))
    out.append(("Figures", fig_rows))
    meaning = [(k, r.meaning) for k, r in (("bound", b), ("estimate", e)) if r.meaning]
    out.append(("What the figures mean", [*meaning, ("", sol.static_analysis)]))
    return out


def stage_weight_rows(sw: StageWeights | None) -> list[Row]:
    """A stage's stored weights (from the checkpoint) and, separately, the compute dtypes below it
    (``sw.rows``: :class:`~apxtui.checkpoint.weights.WeightRow` records, ``sw.compute`` the calls below)."""
    rows: list[Row] = []
    weights: Sequence[WeightRow] = sw.rows if sw is not None else ()
    for w in weights:
        s = w.stored
        shape = " | ".join("×".join(map(str, x)) for x in s.shape) or "scalar"
        rows.append((f"weight {w.field}", f"{w.pattern}  ({w.status}: {w.how})"))
        rows.append(("  stored (ckpt)", f"{','.join(s.dtype)} {shape}, {_bytes(s.bytes_per_tensor)} per tensor, "
                                 f"{s.tensors} tensor(s), {_bytes(s.bytes_all_tensors)} in all"))
        rows.append(("  loaded at", ", ".join(w.sources[:2]) or "?"))
        if w.stored_vs_compute:
            rows.append(("  vs compute", w.stored_vs_compute))
    compute: Sequence[ComputeBelow] = sw.compute if sw is not None else ()
    for c in compute:
        if isinstance(c, KernelCompute):
            txt = f"in {','.join(c.input) or '?'} acc {','.join(c.accumulator) or '?'} out " \
                  f"{','.join(c.output) or '?'}"
        else:
            txt = ", ".join(f"{k}={v}" for k, v in c.operands.items()) + (f"; compute {c.compute}" if c.compute else "")
        rows.append(("compute (analysis)", f"{c.stage.rsplit('::', 1)[-1]}: {txt} ({c.status})"))
    return rows


INPUT_HINT = {"device": "device: choose one from the device table", "batch": "batch: sequences per call",
              "seq": "seq: new tokens per sequence per call"}


def sol_missing_sections(req: SolRequest) -> list[tuple[str, list[Row]]]:
    """Sections for a request that cannot be priced: each missing input and each input error named."""
    why: list[Row] = [("missing", INPUT_HINT.get(m, m)) for m in req.missing]
    why += [("invalid", e) for e in req.errors]
    return [("Conditional bound", [("bound", IE), *why]),
            ("Serial estimate (separate figure)", [("estimate", IE), *why])]
