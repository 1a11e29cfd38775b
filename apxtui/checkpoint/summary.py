"""Totals by dtype and by module, and repeated blocks collapsed into one row each."""

from __future__ import annotations

from dataclasses import dataclass, field

from apxtui.checkpoint.config import Dim, dims_for
from apxtui.checkpoint.model import Checkpoint, TensorInfo
from apxtui.checkpoint.names import indices, module_of, pattern


@dataclass
class Total:
    """Count, elements and bytes of a group of tensors (a dtype or a module)."""

    key: str
    tensors: int = 0
    params: int = 0
    bytes: int = 0

    def add(self, t: TensorInfo) -> None:
        self.tensors += 1
        self.params += t.numel
        self.bytes += t.nbytes


@dataclass
class Row:
    """Tensors whose names differ only by block/expert indices: ``pattern`` uses ``{N}``.

    ``indices`` lists each ``{N}``'s values compactly (``"0-31"``); ``shapes`` and
    ``dtypes`` list the distinct values in first-seen order.
    """

    pattern: str
    count: int = 0
    dtypes: list[str] = field(default_factory=list)
    shapes: list[tuple[int, ...]] = field(default_factory=list)
    params: int = 0
    bytes: int = 0
    indices: list[str] = field(default_factory=list)
    first: str = ""


@dataclass
class Summary:
    tensors: int
    shards: int
    params: int
    bytes: int
    by_dtype: list[Total]
    by_module: list[Total]
    rows: list[Row]
    dims: dict[str, dict[str, Dim]]


def summarize(ckpt: Checkpoint) -> Summary:
    """Totals, collapsed rows and per-section dims of ``ckpt`` (no shape checks)."""
    by_dtype: dict[str, Total] = {}
    by_module: dict[str, Total] = {}
    rows: dict[str, Row] = {}
    idx: dict[str, list[set[int]]] = {}
    modules: dict[str, Total] = {}  # by pattern
    for t in ckpt.tensors:
        by_dtype.setdefault(t.dtype, Total(t.dtype)).add(t)
        pat = pattern(t.name)
        row = rows.get(pat)
        if row is None:
            row = rows[pat] = Row(pat, first=t.name)
            idx[pat] = [set() for _ in range(pat.count("{N}"))]
            mod = module_of(t.name)
            modules[pat] = by_module.setdefault(mod, Total(mod))
        modules[pat].add(t)
        row.count += 1
        row.params += t.numel
        row.bytes += t.nbytes
        if t.dtype not in row.dtypes:
            row.dtypes.append(t.dtype)
        if t.shape not in row.shapes:
            row.shapes.append(t.shape)
        for s, n in zip(idx[pat], indices(t.name), strict=False):
            s.add(n)
    for pat, row in rows.items():
        row.indices = [_ranges(s) for s in idx[pat]]
    return Summary(
        tensors=len(ckpt.tensors),
        shards=sum(1 for s in ckpt.shards if s.ok),
        params=ckpt.total_params,
        bytes=ckpt.total_bytes,
        by_dtype=sorted(by_dtype.values(), key=lambda x: -x.bytes),
        by_module=sorted(by_module.values(), key=lambda x: -x.bytes),
        rows=sorted(rows.values(), key=lambda r: _natural(r.first)),
        dims=dims_for(ckpt.config),
    )


def _ranges(values: set[int]) -> str:
    """``{0,1,2,5,7,8}`` -> ``"0-2,5,7-8"``."""
    spans: list[list[int]] = []
    for v in sorted(values):
        if spans and v == spans[-1][1] + 1:
            spans[-1][1] = v
        else:
            spans.append([v, v])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _natural(name: str) -> list[tuple[int, int, str]]:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in name.split(".")]
