"""The explorer app: reads the arguments, indexes in a worker, hosts screens 1–5.

Entry point: :func:`run_app` with an :class:`ExplorerConfig` (``apxtui.commands.tui`` builds it from
``apxtui [CHECKOUT] [--demo] …``).
"""

from __future__ import annotations

import os
import time

from textual import work
from textual.app import App
from textual.binding import Binding

from apxtui.demo import DEMO_CHECKPOINT
from apxtui.index.build import Index, build_index
from apxtui.tui.config import ExplorerConfig
from apxtui.tui.messages import IndexFailed, IndexProgress, IndexReady
from apxtui.tui.screens.checkpoint import CheckpointScreen
from apxtui.tui.screens.explorer import ExplorerScreen
from apxtui.tui.screens.help import HelpScreen
from apxtui.tui.screens.others import CaptureScreen, KernelsScreen
from apxtui.tui.screens.profile import ProfileScreen
from apxtui.tui.session import Session


class ApxApp(App):
    """Thin: owns the index worker and the session; screens do the rest."""

    CSS_PATH = "app.tcss"
    TITLE = "apxtui"
    MODES = {
        "explorer": ExplorerScreen, "kernels": KernelsScreen, "capture": CaptureScreen,
        "checkpoint": CheckpointScreen, "profile": ProfileScreen,
    }
    DEFAULT_MODE = "explorer"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit apxtui (ctrl+q works everywhere)"),
        Binding("question_mark,f1", "help", "Help", key_display="?", id="app.help", tooltip="Keys and markers"),
        Binding("ctrl+p,colon,f2", "command_palette", "Palette", show=False, key_display="^p", id="app.palette",
                tooltip="Command palette: jump to any symbol, switch entry, open a screen, export (twins : and F2)"),
        Binding("1", "switch_mode('explorer')", "Explorer", show=False, id="app.screen1", tooltip="Screen 1: explorer"),
        Binding("2", "switch_mode('kernels')", "Kernels", show=False, id="app.screen2", tooltip="Screen 2: kernels"),
        Binding("3", "switch_mode('capture')", "Capture", show=False, id="app.screen3", tooltip="Screen 3: capture"),
        Binding("4", "switch_mode('checkpoint')", "Checkpoint", show=False, id="app.screen4",
                tooltip="Screen 4: checkpoint tensors"),
        Binding("5", "switch_mode('profile')", "Profile", show=False, id="app.screen5", tooltip="Screen 5: profile"),
    ]

    def __init__(self, config: ExplorerConfig, *, index: Index | None = None) -> None:
        super().__init__()
        self.config = config
        self.root = config.root
        self.demo = config.demo
        self.checkpoint = config.checkpoint
        self.export_dir = config.export_dir
        self.profile = config.profile  # from the command line; screen 5 changes the session's
        self.prebuilt = index  # an index of ``root`` built by the caller (the tests share one), used as is
        self.session: Session | None = None
        self.index_error: str | None = None
        self.index_seconds = 0.0
        self._listeners: list = []
        self.animation_level = "none"
        name = "demo checkout" if config.demo else config.root.name
        self.sub_title = name
        self.title = f"apxtui · {name}"

    def on_mount(self) -> None:
        self._index()

    def register_listener(self, screen) -> None:
        """Screens call this on mount; they get the session now if it is ready, else when it is."""
        self._listeners.append(screen)
        if self.session is not None:
            screen.session_ready(self.session)
        elif self.index_error is not None and hasattr(screen, "index_failed"):
            screen.index_failed(self.index_error)

    def analysis_updated(self) -> None:
        """The explorer finished analysing its current path: screens that show path results refresh."""
        for s in self._listeners:
            if hasattr(s, "refresh_rows"):
                s.refresh_rows()

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _index(self) -> None:
        t0 = time.perf_counter()
        try:
            idx = self.prebuilt if self.prebuilt is not None else build_index(
                self.root, use_cache=self.config.use_cache, workers=self.config.jobs, progress=self._progress)
            session = Session(idx, checkpoint=self.checkpoint, checkpoint_label=self.checkpoint_label(),
                              export_dir=self.export_dir)
            if self.profile is not None:
                self.post_message(IndexProgress(1, 1, "", "indexing: evaluating the profile…"))
                session.set_profile(self.profile, session.bind(self.profile))
        except Exception as e:  # noqa: BLE001 - shown in the UI, not a crash
            self.post_message(IndexFailed(f"{type(e).__name__}: {e}"))
            return
        self.post_message(IndexReady(idx, time.perf_counter() - t0, session))

    def _progress(self, done: int, total: int, current: str) -> None:
        self.post_message(IndexProgress(done, total, current))

    def on_index_progress(self, msg: IndexProgress) -> None:
        for s in self._listeners:
            if hasattr(s, "index_progress"):
                s.index_progress(msg.done, msg.total, msg.current, msg.label)

    def on_index_ready(self, msg: IndexReady) -> None:
        self.index_seconds = msg.seconds
        self.session = msg.session
        for s in self._listeners:
            s.session_ready(self.session)
        n = len(msg.index.issues)
        more = f"; {n} index problem{'s' if n != 1 else ''} (key i)" if n else ""
        self.notify(f"{msg.index.graph.number_of_nodes():,} symbols in {msg.seconds:.1f} s{more}",
                    title="Indexed", timeout=4)
        rp = self.session.resolved
        for w in rp.warnings if rp is not None else []:
            self.notify(w, title="Profile", severity="warning", timeout=8)

    def profile_changed(self) -> None:
        """Screen 5 switched the session's profile: every screen re-traces or refreshes."""
        for s in self._listeners:
            if hasattr(s, "profile_changed"):
                s.profile_changed()

    def on_index_failed(self, msg: IndexFailed) -> None:
        self.index_error = msg.error
        for s in self._listeners:
            if hasattr(s, "index_failed"):
                s.index_failed(msg.error)
        self.notify(msg.error, title="Indexing failed", severity="error", timeout=15)

    def checkpoint_label(self) -> str:
        if self.checkpoint is None:
            return ""
        return "demo checkpoint" if self.checkpoint == DEMO_CHECKPOINT else str(self.checkpoint)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))


def run_app(config: ExplorerConfig) -> int:
    """Run the explorer in the terminal until it quits; its return code."""
    app = ApxApp(config)
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    app.run(mouse=config.mouse)
    return app.return_code or 0
