"""Policies: observation in, action logits out, backed by ``apxinf_py.ModelRunner``."""

from __future__ import annotations

import json
from pathlib import Path

import apxinf_py


class Pi05Policy:
    """PI0.5 vision-language-action policy."""

    def __init__(self, path, num_steps: int = 10, vocab_size: int = 128):
        path = str(path)
        self.num_steps = num_steps
        self.vocab_size = vocab_size
        self.runner = apxinf_py.ModelRunner(path, "pi05")

    def _prepare(self, obs: dict) -> list[int]:
        """Byte-level tokens of the prompt, folded into the vocabulary."""
        prompt = obs.get("prompt", "")
        tokens = [b % self.vocab_size for b in prompt.encode("utf-8")]
        return tokens or [0]

    def infer(self, obs: dict) -> list[float]:
        tokens = self._prepare(obs)
        return self.runner.infer(tokens, self.num_steps)


class AutoPolicy:
    """Checkpoint directory -> concrete policy, by ``config.json:model_type``."""

    @staticmethod
    def from_pretrained(path, **kwargs) -> Pi05Policy:
        config = json.loads((Path(path) / "config.json").read_text())
        model_type = config.get("model_type", "pi05")
        if model_type != "pi05":
            raise ValueError(f"AutoPolicy: no policy for model_type {model_type!r}")
        kwargs.setdefault("vocab_size", config.get("vocab_size", 128))
        return Pi05Policy(path, **kwargs)
