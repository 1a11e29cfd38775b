"""Bad input: each defect is one clear error naming the file, quickly, without crashing."""

from __future__ import annotations

import json
import os
import struct
import tracemalloc

import pytest

from apxtui.checkpoint import CheckpointError, read_checkpoint
from apxtui.checkpoint.header import MAX_HEADER_BYTES
from apxtui.checkpoint.synth import header_bytes, write_safetensors


def _raw(header: dict | bytes, data: int = 0, length: int | None = None) -> bytes:
    body = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(body) if length is None else length
    return struct.pack("<Q", n) + body + b"\0" * data


def _entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


CASES = {
    "truncated_length": (b"\x05\x00\x00", "truncated"),
    "length_past_end": (_raw({"a": _entry()}, data=8, length=4096), "past the end"),
    "invalid_json": (_raw(b"{\"a\": {\"dtype\": \"F32\",,}}"), "invalid JSON"),
    "not_utf8": (_raw(b"{\"\xff\xfe\": 1}"), "UTF-8"),
    "unknown_dtype": (_raw({"a": _entry(dtype="Q3_K")}, data=8), "unknown dtype 'Q3_K'"),
    "overlap": (_raw({"a": _entry(offsets=(0, 8)), "b": _entry(offsets=(4, 12))}, data=12), "overlap"),
    "offsets_past_data": (_raw({"a": _entry(offsets=(0, 8))}, data=4), "run past the data section"),
    "size_mismatch": (_raw({"a": _entry(shape=(3,), offsets=(0, 8))}, data=8), "needs 12 bytes"),
    "reversed_offsets": (_raw({"a": _entry(offsets=(8, 0))}, data=8), "end before they begin"),
    "bad_shape": (_raw({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, data=4), "invalid shape"),
    "gigabyte_header": (struct.pack("<Q", 5 * 2**30) + b"{}", "cap"),
    "zero_length": (struct.pack("<Q", 0), "empty header"),
    "empty_object": (_raw(b"{}"), "no tensors"),
    "only_metadata": (_raw({"__metadata__": {"format": "pt"}}), "no tensors"),
    "not_an_object": (_raw(b"[1, 2]"), "does not start with"),
    "entry_not_object": (_raw({"a": [1, 2]}), "entry is not an object"),
    "text_file": (b"hello, this is a README and not weights\n" * 3, "not a safetensors file"),
    "zip_file": (b"PK\x03\x04" + b"\0" * 200, "zip"),
    "sub_byte_partial": (_raw({"a": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}, data=2), "whole bytes"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_file_is_one_clear_error(tmp_path, case):
    content, expected = CASES[case]
    f = tmp_path / f"{case}.safetensors"
    f.write_bytes(content)
    ck = read_checkpoint(f)
    assert ck.tensors == []
    assert len(ck.errors) == 1, ck.problems
    err = ck.errors[0]
    assert err.file == f.name
    assert expected in err.message, err.message


def test_error_names_the_offending_tensor(tmp_path):
    f = tmp_path / "x.safetensors"
    f.write_bytes(_raw({"good": _entry(offsets=(0, 8)), "bad": _entry(dtype="NOPE", offsets=(8, 16))}, data=16))
    (err,) = read_checkpoint(f).errors
    assert err.tensor == "bad" and "bad" in str(err)


def test_several_bad_tensors_reported_as_one_error_with_count(tmp_path):
    f = tmp_path / "x.safetensors"
    f.write_bytes(_raw({"a": _entry(dtype="X"), "b": _entry(dtype="Y", offsets=(8, 16))}, data=16))
    (err,) = read_checkpoint(f).errors
    assert "1 more" in err.message


def test_header_over_cap_refused_without_reading_it(tmp_path):
    f = tmp_path / "big.safetensors"
    with open(f, "wb") as fh:
        fh.write(struct.pack("<Q", MAX_HEADER_BYTES + 1))
    os.truncate(f, MAX_HEADER_BYTES + 64)  # sparse: the length is plausible for the file
    tracemalloc.start()
    try:
        (err,) = read_checkpoint(f).errors
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "cap" in err.message
    assert peak < MAX_HEADER_BYTES // 10, peak  # the over-long header was never read into memory


def test_gaps_and_trailing_bytes_are_warnings_not_errors(tmp_path):
    f = tmp_path / "x.safetensors"
    f.write_bytes(_raw({"a": _entry(offsets=(0, 8)), "b": _entry(offsets=(16, 24))}, data=32))
    ck = read_checkpoint(f)
    assert set(ck.by_name) == {"a", "b"} and ck.errors == []
    msgs = " ".join(p.message for p in ck.problems)
    assert "gap" in msgs and "8 trailing bytes" in msgs


def test_truncated_data_section(tmp_path):
    f = tmp_path / "x.safetensors"
    size = write_safetensors(f, {"a": ("BF16", (64, 64)), "b": ("BF16", (64, 64))})
    os.truncate(f, size - 100)
    (err,) = read_checkpoint(f).errors
    assert err.tensor == "b" and "past the data section" in err.message


def test_fifo_does_not_hang(tmp_path):
    fifo = tmp_path / "pipe.safetensors"
    os.mkfifo(fifo)
    (err,) = read_checkpoint(tmp_path).errors  # reading the FIFO would block here forever
    assert "not a regular file" in err.message


def test_invalid_index_falls_back_to_directory(tmp_path):
    head, data = header_bytes({"a": ("F32", (2,))})
    (tmp_path / "m.safetensors").write_bytes(head + b"\0" * data)
    (tmp_path / "model.safetensors.index.json").write_text("{broken")
    ck = read_checkpoint(tmp_path)
    assert "a" in ck.by_name
    assert any(p.file == "model.safetensors.index.json" and "invalid JSON" in p.message for p in ck.errors)


def test_invalid_config_is_a_problem_not_a_crash(tmp_path):
    write_safetensors(tmp_path / "m.safetensors", {"a": ("F32", (2,))})
    (tmp_path / "config.json").write_text("{\"hidden_size\": ")
    ck = read_checkpoint(tmp_path)
    assert ck.config == {} and any(p.file == "config.json" for p in ck.errors)


def test_missing_path_and_empty_directory_raise(tmp_path):
    with pytest.raises(CheckpointError, match="no such file"):
        read_checkpoint(tmp_path / "nope")
    with pytest.raises(CheckpointError, match="no .safetensors"):
        read_checkpoint(tmp_path)
    (tmp_path / "pytorch_model.bin").write_bytes(b"PK\x03\x04")
    with pytest.raises(CheckpointError, match="found pytorch_model.bin"):
        read_checkpoint(tmp_path)
