"""The explorer app: reads the arguments, indexes in a worker, publishes the state screens watch.

State flows down by reactives that screens ``watch``: ``session`` (set once the index is
ready), ``index_state`` (progress or failure), ``profile_version`` and ``path_version``
(bumped when the profile or the traced path changes), ``analysis`` (the background
analysis of the current path) and ``activity`` (what background jobs are doing, for the
status bar).  CPU-bound work runs in forked jobs (:mod:`apxtui.tui.jobs`) that ``q`` kills.

Entry point: :func:`run_app` with an :class:`~apxtui.tui.config.ExplorerConfig` (``apxtui.commands.tui``
builds it from ``apxtui [CHECKOUT] [--demo] …``).
"""

from __future__ import annotations

import asyncio
import importlib
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import events, work
from textual.app import App
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from apxtui.demo import DEMO_CHECKPOINT
from apxtui.index.build import Index, build_index
from apxtui.profile.model import Profile, Resolved
from apxtui.textsafe import one_line
from apxtui.tui.background import Progress, analyse_path, checkpoint_join
from apxtui.tui.config import ExplorerConfig, Settings, load_settings
from apxtui.tui.gcpolicy import keep_out_of_the_way
from apxtui.tui.jobs import SERVING, DaemonThreadExecutor, Job, JobFailed, JobFn, Jobs
from apxtui.tui.messages import IndexFailed, IndexProgress, IndexReady
from apxtui.tui.path_analysis import PathAnalysis
from apxtui.tui.screens.base import report_worker_error
from apxtui.tui.screens.explorer import ExplorerScreen
from apxtui.tui.screens.help import HelpScreen
from apxtui.tui.screens.problems import ProblemsScreen
from apxtui.tui.screens.prompt import Prompt
from apxtui.tui.session import Session
from apxtui.tui.widgets import keyed_widgets

#: Arm presses closer together than this start one analysis (of the last state), not one each.
ANALYSE_AFTER = 0.15
#: What background work reports (analysis state, status text) reaches the screen this long after the last key
#: at the earliest, so it is never painted in a key's frame; updates of one kind meanwhile keep only the last …
KEY_QUIET = 0.1
#: … unless keys keep coming for this long (a held key): then they are applied anyway.
MAX_DEFER = 0.5
#: Background jobs still computing are stopped from a key until its repaint is out and this long has passed
#: since the last key (:meth:`Jobs.pause`; at most ``jobs.MAX_PAUSE``): the UI does not share a core with them.
PAUSE_AFTER_KEY = 0.03


@dataclass(frozen=True)
class IndexState:
    """Indexing as the explorer shows it: progress, then ready or failed."""

    done: int = 0
    total: int = 0
    current: str = ""
    label: str = ""
    error: str = ""
    ready: bool = False


@dataclass(frozen=True)
class JoinState:
    """The checkpoint's weight join (a background job): pending, done (``join``) or failed (``error``)."""

    checkpoint: Any = None
    join: Any = None
    error: str = ""
    done: bool = False


@dataclass(frozen=True)
class LazyScreen:
    """A mode's screen, imported when the mode is first opened (screen 4 pulls in the checkpoint stack)."""

    module: str
    name: str

    def screen_class(self) -> type[Screen[Any]]:
        cls: type[Screen[Any]] = getattr(importlib.import_module(f"apxtui.tui.screens.{self.module}"), self.name)
        return cls

    def __call__(self) -> Screen[Any]:
        return self.screen_class()()


def screen_classes() -> list[type]:
    """Every screen class of the modes (imports them)."""
    modes = ApxApp.MODES.values()
    return [m.screen_class() if isinstance(m, LazyScreen) else m for m in modes if isinstance(m, type | LazyScreen)]


