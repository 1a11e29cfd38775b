"""Reading files that input names: confined to their root, bounded in size, regular files only.

Every file whose name comes from input — a shard a ``weight_map`` names, a Cargo
``build = "…"`` script or ``#[path]`` module, a ``Cargo.toml`` or ``config.json`` found in
a directory — is opened through :func:`confine` and read through :func:`read_limited`:

- the name must be relative, and the path it gives (``..`` folded, symlinks followed)
  must stay inside the root (the checkout, or the checkpoint directory); otherwise
  :class:`InputFileError` says so and nothing is opened;
- only a regular file is opened (a FIFO or device would block or never end), and at
  most ``limit`` bytes are read: a 3 GB sparse ``Cargo.toml`` costs one ``stat``.

:func:`parse_json` turns what JSON/TOML parsers raise on hostile text (nesting too deep,
a 5,000-digit integer, invalid UTF-8) into one :class:`InputFileError` naming the file,
and reports duplicate object keys instead of silently keeping the last.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from apxtui.errors import InputFileError

KiB, MiB = 1024, 1024 * 1024
#: Size limits of the small inputs (a real one is far below each).
MANIFEST_MAX = 1 * MiB  # Cargo.toml, .apxtui.toml
CONFIG_MAX = 16 * MiB  # config.json
INDEX_MAX = 64 * MiB  # *.safetensors.index.json (a 100k-tensor model's is ~10 MB)
JSON_DEPTH_MAX = 64  # config.json nesting (real ones: under 6)


def confine(root: Path, name: str, base: str = "", what: str = "the checkout") -> Path:
    """The real path of ``name`` (relative to ``root/base``), which must lie inside ``root``.

    ``what`` names the root in the message (``the checkout``, ``the checkpoint directory``).
    Raises :class:`InputFileError` for an absolute name, one that leaves ``root`` through
    ``..``, or one whose symlinks lead out of ``root``.
    """
    if not name or "\0" in name:
        raise InputFileError(f"{name!r}: not a file name")
    if name.startswith(("/", "\\")) or PurePosixPath(name).is_absolute() or (len(name) > 1 and name[1] == ":"):
        raise InputFileError(f"{name}: an absolute path; only paths inside {what} are read")
    parts: list[str] = []
    for part in PurePosixPath(base, name.replace("\\", "/")).parts:
        if part == "..":
            if not parts:
                raise InputFileError(f"{name}: leads outside {what} (..); not read")
            parts.pop()
        elif part != ".":
            parts.append(part)
    real_root = _real(str(root))
    try:
        real = os.path.realpath(os.path.join(real_root, *parts))
    except (OSError, RuntimeError, ValueError) as e:
        raise InputFileError(f"{name}: cannot resolve ({e})") from None
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise InputFileError(f"{name}: a symlink to {real}, outside {what}; not read")
    return Path(real)


@functools.lru_cache(maxsize=64)
def _real(root: str) -> str:
    """The real path of a root (cached: thousands of names are confined to the same one)."""
    return os.path.realpath(root)


def read_limited(path: Path, limit: int, label: str | None = None) -> bytes:
    """The bytes of the regular file ``path``, refusing one over ``limit`` bytes without reading it."""
    label = label or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InputFileError(f"{label}: not found") from None
    except OSError as e:
        raise InputFileError(f"{label}: cannot open ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(f"{label}: not a regular file; not read")
        if st.st_size > limit:
            raise InputFileError(f"{label}: {st.st_size:,} bytes, over the {limit:,}-byte limit; not read")
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise InputFileError(f"{label}: cannot read ({e.strerror or e})") from None
    if len(data) > limit:  # grew since the stat
        raise InputFileError(f"{label}: over the {limit:,}-byte limit; not read")
    return data


def _decode(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputFileError(f"{label}: not valid UTF-8 (byte {e.start})") from None


def parse_json(data: bytes | str, label: str, duplicates: list[str] | None = None, max_depth: int = 0) -> Any:
    """JSON of ``data``; hostile input becomes one :class:`InputFileError` naming ``label``.

    Keys repeated within one object are appended to ``duplicates`` (the last value is kept,
    as every JSON parser does); without the list, a repeated key is an error.  ``max_depth``
    (0: the parser's own limit) refuses deeper nesting, so later code that recurses over the
    value (``repr``, ``json.dumps``) cannot hit Python's recursion limit.
    """
    text = _decode(data, label) if isinstance(data, bytes) else data
    seen: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(items)
        if len(d) != len(items):
            keys: set[str] = set()
            for k, _ in items:
                if k in keys:
                    seen.append(k)
                keys.add(k)
        return d

    try:
        value = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as e:
        raise InputFileError(f"{label}: invalid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise InputFileError(f"{label}: JSON nested too deeply; not read") from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits
        raise InputFileError(f"{label}: unusable JSON value ({str(e).split(';')[0]})") from None
    if max_depth and depth(value) > max_depth:
        raise InputFileError(f"{label}: JSON nested more than {max_depth} levels deep; not read")
    if seen:
        if duplicates is None:
            raise InputFileError(
                f"{label}: duplicate key {seen[0]!r}" + (f" (+{len(seen) - 1} more)" if len(seen) > 1 else "")
            )
        duplicates.extend(seen)
    return value


def depth(value: Any) -> int:
    """Nesting depth of a parsed JSON/TOML value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = v.values()
        elif not isinstance(v, list):
            continue
        deepest = max(deepest, d + 1)
        stack.extend((x, d + 1) for x in v if isinstance(x, dict | list))
    return deepest


#: Parsed TOML by (label, bytes): a scan reads each Cargo.toml twice (crate names, package boundaries).
_TOML_SEEN: dict[tuple[str, bytes], dict[str, Any]] = {}


def parse_toml(data: bytes, label: str) -> dict[str, Any]:
    """TOML of ``data``; hostile input becomes one :class:`InputFileError` naming ``label``.
    The same bytes under the same label are parsed once per process (callers only read the result)."""
    hit = _TOML_SEEN.get((label, data))
    if hit is not None:
        return hit
    text = _decode(data, label)
    try:
        got = tomllib.loads(text)
        if len(_TOML_SEEN) > 1024:
            _TOML_SEEN.clear()
        _TOML_SEEN[(label, data)] = got
        return got
    except tomllib.TOMLDecodeError as e:
        raise InputFileError(f"{label}: invalid TOML ({e})") from None
    except RecursionError:
        raise InputFileError(f"{label}: TOML nested too deeply; not read") from None
    except ValueError as e:
        raise InputFileError(f"{label}: unusable TOML value ({str(e).split(';')[0]})") from None


def read_toml(root: Path, rel: str, limit: int = MANIFEST_MAX, what: str = "the checkout") -> dict[str, Any]:
    """``root/rel`` as TOML: confined, bounded, parsed (any defect is an :class:`InputFileError`)."""
    return parse_toml(read_limited(confine(root, rel, what=what), limit, rel), rel)
