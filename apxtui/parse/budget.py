"""The per-file CPU-time budget of extraction (no tree-sitter import: cheap to load)."""

from __future__ import annotations

import time


class BudgetExceeded(Exception):
    """A file's extraction ran past its CPU-time budget."""


class Budget:
    """A per-file CPU-time budget: :meth:`check` raises :class:`BudgetExceeded` once past it.

    The clock is read on the first check and then every 64th, so a check costs little
    inside the extractors' per-record loops.
    """

    __slots__ = ("seconds", "deadline", "_n", "_next")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.process_time() + seconds
        self._n = 0
        self._next = 0

    def over(self) -> bool:
        return time.process_time() > self.deadline

    def check(self) -> None:
        self._n += 1
        if self._n >= self._next:
            self._next = self._n + 64
            if time.process_time() > self.deadline:
                raise BudgetExceeded
