"""SVG snapshots of the demo at 80×24 and 120×40: each screen, the speed-of-light tab with its inputs filled
by keys, the execution map, an arm change, and (120×40) the light theme's help.

Starting an app is the costly part of a snapshot, so one app per size takes every snapshot in turn (the
tour, :data:`STOPS`) and each test compares one of them with pytest-textual-snapshot (its HTML diff report
included).  Every stop is reached by keys from the one before, as a user would.  Accept changes with
``pytest tests/test_tui_snapshots.py --snapshot-update`` after reading the HTML diff report.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

import pytest
import textual._doc

from apxtui.demo import DEMO_CHECKOUT, DEMO_CHECKPOINT
from apxtui.tui import drive
from apxtui.tui.app import ApxApp
from apxtui.tui.config import ExplorerConfig
from apxtui.tui.drive import DEMO_TO_BF16_ARM, follow

SIZES = [(80, 24), (120, 40)]
SNAPSHOTS = Path(__file__).parent / "__snapshots__" / "test_tui_snapshots"
SIZE_IDS = {size: f"{size[0]}x{size[1]}" for size in SIZES}
#: A size's snapshots run in one worker (pytest-xdist ``--dist loadgroup``): one tour per size, not one per worker.
BY_SIZE = [pytest.param(size, id=SIZE_IDS[size], marks=pytest.mark.xdist_group(f"snapshots-{SIZE_IDS[size]}"))
           for size in SIZES]

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


async def settle(pilot) -> None:
    await drive.settle(pilot.app, pilot)
    pilot.app.clear_notifications()  # toasts come and go with time
    await pilot.pause()


async def capture(pilot, press: tuple[str, ...] = ()) -> str:
    """The screenshot as ``snap_compare`` takes it after its ``run_before`` (``textual._doc.take_svg_screenshot``),
    once the screen has stopped changing: two screenshots taken apart, each after the app went idle, must agree
    (a late repaint, toast or status line would otherwise decide the picture by timing)."""
    await pilot.pause()
    await pilot.press(*press)
    shot = ""
    for _ in range(STABLE_TRIES):
        await drive.settle(pilot.app, pilot)  # a pressed n searches in a worker
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        new = pilot.app.export_screenshot(title=pilot.app.title, simplify=True)
        if new == shot:
            return new
        shot = new
        await pilot.pause(0.1)
    raise AssertionError(f"the screen kept changing over {STABLE_TRIES} screenshots 0.1 s apart")


STABLE_TRIES = 10


def keys(*pressed: str) -> Callable[[object], Awaitable[None]]:
    async def run(pilot) -> None:
        await settle(pilot)
        if pressed:
            await pilot.press(*pressed)
        await settle(pilot)
    return run


async def priced(pilot) -> None:
    """Screen 4's speed-of-light tab: device, batch 1, seq 16, a 3 µs launch floor and the decode loop bound."""
    await settle(pilot)
    await pilot.press("4", "s", "enter", "down", "enter", "tab", "1", "tab", *"16", "tab", "tab", "3", "tab",
                      *"max_new_tokens=4,num_steps=10", "escape")
    await settle(pilot)


async def arm_change(pilot) -> None:
    """Back from the map to the tree, down to the BF16 arm of the RMSNorm dtype match; ] ] chooses BF16, then F16."""
    await keys("m")(pilot)
    await follow(pilot, pilot.app.screen.query_one("#tree"), DEMO_TO_BF16_ARM)
    await settle(pilot)
    await pilot.press("right_square_bracket", "right_square_bracket")
    await settle(pilot)


async def light_help(pilot) -> None:
    assert pilot.app.theme == "textual-dark", pilot.app.theme  # the theme dark_again restores
    pilot.app.theme = "textual-light"
    await keys("question_mark")(pilot)


async def dark_again(pilot) -> None:
    await pilot.press("escape")
    pilot.app.theme = "textual-dark"
    await settle(pilot)


class Stop(NamedTuple):
    name: str
    run: Callable[[object], Awaitable[None]]
    press: tuple[str, ...] = ()  # pressed right before the screenshot (``snap_compare``'s ``press``)
    sizes: tuple[tuple[int, int], ...] = tuple(SIZES)
    after: Callable[[object], Awaitable[None]] | None = None  # undoes what the next stops must not see


