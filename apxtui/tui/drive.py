"""Driving the explorer by keys alone: shared by the Pilot tests, the snapshots and the
screenshot script (a user's path, pressed key by key — no widget is poked directly)."""

from __future__ import annotations

import re

from apxtui.tui.rows import StageRow

#: On the demo: from the Python entry (Pi05Policy.infer) down to the BF16 RMSNorm kernel;
#: stage rows are expanded on the way.  The first 12 steps end at the ``DType::BF16`` arm.
DEMO_TO_RMS_NORM_KERNEL = [
    r"^PyO3 infer$", r"^Rust infer_py$", r"^Rust infer$", r"LoadedModel::Vla", r"^Rust infer",
    r"^Rust forward$", r"^Rust forward ×for layer in &self.layers", r"ambiguous B::rms_norm",
    r"CudaBackend::rms_norm @", r"^Rust rms_norm", r"^Rust rms_norm$", r"DType::BF16$",
    r"^FFI apxinf_rms_norm_bf16", r"^ABI apxinf_rms_norm_bf16", r"^kernel rms_norm_kernel",
]
DEMO_TO_BF16_ARM = DEMO_TO_RMS_NORM_KERNEL[:12]


async def settle(app, pilot, limit: float = 120.0) -> None:
    """Wait until the app has nothing left to do: index, analysis, jobs and workers (serving jobs excepted)."""
    waited = 0.0
    while waited < limit:
        await pilot.pause()
        if not app.busy():
            await pilot.pause()
            if not app.busy():
                return
        await pilot.pause(0.02)
        waited += 0.02
    raise TimeoutError(f"the app is still busy after {limit:.0f} s: {app.activity or 'workers running'}")


async def seek(pilot, tree, pattern: str, limit: int = 300):
    """Press ``j`` until the cursor row matches ``pattern`` (below the cursor); expand it with ``l``.

    Returns the row; raises LookupError naming the pattern and where the cursor stopped.
    """
    rx = re.compile(pattern)
    await pilot.press("j")
    for _ in range(limit):
        node = tree.cursor_node
        if node is not None and rx.search(node.label.plain):
            if isinstance(node.data, StageRow) and node.allow_expand and not node.is_expanded:
                await pilot.press("l")
            await pilot.pause()
            return node
        await pilot.press("j")
    where = tree.cursor_node.label.plain if tree.cursor_node is not None else "nowhere"
    raise LookupError(f"no row below matches {pattern!r}; cursor at {where!r}")


async def follow(pilot, tree, patterns: list[str]):
    """``seek`` each pattern in turn; returns the last row reached."""
    node = None
    for pattern in patterns:
        node = await seek(pilot, tree, pattern)
    return node
