"""Open a checkpoint: one ``.safetensors`` file, or a directory of shards with or without
``*.safetensors.index.json``, plus ``config.json`` beside them.

Only headers are read.  One unreadable shard, index or ``config.json`` becomes a
:class:`Problem` and the others still load; :func:`read_checkpoint` raises only when the
path itself is unusable (missing, or a directory with nothing to read).  Every file named
by the directory or its index is opened through :func:`apxtui.inputs.confine`: a shard
named ``../../etc/passwd``, ``/proc/self/environ`` or a symlink out of the directory is a
problem, never read.  All checks are linear in the number of tensors and shards.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from apxtui.checkpoint.config import split_sections
from apxtui.checkpoint.header import read_shard
from apxtui.checkpoint.model import Checkpoint, Problem, Shard
from apxtui.errors import CheckpointError, InputFileError
from apxtui.inputs import (
    CONFIG_MAX,
    INDEX_MAX,
    JSON_DEPTH_MAX,
    confine,
    parse_json,
    read_limited,
)

INDEX_SUFFIX = ".safetensors.index.json"
_HERE = "the checkpoint directory"
#: Missing or refused shards listed one by one; the rest are counted in one problem.
_LIST_MAX = 20


def read_checkpoint(path: str | Path) -> Checkpoint:
    """Headers of every shard under ``path``, its config sections and the problems met."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such file or directory")
    if path.is_file() and path.name.endswith(INDEX_SUFFIX):
        root, indexes, files = path.parent, [path.name], []
    elif path.is_file():
        root, indexes, files = path.parent, [], [path.name]
    elif path.is_dir():
        root = path
        try:
            listing = sorted(p.name for p in path.iterdir() if not p.name.startswith("."))
        except OSError as e:
            raise CheckpointError(f"{path}: cannot list the directory ({e.strerror or e})") from None
        indexes = [n for n in listing if n.endswith(INDEX_SUFFIX)]
        files = []
    else:
        raise CheckpointError(f"{path}: not a file or directory")
    ckpt = Checkpoint(path=path)
    trusted = path.name if path.is_file() else None  # the file the user named is read wherever it is
    index_map: dict[str, str] = {}
    if indexes:
        files = _read_indexes(ckpt, root, indexes, index_map, trusted)
    if path.is_dir() and not index_map:
        # No usable index: every shard in the directory.
        files = [n for n in listing if n.endswith(".safetensors")]
        if not files and not ckpt.problems:
            other = [n for n in listing if Path(n).suffix in (".bin", ".pt", ".pth", ".gguf", ".ckpt")]
            hint = f" (found {', '.join(other[:3])}: not safetensors)" if other else ""
            raise CheckpointError(f"{path}: no .safetensors files and no {INDEX_SUFFIX}{hint}")
    elif path.is_dir():
        _note_unindexed(ckpt, listing, set(files))
    seen: dict[str, str] = {}
    for name in files:
        shard, tensors, problems = _read_one(root, name, trusted)
        ckpt.shards.append(shard)
        ckpt.problems.extend(problems)
        for t in tensors:
            if t.name in seen:
                ckpt.problems.append(
                    Problem(name, f"duplicate tensor, also in {seen[t.name]}; first kept", "warning", t.name)
                )
                continue
            seen[t.name] = name
            ckpt.tensors.append(t)
    if index_map:
        _check_index(ckpt, index_map, seen)
    _read_config(ckpt, root)
    return ckpt


def unreadable_reason(ckpt: Checkpoint) -> str:
    """Why no tensor of ``ckpt`` could be read, in one line naming the files (empty when some were)."""
    if ckpt.tensors:
        return ""
    errors = ckpt.errors or ckpt.problems
    if not errors:
        return f"{ckpt.path}: no tensor found"
    more = f" (+{len(errors) - 2} more problems)" if len(errors) > 2 else ""
    return "no tensor could be read: " + "; ".join(str(p) for p in errors[:2]) + more


def _inside(root: Path, name: str, trusted: str | None = None) -> Path:
    """The path of ``name``: confined to ``root`` unless it is the file the user named (``trusted``)."""
    return root / name if name == trusted else confine(root, name, what=_HERE)


def _read_one(root: Path, name: str, trusted: str | None) -> tuple[Shard, list[Any], list[Problem]]:
    """One shard, named by the user, the directory or an index; any defect is a problem of that shard."""
    try:
        return read_shard(_inside(root, name, trusted), name)
    except InputFileError as e:
        return Shard(file=name, file_size=0), [], [Problem(name, _why(e, name))]
    except Exception as e:  # noqa: BLE001 - one shard's defect never aborts the directory
        return Shard(file=name, file_size=0), [], [Problem(name, f"cannot read: {type(e).__name__}: {e}")]


