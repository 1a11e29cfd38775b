"""Checkpoint facts added to a trace document (used by ``trace --checkpoint`` and the TUI).

:func:`add_checkpoint` runs the weight join over the index, puts stored weights on
the stages and binds layer loops (``doc["checkpoint"]`` = the path as text,
``doc["checkpoint_join"]``, ``doc["loop_bounds"]``,
``doc["launch_totals_bound"]``, per-stage ``weights``); :func:`add_sol` adds
``doc["speed_of_light"]``.  Both only add keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apxtui.checkpoint.join import JoinResult, join_dict, join_index
from apxtui.checkpoint.model import Checkpoint
from apxtui.checkpoint.sol import find_device, load_devices, speed_of_light
from apxtui.checkpoint.weights import bind_loop, bind_loops, stage_weights


def add_checkpoint(doc: dict[str, Any], index: Any, ckpt: Checkpoint, under: list[str] | None = None,
                   bind: dict[str, int] | None = None) -> JoinResult:
    j = join_index(index, ckpt, under)
    jd = join_dict(j, limit=50)
    n = stage_weights(doc, j)
    bind_loops(doc, ckpt, bind)
    doc["checkpoint"] = str(ckpt.path)
    doc["checkpoint_join"] = {
        "path": str(ckpt.path), "tensors": len(ckpt.tensors), "bytes": ckpt.total_bytes,
        "config": ckpt.config_file, "problems": [str(p) for p in ckpt.problems][:20],
        "join": jd, "stages_with_weights": n,
        "weights_note": "per-stage weights are heuristic: the field an operator reads matched to the loader's "
                        "tensor name; stored dtype (checkpoint) and compute dtypes (analysis) are separate facts",
    }
    return j


def add_sol(doc: dict[str, Any], ckpt: Checkpoint, device: str, batch: int, seq: int, context: int | None = None,
            launch_floor_us: float | None = None) -> dict[str, Any]:
    """``doc["speed_of_light"]`` for ``device`` (after :func:`add_checkpoint`)."""
    dev = find_device(device, load_devices())
    sol = speed_of_light(doc, ckpt, dev, batch, seq, context, launch_floor_us)
    doc["speed_of_light"] = sol
    return sol


def parse_bind(items: list[str]) -> dict[str, int]:
    """``["num_steps=10"]`` -> ``{"num_steps": 10}`` (ValueError on a malformed item)."""
    out: dict[str, int] = {}
    for it in items:
        k, sep, v = it.rpartition("=")
        if not sep or not k.strip() or not v.strip().isdigit():
            raise ValueError(f"--bind {it!r}: expected TEXT=N (N a non-negative integer)")
        out[k.strip()] = int(v)
    return out


def loop_binder(ckpt: Checkpoint | None,
                bind: dict[str, int] | None = None) -> Callable[[str, str], tuple[int, str] | None]:
    """A loop binder for :func:`apxtui.map.build_map`: ``(header, qualname) → (value, source)`` from
    ``--bind`` and, with a checkpoint, the config's layer count (None: the loop stays symbolic)."""
    memo: dict[tuple[str, str], tuple[int, str] | None] = {}

    def bound(header: str, qual: str) -> tuple[int, str] | None:
        key = (header, qual)
        if key not in memo:
            if ckpt is None:
                given = next(((k, v) for k, v in (bind or {}).items() if k in header), None)
                memo[key] = (int(given[1]), f"--bind {given[0]}") if given else None
            else:
                rec = bind_loop(header, qual, ckpt, bind)
                src = rec["config_field"] and f"{rec['config_field']}, {ckpt.config_file or 'config'}"
                memo[key] = (int(rec["value"]), src or "--bind") if rec["value"] is not None else None
        return memo[key]

    return bound
