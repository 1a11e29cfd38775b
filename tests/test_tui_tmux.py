"""End-to-end: the installed ``apxtui --demo`` in a real terminal (tmux), driven by keys, read by capture-pane."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

APXTUI = Path(sys.executable).with_name("apxtui")


#: A private tmux server per test (other sessions' options do not apply; a server still shutting down after
#: the previous test's kill-server cannot refuse the next new-session).  Set by the ``tmux_app`` fixture.
SOCKET = ""


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=True).stdout


def _screen(session: str) -> str:
    return _tmux("capture-pane", "-p", "-t", session)


def _wait_for(session: str, text: str, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < end:
        screen = _screen(session)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not on screen after {timeout}s:\n{screen}")


def _wait_for_file(folder: Path, session: str, timeout: float = 120.0) -> list[Path]:
    """The Markdown reports in ``folder`` once one is written and the app has said so on screen."""
    end = time.monotonic() + timeout
    said = False
    while time.monotonic() < end:
        said = said or "Report written" in _screen(session)
        reports = sorted(folder.glob("*.md"))
        if said and reports:
            return reports
        time.sleep(0.2)
    raise AssertionError(f"no report in {folder} announced after {timeout}s:\n{_screen(session)}")


@pytest.fixture
def tmux_app(tmp_path: Path, request):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (`make test` installs it); the end-to-end test needs a real terminal")
    if not APXTUI.exists():
        pytest.skip(f"the installed entry point {APXTUI} is missing (run `make` / pip install -e .)")
    global SOCKET
    SOCKET = f"apxtui-test-{uuid.uuid4().hex[:8]}"
    session = SOCKET
    env = {"APXTUI_CACHE_DIR": str(tmp_path / "cache"), "TERM": "xterm-256color", "ESCDELAY": "25"}
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    cmd = f"env -u COLUMNS -u LINES {exports} {APXTUI} --demo --export-dir {tmp_path / 'reports'}; sleep 30"
    width, height = getattr(request, "param", (120, 40))
    _tmux("new-session", "-d", "-s", session, "-x", str(width), "-y", str(height), cmd)
    try:
        yield session, tmp_path
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)


def test_demo_in_tmux_keys_reach_the_binding_and_export(tmux_app):
    session, tmp = tmux_app
    screen = _wait_for(session, "python/apxinf/policy.py:26")  # the source pane shows the entry's definition
    assert "Entries" in screen and "Call tree" in screen and "▼ Py infer" in screen
    for key in ("j", "j", "l", "j"):  # _prepare, the PyO3 binding, expand it, its Rust function
        _tmux("send-keys", "-t", session, key)
        time.sleep(0.2)
    screen = _wait_for(session, "Py infer → PyO3 infer → Rust infer_py")
    assert "crates/apxinf-py/src/lib.rs:27" in screen
    _tmux("send-keys", "-t", session, "e")
    # Wait for the state (the report file), not only for the toast: under load the export can outlast a
    # fixed wait, and a toast seen between two polls is not the end of the write.
    reports = _wait_for_file(tmp / "reports", session)
    assert len(reports) == 1 and reports[0].read_text().startswith(
        "# apxtui execution map: `apxinf.policy.Pi05Policy.infer`")
    _tmux("send-keys", "-t", session, "2")
    _wait_for(session, "2 · Kernels")
    _tmux("send-keys", "-t", session, "q")
    end = time.monotonic() + 10
    while time.monotonic() < end and "2 · Kernels" in _screen(session):
        time.sleep(0.2)
    assert "2 · Kernels" not in _screen(session), "q quits the app"


@pytest.mark.parametrize("tmux_app", [(80, 24)], indirect=True, ids=["80x24"])
def test_demo_at_80x24_stacks_the_tree_over_one_pane(tmux_app):
    session, _tmp = tmux_app
    screen = _wait_for(session, "python/apxinf/policy.py:26")
    lines = screen.splitlines()
    tree = next(i for i, ln in enumerate(lines) if "Call tree" in ln)
    source = next(i for i, ln in enumerate(lines) if "python/apxinf/policy.py:26" in ln)
    assert tree < source and lines[tree].startswith("╭─ Call tree") and len(lines[tree]) == 80  # full width, stacked
    assert "Entries" not in screen and "w Pane" in screen
    _tmux("send-keys", "-t", session, "w")
    screen = _wait_for(session, "╭─ Details")
    assert "╭─ python/apxinf/policy.py:26" not in screen  # one pane under the tree at a time (the source went)
    _tmux("send-keys", "-t", session, "w")
    screen = _wait_for(session, "● apxinf.policy.Pi05Policy.infer")  # the entries pane, current entry marked
    assert "╭─ Entries" in screen and "╭─ Details" not in screen
