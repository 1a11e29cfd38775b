"""The data model of a read checkpoint: plain dataclasses, no I/O."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as its safetensors header declares it (no data is read).

    ``shard`` is the file name relative to the checkpoint directory;
    ``offsets`` are the ``data_offsets`` (relative to the start of the data section).
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    shard: str
    offsets: tuple[int, int]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass
class Shard:
    """One ``.safetensors`` file: its size, header size and ``__metadata__``."""

    file: str
    file_size: int
    header_size: int = 0
    n_tensors: int = 0
    metadata: dict[str, str] = field(default_factory=dict)
    ok: bool = False


@dataclass(frozen=True)
class Problem:
    """Something wrong with one input file; ``error`` means the file was not used."""

    file: str
    message: str
    severity: Severity = "error"
    tensor: str | None = None

    def __str__(self) -> str:
        where = f" [{self.tensor}]" if self.tensor else ""
        return f"{self.file}{where}: {self.message}"


@dataclass
class Checkpoint:
    """Headers of every shard, the config sections and the problems met reading them.

    ``config`` maps a section name (``"top"``, ``"text_config"``, ``"vision_config"``, …)
    to that section's dict; ``"top"`` holds the top-level keys minus the nested
    sections.  It is empty when no ``config.json`` was found.
    """

    path: Path
    tensors: list[TensorInfo] = field(default_factory=list)
    shards: list[Shard] = field(default_factory=list)
    config: dict[str, dict[str, Any]] = field(default_factory=dict)
    config_file: str | None = None
    index_file: str | None = None
    problems: list[Problem] = field(default_factory=list)

    @cached_property
    def by_name(self) -> dict[str, TensorInfo]:
        """Tensors by name (for the weight join). Computed once; do not mutate tensors after."""
        return {t.name: t for t in self.tensors}

    @property
    def total_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @property
    def total_params(self) -> int:
        return sum(t.numel for t in self.tensors)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]
