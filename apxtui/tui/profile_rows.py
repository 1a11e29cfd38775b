"""Screen 5's model without Textual: the configuration space as rows, and profile edits.

A row is one thing a profile can set: the target architecture, a cfg name, a Cargo
feature, an environment value.  Its ``state`` says what the active profile makes of it
(``all configurations`` with no profile); ``detail`` is the evidence with path:line.
Edits return a new :class:`Profile` (the session binds and re-traces).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from apxtui.profile.model import Profile, Resolved
from apxtui.profile.space import ConfigSpace

NO_PROFILE_STATE = "all configurations"
UNDECIDED_WHY = ("undecided under this profile: its #[cfg] alternatives stay dispatch points until --cfg/--cfg-off "
                 "(space here) settles it")


@dataclass
class Row:
    kind: str  # arch | cfg | feature | env
    name: str  # sm_90 · cfg name (or feature="x") · crate/feature · env var
    state: str
    where: str  # short: first path:line (and a count)
    detail: list[str] = field(default_factory=list)
    undecided: bool = False


def _where(locs: list[str]) -> str:
    if not locs:
        return ""
    return locs[0] + (f" (+{len(locs) - 1})" if len(locs) > 1 else "")


def _crate_dir(space: ConfigSpace, crate_name: str) -> str | None:
    c = space.crate_named(crate_name) if crate_name else None
    return c.dir if c is not None else None


def cfg_state(rp: Resolved | None, name: str, crate: str, file: str, space: ConfigSpace) -> tuple[str, list[str], bool]:
    """(state, derivation lines, undecided) of cfg ``name`` under ``rp``."""
    if rp is None:
        return NO_PROFILE_STATE, [], False
    key = name
    bare = name if "=" not in name else None
    if bare and bare in rp.on or key in rp.p.cfg_on:
        return "on (--cfg)", ["set on by the profile (--cfg)"], False
    if bare and bare in rp.off or key in rp.p.cfg_off:
        return "off (--cfg-off)", ["set off by the profile (--cfg-off)"], False
    cdir = _crate_dir(space, crate)
    d = rp.derived.get(cdir, {}).get(key) if cdir is not None else None
    if d is not None:
        steps = list(d.steps) + [f"assumed: {a}" for a in d.assumed]
        if d.value is None:
            return "UNDECIDED", [UNDECIDED_WHY, *steps], True
        return ("on" if d.value else "off") + " (derived)", ["derived from the build script:", *steps], False
    opt, _, value = name.partition("=")
    v = rp.cfg_option(opt, value.strip('"') if value else None, file)
    if v is None:
        return "UNDECIDED", [UNDECIDED_WHY, "a target/compiler option the profile does not set"], True
    if v:
        return "on", [], False
    if opt in ("test", "doc", "doctest", "miri"):
        return "off (normal build)", ["off in a normal (non-test, non-doc) build"], False
    return "off (not enabled)", ["not enabled by the profile: a profile is closed, as the compiler is"], False


def rows(space: ConfigSpace, rp: Resolved | None) -> list[Row]:
    """Every settable thing of the checkout, with its state under ``rp`` (None: no profile)."""
    out: list[Row] = []
    target = rp.p.arch if rp is not None else None
    by_arch: dict[str, list[str]] = {}
    for a in space.archs:
        by_arch.setdefault(a.arch, []).append(f"{a.at} ({a.how[:60]})")
    for arch, locs in sorted(by_arch.items(), key=lambda kv: (len(kv[0]), kv[0])):
        state = NO_PROFILE_STATE if rp is None else ("target" if arch == target else "—")
        out.append(
            Row("arch", arch, state, _where([x.split(" ", 1)[0] for x in locs]), [f"mentioned at {x}" for x in locs])
        )
    if target and target not in by_arch:
        out.insert(0, Row("arch", target, "target", "", ["given by the profile; not mentioned in the checkout"]))
    declared_features = {f for c in space.crates for f in c.features}
    for name, e in sorted(space.cfg_entries().items()):
        if name.startswith("feature=") and name.partition("=")[2].strip('"') in declared_features:
            continue  # a Cargo feature: listed below, per crate
        detail = [f"declared at {x}" for x in e.declared]
        detail += [f"emitted at {em.at} {em.when()}" for em in e.emitted]
        if e.used:
            detail.append(f"used {e.used}× (first {e.first_use})")
        file = (e.first_use or (e.emitted[0].at if e.emitted else "")).rpartition(":")[0]
        state, steps, und = cfg_state(rp, name, e.crate, file, space)
        detail = [*steps, *detail]
        where = e.emitted[0].at if e.emitted else (e.first_use or _where(list(e.declared)))
        out.append(Row("cfg", name, state, where, detail, und))
    for c in space.crates:
        on = rp.features.get(c.dir, set()) if rp is not None else set()
        for feat, implies in sorted(c.features.items()):
            dflt = feat in c.default
            if rp is None:
                state = NO_PROFILE_STATE
            else:
                state = ("on" if feat in on else "off") + (
                    " (default)" if dflt and not rp.p.no_default_features else ""
                )
            detail = [f"declared in {c.manifest}"] + ([f"implies {', '.join(implies)}"] if implies else [])
            detail += ["on by default"] if dflt else []
            out.append(Row("feature", f"{c.name}/{feat}", state, c.manifest, detail))
    for name, reads in sorted(space.env.items()):
        defaults = sorted({r.default for r in reads if r.default})
        if rp is None:
            state = NO_PROFILE_STATE
        elif name in rp.p.env:
            state = f"= {rp.p.env[name]!r}"
        else:
            state = "unset" + (" (code default)" if defaults else "")
        detail = [f"read at {r.file}:{r.line}" + (f" in {r.caller}" if r.caller else "") for r in reads[:12]]
        detail += [f"default/use: {d}" for d in defaults]
        out.append(Row("env", name, state, _where([f"{r.file}:{r.line}" for r in reads]), detail))
    return out


# -- edits ---------------------------------------------------------------------------------


def _base(p: Profile | None) -> Profile:
    return copy.deepcopy(p) if p is not None else Profile()


def _settle(p: Profile) -> Profile | None:
    return None if p.is_empty() and p.assume_host else p


def toggle(p: Profile | None, row: Row) -> Profile | None:
    """``space`` on a row: cfg not set → on → off → not set; feature on ↔ off; arch target ↔ none."""
    q = _base(p)
    if row.kind == "cfg":
        if row.name in q.cfg_on:
            q.cfg_on.remove(row.name)
            q.cfg_off.append(row.name)
        elif row.name in q.cfg_off:
            q.cfg_off.remove(row.name)
        else:
            q.cfg_on.append(row.name)
    elif row.kind == "feature":
        if row.name in q.features:
            q.features.remove(row.name)
        else:
            q.features.append(row.name)
    elif row.kind == "arch":
        q.arch = None if q.arch == row.name else row.name
    elif row.kind == "env":
        q.env.pop(row.name, None)
    return _settle(q)


def set_arch(p: Profile | None, arch: str | None) -> Profile | None:
    q = _base(p)
    q.arch = arch or None
    return _settle(q)


def set_env(p: Profile | None, name: str, value: str | None) -> Profile | None:
    """``value`` None unsets the variable (the code's default applies)."""
    q = _base(p)
    if value is None:
        q.env.pop(name, None)
    else:
        q.env[name] = value
    return _settle(q)


def toggle_default_features(p: Profile | None) -> Profile | None:
    q = _base(p)
    q.no_default_features = not q.no_default_features
    return _settle(q)
