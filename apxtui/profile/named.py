"""Named profiles in TOML.

Named profiles live in ``$XDG_CONFIG_HOME/apxtui/profiles.toml`` and in the checkout's
``.apxtui.toml`` (the checkout's wins), as tables ``[profile.NAME]`` (or
``[profiles.NAME]``) with keys ``arch``, ``features`` (list), ``no_default_features``,
``cfg`` / ``cfg_off`` (lists), ``env`` and ``defines`` (tables), ``assume_host``.
The command-line flags that select and extend them are in ``apxtui.commands.profile_flags``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apxtui.errors import InputFileError, ProfileError
from apxtui.inputs import MANIFEST_MAX, confine, parse_toml, read_limited

if TYPE_CHECKING:
    from apxtui.profile.model import Profile


def config_files(root: Path | None) -> list[Path]:
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    files = []
    if root is not None:
        files.append(Path(root) / ".apxtui.toml")
    files.append(Path(xdg) / "apxtui" / "profiles.toml")
    return files


def named_profiles(root: Path | None) -> dict[str, tuple[dict[str, Any], Path]]:
    out: dict[str, tuple[dict[str, Any], Path]] = {}
    for f in reversed(config_files(root)):  # later (checkout) wins
        if not f.is_file():
            continue
        try:  # the checkout's file must stay in the checkout (not a symlink out of it)
            path = confine(Path(root), f.name) if root is not None and f.parent == Path(root) else f
            data = parse_toml(read_limited(path, MANIFEST_MAX, str(f)), str(f))
        except InputFileError as e:
            raise ProfileError(str(e)) from e
        tables = {**data.get("profiles", {}), **data.get("profile", {})}
        for name, t in tables.items():
            if isinstance(t, dict):
                out[name] = (t, f)
    return out


def check_arch(arch: str | None) -> str | None:
    """``sm_XX`` for an architecture given as ``sm_XX`` or a number (None stays None)."""
    if arch is None:
        return None
    from apxtui.profile.buildscript import arch_number  # lazy: a trace reads config_files() without a profile

    a = str(arch).strip()
    if a.isdigit():
        a = f"sm_{a}"
    if arch_number(a) is None:
        raise ProfileError(f"--arch {arch!r}: expected sm_XX (sm_80, sm_90, sm_100a) or a number like 90")
    return a


def from_table(name: str, t: dict[str, Any], where: str = "") -> Profile:
    def lst(key: str) -> list[str]:
        v = t.get(key, [])
        if isinstance(v, str):
            v = [x for x in v.split(",") if x]
        if not isinstance(v, list):
            raise ProfileError(f"{where}profile {name}: {key} must be a list")
        return [str(x).strip() for x in v]
    env = t.get("env", {})
    defines = t.get("defines", {})
    if not isinstance(env, dict) or not isinstance(defines, dict):
        raise ProfileError(f"{where}profile {name}: env/defines must be tables")
    from apxtui.profile.model import Profile  # lazy: a trace reads config_files() without a profile

    return Profile(name=name, cfg_on=lst("cfg"), cfg_off=lst("cfg_off"), features=lst("features"),
                   no_default_features=bool(t.get("no_default_features", False)),
                   arch=check_arch(t.get("arch")), env={str(k): str(v) for k, v in env.items()},
                   defines={str(k): str(v) for k, v in defines.items()}, assume_host=bool(t.get("assume_host", True)))
