"""The build/run profile flags (``--profile``, ``--cfg``, ``--arch`` …) shared by ``trace``, ``index``,
``config`` and the explorer; named profiles are read by :mod:`apxtui.profile.named`.
Flags given with ``--profile`` add to the named profile."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from apxtui.errors import ProfileError, UserError

if TYPE_CHECKING:
    from apxtui.index.build import Index
    from apxtui.profile.model import Profile, Resolved


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


def profile_from_args(args: argparse.Namespace, root: Path | None) -> Profile | None:
    """The profile the flags describe (None when no profile flag is given); raises ProfileError."""
    if not any(getattr(args, k, None) for k in ("profile", "cfg", "cfg_off", "features", "no_default_features",
                                                 "arch", "env")) and getattr(args, "assume_host", True) is not False:
        return None  # no profile flag: nothing to read or evaluate
    from apxtui.profile.model import Profile  # lazy: start-up (the evaluator, with a profile flag only)
    from apxtui.profile.named import check_arch, config_files, from_table, named_profiles  # lazy: start-up

    base = Profile()
    if getattr(args, "profile", None):
        profiles = named_profiles(root)
        if args.profile not in profiles:
            where = ", ".join(str(f) for f in config_files(root))
            known = ", ".join(sorted(profiles)) or "none"
            raise ProfileError(f"no profile {args.profile!r} in {where} (known: {known})")
        t, f = profiles[args.profile]
        base = from_table(args.profile, t, f"{f}: ")
    base.cfg_on += list(getattr(args, "cfg", []) or [])
    base.cfg_off += list(getattr(args, "cfg_off", []) or [])
    for f in getattr(args, "features", []) or []:
        base.features += [x.strip() for x in f.replace(" ", ",").split(",") if x.strip()]
    if getattr(args, "no_default_features", False):
        base.no_default_features = True
    if getattr(args, "arch", None):
        base.arch = check_arch(args.arch)
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


def resolve_from_args(args: argparse.Namespace, index: Index) -> Resolved | None:
    """``profile_from_args`` + ``resolve``, with errors as ``UserError``."""
    try:
        profile = profile_from_args(args, Path(index.root))
        if profile is None:
            return None
        from apxtui.profile.bind import resolve  # lazy: start-up (the evaluator, with a profile flag only)

        return resolve(profile, index)
    except ProfileError as e:
        raise UserError(str(e)) from e
