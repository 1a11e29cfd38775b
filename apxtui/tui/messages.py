"""Messages between the index worker, the panes and the screens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from apxtui.index.build import Index

if TYPE_CHECKING:
    from apxtui.profile.model import Resolved
    from apxtui.tui.session import Session


class IndexProgress(Message):
    """Files parsed so far (coalesced: only the newest waits in the queue)."""

    def __init__(self, done: int, total: int, current: str, label: str = "") -> None:
        super().__init__()
        self.done, self.total, self.current, self.label = done, total, current, label

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress)


class IndexReady(Message):
    """The index and a session on it (with the command line's profile bound: ``resolved``)."""

    def __init__(self, index: Index, seconds: float, session: Session, resolved: Resolved | None = None) -> None:
        super().__init__()
        self.index, self.seconds, self.session, self.resolved = index, seconds, session, resolved


class IndexFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error
