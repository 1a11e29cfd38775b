"""Config dims (aliases, sections, derivations) and their composition with tensor shapes."""

from __future__ import annotations

import json

from apxtui.checkpoint import check_shapes, model_dims, read_checkpoint
from apxtui.checkpoint.config import dims_for, split_sections
from apxtui.checkpoint.synth import llama_like, write_safetensors


def _ckpt(tmp_path, spec, config):
    write_safetensors(tmp_path / "model.safetensors", spec)
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    return read_checkpoint(tmp_path)


def _by_kind(findings, kind):
    return [f for f in findings if f.kind == kind]


LLAMA_CFG = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
             "intermediate_size": 128, "vocab_size": 256, "num_hidden_layers": 2}


def test_consistent_llama_has_no_mismatch_and_checks_ran(tmp_path):
    fs = check_shapes(_ckpt(tmp_path, llama_like(), LLAMA_CFG))
    assert _by_kind(fs, "mismatch") == [] and _by_kind(fs, "unstated") == []
    ok_tensors = {f.tensor.split(".")[-2] for f in _by_kind(fs, "ok") if f.tensor}
    assert {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "embed_tokens"} <= ok_tensors
    q = next(f for f in fs if f.tensor and "q_proj" in f.tensor and "dim 0" in f.message)
    assert q.count == 2 and q.keys == ("num_attention_heads", "head_dim") and not q.derived


def test_query_width_need_not_equal_hidden(tmp_path):
    # Gemma-style: heads × head_dim (4 × 32 = 128) ≠ hidden (64); stated head_dim.
    cfg = {**LLAMA_CFG, "head_dim": 32}
    fs = check_shapes(_ckpt(tmp_path, llama_like(head_dim=32), cfg))
    assert _by_kind(fs, "mismatch") == []


def test_q_proj_width_mismatch_names_tensor_and_values(tmp_path):
    spec = llama_like()
    spec["model.layers.1.self_attn.q_proj.weight"] = ("BF16", (96, 64))
    fs = check_shapes(_ckpt(tmp_path, spec, LLAMA_CFG))
    (m,) = _by_kind(fs, "mismatch")
    assert m.tensor == "model.layers.1.self_attn.q_proj.weight"
    assert (m.expected, m.actual, m.derived) == (64, 96, False)
    assert "num_attention_heads × head_dim" in m.message


def test_derived_head_dim_is_labelled_and_implied_value_given(tmp_path):
    cfg = {k: v for k, v in LLAMA_CFG.items() if k != "head_dim"}
    fs = check_shapes(_ckpt(tmp_path, llama_like(head_dim=32), cfg))
    ms = _by_kind(fs, "mismatch")
    assert ms and all(m.derived for m in ms)
    q = next(m for m in ms if "q_proj" in m.tensor)
    assert q.count == 2 and "derived" in q.message and "implies head_dim = 32" in q.message


def test_unstated_kv_heads_defaults_are_derived_and_gqa_tensor_disagrees(tmp_path):
    cfg = {k: v for k, v in LLAMA_CFG.items() if k != "num_key_value_heads"}
    ck = _ckpt(tmp_path, llama_like(), cfg)
    d = dims_for(ck.config)["top"]["num_key_value_heads"]
    assert d.derived and d.value == 4 and d.source.startswith("derived")
    ms = _by_kind(check_shapes(ck), "mismatch")
    assert {m.tensor.split(".")[-2] for m in ms} == {"k_proj", "v_proj"}
    assert all("implies num_key_value_heads = 2" in m.message for m in ms)


def test_unstated_intermediate_size_reported_with_tensor(tmp_path):
    cfg = {k: v for k, v in LLAMA_CFG.items() if k != "intermediate_size"}
    fs = check_shapes(_ckpt(tmp_path, llama_like(), cfg))
    un = [f for f in _by_kind(fs, "unstated") if "intermediate_size" in f.message]
    assert un and un[0].actual == 128 and "mlp" in un[0].tensor
    assert _by_kind(fs, "mismatch") == []


