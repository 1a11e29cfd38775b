"""Reading checkpoints: single files, shards with and without an index, configs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

from apxtui.checkpoint import read_checkpoint, split_sections, summarize
from apxtui.checkpoint.synth import header_bytes, llama_like, write_index, write_safetensors


def test_single_file_written_by_safetensors(tmp_path):
    f = tmp_path / "model.safetensors"
    save_file(
        {
            "a.weight": np.zeros((3, 5), np.float32),
            "b.bias": np.zeros((7,), np.float16),
            "c.q": np.zeros((2, 2, 2), np.int8),
            "d.mask": np.zeros((4,), np.bool_),
            "e.idx": np.zeros((3,), np.int64),
        },
        f,
        metadata={"format": "pt"},
    )
    ck = read_checkpoint(f)
    assert ck.problems == []
    by = ck.by_name
    assert (by["a.weight"].dtype, by["a.weight"].shape, by["a.weight"].nbytes) == ("F32", (3, 5), 60)
    assert (by["b.bias"].dtype, by["b.bias"].nbytes) == ("F16", 14)
    assert (by["c.q"].dtype, by["c.q"].nbytes) == ("I8", 8)
    assert (by["d.mask"].dtype, by["e.idx"].dtype) == ("BOOL", "I64")
    assert {t.shard for t in ck.tensors} == {"model.safetensors"}
    assert ck.shards[0].metadata == {"format": "pt"}
    assert ck.total_bytes == 60 + 14 + 8 + 4 + 24


def test_hand_written_bf16_fp8_headers_agree_with_safetensors(tmp_path):
    spec = {
        "w.bf16": ("BF16", (4, 8)),
        "w.fp8": ("F8_E4M3", (16, 8)),
        "w.e5m2": ("F8_E5M2", (2,)),
        "s.e8m0": ("F8_E8M0", (3,)),
        "q.int8": ("I8", (5, 5)),
    }
    f = tmp_path / "x.safetensors"
    write_safetensors(f, spec)
    ck = read_checkpoint(f)
    assert ck.problems == []
    with safe_open(str(f), framework="np") as st:
        for name in st.keys():  # noqa: SIM118 - safe_open is not a mapping
            sl = st.get_slice(name)
            assert tuple(sl.get_shape()) == ck.by_name[name].shape
            assert sl.get_dtype() == ck.by_name[name].dtype
    assert ck.by_name["w.bf16"].nbytes == 64
    assert ck.by_name["w.fp8"].nbytes == 128


def test_sub_byte_dtypes_count_bits(tmp_path):
    f = tmp_path / "x.safetensors"
    write_safetensors(f, {"w4": ("F4", (4, 8)), "w6": ("F6_E2M3", (4, 4))})
    ck = read_checkpoint(f)
    assert ck.by_name["w4"].nbytes == 16  # 32 × 4 bits
    assert ck.by_name["w6"].nbytes == 12  # 16 × 6 bits
    with pytest.raises(ValueError):
        header_bytes({"odd": ("F4", (3,))})


def _shards(tmp_path, index: bool):
    spec = llama_like(layers=4)
    names = list(spec)
    half = len(names) // 2
    parts = {"model-00001-of-00002.safetensors": names[:half], "model-00002-of-00002.safetensors": names[half:]}
    for fname, ns in parts.items():
        write_safetensors(tmp_path / fname, {n: spec[n] for n in ns})
    if index:
        write_index(tmp_path, {n: f for f, ns in parts.items() for n in ns})
    return spec, parts


@pytest.mark.parametrize("index", [True, False])
def test_directory_of_shards(tmp_path, index):
    spec, parts = _shards(tmp_path, index)
    ck = read_checkpoint(tmp_path)
    assert ck.problems == []
    assert ck.index_file == ("model.safetensors.index.json" if index else None)
    assert set(ck.by_name) == set(spec)
    for fname, ns in parts.items():
        assert all(ck.by_name[n].shard == fname for n in ns)
    assert [s.file for s in ck.shards] == sorted(parts)


def test_index_path_given_directly(tmp_path):
    spec, _ = _shards(tmp_path, True)
    ck = read_checkpoint(tmp_path / "model.safetensors.index.json")
    assert len(ck.tensors) == len(spec)


def test_one_bad_shard_others_still_load(tmp_path):
    spec, parts = _shards(tmp_path, True)
    bad = sorted(parts)[1]
    (tmp_path / bad).write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    ck = read_checkpoint(tmp_path)
    assert {t.shard for t in ck.tensors} == {sorted(parts)[0]}
    errors = ck.errors
    assert len(errors) == 1 and errors[0].file == bad and "JSON" in errors[0].message


def test_index_naming_missing_shard(tmp_path):
    spec, parts = _shards(tmp_path, True)
    gone = sorted(parts)[0]
    (tmp_path / gone).unlink()
    ck = read_checkpoint(tmp_path)
    assert len(ck.tensors) == len(parts[sorted(parts)[1]])
    msgs = [p for p in ck.errors if gone in p.message]
    assert msgs and msgs[0].file == "model.safetensors.index.json" and "missing" in msgs[0].message


def test_unindexed_shard_is_ignored_with_warning(tmp_path):
    _shards(tmp_path, True)
    write_safetensors(tmp_path / "consolidated.safetensors", {"x": ("F32", (2,))})
    ck = read_checkpoint(tmp_path)
    assert "x" not in ck.by_name
    assert any(p.file == "consolidated.safetensors" and p.severity == "warning" for p in ck.problems)


def test_duplicate_tensor_across_shards_warns(tmp_path):
    write_safetensors(tmp_path / "a.safetensors", {"x": ("F32", (2,))})
    write_safetensors(tmp_path / "b.safetensors", {"x": ("F16", (2,))})
    ck = read_checkpoint(tmp_path)
    assert ck.by_name["x"].shard == "a.safetensors"
    assert any("duplicate" in p.message and p.file == "b.safetensors" for p in ck.problems)


def test_config_beside_single_file_with_nested_sections(tmp_path):
    write_safetensors(tmp_path / "model.safetensors", {"x": ("F32", (2,))})
    cfg = {
        "model_type": "llava",
        "vocab_size": 1000,
        "text_config": {"hidden_size": 64, "num_attention_heads": 4, "model_type": "llama"},
        "vision_config": {"hidden_size": 32, "num_attention_heads": 2},
        "quantization_config": {"quant_method": "fp8"},
    }
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    ck = read_checkpoint(tmp_path / "model.safetensors")
    assert set(ck.config) == {"top", "text_config", "vision_config"}
    assert ck.config["text_config"]["hidden_size"] == 64
    assert ck.config["vision_config"]["hidden_size"] == 32
    assert "text_config" not in ck.config["top"] and ck.config["top"]["quantization_config"]["quant_method"] == "fp8"


def test_split_sections_keeps_non_model_dicts_at_top():
    s = split_sections({"rope_scaling": {"type": "yarn"}, "hidden_size": 8, "audio_config": {"d_model": 4}})
    assert s["top"]["rope_scaling"] == {"type": "yarn"} and s["audio_config"] == {"d_model": 4}


def test_layer_collapsing_and_totals(tmp_path):
    spec = llama_like(layers=6, dtype="BF16")
    spec["model.layers.0.mlp.experts.0.w1.weight"] = ("F8_E4M3", (8, 64))
    spec["model.layers.0.mlp.experts.1.w1.weight"] = ("F8_E4M3", (8, 64))
    spec["model.layers.3.mlp.experts.0.w1.weight"] = ("F8_E4M3", (8, 64))
    write_safetensors(tmp_path / "m.safetensors", spec)
    s = summarize(read_checkpoint(tmp_path))
    rows = {r.pattern: r for r in s.rows}
    q = rows["model.layers.{N}.self_attn.q_proj.weight"]
    assert (q.count, q.indices, q.dtypes, q.shapes) == (6, ["0-5"], ["BF16"], [(64, 64)])
    ex = rows["model.layers.{N}.mlp.experts.{N}.w1.weight"]
    assert (ex.count, ex.indices, ex.bytes) == (3, ["0,3", "0-1"], 3 * 8 * 64)
    assert "lm_head.weight" in rows and rows["lm_head.weight"].count == 1
    dt = {t.key: t for t in s.by_dtype}
    assert dt["F8_E4M3"].tensors == 3 and dt["F8_E4M3"].bytes == 3 * 512
    assert dt["BF16"].bytes + dt["F8_E4M3"].bytes == s.bytes
    mods = {t.key: t for t in s.by_module}
    assert set(mods) == {"model.embed_tokens", "model.layers", "model.norm", "lm_head"}
    assert mods["lm_head"].params == 256 * 64
    assert sum(m.bytes for m in mods.values()) == s.bytes
