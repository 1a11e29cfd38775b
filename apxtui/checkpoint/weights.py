"""Checkpoint facts on a traced path: the weight each operator reads, and loop bounds.

Both read an analysed path (:class:`apxtui.analysis.path.AnalysedPath`) and return records; the
report's trace document takes them in :func:`apxtui.report.model.add_checkpoint_facts`:

* :func:`stage_weights` — a stage whose call passes a struct field (``&self.q_proj``)
  is matched to the loader pattern that names it (the field is a segment of the
  pattern, or the loader line initialises a field of that name).  Always ``heuristic``.
  The stored dtype/shape/bytes are shown beside the compute dtypes the analysis
  found below the stage: two facts, never merged.
* :func:`bind_loops` — loop multipliers over the model's layers/blocks bound to the
  config's layer count, naming the config field used; other loops stay symbolic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from apxtui.analysis.dtypefacts import KernelDtypes, LibraryDtypes
from apxtui.analysis.path import AnalysedPath, PathStage
from apxtui.analysis.pathfacts import LaunchTotals
from apxtui.checkpoint.config import dims_for, text_section
from apxtui.checkpoint.join import JoinResult, PatternMatch
from apxtui.checkpoint.model import Checkpoint
from apxtui.vocab import STORAGE_TO_ANALYSIS, DtypeKind, Evidence, LoopBinding

GENERIC = {"weight", "weights", "bias", "w", "b", "data", "ptr", "tensor", "model", "layers", "layer", "blocks",
           "self_attn", "mlp", "attn", "cfg", "config", "stream", "handle", "scratch", "s", "x", "input", "out",
           "output", "hidden", "kv", "cache", "kv_cache", "params", "state", "inner", "buf"}
_FIELD = re.compile(r"(?:^|[.\]])\s*([A-Za-z_]\w*)\s*$")
_LAYER_LOOP = re.compile(r"\b(layers|blocks|decoder_layers|encoder_layers|h|num_hidden_layers|num_layers|n_layers|"
                         r"n_layer|depth)\b|_layers\b")
_IE = Evidence.INSUFFICIENT.value
_VISION = re.compile(r"vision|visual|vit|siglip|image|patch", re.I)


_OWNER = re.compile(r"^(self|w|weights?|layer|block|params|model|m)\b")


def _field(arg: str) -> str | None:
    """The field an argument reads when its receiver can own weights (``self.x``, ``w.x``)."""
    a = re.sub(r"^(&mut\s+|&|\*)+", "", arg.strip())
    a = re.sub(r"(\.clone\(\)|\.as_ref\(\)|\?)+$", "", a)
    if "." not in a or "(" in a or not _OWNER.match(a):
        return None
    m = _FIELD.search(a)
    return m.group(1) if m and m.group(1) not in GENERIC else None


def weight_for_field(name: str, join: JoinResult) -> tuple[list[PatternMatch], str]:
    """Matched patterns for a field name, best rule first: (candidates, how)."""
    matched = join.matched
    rules: tuple[tuple[str, Callable[[PatternMatch], bool]], ...] = (
        ("field name is a segment of the loader's tensor name", lambda m: name in m.pattern.segments),
        ("the loader line initialises a field of this name", lambda m: any(s.field == name for s in m.pattern.sources)),
        ("field name starts a segment of the tensor name", lambda m: len(name) >= 4 and any(
            seg.startswith(name + "_") for seg in m.pattern.segments)),
    )
    for how, rule in rules:
        hits = [m for m in matched if rule(m)]
        if hits:
            return hits, how
    return [], ""


@dataclass(frozen=True)
class KernelCompute:
    """A kernel launched below a weight-reading stage, with the dtypes the analysis found at it."""

    stage: str  # qualname of the launching stage
    input: tuple[str, ...]
    accumulator: tuple[str, ...]
    output: tuple[str, ...]
    status: str  # an :class:`apxtui.vocab.Evidence` value (of the input dtypes)
    kind: ClassVar[Literal[DtypeKind.KERNEL]] = DtypeKind.KERNEL

    def reads(self) -> list[str | None]:
        """The dtypes the call reads (its inputs)."""
        return list(self.input)

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "kind": self.kind.value, "input": list(self.input),
                "accumulator": list(self.accumulator), "output": list(self.output), "status": self.status}


@dataclass(frozen=True)
class LibraryCompute:
    """A library call (GEMM …) below a weight-reading stage, with its operand and compute dtypes."""

    stage: str
    operands: dict[str, str | None]  # operand (A, B, C, D, element) -> dtype
    compute: str | None
    status: str  # an :class:`apxtui.vocab.Evidence` value (of the operands)
    kind: ClassVar[Literal[DtypeKind.LIBRARY]] = DtypeKind.LIBRARY

    def reads(self) -> list[str | None]:
        """The dtypes the call reads (its operands)."""
        return list(self.operands.values())

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "kind": self.kind.value, "operands": dict(self.operands),
                "compute": self.compute, "status": self.status}


ComputeBelow = KernelCompute | LibraryCompute


def _compute_below(stages: Sequence[PathStage], i: int) -> tuple[ComputeBelow, ...]:
    depth = stages[i].depth
    out: list[ComputeBelow] = []
    for ps in stages[i + 1:]:
        if ps.depth <= depth:
            break
        d = ps.facts.dtypes if ps.facts else None
        if isinstance(d, KernelDtypes):
            out.append(KernelCompute(ps.stage.qualname, tuple(d.input.value), tuple(d.accumulator.value),
                                     tuple(d.output.value), d.input.status.value))
        elif isinstance(d, LibraryDtypes):
            out.append(LibraryCompute(ps.stage.qualname, dict(d.operands.value or {}),
                                      d.compute.value if d.compute is not None else None, d.operands.status.value))
        if len(out) >= 3:
            break
    return tuple(out)


@dataclass(frozen=True)
class StoredWeight:
    """What the checkpoint stores for one loader pattern (all its tensors)."""

    dtype: tuple[str, ...]  # safetensors dtypes, sorted
    shape: tuple[tuple[int, ...], ...]  # the first three distinct shapes, sorted
    bytes_per_tensor: int
    tensors: int
    bytes_all_tensors: int
    uniform: bool  # one dtype and one shape over the tensors

    @classmethod
    def of(cls, m: PatternMatch) -> StoredWeight:
        ts = m.tensors
        shapes = sorted({tuple(t.shape) for t in ts})
        dtypes = sorted({t.dtype for t in ts})
        return cls(tuple(dtypes), tuple(shapes[:3]), (m.nbytes // len(ts)) if ts else 0, len(ts), m.nbytes,
                   len(shapes) == 1 and len(dtypes) == 1)

    def to_dict(self) -> dict[str, Any]:
        return {"dtype": list(self.dtype), "shape": [list(s) for s in self.shape],
                "bytes_per_tensor": self.bytes_per_tensor, "tensors": self.tensors,
                "bytes_all_tensors": self.bytes_all_tensors, "uniform": self.uniform}


@dataclass(frozen=True)
class WeightRow:
    """One weight a stage's call reads: the argument, the field it names, the loader pattern matched
    (always heuristic) and what the checkpoint stores for it."""

    arg: str
    field: str
    pattern: str
    sources: tuple[str, ...]  # path:line of the loader lines naming the pattern
    stored: StoredWeight
    how: str  # the matching rule (and "one of N candidates")
    first_at_site: bool  # False for the same weight read again at one call site (alternative arms)
    stored_vs_compute: str  # "same" / "differs" / "compute dtype not established"
    status: str = Evidence.HEURISTIC.value

    def to_dict(self) -> dict[str, Any]:
        return {"arg": self.arg, "field": self.field, "pattern": self.pattern, "sources": list(self.sources),
                "stored": self.stored.to_dict(), "status": self.status, "how": self.how,
                "first_at_site": self.first_at_site, "stored_vs_compute": self.stored_vs_compute}


def _stored_vs_compute(stored: StoredWeight, comp: Sequence[ComputeBelow]) -> str:
    have = {STORAGE_TO_ANALYSIS.get(d, d.lower()) for d in stored.dtype}
    ins = {x for c in comp for x in c.reads()}
    return "same" if have and have <= ins else "differs" if ins else "compute dtype not established"


@dataclass(frozen=True)
class StageWeights:
    """The weights one stage's call reads (stored, from the checkpoint) and the compute dtypes below it."""

    rows: tuple[WeightRow, ...]  # one per matched pattern
    compute: tuple[ComputeBelow, ...]  # the first kernels / library calls below the stage with their dtypes


