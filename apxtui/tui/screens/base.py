"""What every explorer screen shares: failed workers become notifications."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from apxtui.textsafe import one_line

if TYPE_CHECKING:
    from apxtui.tui.app import ApxApp


def report_worker_error(node: Widget | DOMNode, event: Worker.StateChanged) -> None:
    """A worker that failed says so in a notification (a silent failure looks like a hang)."""
    if event.state != WorkerState.ERROR:
        return
    err = event.worker.error
    what = event.worker.group or event.worker.name or "background work"
    node.app.notify(one_line(f"{type(err).__name__}: {err}" if err is not None else "unknown error", 300),
                title=f"{one_line(what, 40)} failed", severity="error", timeout=10)


class ApxScreen(Screen[None]):
    """A screen of the explorer (its workers' failures are shown, never swallowed)."""

    @property
    def apx(self) -> ApxApp:
        """The explorer app, typed (its state and background jobs)."""
        return cast("ApxApp", self.app)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)
