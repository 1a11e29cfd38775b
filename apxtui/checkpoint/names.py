"""Tensor-name patterns: repeated blocks (``layers.N``, ``blocks.N``, ``h.N``) and modules."""

from __future__ import annotations

import re

#: Containers whose numbered children are the repeated transformer blocks.
LAYER_CONTAINERS = frozenset({"layers", "layer", "blocks", "block", "h"})

_NUM = re.compile(r"\d+")
_NUM_PART = re.compile(r"(?:(?<=\.)|^)(\d+)(?=\.|$)")


def pattern(name: str) -> str:
    """``model.layers.3.mlp.experts.7.w1`` -> ``model.layers.{N}.mlp.experts.{N}.w1``."""
    return _NUM_PART.sub("{N}", name)


def indices(name: str) -> list[int]:
    """The numeric components of ``name``, in order (the values of ``{N}`` in its pattern)."""
    return [int(x) for x in _NUM_PART.findall(name)]


def stack_split(name: str) -> tuple[str, int, str] | None:
    """``(stack, index, rest)`` for a tensor inside a repeated block, else None.

    ``stack`` is the dotted path of the container (``model.layers``); the first
    container from the left wins, so experts inside a layer stay in ``rest``.
    """
    parts = name.split(".")
    for i in range(len(parts) - 2):
        if parts[i] in LAYER_CONTAINERS and _NUM.fullmatch(parts[i + 1]):
            return ".".join(parts[: i + 1]), int(parts[i + 1]), ".".join(parts[i + 2 :])
    return None


def module_of(name: str) -> str:
    """Top-level module: the path up to the first numbered child, else at most two components.

    ``model.layers.0.self_attn.q_proj.weight`` -> ``model.layers``;
    ``model.embed_tokens.weight`` -> ``model.embed_tokens``; ``lm_head.weight`` -> ``lm_head``.
    """
    parts = name.split(".")
    for i, p in enumerate(parts):
        if _NUM.fullmatch(p) and i > 0:
            return ".".join(parts[:i])
    return ".".join(parts[:-1][:2]) or name