class ApxApp(App[None]):
    """Thin: owns the index worker, the session and the background jobs; screens do the rest."""

    CSS_PATH = "app.tcss"
    TITLE = "apxtui"
    MODES = {
        "explorer": ExplorerScreen, "kernels": LazyScreen("others", "KernelsScreen"),
        "capture": LazyScreen("others", "CaptureScreen"), "checkpoint": LazyScreen("checkpoint", "CheckpointScreen"),
        "profile": LazyScreen("profile", "ProfileScreen"),
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

    session: var[Session | None] = var(None)
    index_state: var[IndexState] = var(IndexState())
    profile_version: var[int] = var(0)
    path_version: var[int] = var(0)
    analysis: var[PathAnalysis | None] = var(None, always_update=True)
    join_state: var[JoinState] = var(JoinState(), always_update=True)
    activity: var[dict[str, str]] = var(dict, always_update=True)

    def __init__(self, config: ExplorerConfig, *, index: Index | None = None, settings: Settings | None = None) -> None:
        """``index``: an index of ``config.root`` built elsewhere (the tests share one), used as is;
        ``settings``: the user's keymap (default: read from ``$XDG_CONFIG_HOME/apxtui/tui.toml``)."""
        super().__init__()
        self.config = config
        self.root = config.root
        self.demo = config.demo
        self.checkpoint = config.checkpoint
        self.export_dir = config.export_dir
        self.profile = config.profile  # from the command line; screen 5 changes the session's
        self.prebuilt = index
        self.quiet_gc = False  # the explorer's own process: the collector is tuned once the index is loaded
        self.index_seconds = 0.0
        self.background = Jobs()
        self.animation_level = "none"
        name = "demo checkout" if config.demo else one_line(config.root.name, 60)
        self.sub_title = name
        self.title = f"apxtui · {name}"
        self.settings = settings if settings is not None else load_settings(known_ids=binding_ids)
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        self._analyse_timer: Any = None
        self._activity_now: dict[str, str] = {}  # what background groups are doing (``activity``: as shown)
        self._last_key = 0.0  # time.monotonic() of the last key
        self._deferred: dict[str, Callable[[], None]] = {}  # updates for the screen held back while keys come
        self._deferred_since = 0.0
        self._publish_timer: Any = None
        self._resume_timer: Any = None

    def on_mount(self) -> None:
        asyncio.get_running_loop().set_default_executor(DaemonThreadExecutor())
        for problem in self.settings.problems:
            self.notify(one_line(problem, 300), title="Settings", severity="warning", timeout=10)
        if self.prebuilt is not None:
            self._open(self.prebuilt)
        else:
            self._index()

    # -- indexing ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _index(self) -> None:
        t0 = time.perf_counter()
        try:
            idx = build_index(self.root, use_cache=self.config.use_cache, workers=self.config.jobs,
                              progress=self._progress)
            session, rp = self._session(idx)
        except Exception as e:  # noqa: BLE001 - shown in the UI, not a crash
            self.post_message(IndexFailed(f"{type(e).__name__}: {e}"))
            return
        self.post_message(IndexReady(idx, time.perf_counter() - t0, session, rp))

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _open(self, idx: Index) -> None:
        """An index built elsewhere: only the session (and the command line's profile) remain."""
        try:
            session, rp = self._session(idx)
        except Exception as e:  # noqa: BLE001 - shown in the UI, not a crash
            self.post_message(IndexFailed(f"{type(e).__name__}: {e}"))
            return
        self.post_message(IndexReady(idx, 0.0, session, rp))

    def _progress(self, done: int, total: int, current: str) -> None:
        self.post_message(IndexProgress(done, total, current))

    def _session(self, idx: Index) -> tuple[Session, Resolved | None]:
        session = Session(idx, checkpoint=self.checkpoint, checkpoint_label=self.checkpoint_label(),
                          export_dir=self.export_dir)
        if self.settings.budget is not None:
            session.budget = self.settings.budget
        rp = None
        if self.profile is not None:
            self.post_message(IndexProgress(1, 1, "", "indexing: evaluating the profile…"))
            rp = session.bind(self.profile)
            session.set_profile(self.profile, rp)
        return session, rp

    def on_index_progress(self, msg: IndexProgress) -> None:
        self.index_state = IndexState(msg.done, msg.total, msg.current, msg.label)

    def on_index_ready(self, msg: IndexReady) -> None:
        self.index_seconds = msg.seconds
        self.index_state = IndexState(ready=True)
        n = len(msg.index.issues)
        more = f"; {n} index problem{'s' if n != 1 else ''} (key i)" if n else ""
        took = f" in {msg.seconds:.1f} s" if self.prebuilt is None else ""
        self.notify(f"{msg.index.graph.number_of_nodes():,} symbols{took}{more}", title="Indexed", timeout=4)
        for w in msg.resolved.warnings if msg.resolved is not None else []:
            self.notify(one_line(w, 300), title="Profile", severity="warning", timeout=8)
        self.session = msg.session
        if self.quiet_gc:
            keep_out_of_the_way()  # before the first background job forks: its pages stay shared too
        if self.checkpoint is not None:
            self._join()

    def on_index_failed(self, msg: IndexFailed) -> None:
        self.index_state = IndexState(error=msg.error)
        self.notify(one_line(msg.error, 300), title="Indexing failed", severity="error", timeout=15)

    def checkpoint_label(self) -> str:
        if self.checkpoint is None:
            return ""
        return "demo checkpoint" if self.checkpoint == DEMO_CHECKPOINT else str(self.checkpoint)

    # -- the profile and the path ----------------------------------------------------------

    def set_profile(self, profile: Profile | None, resolved: Resolved | None) -> None:
        """Switch the session's profile (screen 5); the explorer re-traces, then the path is re-analysed."""
        assert self.session is not None
        self.session.set_profile(profile, resolved)
        self.profile_version += 1
        for w in resolved.warnings if resolved is not None else []:
            self.notify(one_line(w, 300), title="Profile", severity="warning", timeout=6)

    def path_changed(self) -> None:
        """The traced path changed (entry, arm, profile): screens refresh; analysis starts once presses settle."""
        self.path_version += 1
        self.background.cancel("analysis")
        session = self.session
        if session is None or session.entry is None:
            return
        entry = session.index.graph.nodes[session.entry].get("qualname", session.entry)
        self.analysis = PathAnalysis(session.generation, entry, progress="analysis: waiting for keys to settle…")
        if self._analyse_timer is not None:
            self._analyse_timer.stop()
        self._analyse_timer = self.set_timer(ANALYSE_AFTER, self._start_analysis)

    def _start_analysis(self) -> None:
        self._analyse_timer = None
        state = self.analysis
        if state is None or state.job is not None or self.session is None \
                or state.generation != self.session.generation:
            return
        state.job = self.background.start("analysis", analyse_path, self.session)
        state.progress = "analysis: starting…"
        self._analysis_moved(state)
        self._serve_analysis(state)

    @work(exclusive=True, group="analysis", exit_on_error=False)
    async def _serve_analysis(self, state: PathAnalysis) -> None:
        assert state.job is not None
        try:
            async for msg in state.job.messages():
                if msg is SERVING:
                    state.served()
                else:
                    state.take(msg)
                self.set_activity("analysis", state.progress)
                self._analysis_moved(state)
        except JobFailed as e:
            state.failed(str(e))
            self.set_activity("analysis", "")
            self._analysis_moved(state)
            self.notify(one_line(str(e), 300), title="Analysis failed", severity="error", timeout=10)

    def _analysis_moved(self, state: PathAnalysis) -> None:
        """The analysis ``state`` moved on (read at once by keys); the screens hear of it between keys."""

        def tell() -> None:
            if self.analysis is state:
                self.analysis = state

        self.publish("analysis", tell)

    # -- background updates, between keys ------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self._last_key = time.monotonic()
            self.background.pause()
            if self.background.paused and self._resume_timer is None:
                self._resume_timer = self.set_timer(PAUSE_AFTER_KEY, self._resume_jobs)
        await super().on_event(event)

    def _resume_jobs(self) -> None:
        """Continue the jobs a key stopped, once its repaint is out and no key came for a moment."""
        self._resume_timer = None
        if not self.background.paused:
            return
        try:
            screen = self.screen
        except Exception:  # noqa: BLE001 - no screen (exiting): nothing to repaint
            self.background.resume()
            return
        wait = PAUSE_AFTER_KEY - (time.monotonic() - self._last_key)
        if wait > 0 or screen._dirty_widgets or screen._layout_required or screen._repaint_required:
            self._resume_timer = self.set_timer(max(wait, 0.005), self._resume_jobs)
            return
        self.background.resume()

    def publish(self, kind: str, apply: Callable[[], None]) -> None:
        """Apply a background update to the screen now, or, within ``KEY_QUIET`` of a key, once keys pause
        (at most ``MAX_DEFER`` later); of the updates of one ``kind`` held back, only the last is applied."""
        now = time.monotonic()
        if not self._deferred and now - self._last_key >= KEY_QUIET:
            apply()
            return
        if not self._deferred:
            self._deferred_since = now
        self._deferred.pop(kind, None)  # re-inserted: applied in the order of their last update
        self._deferred[kind] = apply
        self._schedule_publish()

    def _schedule_publish(self) -> None:
        if self._publish_timer is not None:
            self._publish_timer.stop()
        now = time.monotonic()
        due = min(self._last_key + KEY_QUIET, self._deferred_since + MAX_DEFER)
        self._publish_timer = self.set_timer(max(0.0, due - now) + 0.001, self._publish)

    def _publish(self) -> None:
        self._publish_timer = None
        now = time.monotonic()
        if now - self._last_key < KEY_QUIET and now - self._deferred_since < MAX_DEFER:
            self._schedule_publish()  # a key came meanwhile
            return
        todo, self._deferred = self._deferred, {}
        for apply in todo.values():
            apply()

    # -- other background jobs -------------------------------------------------------------

    async def follow(self, group: str, job: Job) -> Any:
        """Read ``job``'s messages until it ends (a serving job: until it is cancelled); its progress shows
        in the status bar.  Returns the last message that was not progress.  Raises JobFailed."""
        last = None
        try:
            async for msg in job.messages():
                if isinstance(msg, Progress):
                    self.set_activity(group, msg.text)
                elif msg is SERVING:
                    self.set_activity(group, "")
                else:
                    last = msg
        finally:
            self.set_activity(group, "")
        return last

    async def run_job(self, group: str, fn: JobFn, *args: Any) -> Any:
        """Run ``fn`` as a background job (a new one in ``group`` replaces the old); see :meth:`follow`."""
        return await self.follow(group, self.background.start(group, fn, *args))

    def set_activity(self, group: str, text: str) -> None:
        """What ``group`` is doing in the background ("" when done), for the status bar (between keys)."""
        cur = dict(self._activity_now)
        if text:
            cur[group] = text
        else:
            cur.pop(group, None)
        if cur == self._activity_now:
            return
        self._activity_now = cur

        def show() -> None:
            if self.activity != cur:
                self.activity = cur

        self.publish("activity", show)

    @work(exclusive=True, group="join", exit_on_error=False)
    async def _join(self) -> None:
        assert self.session is not None
        try:
            ckpt, j = await self.run_job("join", checkpoint_join, self.session)
        except JobFailed as e:
            self.join_state = JoinState(error=str(e), done=True)
            return
        self.session.set_checkpoint_join(ckpt, j)
        self.join_state = JoinState(ckpt, j, done=True)

    #: Worker groups that keep running while their job serves requests (never "complete").
    SERVING_GROUPS = frozenset({"analysis", "sol-serve", "map-server"})

    def busy(self) -> bool:
        """Anything still to come: an analysis waiting or running, a worker computing, a job in progress."""
        if self._analyse_timer is not None or (self.analysis is not None and self.analysis.status == "running"):
            return True
        if self._activity_now or self._deferred:
            return True
        return any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) and w.group not in self.SERVING_GROUPS
                   for w in self.workers)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification is literal text: names from the checkout must not become markup or actions."""
        super().notify(one_line(message, 2000), title=one_line(title, 200), severity=severity, timeout=timeout,
                       markup=False)

    # -- keys ----------------------------------------------------------------------------

    async def action_quit(self) -> None:
        self.background.cancel_all()  # kill the children first: nothing waits for them
        self.exit()

    def on_unmount(self) -> None:
        self.background.cancel_all()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))


def binding_ids() -> set[str]:
    """Every binding id the explorer defines (what a user keymap may name)."""
    classes = [ApxApp, *screen_classes(), HelpScreen, ProblemsScreen, Prompt, *keyed_widgets()]
    out: set[str] = set()
    for cls in classes:
        for klass in cls.__mro__:
            for b in klass.__dict__.get("BINDINGS", []):
                if isinstance(b, Binding) and b.id:
                    out.add(b.id)
    return out


def run_app(config: ExplorerConfig) -> int:
    """Run the explorer; exits the process as soon as the terminal is restored (nothing is torn down)."""
    app = ApxApp(config)
    app.quiet_gc = True
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    app.run(mouse=config.mouse)
    code = app.return_code or 0
    app.background.cancel_all()
    for child in multiprocessing.active_children():  # e.g. the parser pool of an index still being built
        child.kill()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)  # an index still being built (its process pool), a large graph: nothing to wait for
