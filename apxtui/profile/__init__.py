"""Build and run profiles: cfg names, Cargo features, CUDA architecture, environment values.

``space.discover`` reads a checkout's configuration space; ``model.Profile`` is one
point in it and ``model.Resolved`` evaluates ``#[cfg]``, ``#if`` and environment gates
under it (three-valued: None = undecided); ``cli`` has the flags and named profiles.
"""

from apxtui.profile.cli import add_profile_args, profile_from_args, resolve, resolve_from_args
from apxtui.profile.model import Profile, Resolved

__all__ = ["Profile", "Resolved", "add_profile_args", "profile_from_args", "resolve", "resolve_from_args"]