def test_layer_count_and_vocab_mismatch(tmp_path):
    cfg = {**LLAMA_CFG, "num_hidden_layers": 3, "vocab_size": 300}
    fs = _by_kind(check_shapes(_ckpt(tmp_path, llama_like(), cfg)), "mismatch")
    layer = [f for f in fs if "blocks" in f.message]
    assert layer and (layer[0].expected, layer[0].actual) == (3, 2)
    vocab = [f for f in fs if f.tensor in ("model.embed_tokens.weight", "lm_head.weight")]
    assert len(vocab) == 2 and all(f.expected == 300 and f.actual == 256 for f in vocab)


def test_no_config_is_reported(tmp_path):
    fs = check_shapes(_ckpt(tmp_path, llama_like(), None))
    assert len(fs) == 1 and fs[0].kind == "unstated" and "config.json" in fs[0].message


def test_gpt2_aliases_and_conv1d_layout(tmp_path):
    h, n = 48, 3
    spec = {"wte.weight": ("F32", (100, h))}
    for i in range(2):
        spec |= {
            f"h.{i}.attn.c_attn.weight": ("F32", (h, 3 * h)),  # Conv1D: [in, out]
            f"h.{i}.attn.c_attn.bias": ("F32", (3 * h,)),
            f"h.{i}.attn.c_proj.weight": ("F32", (h, h)),
            f"h.{i}.mlp.c_fc.weight": ("F32", (h, 4 * h)),
            f"h.{i}.mlp.c_proj.weight": ("F32", (4 * h, h)),
        }
    cfg = {"n_embd": h, "n_head": n, "n_layer": 2, "n_inner": None, "vocab_size": 100}
    ck = _ckpt(tmp_path, spec, cfg)
    dims = model_dims(ck.config["top"])
    assert dims["hidden_size"].source == "n_embd" and dims["num_attention_heads"].source == "n_head"
    assert dims["num_hidden_layers"].source == "n_layer" and "intermediate_size" not in dims
    assert dims["head_dim"].derived and dims["head_dim"].value == 16
    fs = check_shapes(ck)
    assert _by_kind(fs, "mismatch") == []
    assert any("c_attn" in f.tensor for f in _by_kind(fs, "ok"))
    assert any("intermediate_size" in f.message and "c_fc" in f.tensor for f in _by_kind(fs, "unstated"))


def test_nested_text_config_and_vision_sections(tmp_path):
    spec = llama_like(prefix="model.language_model")
    spec |= {
        "visual.blocks.0.attn.qkv.weight": ("BF16", (3 * 32, 32)),
        "visual.blocks.0.attn.proj.weight": ("BF16", (32, 32)),
        "visual.blocks.0.mlp.fc1.weight": ("BF16", (128, 32)),
        "visual.blocks.0.mlp.fc2.weight": ("BF16", (32, 128)),
    }
    cfg = {
        "vocab_size": 256,
        "text_config": {k: v for k, v in LLAMA_CFG.items() if k != "vocab_size"},
        # Qwen2-VL style: embed_dim is the tower width, hidden_size the LLM's.
        "vision_config": {"embed_dim": 32, "hidden_size": 64, "num_heads": 2, "depth": 1, "mlp_ratio": 4},
    }
    ck = _ckpt(tmp_path, spec, cfg)
    dims = dims_for(ck.config)
    assert dims["text_config"]["hidden_size"].source == "text_config.hidden_size"
    assert dims["text_config"]["vocab_size"].source == "vocab_size"  # inherited from the top level
    v = dims["vision_config"]
    assert v["hidden_size"].source == "vision_config.embed_dim" and v["hidden_size"].value == 32
    assert v["num_hidden_layers"].source == "vision_config.depth"
    assert v["intermediate_size"].derived and v["intermediate_size"].value == 128
    assert v["num_key_value_heads"].derived
    fs = check_shapes(ck)
    assert _by_kind(fs, "mismatch") == [], _by_kind(fs, "mismatch")
    assert {f.section for f in _by_kind(fs, "ok")} == {"text_config", "vision_config"}


