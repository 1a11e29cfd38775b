"""Driving the explorer by keys alone: shared by the Pilot tests, the snapshots and the
screenshot script (a user's path, pressed key by key — no widget is poked directly)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypeVar

from apxtui.tui.rows import StageRow

if TYPE_CHECKING:
    from textual.pilot import Pilot
    from textual.widgets.tree import TreeNode

    from apxtui.tui.app import ApxApp
    from apxtui.tui.rows import Row
    from apxtui.tui.widgets.call_tree import CallTree

_R = TypeVar("_R")  # what the app returns at exit (Pilot's type parameter)

#: On the demo: from the Python entry (Pi05Policy.infer) down to the BF16 RMSNorm kernel;
#: stage rows are expanded on the way.  The first 12 steps end at the ``DType::BF16`` arm.
DEMO_TO_RMS_NORM_KERNEL = [
    r"^PyO3 infer$", r"^Rust infer_py$", r"^Rust infer$", r"LoadedModel::Vla", r"^Rust infer",
    r"^Rust forward$", r"^Rust forward ×for layer in &self.layers", r"ambiguous B::rms_norm",
    r"CudaBackend::rms_norm @", r"^Rust rms_norm", r"^Rust rms_norm$", r"DType::BF16$",
    r"^FFI apxinf_rms_norm_bf16", r"^ABI apxinf_rms_norm_bf16", r"^kernel rms_norm_kernel",
]
DEMO_TO_BF16_ARM = DEMO_TO_RMS_NORM_KERNEL[:12]


async def settle(app: ApxApp, pilot: Pilot[_R], limit: float = 120.0) -> None:
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


async def seek(pilot: Pilot[_R], tree: CallTree, pattern: str, limit: int = 300) -> TreeNode[Row]:
    """Press ``j`` until the cursor row matches ``pattern`` (below the cursor); expand it with ``l``.

    Returns the row; raises LookupError naming the pattern and where the cursor stopped.
    """
    rx = re.compile(pattern)
    await pilot.press("j")
    for _ in range(limit):
        node = tree.cursor_node
        if node is not None and rx.search(str(node.label)):  # a label is Text: str() is its plain text
            if isinstance(node.data, StageRow) and node.allow_expand and not node.is_expanded:
                await pilot.press("l")
            await pilot.pause()
            return node
        await pilot.press("j")
    where = str(tree.cursor_node.label) if tree.cursor_node is not None else "nowhere"
    raise LookupError(f"no row below matches {pattern!r}; cursor at {where!r}")


async def follow(pilot: Pilot[_R], tree: CallTree, patterns: list[str]) -> TreeNode[Row] | None:
    """``seek`` each pattern in turn; returns the last row reached."""
    node = None
    for pattern in patterns:
        node = await seek(pilot, tree, pattern)
    return node
