"""Time opening checkpoints whose headers claim ~100 GB (sparse files: no data written).

Run: ``python benchmarks/checkpoint_open.py``.  Prints, for each synthetic checkpoint,
the claimed size, the disk space it really uses, and the wall time of
``read_checkpoint`` / ``summarize`` / ``check_shapes`` (best of 5).
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a source tree

from apxtui.checkpoint import check_shapes, read_checkpoint, summarize  # noqa: E402
from apxtui.checkpoint.synth import Spec, llama_like, write_index, write_safetensors  # noqa: E402


def dense_spec() -> tuple[Spec, dict]:
    """Llama-70B-shaped decoder cut to 56 layers: ~100 GB of BF16."""
    cfg = {"hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 28672,
           "vocab_size": 128256, "num_hidden_layers": 56}
    spec = llama_like(layers=56, hidden=8192, heads=64, kv_heads=8, inter=28672, vocab=128256)
    return spec, cfg


def moe_spec() -> tuple[Spec, dict]:
    """DeepSeek-V3-shaped MoE (61 layers × 256 FP8 experts): ~47k tensors, ~700 GB claimed."""
    hid, mi, E, L = 7168, 2048, 256, 61
    spec: Spec = {"model.embed_tokens.weight": ("BF16", (129280, hid)), "lm_head.weight": ("BF16", (129280, hid))}
    for i in range(L):
        p = f"model.layers.{i}"
        spec[f"{p}.self_attn.q_proj.weight"] = ("F8_E4M3", (128 * 192, hid))
        spec[f"{p}.self_attn.o_proj.weight"] = ("F8_E4M3", (hid, 128 * 128))
        spec[f"{p}.mlp.gate.weight"] = ("BF16", (E, hid))
        for e in range(E):
            for proj, shape in (("gate_proj", (mi, hid)), ("up_proj", (mi, hid)), ("down_proj", (hid, mi))):
                spec[f"{p}.mlp.experts.{e}.{proj}.weight"] = ("F8_E4M3", shape)
    cfg = {"hidden_size": hid, "num_attention_heads": 128, "num_key_value_heads": 128, "qk_nope_head_dim": 128,
           "qk_rope_head_dim": 64, "v_head_dim": 128, "kv_lora_rank": 512, "n_routed_experts": E,
           "num_experts_per_tok": 8, "moe_intermediate_size": mi, "vocab_size": 129280, "num_hidden_layers": L,
           "quantization_config": {"quant_method": "fp8"}}
    return spec, cfg


def write(root: Path, spec: Spec, cfg: dict, shards: int) -> tuple[int, int]:
    """Write ``spec`` in ``shards`` files (+ index when > 1); return (claimed bytes, disk bytes)."""
    root.mkdir(parents=True)
    names = list(spec)
    per = math.ceil(len(names) / shards)
    wmap, claimed = {}, 0
    for k in range(shards):
        fname = "model.safetensors" if shards == 1 else f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: spec[n] for n in names[k * per : (k + 1) * per]}
        claimed += write_safetensors(root / fname, part)
        wmap |= dict.fromkeys(part, fname)
    if shards > 1:
        write_index(root, wmap)
    (root / "config.json").write_text(json.dumps(cfg))
    disk = sum(os.stat(p).st_blocks * 512 for p in root.iterdir())
    return claimed, disk


def best_of(fn, n: int = 5) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for label, (spec, cfg), shards in (
            ("dense 56-layer, 1 file", dense_spec(), 1),
            ("dense 56-layer, 20 shards + index", dense_spec(), 20),
            ("MoE 61×256 experts, 163 shards + index", moe_spec(), 163),
        ):
            root = Path(tmp) / label.split(",")[0].replace(" ", "_") / str(shards)
            claimed, disk = write(root, spec, cfg, shards)
            t_read, ck = best_of(lambda r=root: read_checkpoint(r))
            t_sum, _ = best_of(lambda c=ck: summarize(c))
            t_chk, fs = best_of(lambda c=ck: check_shapes(c))
            assert not ck.errors, ck.errors
            print(
                f"{label}: {len(ck.tensors):,} tensors, header claims {claimed / 1e9:.1f} GB "
                f"(on disk {disk / 1e6:.1f} MB); read_checkpoint {t_read * 1e3:.1f} ms, "
                f"summarize {t_sum * 1e3:.1f} ms, check_shapes {t_chk * 1e3:.1f} ms "
                f"({sum(f.kind == 'mismatch' for f in fs)} mismatches)"
            )


if __name__ == "__main__":
    main()
