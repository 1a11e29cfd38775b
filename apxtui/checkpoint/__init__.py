"""Checkpoint reading: safetensors headers, config sections, dims and shape checks.

Pure functions over plain dataclasses (no Textual):
:func:`read_checkpoint` -> :class:`Checkpoint`; :func:`summarize`; :func:`model_dims`;
:func:`check_shapes` -> list of :class:`Finding`; :func:`to_dict` for JSON.
"""

from apxtui.checkpoint.config import Dim, dims_for, model_dims, split_sections
from apxtui.checkpoint.export import to_dict
from apxtui.checkpoint.model import Checkpoint, Problem, Shard, TensorInfo
from apxtui.checkpoint.reader import read_checkpoint
from apxtui.checkpoint.shapes import Finding, check_shapes
from apxtui.checkpoint.summary import Summary, summarize
from apxtui.errors import CheckpointError

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "Dim",
    "Finding",
    "Problem",
    "Shard",
    "Summary",
    "TensorInfo",
    "check_shapes",
    "dims_for",
    "model_dims",
    "read_checkpoint",
    "split_sections",
    "summarize",
    "to_dict",
]
