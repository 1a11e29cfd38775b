"""Exit codes of ``apxtui checkpoint`` on a corpus of malformed checkpoints: any file that could not be
used exits 1 (a lone broken file, a broken shard beside good ones, a broken or dangling index), with what
could be read still printed; a checkpoint with only warnings exits 0."""

from __future__ import annotations

import json

import pytest
from test_checkpoint_malformed import CASES

from apxtui.checkpoint.synth import llama_like, write_index, write_safetensors
from apxtui.cli import main

SPEC = llama_like(layers=1)


def _good_dir(tmp_path, index: bool = True):
    d = tmp_path / "ckpt"
    d.mkdir()
    write_safetensors(d / "model-00001.safetensors", SPEC)
    if index:
        write_index(d, dict.fromkeys(SPEC, "model-00001.safetensors"))
    return d


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_single_broken_file_exits_one(tmp_path, case, fmt):
    f = tmp_path / "x.safetensors"
    f.write_bytes(CASES[case][0])
    assert main(["checkpoint", str(f), *fmt]) == 1


@pytest.mark.parametrize("case", ["invalid_json", "offsets_past_data", "text_file", "truncated_length"])
def test_broken_shard_beside_good_ones_exits_one(tmp_path, case, capsys):
    d = _good_dir(tmp_path, index=False)
    (d / "model-00002.safetensors").write_bytes(CASES[case][0])
    assert main(["checkpoint", str(d)]) == 1
    cap = capsys.readouterr()
    assert f"{len(SPEC)} tensors" in cap.out  # the good shard is still summarised
    assert "model-00002.safetensors" in cap.err


INDEXES = {
    "invalid_json": ('{"weight_map": {', "invalid JSON"),
    "missing_shard": (json.dumps({"weight_map": {**dict.fromkeys(SPEC, "model-00001.safetensors"),
                                                  "extra.weight": "model-00002.safetensors"}}), "which is missing"),
    "weight_map_not_object": (json.dumps({"weight_map": ["model-00001.safetensors"]}), "weight_map"),
    "not_an_object": ("[1, 2, 3]", "weight_map"),
}


@pytest.mark.parametrize("case", sorted(INDEXES))
@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_broken_index_exits_one(tmp_path, case, fmt, capsys):
    d = _good_dir(tmp_path)
    text, expected = INDEXES[case]
    (d / "model.safetensors.index.json").write_text(text)
    assert main(["checkpoint", str(d), *fmt]) == 1
    cap = capsys.readouterr()
    assert expected in cap.out + cap.err


def test_index_naming_a_broken_shard_exits_one(tmp_path):
    d = _good_dir(tmp_path)
    (d / "model-00002.safetensors").write_bytes(CASES["invalid_json"][0])
    write_index(d, {**dict.fromkeys(SPEC, "model-00001.safetensors"), "x": "model-00002.safetensors"})
    assert main(["checkpoint", str(d)]) == 1


def test_broken_config_exits_one(tmp_path):
    d = _good_dir(tmp_path)
    (d / "config.json").write_text("{not json")
    assert main(["checkpoint", str(d)]) == 1


@pytest.mark.parametrize("index", [True, False])
def test_good_checkpoint_exits_zero(tmp_path, index, capsys):
    d = _good_dir(tmp_path, index=index)
    assert main(["checkpoint", str(d)]) == 0
    assert main(["checkpoint", str(d), "--json"]) == 0
    assert capsys.readouterr().err == ""


def test_warnings_only_exit_zero(tmp_path, capsys):
    d = _good_dir(tmp_path)  # the index misses a tensor of the shard: a warning, every file was used
    write_index(d, dict.fromkeys(list(SPEC)[1:], "model-00001.safetensors"))
    assert main(["checkpoint", str(d)]) == 0
    assert "missing from weight_map" in capsys.readouterr().out


def test_join_with_a_broken_index_exits_one(tmp_path):
    from apxtui.demo import DEMO_CHECKOUT, DEMO_CHECKPOINT

    d = tmp_path / "ckpt"
    d.mkdir()
    (d / "model.safetensors").write_bytes((DEMO_CHECKPOINT / "model.safetensors").read_bytes())
    (d / "model.safetensors.index.json").write_text('{"weight_map": ')
    assert main(["checkpoint", str(d), "--code", str(DEMO_CHECKOUT)]) == 1
