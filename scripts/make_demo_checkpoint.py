"""Write the demo checkpoint (``apxtui/demo/checkpoint``): ``config.json`` + ``model.safetensors``.

The tensors are exactly the ones ``crates/apxinf-model/src/pi05/load.rs`` in the demo
checkout asks for, in BF16, with shapes derived from the config.  Norm weights are
1.0 and everything else is 0.0, so the file is tiny and compresses to almost nothing.

numpy has no bfloat16 dtype, so ``safetensors.numpy.save_file`` cannot write BF16;
the BF16 bit patterns are kept in ``uint16`` arrays and handed to
``safetensors.serialize_file`` with the dtype spelled out.

Usage: ``python scripts/make_demo_checkpoint.py [OUT_DIR]``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import safetensors

CONFIG: dict = {
    "architectures": ["Pi05ForConditionalGeneration"],
    "model_type": "pi05",
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "vocab_size": 128,
    "max_position_embeddings": 256,
    "rms_norm_eps": 1e-06,
    "rope_theta": 10000.0,
    "torch_dtype": "bfloat16",
}

BF16_ONE = 0x3F80  # bit pattern of 1.0 in bfloat16


def tensor_shapes(cfg: dict) -> dict[str, tuple[int, ...]]:
    """Checkpoint tensor name → shape (HF layout: projection weights are [out, in])."""
    h, inter, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    q_dim = cfg["num_attention_heads"] * cfg["head_dim"]
    kv_dim = cfg["num_key_value_heads"] * cfg["head_dim"]
    shapes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (vocab, h)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}"
        shapes[f"{p}.input_layernorm.weight"] = (h,)
        shapes[f"{p}.post_attention_layernorm.weight"] = (h,)
        shapes[f"{p}.self_attn.q_proj.weight"] = (q_dim, h)
        shapes[f"{p}.self_attn.k_proj.weight"] = (kv_dim, h)
        shapes[f"{p}.self_attn.v_proj.weight"] = (kv_dim, h)
        shapes[f"{p}.self_attn.o_proj.weight"] = (h, q_dim)
        shapes[f"{p}.mlp.gate_proj.weight"] = (inter, h)
        shapes[f"{p}.mlp.up_proj.weight"] = (inter, h)
        shapes[f"{p}.mlp.down_proj.weight"] = (h, inter)
    shapes["model.norm.weight"] = (h,)
    shapes["lm_head.weight"] = (vocab, h)
    return shapes


def _bf16_spec(arr: np.ndarray):
    """A BF16 tensor for ``safetensors.serialize_file`` from its uint16 bit patterns."""
    spec_cls = getattr(safetensors, "TensorSpec", None)
    if spec_cls is not None:  # safetensors >= 0.7
        return spec_cls(dtype="bfloat16", shape=arr.shape, data_ptr=arr.ctypes.data, data_len=arr.nbytes)
    return {"dtype": "bfloat16", "shape": list(arr.shape), "data": arr.tobytes()}


def write_checkpoint(out_dir: Path, cfg: dict = CONFIG) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    config_path = out_dir / "config.json"
    config_path.write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    arrays = {}
    for name, shape in tensor_shapes(cfg).items():
        fill = BF16_ONE if name.endswith("norm.weight") else 0
        arrays[name] = np.full(shape, fill, dtype="<u2")
    weights_path = out_dir / "model.safetensors"
    specs = {name: _bf16_spec(arr) for name, arr in arrays.items()}
    safetensors.serialize_file(specs, str(weights_path), metadata={"format": "pt"})
    return [config_path, weights_path]


def main(argv: list[str]) -> None:
    default = Path(__file__).resolve().parent.parent / "apxtui" / "demo" / "checkpoint"
    out_dir = Path(argv[1]) if len(argv) > 1 else default
    for path in write_checkpoint(out_dir):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main(sys.argv)
