"""Write synthetic ``.safetensors`` files from names, dtypes and shapes (for tests,
benchmarks and demos).  The data section is zero-filled with ``truncate``, so on
most file systems a file claiming 100 GB takes no disk space (a sparse file).
"""

from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path
from typing import Any

from apxtui.checkpoint.dtypes import tensor_bytes

Spec = dict[str, tuple[str, tuple[int, ...]]]


def header_bytes(tensors: Spec, metadata: dict[str, str] | None = None) -> tuple[bytes, int]:
    """(8-byte length + JSON header padded to 8 bytes, data section size)."""
    head: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
    pos = 0
    for name, (dtype, shape) in tensors.items():
        n = tensor_bytes(dtype, math.prod(shape))
        if n is None:
            raise ValueError(f"{name}: {dtype}{list(shape)} does not fill whole bytes")
        head[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [pos, pos + n]}
        pos += n
    raw = json.dumps(head, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw, pos


def write_safetensors(path: str | Path, tensors: Spec, metadata: dict[str, str] | None = None) -> int:
    """Write header + a sparse zero data section; return the file size."""
    head, data = header_bytes(tensors, metadata)
    with open(path, "wb") as f:
        f.write(head)
    os.truncate(path, len(head) + data)
    return len(head) + data


def write_index(directory: str | Path, weight_map: dict[str, str], total_size: int | None = None) -> Path:
    """Write ``model.safetensors.index.json`` mapping tensor names to shard files."""
    path = Path(directory) / "model.safetensors.index.json"
    meta = {"total_size": total_size} if total_size is not None else {}
    path.write_text(json.dumps({"metadata": meta, "weight_map": weight_map}, indent=1))
    return path


def llama_like(
    layers: int = 2, hidden: int = 64, heads: int = 4, kv_heads: int = 2, head_dim: int | None = None,
    inter: int = 128, vocab: int = 256, dtype: str = "BF16", prefix: str = "model",
) -> Spec:
    """Tensor specs of a Llama-shaped decoder (``[out, in]`` linear weights)."""
    hd = head_dim or hidden // heads
    spec: Spec = {f"{prefix}.embed_tokens.weight": (dtype, (vocab, hidden))}
    for i in range(layers):
        p = f"{prefix}.layers.{i}"
        spec |= {
            f"{p}.input_layernorm.weight": (dtype, (hidden,)),
            f"{p}.self_attn.q_proj.weight": (dtype, (heads * hd, hidden)),
            f"{p}.self_attn.k_proj.weight": (dtype, (kv_heads * hd, hidden)),
            f"{p}.self_attn.v_proj.weight": (dtype, (kv_heads * hd, hidden)),
            f"{p}.self_attn.o_proj.weight": (dtype, (hidden, heads * hd)),
            f"{p}.post_attention_layernorm.weight": (dtype, (hidden,)),
            f"{p}.mlp.gate_proj.weight": (dtype, (inter, hidden)),
            f"{p}.mlp.up_proj.weight": (dtype, (inter, hidden)),
            f"{p}.mlp.down_proj.weight": (dtype, (hidden, inter)),
        }
    spec[f"{prefix}.norm.weight"] = (dtype, (hidden,))
    spec["lm_head.weight"] = (dtype, (vocab, hidden))
    return spec