def test_vision_tower_without_vision_config_is_unstated(tmp_path):
    spec = llama_like() | {"vision_tower.blocks.0.attn.qkv.weight": ("BF16", (96, 32))}
    fs = check_shapes(_ckpt(tmp_path, spec, LLAMA_CFG))
    assert any(f.kind == "unstated" and f.tensor == "vision_tower.blocks" for f in fs)


def _mixtral(experts: int, inter: int = 96):
    spec = llama_like(layers=2)
    for name in [n for n in spec if ".mlp." in n]:
        del spec[name]
    for i in range(2):
        spec[f"model.layers.{i}.block_sparse_moe.gate.weight"] = ("BF16", (experts, 64))
        for e in range(experts):
            p = f"model.layers.{i}.block_sparse_moe.experts.{e}"
            spec |= {f"{p}.w1.weight": ("BF16", (inter, 64)), f"{p}.w3.weight": ("BF16", (inter, 64)),
                     f"{p}.w2.weight": ("BF16", (64, inter))}
    return spec


def test_mixtral_expert_aliases(tmp_path):
    cfg = {**LLAMA_CFG, "intermediate_size": 96, "num_local_experts": 4, "num_experts_per_tok": 2}
    ck = _ckpt(tmp_path, _mixtral(4), cfg)
    d = model_dims(ck.config["top"])
    assert d["num_experts"].source == "num_local_experts" and d["num_experts_per_tok"].value == 2
    fs = check_shapes(ck)
    assert _by_kind(fs, "mismatch") == []
    assert any("4 experts per layer" in f.message for f in _by_kind(fs, "ok"))


def test_expert_count_mismatch_and_unstated_top_k(tmp_path):
    cfg = {**LLAMA_CFG, "intermediate_size": 96, "num_local_experts": 8}
    fs = check_shapes(_ckpt(tmp_path, _mixtral(4), cfg))
    ms = _by_kind(fs, "mismatch")
    assert any("experts per layer" in m.message and m.actual == 4 for m in ms)
    assert any(m.tensor.endswith("gate.weight") and m.expected == 8 for m in ms)
    assert any("num_experts_per_tok" in f.message for f in _by_kind(fs, "unstated"))