def stage_weights(stages: Sequence[PathStage], join: JoinResult) -> dict[int, StageWeights]:
    """The weights of the stages (by index in ``stages``) whose call passes a field naming a weight."""
    out: dict[int, StageWeights] = {}
    seen: set[tuple[int, str, int, str]] = set()
    stack: list[int] = []
    for i, ps in enumerate(stages):
        via = ps.stage.via
        depth = ps.depth
        del stack[depth:]
        parent = stack[-1] if stack else -1
        stack.append(i)
        found: list[tuple[str, str, PatternMatch, str, bool]] = []  # arg, field, match, how, first at its site
        for arg in via.args if via else ():
            name = _field(arg)
            if not name:
                continue
            cands, how = weight_for_field(name, join)
            if not cands or len(cands) > 3:
                continue
            assert via is not None  # an argument comes from the call site
            key = (parent, via.file, via.line, name)
            first = key not in seen  # alternatives at one call site read the same weight
            seen.add(key)
            how_n = how + (f" (one of {len(cands)} candidates)" if len(cands) > 1 else "")
            found += [(arg, name, m, how_n, first) for m in cands]
        if found:
            comp = _compute_below(stages, i)
            rows = []
            for arg, name, m, how_n, first in found:
                stored = StoredWeight.of(m)
                rows.append(WeightRow(arg, name, m.pattern.text, tuple(s.at for s in m.pattern.sources), stored,
                                      how_n, first, _stored_vs_compute(stored, comp)))
            out[i] = StageWeights(tuple(rows), comp)
    return out