#: The tour, in order: each stop starts where the one before left the app.
STOPS = [
    Stop("explorer", keys()),
    Stop("light_help", light_help, sizes=((120, 40),), after=dark_again),
    Stop("kernels", keys("2")),
    Stop("capture", keys("3")),
    Stop("checkpoint", keys("4")),
    Stop("speed_of_light", priced),
    Stop("profile", keys("5")),
    Stop("map", keys("1", "m"), press=("n", "n")),  # the cursor on the map's third row with device work
    Stop("arm_change", arm_change),
]


class Tour(NamedTuple):
    app: ApxApp
    shots: dict[str, str]  # stop name → SVG


def take_tour(index, size: tuple[int, int]) -> Tour:
    """One app at ``size`` taking the tour."""
    app = ApxApp(ExplorerConfig(DEMO_CHECKOUT, demo=True, checkpoint=DEMO_CHECKPOINT), index=index)
    shots: dict[str, str] = {}

    async def auto_pilot(pilot) -> None:
        for stop in STOPS:
            if size in stop.sizes:
                await stop.run(pilot)
                shots[stop.name] = await capture(pilot, stop.press)
                if stop.after is not None:
                    await stop.after(pilot)
        pilot.app.exit()

    app.run(headless=True, size=size, auto_pilot=auto_pilot)  # as snap_compare runs its app
    return Tour(app, shots)


@pytest.fixture(scope="module")
def tours(demo_index):
    """``tours(size)`` → that size's screenshots, the tour taken on first use."""
    taken: dict[tuple[int, int], Tour] = {}

    def get(size: tuple[int, int]) -> Tour:
        if size not in taken:
            taken[size] = take_tour(demo_index, size)
        return taken[size]

    return get


def screen_text(svg: str) -> list[str]:
    """The text rows of a screenshot (for a failure message that names what differs)."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        rows.setdefault(float(m[2]), []).append((float(m[1]), html.unescape(m[3])))
    return ["".join(t for _, t in sorted(r)).replace("\xa0", " ").rstrip() for _, r in sorted(rows.items())]


def differences(stored: str, taken: str) -> str:
    """The rows that differ between two screenshots, or that only styles do."""
    diff = list(difflib.unified_diff(screen_text(stored), screen_text(taken), "stored", "taken", n=0, lineterm=""))
    return "\n".join(diff[:40]) if diff else "the text is the same: only styles (colours, focus) differ"


@pytest.fixture
def snap_shot(snap_compare, monkeypatch, tours, request):
    """``snap_shot(size, stop)``: pytest-textual-snapshot's comparison (and HTML report) of the tour's screenshot
    instead of one taken by a fresh app (``snap_compare`` looks its screenshot function up at each call).
    A mismatch fails with the differing text rows, so a CI log says what changed."""
    def compare(size: tuple[int, int], stop: str) -> bool:
        tour = tours(size)
        svg = tour.shots[stop]
        monkeypatch.setattr(textual._doc, "take_svg_screenshot", lambda **_: svg)
        if snap_compare(tour.app, terminal_size=size):
            return True
        stored = SNAPSHOTS / f"{request.node.name.split('@')[0]}.svg"  # xdist may add @group
        why = differences(stored.read_text(), svg) if stored.exists() else f"no stored snapshot {stored.name}"
        raise AssertionError(f"{stop} at {SIZE_IDS[size]} differs from {stored.name}:\n{why}")
    return compare


@pytest.mark.parametrize("size", BY_SIZE)
@pytest.mark.parametrize("key", ["explorer", "kernels", "capture", "checkpoint", "profile"])
def test_screen(snap_shot, key, size):
    assert snap_shot(size, key)


@pytest.mark.parametrize("size", BY_SIZE)
def test_speed_of_light_tab(snap_shot, size):
    assert snap_shot(size, "speed_of_light")


@pytest.mark.parametrize("size", BY_SIZE)
def test_map_view(snap_shot, size):
    """The execution map in the tree's place, the cursor on the third row with device work."""
    assert snap_shot(size, "map")


@pytest.mark.parametrize("size", BY_SIZE)
def test_arm_change(snap_shot, size):
    assert snap_shot(size, "arm_change")


@pytest.mark.xdist_group("snapshots-120x40")
def test_light_theme_and_help(snap_shot):
    assert snap_shot((120, 40), "light_help")
