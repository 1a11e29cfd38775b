"""The header every report and ``index`` output starts with (light: ``index`` imports only this)."""

from __future__ import annotations

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
