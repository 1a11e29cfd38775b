"""Build and run profiles: cfg names, Cargo features, CUDA architecture, environment values.

``space.discover`` reads a checkout's configuration space; ``model.Profile`` is one
point in it and ``model.Resolved`` evaluates ``#[cfg]``, ``#if`` and environment gates
under it (three-valued: None = undecided); ``bind.resolve`` binds a profile to an indexed
checkout; ``named`` reads named profiles from TOML.  The command-line flags are in
``apxtui.commands.profile_flags``.
"""

from apxtui.profile.bind import resolve
from apxtui.profile.model import Profile, Resolved

__all__ = ["Profile", "Resolved", "resolve"]
