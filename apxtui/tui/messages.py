"""Messages between the index worker, the panes and the screens."""

from __future__ import annotations

from textual.message import Message

from apxtui.index.build import Index


class IndexProgress(Message):
    """Files parsed so far (coalesced: only the newest waits in the queue)."""

    def __init__(self, done: int, total: int, current: str) -> None:
        super().__init__()
        self.done, self.total, self.current = done, total, current

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress)


class IndexReady(Message):
    def __init__(self, index: Index, seconds: float) -> None:
        super().__init__()
        self.index, self.seconds = index, seconds


class IndexFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error
