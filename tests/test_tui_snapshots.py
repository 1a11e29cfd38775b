"""SVG snapshots of each screen on the demo (80×24 and 120×40) and of an arm change.

Accept changes with ``pytest tests/test_tui_snapshots.py --snapshot-update`` after reading the
HTML diff report.
"""

from __future__ import annotations

import pytest

from apxtui.demo import DEMO_CHECKOUT, DEMO_CHECKPOINT
from apxtui.tui import drive
from apxtui.tui.app import ApxApp
from apxtui.tui.config import ExplorerConfig
from apxtui.tui.drive import DEMO_TO_BF16_ARM, follow

SIZES = [(80, 24), (120, 40)]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def demo_app(index, theme: str | None = None) -> ApxApp:
    app = ApxApp(ExplorerConfig(DEMO_CHECKOUT, demo=True, checkpoint=DEMO_CHECKPOINT), index=index)
    if theme:
        app.theme = theme
    return app


async def settle(pilot) -> None:
    await drive.settle(pilot.app, pilot)
    pilot.app.clear_notifications()  # toasts come and go with time
    await pilot.pause()


def screen_keys(key: str):
    async def run(pilot):
        await settle(pilot)
        if key:
            await pilot.press(key)
        await settle(pilot)
    return run


async def to_arm(pilot) -> None:
    await settle(pilot)
    tree = pilot.app.screen.query_one("#tree")
    await follow(pilot, tree, DEMO_TO_BF16_ARM)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("key", ["", "2", "3", "4", "5"], ids=["explorer", "kernels", "capture", "checkpoint",
                                                                "profile"])
def test_screen(snap_compare, key, size, demo_index):
    assert snap_compare(demo_app(demo_index), run_before=screen_keys(key), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_arm_change(snap_compare, size, demo_index):
    async def run(pilot):
        await to_arm(pilot)
        await pilot.press("right_square_bracket", "right_square_bracket")  # BF16, then F16
        await settle(pilot)
    assert snap_compare(demo_app(demo_index), run_before=run, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_map_view(snap_compare, size, demo_index):
    """The execution map in the tree's place, the cursor on the third row with device work."""
    assert snap_compare(demo_app(demo_index), run_before=screen_keys("m"), press=["n", "n"], terminal_size=size)


def test_light_theme_and_help(snap_compare, demo_index):
    assert snap_compare(demo_app(demo_index, "textual-light"), run_before=screen_keys("question_mark"),
                        terminal_size=(120, 40))
