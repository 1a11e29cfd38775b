"""Checkpoint facts on an analysed path (used by ``trace --checkpoint`` and the TUI).

:func:`checkpoint_facts` runs the weight join over the index, finds the stored weights each stage
reads and binds the layer loops; :func:`price_path` adds the speed of light for a device.  The
report's trace document takes the result in :func:`apxtui.report.model.add_checkpoint_facts`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from apxtui.analysis.path import AnalysedPath
from apxtui.checkpoint.join import JoinResult, join_dict, join_index
from apxtui.checkpoint.model import Checkpoint
from apxtui.checkpoint.sol import find_device, load_devices, speed_of_light
from apxtui.checkpoint.solfacts import SpeedOfLight
from apxtui.checkpoint.weights import LoopBounds, StageWeights, bind_loop, bind_loops, stage_weights


@dataclass
class CheckpointFacts:
    """What a checkpoint says about an analysed path."""

    checkpoint: Checkpoint
    join: JoinResult  # the checkout's loader names against the checkpoint's tensors
    weights: dict[int, StageWeights]  # by index in the path's stages (ascending)
    bounds: LoopBounds
    sol: SpeedOfLight | None = None  # the speed of light (:func:`price_path`), when asked for
    LIST_MAX: ClassVar[int] = 50  # names per list of the join in a trace report
    WEIGHTS_NOTE: ClassVar[str] = (
        "per-stage weights are heuristic: the field an operator reads matched to the loader's tensor name; "
        "stored dtype (checkpoint) and compute dtypes (analysis) are separate facts")

    @property
    def join_summary(self) -> dict[str, Any]:
        """:func:`~apxtui.checkpoint.join.join_dict` of ``join`` (``LIST_MAX`` names per list)."""
        return join_dict(self.join, limit=self.LIST_MAX)


def checkpoint_facts(path: AnalysedPath, index: Any, ckpt: Checkpoint, under: list[str] | None = None,
                     bind: dict[str, int] | None = None) -> CheckpointFacts:
    j = join_index(index, ckpt, under)
    return CheckpointFacts(ckpt, j, stage_weights(path.stages, j),
                           bind_loops(path, ckpt, bind))


def price_path(path: AnalysedPath, facts: CheckpointFacts, device: str, batch: int, seq: int,
               context: int | None = None, launch_floor_us: float | None = None) -> SpeedOfLight:
    """The speed of light of ``path`` on ``device`` (KeyError: unknown device; ValueError: bad sizes)."""
    dev = find_device(device, load_devices())
    return speed_of_light(path, facts.weights, facts.bounds, facts.checkpoint, dev, batch, seq, context,
                          launch_floor_us)


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
                src = rec.config_field and f"{rec.config_field}, {ckpt.config_file or 'config'}"
                memo[key] = (int(rec.value), src or "--bind") if rec.value is not None else None
        return memo[key]

    return bound
