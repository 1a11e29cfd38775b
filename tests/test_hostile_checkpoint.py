"""Hostile checkpoints: reads stay inside the directory, work is linear, one bad file never aborts the rest."""

from __future__ import annotations

import json
import os
import struct

import pytest

import apxtui.checkpoint.reader as reader
from apxtui.checkpoint import read_checkpoint
from apxtui.checkpoint.reader import unreadable_reason
from apxtui.checkpoint.synth import write_index, write_safetensors
from apxtui.cli import main

SECRET = "SECRET_TOKEN_do_not_read"


def _raw_shard(path, header: bytes, data: int = 8) -> None:
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * data)


@pytest.fixture
def traversal(tmp_path):
    """A checkpoint whose index names files outside it: ``..``, absolute, and a symlink out."""
    outside = tmp_path / "good"
    outside.mkdir()
    write_safetensors(outside / "model.safetensors", {"stolen": ("BF16", (2, 2))})
    (tmp_path / "secret.txt").write_text(SECRET * 4)
    ck = tmp_path / "ck"
    ck.mkdir()
    write_safetensors(ck / "ok.safetensors", {"a": ("BF16", (2,))})
    (ck / "link.safetensors").symlink_to(outside / "model.safetensors")
    write_index(ck, {"a": "ok.safetensors", "p": "../secret.txt", "e": str(tmp_path / "secret.txt"),
                     "w": "../good/model.safetensors", "s": "link.safetensors", "n": "sub/../../secret.txt"})
    return ck


def test_index_naming_files_outside_is_refused(traversal, capsys):
    ck = read_checkpoint(traversal)
    assert [t.name for t in ck.tensors] == ["a"]  # nothing from outside is loaded
    why = {p.message.split(",")[0].split()[-3]: p.message for p in ck.problems if p.severity == "error"}
    assert len(why) == 5, ck.problems
    msgs = " ".join(p.message for p in ck.problems)
    assert "an absolute path" in msgs and "leads outside the checkpoint directory" in msgs
    assert "a symlink to" in msgs and "outside the checkpoint directory" in msgs
    for argv in (["checkpoint", str(traversal)], ["checkpoint", str(traversal), "--json"]):
        main(argv)
        out, err = capsys.readouterr()
        assert SECRET[:8] not in out + err and "stolen" not in out
        assert "header length" not in out  # the outside files were never opened as shards


def test_directory_listing_does_not_follow_a_symlink_out(traversal):
    (traversal / "model.safetensors.index.json").unlink()
    ck = read_checkpoint(traversal)
    assert [t.name for t in ck.tensors] == ["a"]
    assert any(p.file == "link.safetensors" and "outside the checkpoint directory" in p.message for p in ck.problems)


def test_a_named_file_is_read_wherever_it_is(traversal):
    ck = read_checkpoint(traversal / "link.safetensors")  # the user named it: no confinement
    assert [t.name for t in ck.tensors] == ["stolen"]