def _deepseek(layers=2, mtp=1):
    H, nope, rope, vh, ql, kvl, hid, E, mi = 4, 16, 8, 16, 32, 24, 64, 4, 32
    spec = {"model.embed_tokens.weight": ("BF16", (256, hid)), "lm_head.weight": ("BF16", (256, hid))}
    for i in range(layers + mtp):
        a = f"model.layers.{i}.self_attn"
        spec |= {
            f"{a}.q_a_proj.weight": ("F8_E4M3", (ql, hid)),
            f"{a}.q_b_proj.weight": ("F8_E4M3", (H * (nope + rope), ql)),
            f"{a}.kv_a_proj_with_mqa.weight": ("F8_E4M3", (kvl + rope, hid)),
            f"{a}.kv_b_proj.weight": ("F8_E4M3", (H * (nope + vh), kvl)),
            f"{a}.o_proj.weight": ("F8_E4M3", (hid, H * vh)),
            f"{a}.o_proj.weight_scale_inv": ("F32", (1, 1)),
            f"model.layers.{i}.mlp.gate.weight": ("BF16", (E, hid)),
            f"model.layers.{i}.mlp.shared_experts.gate_proj.weight": ("F8_E4M3", (2 * mi, hid)),
            f"model.layers.{i}.mlp.shared_experts.down_proj.weight": ("F8_E4M3", (hid, 2 * mi)),
        }
        for e in range(E):
            spec[f"model.layers.{i}.mlp.experts.{e}.up_proj.weight"] = ("F8_E4M3", (mi, hid))
            spec[f"model.layers.{i}.mlp.experts.{e}.down_proj.weight"] = ("F8_E4M3", (hid, mi))
    cfg = {"hidden_size": hid, "num_attention_heads": H, "num_key_value_heads": H, "q_lora_rank": ql,
           "kv_lora_rank": kvl, "qk_nope_head_dim": nope, "qk_rope_head_dim": rope, "v_head_dim": vh,
           "n_routed_experts": E, "num_experts_per_tok": 2, "n_shared_experts": 2, "moe_intermediate_size": mi,
           "intermediate_size": 999, "vocab_size": 256, "num_hidden_layers": layers,
           "num_nextn_predict_layers": mtp,
           "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}
    return spec, cfg


def test_deepseek_mla_moe_mtp_compose(tmp_path):
    spec, cfg = _deepseek()
    fs = check_shapes(_ckpt(tmp_path, spec, cfg))
    assert _by_kind(fs, "mismatch") == [], _by_kind(fs, "mismatch")
    assert _by_kind(fs, "unstated") == []
    assert "head_dim" not in model_dims(cfg)  # MLA: hidden / heads would be meaningless
    assert any("multi-token-prediction" in f.message for f in _by_kind(fs, "info"))
    ok = " ".join(f.message for f in _by_kind(fs, "ok"))
    assert "kv_lora_rank + qk_rope_head_dim" in ok and "moe_intermediate_size × num_shared_experts" in ok


def test_deepseek_kv_b_mismatch(tmp_path):
    spec, cfg = _deepseek()
    cfg["v_head_dim"] = 32  # kv_b out and o_proj in now disagree
    ms = _by_kind(check_shapes(_ckpt(tmp_path, spec, cfg)), "mismatch")
    assert {m.tensor.split(".")[-2] for m in ms} == {"kv_b_proj", "o_proj"}


def test_fp8_weights_without_quantization_config(tmp_path):
    spec, cfg = _deepseek()
    del cfg["quantization_config"]
    fs = _by_kind(check_shapes(_ckpt(tmp_path, spec, cfg)), "unstated")
    assert any("quantization_config" in f.message and "F8_E4M3" in f.message for f in fs)


def test_packed_quantised_weights_are_unchecked_not_mismatched(tmp_path):
    spec = llama_like()
    spec["model.layers.0.mlp.down_proj.weight"] = ("U8", (64, 64))  # e.g. FP4 packed two per byte
    cfg = {**LLAMA_CFG, "quantization_config": {"quant_method": "modelopt"}}
    fs = check_shapes(_ckpt(tmp_path, spec, cfg))
    assert _by_kind(fs, "mismatch") == []
    assert [f.tensor for f in _by_kind(fs, "unchecked")] == ["model.layers.0.mlp.down_proj.weight"]


def test_model_dims_records_source_and_never_invents():
    d = model_dims({"d_model": 32, "n_heads": 4, "n_kv_heads": 1, "ffn_dim": 80, "n_vocab": 10, "n_layers": 2,
                    "num_experts": 8, "moe_top_k": 2, "flag": True})
    assert {k: v.source for k, v in d.items() if not v.derived} == {
        "hidden_size": "d_model", "num_attention_heads": "n_heads", "num_key_value_heads": "n_kv_heads",
        "intermediate_size": "ffn_dim", "vocab_size": "n_vocab", "num_hidden_layers": "n_layers",
        "num_experts": "num_experts", "num_experts_per_tok": "moe_top_k"}
    assert d["head_dim"].derived and d["head_dim"].value == 8
    assert model_dims({"hidden_size": 30, "num_attention_heads": 4}).get("head_dim") is None  # not divisible
    assert split_sections({})["top"] == {}
