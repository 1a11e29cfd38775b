"""Hostile strings in every widget: names from the checkout and the checkpoint, and what the user types,
are shown as typed — never read as markup, never run as an action, never a crash (issue 15 item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input

from apxtui.checkpoint.synth import write_safetensors
from apxtui.tui.app import ApxApp
from apxtui.tui.config import ExplorerConfig
from apxtui.tui.drive import settle

#: What a user might type, or a file might be called: a closing tag alone, a style, an action.
TYPED = ["[/", "[red]x[/red]", "[@click=app.quit]q", "a\\[b]"]
#: Typed key by key into every input: markup openers and keys that are bindings elsewhere ([ ] / q e m n y).
KEYS_TYPED = "[/]q@emny\\"

POLICY = '''\
class Policy:
    def infer(self, x):
        if x == "[bold]red[/] [@click=app.quit]":
            return self.load("model.[red]w[/].weight")
        return self.load("[/")

    def load(self, name):
        return name
'''


def hostile_checkout(tmp: Path) -> Path:
    root = tmp / "co[/]de"
    pkg = root / "python" / "names"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "[red]esc_mod.py").write_text(POLICY)
    (root / "x[").mkdir()
    (root / "x[" / "]y.py").write_text("def run():\n    return 1\n")
    (root / "kernels").mkdir()
    (root / "kernels" / "[@click=app.quit].cu").write_text(
        '__global__ void k_[b]() {}\n'
        'extern "C" void launch_it(int n) {\n#if defined(X_[red])\n    k<<<1, 1>>>();\n#endif\n}\n')
    return root


def hostile_checkpoint(tmp: Path) -> Path:
    ck = tmp / "ck[/]pt"
    ck.mkdir(parents=True)
    write_safetensors(ck / "model.safetensors", {"model.[red]w[/].weight": ("BF16", (2, 2)),
                                                 "[@click=app.quit]": ("F32", (1,))})
    (ck / "config.json").write_text(json.dumps({"[bold]hidden_size": 8, "num_hidden_layers": 2}))
    return ck


def screen_text(app) -> str:
    """What the terminal shows (the screenshot's text: markup interpreted would have lost its brackets)."""
    svg = app.export_screenshot()
    return svg.replace("&#160;", " ").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">") \
        .replace("&quot;", '"').replace("&#x27;", "'")


def titles(screen) -> list[str]:
    """Every border title and subtitle on the screen, as shown (plain)."""
    out = []
    for w in screen.walk_children(with_self=False):
        for t in (w._border_title, w._border_subtitle):
            if t is not None:
                out.append(t.plain)
    return out


async def alive(app, pilot) -> str:
    await settle(app, pilot)
    assert app.is_running and app.return_code is None, "a hostile string became an action (quit)"
    return screen_text(app)


@pytest.fixture
def hostile_app(tmp_path):
    return ApxApp(ExplorerConfig(hostile_checkout(tmp_path), checkpoint=hostile_checkpoint(tmp_path),
                                 export_dir=str(tmp_path / "out")))