def _why(e: InputFileError, name: str) -> str:
    """The message of ``e`` without the file name it starts with (the problem names the file)."""
    return str(e).removeprefix(f"{name}: ")


def _read_indexes(ckpt: Checkpoint, root: Path, indexes: list[str], index_map: dict[str, str],
                  trusted: str | None) -> list[str]:
    files: list[str] = []
    listed: set[str] = set()
    for idx in indexes:
        data = _load_json(ckpt, root, idx, INDEX_MAX, trusted)
        if data is None:
            continue
        wmap = data.get("weight_map") if isinstance(data, dict) else None
        if not isinstance(wmap, dict) or not all(isinstance(v, str) for v in wmap.values()):
            ckpt.problems.append(Problem(idx, "no valid weight_map object"))
            continue
        ckpt.index_file = ckpt.index_file or idx
        index_map.update(wmap)
        per_shard = Counter(wmap.values())
        missing: list[tuple[str, str]] = []
        for f, n in per_shard.items():
            if f in listed:
                continue
            try:
                ok = _inside(root, f).is_file()
                why = "which is missing"
            except InputFileError as e:
                ok, why = False, _why(e, f)
            if not ok:
                missing.append((f, f"names shard {f} ({n} tensors), {why}"))
                continue
            listed.add(f)
            files.append(f)
        for _f, msg in missing[:_LIST_MAX]:
            ckpt.problems.append(Problem(idx, msg))
        if len(missing) > _LIST_MAX:
            rest = missing[_LIST_MAX:]
            ckpt.problems.append(Problem(idx, f"names {len(rest):,} more shards that are missing or refused "
                                              f"({sum(per_shard[f] for f, _ in rest):,} tensors)"))
    return files


def _note_unindexed(ckpt: Checkpoint, listing: list[str], indexed: set[str]) -> None:
    extra = [n for n in listing if n.endswith(".safetensors") and n not in indexed]
    for name in extra[:_LIST_MAX]:
        ckpt.problems.append(Problem(name, f"not named by {ckpt.index_file}; ignored", "warning"))
    if len(extra) > _LIST_MAX:
        ckpt.problems.append(Problem(ckpt.index_file or "index", f"{len(extra) - _LIST_MAX:,} more .safetensors "
                                     "files not named by it; ignored", "warning"))


def _check_index(ckpt: Checkpoint, index_map: dict[str, str], seen: dict[str, str]) -> None:
    """Tensors the index places elsewhere than they are, or that are absent."""
    read_ok = {s.file for s in ckpt.shards if s.ok}
    wrong = [n for n, f in index_map.items() if f in read_ok and seen.get(n) != f]
    if wrong:
        ckpt.problems.append(Problem(
            ckpt.index_file or "index", f"{len(wrong)} tensor(s) not found in the shard the index names, "
            f"e.g. {wrong[0]} -> {index_map[wrong[0]]}", "warning"))
    unindexed = [n for n in seen if n not in index_map]
    if unindexed:
        ckpt.problems.append(Problem(
            ckpt.index_file or "index", f"{len(unindexed)} tensor(s) missing from weight_map, e.g. {unindexed[0]}",
            "warning"))


def _load_json(ckpt: Checkpoint, root: Path, name: str, limit: int, trusted: str | None = None,
               max_depth: int = 0) -> Any:
    """``root/name`` parsed, or None with the problem recorded (duplicate keys: a warning)."""
    dups: list[str] = []
    try:
        data = parse_json(read_limited(_inside(root, name, trusted), limit, name), name, dups, max_depth)
    except InputFileError as e:
        ckpt.problems.append(Problem(name, _why(e, name)))
        return None
    if dups:
        ckpt.problems.append(Problem(name, f"duplicate key {dups[0]!r}" + (f" (+{len(dups) - 1} more)" if len(dups) > 1
                                     else "") + "; the last value kept", "warning"))
    return data


def _read_config(ckpt: Checkpoint, root: Path) -> None:
    if not (root / "config.json").exists() and not (root / "config.json").is_symlink():
        return
    data = _load_json(ckpt, root, "config.json", CONFIG_MAX, max_depth=JSON_DEPTH_MAX)
    if data is None:
        return
    if not isinstance(data, dict):
        ckpt.problems.append(Problem("config.json", "not a JSON object"))
        return
    ckpt.config_file = "config.json"
    ckpt.config = split_sections(data)
