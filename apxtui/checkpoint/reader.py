"""Open a checkpoint: one ``.safetensors`` file, or a directory of shards with or
without ``*.safetensors.index.json``, plus ``config.json`` beside them.

Only headers are read.  One unreadable shard becomes a :class:`Problem` and the
others still load; :func:`read_checkpoint` raises only when the path itself is
unusable (missing, or a directory with nothing to read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from apxtui.checkpoint.config import split_sections
from apxtui.checkpoint.header import read_shard
from apxtui.checkpoint.model import Checkpoint, Problem

INDEX_SUFFIX = ".safetensors.index.json"


class CheckpointError(Exception):
    """The path cannot be opened as a checkpoint at all."""


def read_checkpoint(path: str | Path) -> Checkpoint:
    """Headers of every shard under ``path``, its config sections and the problems met."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such file or directory")
    if path.is_file() and path.name.endswith(INDEX_SUFFIX):
        root, indexes, files = path.parent, [path], []
    elif path.is_file():
        root, indexes, files = path.parent, [], [path.name]
    elif path.is_dir():
        root = path
        indexes = sorted(p for p in path.iterdir() if p.name.endswith(INDEX_SUFFIX) and not p.name.startswith("."))
        files = []
    else:
        raise CheckpointError(f"{path}: not a file or directory")
    ckpt = Checkpoint(path=path)
    index_map: dict[str, str] = {}
    if indexes:
        files = _read_indexes(ckpt, root, indexes, index_map)
    if path.is_dir() and not index_map:
        # No usable index: every shard in the directory.
        files = sorted(p.name for p in root.iterdir() if p.name.endswith(".safetensors") and not p.name.startswith("."))
        if not files and not ckpt.problems:
            other = sorted(p.name for p in root.iterdir() if p.suffix in (".bin", ".pt", ".pth", ".gguf", ".ckpt"))
            hint = f" (found {', '.join(other[:3])}: not safetensors)" if other else ""
            raise CheckpointError(f"{path}: no .safetensors files and no {INDEX_SUFFIX}{hint}")
    elif path.is_dir():
        _note_unindexed(ckpt, root, set(files))
    seen: dict[str, str] = {}
    for name in files:
        shard, tensors, problems = read_shard(root / name, name)
        ckpt.shards.append(shard)
        ckpt.problems.extend(problems)
        for t in tensors:
            if t.name in seen:
                ckpt.problems.append(Problem(name, f"duplicate tensor, also in {seen[t.name]}; first kept", "warning", t.name))
                continue
            seen[t.name] = name
            ckpt.tensors.append(t)
    if index_map:
        _check_index(ckpt, index_map, seen)
    _read_config(ckpt, root)
    return ckpt


def _read_indexes(ckpt: Checkpoint, root: Path, indexes: list[Path], index_map: dict[str, str]) -> list[str]:
    files: list[str] = []
    for idx in indexes:
        data = _load_json(ckpt, idx, idx.name)
        if data is None:
            continue
        wmap = data.get("weight_map") if isinstance(data, dict) else None
        if not isinstance(wmap, dict) or not all(isinstance(v, str) for v in wmap.values()):
            ckpt.problems.append(Problem(idx.name, "no valid weight_map object"))
            continue
        ckpt.index_file = ckpt.index_file or idx.name
        index_map.update(wmap)
        for f in dict.fromkeys(wmap.values()):
            if f in files:
                continue
            if not (root / f).is_file():
                n = sum(1 for v in wmap.values() if v == f)
                ckpt.problems.append(Problem(idx.name, f"names shard {f} ({n} tensors), which is missing"))
                continue
            files.append(f)
    return files


def _note_unindexed(ckpt: Checkpoint, root: Path, indexed: set[str]) -> None:
    extra = sorted(p.name for p in root.iterdir() if p.name.endswith(".safetensors") and p.name not in indexed)
    for name in extra:
        ckpt.problems.append(Problem(name, f"not named by {ckpt.index_file}; ignored", "warning"))


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


def _load_json(ckpt: Checkpoint, path: Path, label: str) -> Any:
    try:
        if path.stat().st_size > 100_000_000:
            ckpt.problems.append(Problem(label, "over 100 MB; refusing to parse"))
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        ckpt.problems.append(Problem(label, f"cannot read: {e}"))
    except json.JSONDecodeError as e:
        ckpt.problems.append(Problem(label, f"invalid JSON ({e.msg} at line {e.lineno})"))
    return None


def _read_config(ckpt: Checkpoint, root: Path) -> None:
    cfg = root / "config.json"
    if not cfg.is_file():
        return
    data = _load_json(ckpt, cfg, "config.json")
    if data is None:
        return
    if not isinstance(data, dict):
        ckpt.problems.append(Problem("config.json", "not a JSON object"))
        return
    ckpt.config_file = "config.json"
    ckpt.config = split_sections(data)