async def check_every_screen_shows_hostile_names_literally(app, pilot) -> None:
    shown = await alive(app, pilot)
    # the explorer: entry names, the tree's title, the source title, arm labels
    assert "names.[red]esc_mod.Policy.infer" in shown
    tree = app.screen.query_one("#tree")
    assert "[red]esc_mod" in tree._border_title.plain
    assert app.screen.query_one("#source")._border_title.plain == "python/names/[red]esc_mod.py:2"
    for _ in range(6):
        await pilot.press("j", "l")
    shown = await alive(app, pilot)
    rows = [tree.get_node_at_line(i).label.plain for i in range(tree.last_line + 1)]
    assert any('"[bold]red[/] [@click=app.quit]"' in r for r in rows), rows
    assert '[bold]red[/] [@click=app.quit]' in shown
    # every title on the explorer kept its brackets
    assert any("[red]esc_mod" in t for t in titles(app.screen))
    await pilot.press("m")  # the execution map: its title and rows
    await alive(app, pilot)
    assert "[red]esc_mod" in app.screen.query_one("#map")._border_title.plain
    await pilot.press("m")
    # the other screens, each tab of the checkpoint screen, the problems list and the help
    for key in ("2", "3", "5"):
        await pilot.press(key)
        await alive(app, pilot)
    await pilot.press("2")
    shown = await alive(app, pilot)
    assert "k_[b]" in shown and "[@click=app.quit].cu" in shown
    await pilot.press("4")
    shown = await alive(app, pilot)
    assert "model.[red]w[/].weight" in shown and "[@click=app.quit]" in shown
    assert "ck[/]pt" in shown
    for tab in ("p", "c", "f", "s", "t"):
        await pilot.press(tab)
        shown = await alive(app, pilot)
    await pilot.press("c")
    await alive(app, pilot)
    assert app.screen.query_one("#config-table")._border_title.plain.startswith("Config config.json: 1 dims")
    await pilot.press("1", "i")
    await alive(app, pilot)
    await pilot.press("escape", "question_mark")
    await alive(app, pilot)
    await pilot.press("escape")
    # the palette: hostile queries, hostile hits
    await pilot.press("ctrl+p", *"[red]", "backspace", "backspace", "backspace", "backspace", "backspace",
                      *"esc_mod")
    await pilot.pause(0.3)
    shown = await alive(app, pilot)
    assert "[red]esc_mod" in shown
    await pilot.press("escape")
    # notifications carry names too: the export's path is under the checkout's hostile name
    await pilot.press("e")
    await alive(app, pilot)
    notes = [n.message for n in app._notifications]
    assert any("out" in n and n.endswith(".md") for n in notes), notes


async def check_typing_markup_into_every_input(app, pilot) -> None:
    await alive(app, pilot)
    typed_into = set()

    async def type_into_all(screen_key: str, open_keys: tuple[str, ...] = ()) -> None:
        await pilot.press(screen_key, *open_keys)
        await alive(app, pilot)
        for inp in list(app.screen.query(Input)):
            inp.disabled = False
            inp.display = True
            inp.focus()
            await pilot.pause()
            inp.value = ""
            await pilot.press(*KEYS_TYPED)  # keys that are also bindings go to the input
            assert inp.value == KEYS_TYPED, (inp.id, inp.value)
            for text in [*TYPED, " ".join(TYPED)]:  # the markup itself, set as a paste would
                inp.value = text
                await pilot.pause()
                assert inp.value == text, (inp.id, inp.value)
            screen_text(app)  # renders every widget with all of it in place
            typed_into.add(f"{screen_key}:{inp.id}")
            inp.value = ""
        await alive(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.focused, Input), f"escape leaves the input on screen {screen_key}"

    await type_into_all("1", ("slash",))
    await type_into_all("2", ("slash",))
    await type_into_all("4", ("s",))
    await type_into_all("4", ("t", "slash"))
    # the profile screen's value prompt (an env row) and the architecture prompt
    await pilot.press("5")
    await alive(app, pilot)
    await pilot.press("a")
    await pilot.pause()
    prompt = app.screen.query_one(Input)
    prompt.value = ""
    await pilot.press(*KEYS_TYPED)
    assert prompt.value == KEYS_TYPED
    for text in TYPED:
        prompt.value = text
        await pilot.pause()
        assert prompt.value == text
    await pilot.press("enter")  # not sm_XX: refused with a notification, literally
    await pilot.pause()
    notes = [n.message for n in app._notifications]
    assert any("expected sm_XX" in n for n in notes), (app.screen, app.focused, notes)
    await alive(app, pilot)
    typed_into.add("5:prompt")
    assert {"1:entry-filter", "2:table-filter", "4:ckpt-filter", "4:sol-batch", "4:sol-seq", "4:sol-context",
            "4:sol-floor", "4:sol-bind", "5:prompt"} <= typed_into


@pytest.mark.slow
async def test_hostile_names_are_shown_and_typed_literally(hostile_app):
    """One app on the hostile checkout and checkpoint (an app start is the costly part of a Pilot test); the
    checks run in turn, each from where the one before left the app, and a failure names its check."""
    app = hostile_app
    async with app.run_test(size=(160, 45)) as pilot:
        await check_every_screen_shows_hostile_names_literally(app, pilot)
        await check_typing_markup_into_every_input(app, pilot)
