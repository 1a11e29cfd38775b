"""The analysis of the session's current path as the screens see it (no Textual).

One :class:`PathAnalysis` per generation of the path (entry, arm choices, profile).  The
work runs in a :func:`apxtui.tui.background.analyse_path` job; this object holds its
progress, its small :class:`~apxtui.tui.background.PathSummary` and asks the serving child
for what one row needs (its annotations, the next device work) on demand.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from apxtui.tui.background import PathSummary, Progress, StageRecord
from apxtui.tui.jobs import Job, JobFailed
from apxtui.tui.positions import Pos

#: A stage's analysis as the analysis job sends it (its ``StageFacts`` and the checkpoint's weights).
Annotations = StageRecord

RUNNING, READY, FAILED = "running", "ready", "failed"
CACHE_ROWS = 4096


@dataclass
class PathAnalysis:
    generation: int
    entry: str  # the entry's qualified name (for notes)
    status: str = RUNNING
    progress: str = "analysis: waiting to start…"
    summary: PathSummary | None = None
    error: str = ""
    job: Job | None = field(default=None, repr=False)
    _rows: OrderedDict[Pos, Annotations | None] = field(default_factory=OrderedDict, repr=False)

    @property
    def ready(self) -> bool:
        return self.status == READY

    def take(self, msg: object) -> None:
        """Fold one message of the job into the state."""
        if isinstance(msg, Progress):
            self.progress = msg.text
        elif isinstance(msg, PathSummary):
            self.summary = msg

    def served(self) -> None:
        self.status, self.progress = READY, ""

    def failed(self, error: str) -> None:
        self.status, self.error, self.progress = FAILED, error, ""

    def pending(self) -> str:
        """Why a row has no analysis to show (yet)."""
        if self.status == FAILED:
            return f"not analysed (analysis failed: {self.error})"
        if self.status == RUNNING:
            return self.progress.removeprefix("analysis: ") or "analysing…"
        return "not on the chosen path (choose its arm with [ / ])"

    def cached(self, pos: Pos) -> tuple[bool, Annotations | None]:
        """``(known, annotations)`` without asking the child."""
        if pos in self._rows:
            self._rows.move_to_end(pos)
            return True, self._rows[pos]
        return False, None

    async def prefetch(self, positions: list[Pos]) -> None:
        """Fetch the annotations of these rows in one request (the rows around the cursor)."""
        want = [p for p in positions if p not in self._rows]
        if not want or not self.ready or self.job is None:
            return
        try:
            got = await self.job.request(("stages", want))
        except JobFailed:
            return
        for p, ann in got.items():
            self._rows[p] = ann
        while len(self._rows) > CACHE_ROWS:
            self._rows.popitem(last=False)

    async def device(self, pos: Pos, step: int) -> Pos | None:
        """The next (``step`` 1) or previous (-1) device work after ``pos`` on the chosen path:
        ``()`` when there is none, None when ``pos`` is not on the analysed path (or no answer)."""
        if not self.ready or self.job is None:
            return None
        try:
            found: Pos | None = await self.job.request(("device", pos, step))
        except JobFailed:
            return None
        return found
