"""Regenerate ``screenshots/*.svg``: each screen of the explorer on the demo checkout (120×40).

Usage: ``python scripts/make_screenshots.py [--size 120x40] [--out screenshots]``.
Runs the app headless (Textual's test driver), drives it by keys and saves SVGs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))



async def settle(app, pilot) -> None:
    from apxtui.tui.drive import settle as wait_idle

    await wait_idle(app, pilot)
    app.clear_notifications()
    await pilot.pause()


async def shoot(out: Path, size: tuple[int, int]) -> list[Path]:
    from apxtui.demo import DEMO_CHECKOUT, DEMO_CHECKPOINT
    from apxtui.tui.app import ApxApp
    from apxtui.tui.config import ExplorerConfig, Settings
    from apxtui.tui.drive import DEMO_TO_RMS_NORM_KERNEL, follow

    app = ApxApp(ExplorerConfig(DEMO_CHECKOUT, demo=True, checkpoint=DEMO_CHECKPOINT), settings=Settings())
    written: list[Path] = []

    def save(name: str) -> None:
        written.append(Path(app.save_screenshot(filename=f"{name}.svg", path=str(out))))

    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        save("1-explorer")
        tree = app.screen.query_one("#tree")
        await follow(pilot, tree, DEMO_TO_RMS_NORM_KERNEL)
        await settle(app, pilot)
        save("1-explorer-kernel")
        await pilot.press("K")  # up to the dtype match, then choose arms: BF16, then F16
        if not tree.cursor_node.label.plain.startswith("◆ match x.dtype()"):
            raise SystemExit(f"make_screenshots: expected the dtype match, got {tree.cursor_node.label.plain!r}")
        await pilot.press("right_square_bracket", "right_square_bracket")
        await settle(app, pilot)
        save("1-explorer-arm-change")
        await pilot.press("m")  # the execution map, its cursor on the operation holding the tree's row
        await settle(app, pilot)
        save("1-explorer-map")
        await pilot.press("m")
        await settle(app, pilot)
        for key, name in (("2", "2-kernels"), ("3", "3-capture"), ("4", "4-checkpoint"), ("5", "5-profile")):
            await pilot.press(key)
            await settle(app, pilot)
            save(name)
            if key == "4":  # the speed-of-light tab, priced on the explorer's path (H100 SXM, 1 × 16 tokens)
                await pilot.press("s", "enter", "down", "enter", "tab", "1", "tab", *"16", "tab", "tab", "3", "tab",
                                  *"max_new_tokens=4,num_steps=10", "escape")
                for _ in range(2):
                    await settle(app, pilot)
                save("4-checkpoint-sol")
        # screen 5: make sm_100 the target architecture (space on its row); every screen re-traces
        rows = app.screen.rows
        i = next((i for i, r in enumerate(rows) if r.kind == "arch" and r.name == "sm_100"), None)
        if i is None:
            raise SystemExit("make_screenshots: no sm_100 row on the profile screen")
        await pilot.press("g", *["j"] * i, "space")
        for _ in range(3):
            await settle(app, pilot)
        save("5-profile-sm100")
        await pilot.press("1", "g", "n")  # explorer under the profile: the first kernel from the top
        await settle(app, pilot)
        save("1-explorer-profile")
        await pilot.press("1", "question_mark")
        await settle(app, pilot)
        save("help")
    # a narrow terminal (80×24): the tree over one pane, w switches it
    app = ApxApp(ExplorerConfig(DEMO_CHECKOUT, demo=True, checkpoint=DEMO_CHECKPOINT), settings=Settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await follow(pilot, app.screen.query_one("#tree"), DEMO_TO_RMS_NORM_KERNEL)
        await settle(app, pilot)
        save("1-explorer-80x24")
        await pilot.press("w")
        await settle(app, pilot)
        save("1-explorer-80x24-details")
        await pilot.press("m")
        await settle(app, pilot)
        save("1-explorer-80x24-map")
    return written


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="120x40", help="terminal size WxH (default 120x40)")
    p.add_argument("--out", default=str(ROOT / "screenshots"), help="output directory")
    args = p.parse_args()
    w, h = (int(x) for x in args.size.lower().split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["APXTUI_CACHE_DIR"] = cache
        for path in asyncio.run(shoot(out, (w, h))):
            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