# -- loop bounds ---------------------------------------------------------------------------------


def _loops(path: AnalysedPath) -> dict[str, str]:
    """Symbolic loop label -> qualname of a stage under it (for the section choice)."""
    out: dict[str, str] = {}
    for ps in path.stages:
        for m in ps.facts.launches.loops if ps.facts else ():
            if m.value is None:
                out.setdefault(m.label, ps.stage.qualname)
    lt = path.summary.launch_totals
    for ph in (lt.by_phase if lt is not None else {}).values():
        for k in ph.values():
            for _count, per in k.terms:
                for lab in per:
                    out.setdefault(lab, "")
    return out


@dataclass(frozen=True)
class LoopBound:
    """One symbolic loop of the path bound to the user's ``--bind`` value or the config's layer count
    (``value`` None: left symbolic; ``reason`` says why, or how it was bound)."""

    loop: str  # the loop header
    value: int | None
    config_field: str | None  # the config field the value was read from
    status: str  # a :class:`apxtui.vocab.LoopBinding` value
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"loop": self.loop, "value": self.value, "config_field": self.config_field, "status": self.status,
                "reason": self.reason}


@dataclass(frozen=True)
class LoopBounds:
    """The path's symbolic loops bound to the config (or ``--bind``), and the launch totals with them."""

    loops: tuple[LoopBound, ...]  # one per symbolic loop
    totals: dict[str, Any]  # ``launch_totals_bound``: the static totals with the bound loops substituted

    def values(self) -> dict[str, int]:
        """Loop header → its bound value (bound loops only)."""
        return {r.loop: r.value for r in self.loops if r.value is not None}


