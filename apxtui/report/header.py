"""The header every report and ``index`` output starts with (light: ``index`` imports only this)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from apxtui import __version__

if TYPE_CHECKING:
    from apxtui.index.build import Index

STATIC_NOTE = "Static analysis of the source: not runtime validation. Counts are static, per call of the entry."
NO_PROFILE = "no profile: all configurations"


def header(index: Index, profile: Any = None) -> dict[str, Any]:
    """``profile``: an ``apxtui.profile.Resolved`` (None: no profile, all configurations)."""
    git = index.scan.git
    return {
        "apxtui": __version__,
        "checkout": str(index.root),
        "revision": git.revision if git else "(not a git checkout)",
        "branch": git.branch if git else "",
        "working_tree": {"modified": list(git.modified), "untracked": list(git.untracked)} if git else None,
        "profile": profile.describe() if profile is not None else NO_PROFILE,
        "profile_detail": profile.to_dict() if profile is not None else None,
        "static_analysis": STATIC_NOTE,
    }


@dataclass(frozen=True)
class EntryRef:
    """The traced entry: its node and where it is defined."""

    node: str
    qualname: str
    kind: str
    file: str
    line: int


@dataclass(frozen=True)
class ReportHeader:
    """What the execution-map report says first: the checkout at its revision, the profile, the entry, the
    selection and arm choices, the checkpoint (the text and Markdown views read it; see :func:`header` for the
    trace document's)."""

    apxtui: str
    checkout: str
    revision: str
    branch: str
    working_tree: tuple[tuple[str, ...], tuple[str, ...]] | None  # (modified, untracked); None: not a git checkout
    profile: str
    entry: EntryRef
    select: tuple[str, ...]
    choices: dict[str, int]  # dispatch key → the arm chosen in the explorer
    depth: int
    checkpoint: str | None


def report_header(index: Index, entry: str, profile: Any = None, *, select: list[str] | None = None,
                  choices: dict[str, int] | None = None, depth: int = 40,
                  checkpoint: str | None = None) -> ReportHeader:
    """The map report's header for ``entry`` (a node of ``index``'s graph)."""
    git = index.scan.git
    d = index.graph.nodes[entry]
    return ReportHeader(
        __version__, str(index.root), git.revision if git else "(not a git checkout)", git.branch if git else "",
        (tuple(git.modified), tuple(git.untracked)) if git else None,
        profile.describe() if profile is not None else NO_PROFILE,
        EntryRef(entry, d.get("qualname", ""), d.get("kind", ""), d.get("file", ""), d.get("line", 0)),
        tuple(select or ()), dict(choices or {}), depth, checkpoint)
