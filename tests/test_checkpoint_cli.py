"""``apxtui checkpoint``: text and JSON output, exit codes, --code without a loader."""

from __future__ import annotations

import json

from apxtui.checkpoint.synth import llama_like, write_index, write_safetensors
from apxtui.cli import main

CFG = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
       "vocab_size": 256, "num_hidden_layers": 2}


def _write(tmp_path, spec=None, cfg=CFG):
    write_safetensors(tmp_path / "model.safetensors", spec or llama_like())
    if cfg is not None:
        (tmp_path / "config.json").write_text(json.dumps(cfg))
    return tmp_path


def test_text_output(tmp_path, capsys):
    spec = llama_like()
    spec["model.layers.0.self_attn.q_proj.weight"] = ("BF16", (80, 64))
    assert main(["checkpoint", str(_write(tmp_path, spec))]) == 0
    out = capsys.readouterr().out
    assert f"{len(spec)} tensors in 1 shard(s)" in out
    assert "model.layers.{N}.self_attn.k_proj.weight" in out
    assert "derived: hidden_size / num_attention_heads" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("mismatch"))
    assert "model.layers.0.self_attn.q_proj.weight" in line and "is 80" in line


def test_json_output_follows_documented_schema(tmp_path, capsys):
    assert main(["checkpoint", str(_write(tmp_path)), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "apxtui.checkpoint/1"
    assert {"path", "index_file", "config_file", "totals", "by_dtype", "by_module", "layers", "config", "dims",
            "findings", "shards", "problems", "tensors", "note"} <= set(doc)
    spec = llama_like()
    assert doc["totals"]["tensors"] == len(spec) == len(doc["tensors"])
    assert doc["totals"]["bytes"] == sum(t["bytes"] for t in doc["tensors"])
    assert doc["dims"]["top"]["head_dim"] == {"value": 16, "source": "derived: hidden_size / num_attention_heads",
                                              "derived": True}
    q = next(r for r in doc["layers"] if r["pattern"] == "model.layers.{N}.self_attn.q_proj.weight")
    assert q["count"] == 2 and q["shapes"] == [[64, 64]]
    assert all(f["kind"] != "mismatch" for f in doc["findings"])


def test_bad_shard_printed_and_exit_one(tmp_path, capsys):
    write_safetensors(tmp_path / "a.safetensors", llama_like())
    (tmp_path / "b.safetensors").write_bytes(b"garbage!" * 4)
    assert main(["checkpoint", str(tmp_path)]) == 1  # a file of the checkpoint could not be used
    cap = capsys.readouterr()
    assert "Problems" in cap.out and "b.safetensors" in cap.out  # what could be read is still shown
    assert "b.safetensors" in cap.err


def test_nothing_readable_exits_one_with_one_line(tmp_path, capsys):
    f = tmp_path / "x.safetensors"
    f.write_bytes(b"\xff" * 16)
    assert main(["checkpoint", str(f)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "x.safetensors" in err[0] and "cap" in err[0]


def test_all_shards_missing_exits_one(tmp_path, capsys):
    write_index(tmp_path, {"a": "m-1.safetensors", "b": "m-2.safetensors"})
    assert main(["checkpoint", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "m-1.safetensors" in err and "m-2.safetensors" in err and "no tensor could be read" in err


def test_json_when_nothing_readable_still_prints_problems(tmp_path, capsys):
    (tmp_path / "x.safetensors").write_bytes(b"")
    assert main(["checkpoint", str(tmp_path / "x.safetensors"), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["tensors"] == [] and doc["problems"][0]["file"] == "x.safetensors"


def test_missing_path_is_user_error(tmp_path, capsys):
    assert main(["checkpoint", str(tmp_path / "nope")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_code_flag_with_no_loader_is_not_a_clean_join(tmp_path, capsys):
    # --code now runs the weight join (tests/test_checkpoint_join.py); a checkout with no
    # tensor names is reported as such and exits 1.
    assert main(["checkpoint", str(_write(tmp_path)), "--code", str(tmp_path)]) == 1
    cap = capsys.readouterr()
    assert "NO PATTERNS" in cap.out