def _weight_map_comparisons(tmp_path, monkeypatch, n: int) -> int:
    """String comparisons made checking an index that names ``n`` shards, all missing but one."""
    d = tmp_path / f"m{n}"
    d.mkdir()
    write_safetensors(d / "s0.safetensors", {"t0": ("BF16", (2,))})
    write_index(d, {f"t{i}": f"s{i}.safetensors" for i in range(n)})
    count = 0

    class Name(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            nonlocal count
            count += 1
            return str.__eq__(self, other)

    real = reader.parse_json

    def counting(*args):
        doc = real(*args)
        if isinstance(doc, dict) and "weight_map" in doc:
            doc["weight_map"] = {k: Name(v) for k, v in doc["weight_map"].items()}
        return doc

    monkeypatch.setattr(reader, "parse_json", counting)
    ck = read_checkpoint(d)
    assert [t.name for t in ck.tensors] == ["t0"]
    assert sum("missing" in p.message for p in ck.problems) == 21  # 20 listed, the rest counted in one
    return count + n


def test_many_missing_shards_are_checked_in_linear_time(tmp_path, monkeypatch):
    small = _weight_map_comparisons(tmp_path, monkeypatch, 300)
    large = _weight_map_comparisons(tmp_path, monkeypatch, 1200)
    assert large / small < 8, (small, large)  # linear: ~4; the old per-shard rescan: ~16


@pytest.mark.parametrize(("header", "expect"), [
    (b'{"x":' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nested too deeply"),
    (b'{"a":{"dtype":"BF16","shape":[' + b"9" * 5000 + b'],"data_offsets":[0,4]}}', "digits"),
    (b'{"a":{"dtype":"BF16","shape":[' + b",".join([b"3"] * 100_000) + b'],"data_offsets":[0,4]}}', "dimensions"),
    (b'{"a":{"dtype":"BF16","shape":[' + b",".join([b"4294967296"] * 8) + b'],"data_offsets":[0,4]}}',
     "more elements than the data section"),
])
def test_hostile_header_is_one_problem_and_the_other_shards_load(tmp_path, header, expect):
    _raw_shard(tmp_path / "a.safetensors", header)
    write_safetensors(tmp_path / "b.safetensors", {"b": ("BF16", (2,))})
    ck = read_checkpoint(tmp_path)
    assert [t.name for t in ck.tensors] == ["b"]
    [bad] = ck.errors
    assert bad.file == "a.safetensors" and expect in bad.message and len(str(bad)) < 300, bad


@pytest.mark.parametrize(("config", "expect"), [
    ('{"hidden_size": ' + "1" * 5000 + "}", "digits"),
    ('{"x":' + "[" * 50_000 + "]" * 50_000 + "}", "nested too deeply"),
    ('{"x":' + "[" * 900 + "]" * 900 + "}", "nested more than 64 levels"),  # parses, but would recurse later
    ('{"hidden_size": 8, "hidden_size": 16}', "duplicate key 'hidden_size'"),
])
def test_hostile_config_is_a_problem_naming_the_file(tmp_path, config, expect, capsys):
    write_safetensors(tmp_path / "a.safetensors", {"a": ("BF16", (2,))})
    (tmp_path / "config.json").write_text(config)
    ck = read_checkpoint(tmp_path)
    assert [t.name for t in ck.tensors] == ["a"]
    assert any(p.file == "config.json" and expect in p.message for p in ck.problems), ck.problems
    code = main(["checkpoint", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == (0 if "duplicate" in expect else 1)  # a config that could not be used: exit 1, still printed
    assert "config.json" in out and expect in out and "Error" not in err


def test_duplicate_header_keys_are_reported(tmp_path):
    h = b'{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    _raw_shard(tmp_path / "a.safetensors", h, data=4)
    ck = read_checkpoint(tmp_path)
    assert ck.tensors[0].dtype == "F32"
    assert any("repeats key 'a'" in p.message and p.severity == "warning" for p in ck.problems)


def test_unreadable_checkpoint_says_why(tmp_path):
    _raw_shard(tmp_path / "a.safetensors", b"[1]")
    _raw_shard(tmp_path / "b.safetensors", b'{"b": 1}')
    why = unreadable_reason(read_checkpoint(tmp_path))
    assert why.startswith("no tensor could be read: a.safetensors: ") and "b.safetensors [b]: " in why


def test_fifo_shard_named_by_index_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe.safetensors")
    write_safetensors(tmp_path / "ok.safetensors", {"a": ("BF16", (2,))})
    write_index(tmp_path, {"a": "ok.safetensors", "p": "pipe.safetensors"})
    ck = read_checkpoint(tmp_path)
    assert [t.name for t in ck.tensors] == ["a"]
    assert any("not a regular file" in p.message or "missing" in p.message for p in ck.problems)


def test_oversized_index_and_config_are_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "CONFIG_MAX", 100)
    write_safetensors(tmp_path / "a.safetensors", {"a": ("BF16", (2,))})
    (tmp_path / "config.json").write_text(json.dumps({"pad": "x" * 200}))
    ck = read_checkpoint(tmp_path)
    assert any(p.file == "config.json" and "over the 100-byte limit" in p.message for p in ck.problems)
