"""Shared pytest setup: make the source checkout importable when run as plain ``pytest``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import gc  # noqa: E402

import pytest  # noqa: E402

from apxtui.tui.gcpolicy import YOUNG as GC_GEN0_THRESHOLD  # noqa: E402  # the explorer's own setting


def pytest_configure(config):
    """Collect cyclic garbage less often: a Pilot test allocates millions of short-lived objects (styles,
    segments, messages) and at Python's default threshold the collector ran ~550 times per app and took about
    15% of the test's CPU; at 10,000 it runs ~20 times.  Nothing is left uncollected, only collected later.

    Textual's test driver waits after every key until the app looks idle: it sleeps in 20 ms slices
    until a slice passes with under 1 ms of CPU (``textual._wait``).  Slices of 5 ms detect the same
    idleness sooner; the Pilot tests that wait for the app's own work use ``drive.settle``, which asks
    the app (``app.busy()``), not the clock."""
    gc.set_threshold(GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])
    try:
        import textual._wait as wait
    except ImportError:  # pragma: no cover - textual is a dependency
        return
    wait.SLEEP_GRANULARITY = 0.005
    wait.SLEEP_IDLE = wait.SLEEP_GRANULARITY / 20.0


def pytest_collection_modifyitems(config, items):
    """Slow end-to-end tests first (stable order otherwise): the parallel workers (``-n``) then fill
    their last minutes with short tests instead of one of them waiting for a long one."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own fact cache directory: the user's cache is never touched."""
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("apxtui-cache")))
    monkeypatch.setenv("APXTUI_TUI_CONFIG", str(tmp_path_factory.getbasetemp() / "no-user-settings.toml"))


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory):
    """The embedded demo checkout, indexed once per session (own cache dir)."""
    from helpers import build_isolated

    from apxtui.demo import DEMO_CHECKOUT

    index = build_isolated(DEMO_CHECKOUT, tmp_path_factory.mktemp("demo-cache"))
    gc.freeze()  # kept for the whole session: the collector's full passes skip its objects from here on
    return index


@pytest.fixture
def demo_app(demo_index):
    """``demo_app(**kw)`` → an explorer app on the demo checkout (with the demo checkpoint unless
    ``checkpoint=`` says otherwise) that uses the session's ``demo_index`` instead of indexing again."""
    from apxtui.demo import DEMO_CHECKOUT, DEMO_CHECKPOINT
    from apxtui.tui.app import ApxApp
    from apxtui.tui.config import ExplorerConfig

    def make(**kw):
        kw.setdefault("checkpoint", DEMO_CHECKPOINT)
        return ApxApp(ExplorerConfig(DEMO_CHECKOUT, demo=True, **kw), index=demo_index)

    return make
