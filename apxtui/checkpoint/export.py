"""The checkpoint as a JSON-ready dict (``apxtui checkpoint --json``).

Schema ``apxtui.checkpoint/1``::

    schema        "apxtui.checkpoint/1"
    path          the path given
    index_file    name of the *.safetensors.index.json used, or null
    config_file   "config.json" or null
    totals        {tensors, shards (read ok), params, bytes}
    by_dtype      [{dtype, tensors, params, bytes}]          largest first
    by_module     [{module, tensors, params, bytes}]         largest first
    layers        [{pattern, count, indices, dtypes, shapes, params, bytes}]
                  tensors whose names differ only by numbers, "{N}" in pattern;
                  indices: one compact range string per {N} ("0-31")
    config        {section: dict}   "top" plus nested sections (text_config, …)
    dims          {section: {name: {value, source, derived}}}
                  source is the config key ("text_config.hidden_size") or, when
                  derived is true, the rule ("derived: hidden_size / num_attention_heads")
    findings      [{kind, section, message, tensor, count, expected, actual, keys, derived}]
                  kind: mismatch | unstated | unchecked | info | ok
    shards        [{file, file_size, header_size, tensors, ok, metadata}]
    problems      [{file, severity (error|warning), message, tensor}]
    tensors       [{name, dtype, shape, bytes, shard}]
    note          what the figures rest on (headers only; static)
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from apxtui.checkpoint.model import Checkpoint
from apxtui.checkpoint.shapes import Finding, check_shapes
from apxtui.checkpoint.summary import Summary, summarize

SCHEMA = "apxtui.checkpoint/1"


def to_dict(ckpt: Checkpoint, summary: Summary | None = None, findings: list[Finding] | None = None) -> dict[str, Any]:
    """The documented dict above."""
    s = summary or summarize(ckpt)
    f = check_shapes(ckpt) if findings is None else findings
    return {
        "schema": SCHEMA,
        "path": str(ckpt.path),
        "index_file": ckpt.index_file,
        "config_file": ckpt.config_file,
        "totals": {"tensors": s.tensors, "shards": s.shards, "params": s.params, "bytes": s.bytes},
        "by_dtype": [{"dtype": t.key, "tensors": t.tensors, "params": t.params, "bytes": t.bytes} for t in s.by_dtype],
        "by_module": [
            {"module": t.key, "tensors": t.tensors, "params": t.params, "bytes": t.bytes} for t in s.by_module
        ],
        "layers": [
            {
                "pattern": r.pattern,
                "count": r.count,
                "indices": r.indices,
                "dtypes": r.dtypes,
                "shapes": [list(x) for x in r.shapes],
                "params": r.params,
                "bytes": r.bytes,
            }
            for r in s.rows
        ],
        "config": ckpt.config,
        "dims": {sec: {k: asdict(v) for k, v in d.items()} for sec, d in s.dims.items()},
        "findings": [{**asdict(x), "keys": list(x.keys)} for x in f],
        "shards": [
            {
                "file": sh.file,
                "file_size": sh.file_size,
                "header_size": sh.header_size,
                "tensors": sh.n_tensors,
                "ok": sh.ok,
                "metadata": sh.metadata,
            }
            for sh in ckpt.shards
        ],
        "problems": [asdict(p) for p in ckpt.problems],
        "tensors": [
            {"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "bytes": t.nbytes, "shard": t.shard}
            for t in ckpt.tensors
        ],
        "note": "static: read from safetensors headers and config.json only; no tensor data was loaded",
    }
