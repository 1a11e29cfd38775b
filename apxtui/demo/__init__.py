"""The embedded demo: a small ApxInf-shaped checkout and a matching tiny checkpoint.

Both ship as package data.  ``checkout/`` mirrors the engine's layers (Python policy →
PyO3 → Rust model/runtime → safe operators → ``extern "C"`` → ``.cu`` adapters →
``__global__`` kernels, cuBLASLt, vendored CUTLASS / FlashAttention-2); it is only
ever read, never built.  ``checkpoint/`` holds ``config.json`` and a BF16
``model.safetensors`` written by ``scripts/make_demo_checkpoint.py``.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent

DEMO_CHECKOUT: Path = _HERE / "checkout"
DEMO_CHECKPOINT: Path = _HERE / "checkpoint"

__all__ = ["DEMO_CHECKOUT", "DEMO_CHECKPOINT"]
