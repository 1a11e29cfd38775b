"""Build and run profiles: cfg names, Cargo features, CUDA architecture, environment values.

``space.discover`` reads a checkout's configuration space; ``model.Profile`` is one
point in it and ``model.Resolved`` evaluates ``#[cfg]``, ``#if`` and environment gates
under it (three-valued: None = undecided); ``bind.resolve`` binds a profile to an indexed
checkout; ``named`` reads named profiles from TOML.  The command-line flags are in
``apxtui.commands.profile_flags``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apxtui.profile.bind import resolve
    from apxtui.profile.model import Profile, Resolved

_FROM = {"resolve": "bind", "Profile": "model", "Resolved": "model"}


def __getattr__(name: str) -> Any:
    """Imported on first use: the command line registers the profile flags without the evaluator."""
    if name in _FROM:
        return getattr(importlib.import_module(f"apxtui.profile.{_FROM[name]}"), name)
    raise AttributeError(f"module 'apxtui.profile' has no attribute {name!r}")


__all__ = ["Profile", "Resolved", "resolve"]