def bind_loops(path: AnalysedPath, ckpt: Checkpoint, bind: dict[str, int] | None = None) -> LoopBounds:
    """Bind layer/block loops to the config's layer count: one record per symbolic loop, and the totals.

    ``bind``: user values by header substring (``{"num_steps": 10}``), applied first.
    """
    loops = tuple(bind_loop(label, qual, ckpt, bind) for label, qual in _loops(path).items())
    values = {r.loop: r.value for r in loops if r.value is not None}
    return LoopBounds(loops, _bound_totals(path.summary.launch_totals, values))


def bind_loop(label: str, qual: str, ckpt: Checkpoint, bind: dict[str, int] | None = None) -> LoopBound:
    """One loop (its header ``label``, ``qual`` a function under or around it) bound to the user's
    ``--bind`` value or the config's layer count."""
    dims = dims_for(ckpt.config) if ckpt.config else {}
    with_layers = {sec: d["num_hidden_layers"] for sec, d in dims.items() if "num_hidden_layers" in d}
    given = next(((k, v) for k, v in (bind or {}).items() if k in label), None)
    if given is not None:
        return LoopBound(label, int(given[1]), None, LoopBinding.GIVEN.value,
                         f"bound by the user (--bind {given[0]}={given[1]})")
    if not _LAYER_LOOP.search(label):
        return _symbolic(label, "not a loop over the model's layers/blocks: left symbolic")
    if not with_layers:
        return _symbolic(label, f"{_IE}: the config states no layer count" if ckpt.config else
                         f"{_IE}: no config.json beside the checkpoint")
    want = "vision" if _VISION.search(label + " " + qual) else "text"
    secs = [s for s in with_layers if (_VISION.search(s) is not None) == (want == "vision")]
    sec = text_section(ckpt.config) if want == "text" and text_section(ckpt.config) in with_layers else \
        (secs[0] if len(secs) == 1 else None)
    if sec is None and len(with_layers) == 1:
        sec = next(iter(with_layers))
    if sec is None:
        return _symbolic(label, f"{_IE}: several sections state a layer count ({', '.join(with_layers)})")
    dim = with_layers[sec]
    return LoopBound(label, dim.value, dim.source, LoopBinding.HEURISTIC.value,
                     f"loop over layers/blocks bound to {dim.source} = {dim.value}"
                     + (f" ({want} section chosen by name)" if len(with_layers) > 1 else ""))


def _symbolic(label: str, reason: str) -> LoopBound:
    return LoopBound(label, None, None, LoopBinding.SYMBOLIC.value, reason)


def _bound_totals(launch_totals: LaunchTotals | None, values: dict[str, int]) -> dict[str, Any]:
    """``launch_totals_bound``: the static totals with bound loops substituted (rest symbolic)."""
    res: dict[str, dict[str, Any]] = {}
    for ph, kinds in (launch_totals.by_phase if launch_totals is not None else {}).items():
        for kind, c in kinds.items():
            num = 0
            left_terms: dict[tuple[str, ...], int] = {}
            for count, per in c.terms:
                factor, left = count, []
                for lab in per:
                    if lab in values:
                        factor *= values[lab]
                    else:
                        left.append(lab)
                if left:
                    left_terms[tuple(left)] = left_terms.get(tuple(left), 0) + factor
                else:
                    num += factor
            sym = [f"{n} × " + " × ".join(f"[{x}]" for x in k) for k, n in left_terms.items()]
            if num or sym:
                res.setdefault(ph, {})[kind] = {"value": " + ".join([str(num)] * bool(num) + sym),
                                                "numeric": not sym, "exact_min_max": c.exact}
    return {"scope": "max of the static counts, loops over layers bound to the config", "by_phase": res}
