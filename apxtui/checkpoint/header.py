"""Read one ``.safetensors`` header without touching tensor data.

File layout: 8-byte little-endian header length ``N``, ``N`` bytes of UTF-8 JSON
(``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}``),
then the data section.  Only the first ``8 + N`` bytes are read, so a 100 GB file
opens as fast as a small one.  Any defect that makes the file unusable is returned as
one ``error`` :class:`Problem` naming the file (and the tensor when there is one);
harmless irregularities (gaps between tensors, trailing bytes, a key repeated in the
header) are warnings.  Every check is linear in the header: a hostile header (deep
nesting, a 5,000-digit integer, a shape of a million dimensions) is one clear error.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path
from typing import Any

from apxtui.checkpoint.dtypes import DTYPE_BITS, tensor_bytes
from apxtui.checkpoint.model import Problem, Shard, TensorInfo
from apxtui.errors import HeaderError, InputFileError
from apxtui.inputs import depth, parse_json

#: Largest header accepted (the safetensors crate uses the same cap).
MAX_HEADER_BYTES = 100_000_000

#: Most dimensions a tensor may have (real ones have at most a handful).
MAX_RANK = 64

#: Leading bytes of other weight formats, used only to explain a refusal.
_MAGIC = {b"PK\x03\x04": "a zip archive (PyTorch .bin/.pt?)", b"GGUF": "a GGUF file"}


def read_shard(path: Path, label: str) -> tuple[Shard, list[TensorInfo], list[Problem]]:
    """Parse the header of ``path``; ``label`` names the file in results and problems."""
    shard = Shard(file=label, file_size=0)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise HeaderError("not a regular file")
        shard.file_size = st.st_size
        with open(path, "rb") as f:
            header, n, dups = _read_header(f, st.st_size)
        tensors, warnings = _tensors(header, label, st.st_size - 8 - n)
        if dups:
            warnings.insert(0, Problem(label, f"header repeats key {_short(dups[0])}" + (
                f" (+{len(dups) - 1} more)" if len(dups) > 1 else "") + "; the last entry kept", "warning"))
    except HeaderError as e:
        return shard, [], [Problem(label, str(e), "error", e.tensor)]
    except FileNotFoundError:
        return shard, [], [Problem(label, "file not found", "error")]
    except OSError as e:
        return shard, [], [Problem(label, f"cannot read: {e.strerror or e}", "error")]
    meta = header.get("__metadata__")
    shard.metadata = {str(k): _scalar(v) for k, v in meta.items()} if isinstance(meta, dict) else {}
    shard.header_size, shard.n_tensors, shard.ok = n, len(tensors), True
    return shard, tensors, warnings


def _read_header(f: Any, size: int) -> tuple[dict[str, Any], int, list[str]]:
    head = f.read(8)
    if len(head) < 8:
        raise HeaderError(f"truncated: {size} bytes, shorter than the 8-byte header length")
    hint = next((f" (looks like {what})" for magic, what in _MAGIC.items() if head.startswith(magic)), "")
    (n,) = struct.unpack("<Q", head)
    if n == 0:
        raise HeaderError("empty header (header length is 0)")
    if n > MAX_HEADER_BYTES:
        raise HeaderError(
            f"header length {n:,} bytes exceeds the {MAX_HEADER_BYTES:,}-byte cap; refusing: "
            f"not a safetensors file or corrupt{hint}"
        )
    if n > size - 8:
        raise HeaderError(
            f"header length {n:,} bytes runs past the end of the file ({size:,} bytes): truncated{hint}"
        )
    raw = f.read(n)
    if len(raw) < n:
        raise HeaderError(f"truncated while reading the {n:,}-byte header")
    if raw[:1] != b"{":
        raise HeaderError(f"not a safetensors file: header does not start with '{{'{hint}")
    dups: list[str] = []
    try:
        header = parse_json(raw, "header", dups)
    except InputFileError as e:
        raise HeaderError(str(e)) from None
    if not isinstance(header, dict):
        raise HeaderError("header JSON is not an object")
    return header, n, dups


def _tensors(header: dict[str, Any], label: str, data_size: int) -> tuple[list[TensorInfo], list[Problem]]:
    """Validate each entry and the offsets as a whole; raise on the first fatal defect."""
    out: list[TensorInfo] = []
    errors: list[HeaderError] = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            out.append(_tensor(name, entry, label, data_size))
        except HeaderError as e:
            errors.append(e)
    if not out and not errors:
        raise HeaderError("empty header: no tensors")
    if errors:
        more = f" (and {len(errors) - 1} more tensor errors)" if len(errors) > 1 else ""
        raise HeaderError(f"{errors[0]}{more}", errors[0].tensor)
    return out, _layout(out, label, data_size)


def _tensor(name: str, entry: Any, label: str, data_size: int) -> TensorInfo:
    if not isinstance(entry, dict):
        raise HeaderError("entry is not an object", name)
    dtype, shape, offs = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in DTYPE_BITS:
        raise HeaderError(f"unknown dtype {_short(dtype)}", name)
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise HeaderError(f"invalid shape {_short(shape)}", name)
    if len(shape) > MAX_RANK:
        raise HeaderError(f"shape has {len(shape):,} dimensions (at most {MAX_RANK} accepted)", name)
    if not (isinstance(offs, list) and len(offs) == 2 and all(type(o) is int and o >= 0 for o in offs)):
        raise HeaderError(f"invalid data_offsets {_short(offs)}", name)
    begin, end = offs
    if end < begin:
        raise HeaderError(f"data_offsets [{begin}, {end}] end before they begin", name)
    if end > data_size:
        raise HeaderError(
            f"data_offsets [{begin:,}, {end:,}] run past the data section ({data_size:,} bytes): truncated file?",
            name,
        )
    numel = 1
    for d in shape:
        numel *= d
        if numel > 8 * data_size:  # more elements than the data section holds at one bit each
            raise HeaderError(f"shape {_short(shape)} has more elements than the data section "
                              f"({data_size:,} bytes) holds", name)
    nbytes = tensor_bytes(dtype, numel)
    if nbytes is None:
        raise HeaderError(f"{numel} elements of {dtype} do not fill whole bytes", name)
    if nbytes != end - begin:
        raise HeaderError(f"{dtype}{shape} needs {nbytes:,} bytes but data_offsets span {end - begin:,}", name)
    return TensorInfo(name, dtype, tuple(shape), nbytes, label, (begin, end))


def _layout(tensors: list[TensorInfo], label: str, data_size: int) -> list[Problem]:
    """Overlaps are fatal; gaps and trailing bytes are warnings."""
    ordered = sorted(tensors, key=lambda t: t.offsets)
    warnings: list[Problem] = []
    pos, prev = 0, None
    gaps = 0
    for t in ordered:
        begin, end = t.offsets
        if begin < pos and end > begin:
            raise HeaderError(f"data_offsets [{begin:,}, {end:,}] overlap tensor {prev}", t.name)
        if begin > pos:
            gaps += 1
        if end > pos:
            pos, prev = end, t.name
    if gaps:
        warnings.append(Problem(label, f"{gaps} gap(s) between tensors in the data section", "warning"))
    if pos < data_size:
        warnings.append(Problem(label, f"{data_size - pos:,} trailing bytes after the last tensor", "warning"))
    return warnings


def _short(value: Any, limit: int = 80) -> str:
    """``repr`` of a value from the header, cut to ``limit`` characters (a shape may be huge or deep)."""
    if isinstance(value, dict | list) and depth(value) > 4:
        return f"<{type(value).__name__} nested {depth(value)} deep>"
    r = repr(value) if not isinstance(value, list) or len(value) <= 16 else repr(value[:16])[:-1] + ", …]"
    return r if len(r) <= limit else r[: limit - 1] + "…"


def _scalar(value: Any) -> str:
    """A ``__metadata__`` value as text (the format says str; a nested value is summarised, not printed)."""
    if isinstance(value, dict | list):
        return f"<{type(value).__name__} of {len(value)}>"
    return str(value)
