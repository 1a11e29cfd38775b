"""SVG snapshots of screen 4's speed-of-light tab (inputs filled by keys) at 80×24 and 120×40.

The tensor tab of screen 4 is in ``test_tui_snapshots.py``; accept changes with ``--snapshot-update``
after reading the HTML diff report.
"""

from __future__ import annotations

import pytest

from apxtui.demo import DEMO_CHECKOUT, DEMO_CHECKPOINT
from apxtui.tui import drive
from apxtui.tui.app import ApxApp
from apxtui.tui.config import ExplorerConfig


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


async def settle(pilot) -> None:
    await drive.settle(pilot.app, pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


async def priced(pilot) -> None:
    await settle(pilot)
    await pilot.press("4", "s", "enter", "down", "enter", "tab", "1", "tab", *"16", "tab", "tab", "3", "tab",
                      *"max_new_tokens=4,num_steps=10", "escape")
    await settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_speed_of_light_tab(snap_compare, size, demo_index):
    app = ApxApp(ExplorerConfig(DEMO_CHECKOUT, demo=True, checkpoint=DEMO_CHECKPOINT), index=demo_index)
    assert snap_compare(app, run_before=priced, terminal_size=size)
