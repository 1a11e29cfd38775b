"""Profile flags on the command line and named profiles in TOML.

Named profiles live in ``$XDG_CONFIG_HOME/apxtui/profiles.toml`` and in the checkout's
``.apxtui.toml`` (the checkout's wins), as tables ``[profile.NAME]`` (or
``[profiles.NAME]``) with keys ``arch``, ``features`` (list), ``no_default_features``,
``cfg`` / ``cfg_off`` (lists), ``env`` and ``defines`` (tables), ``assume_host``.
Flags given with ``--profile`` add to the named profile.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from apxtui.inputs import MANIFEST_MAX, InputFileError, confine, parse_toml, read_limited
from apxtui.profile.buildscript import arch_number
from apxtui.profile.model import Profile


class ProfileError(ValueError):
    pass


def add_profile_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("build/run profile (default: no profile, all configurations)")
    g.add_argument("--profile", metavar="NAME", help="a named profile from profiles.toml / the checkout's .apxtui.toml")
    g.add_argument("--cfg", action="append", default=[], metavar="NAME", help="enable a cfg name (repeatable)")
    g.add_argument("--cfg-off", action="append", default=[], metavar="NAME", help="disable a cfg name (repeatable)")
    g.add_argument("--features", action="append", default=[], metavar="A,B",
                   help="enable Cargo features (crate/feat for one crate)")
    g.add_argument("--no-default-features", action="store_true", help="do not enable crates' default features")
    g.add_argument("--arch", metavar="sm_XX", help="target GPU architecture (derives build-script cfg names)")
    g.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="environment value (repeatable)")
    g.add_argument("--no-assume-host", dest="assume_host", action="store_false",
                   help="with --arch, do not take the build script's CUDA toolkit probes as true")


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


def _check_arch(arch: str | None) -> str | None:
    if arch is None:
        return None
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
    return Profile(name=name, cfg_on=lst("cfg"), cfg_off=lst("cfg_off"), features=lst("features"),
                   no_default_features=bool(t.get("no_default_features", False)),
                   arch=_check_arch(t.get("arch")), env={str(k): str(v) for k, v in env.items()},
                   defines={str(k): str(v) for k, v in defines.items()}, assume_host=bool(t.get("assume_host", True)))


def profile_from_args(args: argparse.Namespace, root: Path | None) -> Profile | None:
    """The profile the flags describe (None when no profile flag is given)."""
    base = Profile()
    if getattr(args, "profile", None):
        profiles = named_profiles(root)
        if args.profile not in profiles:
            where = ", ".join(str(f) for f in config_files(root))
            known = ", ".join(sorted(profiles)) or "none"
            raise ProfileError(f"no profile {args.profile!r} in {where} (known: {known})")
        t, f = profiles[args.profile]
        base = from_table(args.profile, t, f"{f}: ")
    base.cfg_on += [c for c in getattr(args, "cfg", []) or []]
    base.cfg_off += [c for c in getattr(args, "cfg_off", []) or []]
    for f in getattr(args, "features", []) or []:
        base.features += [x.strip() for x in f.replace(" ", ",").split(",") if x.strip()]
    if getattr(args, "no_default_features", False):
        base.no_default_features = True
    if getattr(args, "arch", None):
        base.arch = _check_arch(args.arch)
    for kv in getattr(args, "env", []) or []:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            raise ProfileError(f"--env {kv!r}: expected NAME=VALUE")
        base.env[k] = v
    if getattr(args, "assume_host", True) is False:
        base.assume_host = False
    clash = set(base.cfg_on) & set(base.cfg_off)
    if clash:
        raise ProfileError("both --cfg and --cfg-off: " + ", ".join(sorted(clash)))
    return None if base.is_empty() and base.assume_host else base


def resolve(profile: Profile | None, index) -> Any:
    """The profile bound to the index's checkout (None stays None)."""
    if profile is None:
        return None
    from apxtui.profile.model import Resolved
    from apxtui.profile.space import discover

    rp = Resolved(profile, discover(index.root, index.facts))
    rp.defs = _Defs(index)
    return rp


class _Defs:
    """``node id → Definition`` looked up on demand through ``Index.definition``."""

    def __init__(self, index):
        self.index = index

    def get(self, node: str):
        find = getattr(self.index, "definition", None)
        return find(node) if find is not None else None

    def __bool__(self) -> bool:
        return True


def resolve_from_args(args: argparse.Namespace, index) -> Any:
    """``profile_from_args`` + ``resolve``, with errors as ``apxtui.cli.UserError``."""
    from apxtui.cli import UserError

    try:
        return resolve(profile_from_args(args, Path(index.root)), index)
    except ProfileError as e:
        raise UserError(str(e)) from e
