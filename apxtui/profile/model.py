"""A build/run profile and its evaluation against a checkout's configuration space.

A profile is closed, as the compiler is: a cfg name it does not enable is off, a
feature not enabled is off.  Build-script cfg names are on/off as their emission
conditions evaluate for the profile's architecture and features; where that cannot be
decided they are *undecided* (listed) and evaluate to None unless ``--cfg``/``--cfg-off``
settles them.  Environment variables the profile does not set are unset (the code's
default applies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from apxtui.errors import CfgSyntaxError
from apxtui.profile import cfgexpr, envgate, ppexpr
from apxtui.profile.buildscript import arch_number
from apxtui.profile.space import ConfigSpace, Crate

Tri = bool | None

#: cfg options a normal (non-test, non-doc) build has off.
_BUILD_OFF = {"test", "doc", "doctest", "miri", "proc_macro", "rustfmt", "clippy"}
#: cfg keys describing the compilation target: undecided unless the profile sets them.
_TARGET_KEYS = {"target_os", "target_arch", "target_family", "target_env", "target_vendor", "target_endian",
                "target_pointer_width", "target_feature", "target_has_atomic", "panic", "unix", "windows",
                "debug_assertions", "overflow_checks", "relocation_model", "target_abi"}


@dataclass
class Profile:
    name: str = ""
    cfg_on: list[str] = field(default_factory=list)
    cfg_off: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    no_default_features: bool = False
    arch: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    defines: dict[str, str] = field(default_factory=dict)  # C/CUDA macros (TOML only)
    assume_host: bool = True

    def is_empty(self) -> bool:
        return not (self.name or self.cfg_on or self.cfg_off or self.features or self.no_default_features
                    or self.arch or self.env or self.defines)

    def summary(self) -> str:
        parts = [f"profile {self.name}" if self.name else "profile"]
        if self.arch:
            parts.append(f"arch {self.arch}")
        if self.features or self.no_default_features:
            f = ",".join(self.features) or "none"
            parts.append(f"features {f}" + (" (no defaults)" if self.no_default_features else " (+defaults)"))
        if self.cfg_on:
            parts.append("cfg " + ",".join(self.cfg_on))
        if self.cfg_off:
            parts.append("cfg-off " + ",".join(self.cfg_off))
        if self.env:
            parts.append("env " + ",".join(f"{k}={v}" for k, v in sorted(self.env.items())))
        if self.defines:
            parts.append("define " + ",".join(f"{k}={v}" for k, v in sorted(self.defines.items())))
        return ": ".join([parts[0], "; ".join(parts[1:]) or "defaults"])


@dataclass
class Derived:
    name: str
    crate: str
    value: Tri
    steps: list[str]
    assumed: list[str]


class Resolved:
    """A profile bound to a configuration space: answers cfg / #if / env-gate questions per file."""

    def __init__(self, profile: Profile, space: ConfigSpace):
        self.p = profile
        self.space = space
        self.warnings: list[str] = []
        self.defs: Any = {}  # node id → Definition, ``.get`` (set by bind.resolve; #else chains, __host__)
        self.features = self._features()
        self.derived: dict[str, dict[str, Derived]] = {}  # crate dir → name → Derived
        self.defines: dict[str, dict[str, Derived]] = {}
        self._derive()
        self.on, self.on_kv = self._split(profile.cfg_on)
        self.off, self.off_kv = self._split(profile.cfg_off)

    # -- setup ---------------------------------------------------------------------------

    @staticmethod
    def _split(items: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
        names, kv = set(), set()
        for it in items:
            try:
                o = cfgexpr.parse(it)
            except CfgSyntaxError:
                names.add(it)
                continue
            if isinstance(o, cfgexpr.Opt):
                (names.add(o.name) if o.value is None else kv.add((o.name, o.value)))
        return names, kv

    def _features(self) -> dict[str, set[str]]:
        crates = self.space.crates
        on: dict[str, set[str]] = {c.dir: set() if self.p.no_default_features else set(c.default) for c in crates}
        for f in self.p.features:
            cname, _, feat = f.rpartition("/")
            hit = False
            for c in crates:
                if cname and c.name.replace("-", "_") != cname.replace("-", "_"):
                    continue
                if feat in c.features or feat in c.optional_deps:
                    on[c.dir].add(feat)
                    hit = True
            if not hit:
                self.warnings.append(f"feature {f!r} is not declared by any crate")
        changed = True
        while changed:  # implications, within a crate and into workspace crates (`dep/feat`)
            changed = False
            for c in crates:
                for feat in list(on[c.dir]):
                    for imp in c.features.get(feat, []):
                        if imp.startswith("dep:"):
                            continue
                        if "/" in imp:
                            dep, _, sub = imp.partition("/")
                            target = self.space.crate_named(dep.rstrip("?"))
                            if target is not None and sub not in on[target.dir] and sub in target.features:
                                on[target.dir].add(sub)
                                changed = True
                        elif imp not in on[c.dir]:
                            on[c.dir].add(imp)
                            changed = True
        return on

    def _derive(self) -> None:
        for cdir, bs in self.space.scripts.items():
            crate = next(c for c in self.space.crates if c.dir == cdir)
            for em in bs.emissions:
                if em.kind == "check_cfg":
                    continue
                d = bs.decide(em, self.p.arch, self.features.get(cdir, set()), set(crate.features),
                              self.p.assume_host)
                key = em.name if em.value is None or em.kind == "define" else f'{em.name}="{em.value}"'
                table = self.defines if em.kind == "define" else self.derived
                prev = table.setdefault(cdir, {}).get(key)
                if prev is not None:  # several emission sites: OR
                    v = True if True in (prev.value, d.value) else (None if None in (prev.value, d.value) else False)
                    table[cdir][key] = Derived(key, crate.name, v, prev.steps + d.steps,
                                              list(dict.fromkeys(prev.assumed + d.assumed)))
                else:
                    table[cdir][key] = Derived(key, crate.name, d.value, d.steps, d.assumed)
                if em.kind == "cfg" and em.name == "feature" and em.value and d.value:
                    self.features.setdefault(cdir, set()).add(em.value)

    # -- questions -----------------------------------------------------------------------

    def _crate(self, file: str) -> Crate | None:
        return self.space.crate_of(file)

    def cfg_option(self, name: str, value: str | None, file: str) -> Tri:
        if value is None:
            if name in self.on:
                return True
            if name in self.off:
                return False
        else:
            if (name, value) in self.on_kv:
                return True
            if (name, value) in self.off_kv or any(k == name for k, _ in self.on_kv):
                return False
        crate = self._crate(file)
        if name == "feature" and value is not None:
            if crate is None:
                return None
            return value in self.features.get(crate.dir, set())
        if name in _BUILD_OFF and value is None:
            return False
        if name in _TARGET_KEYS:
            return None
        if crate is not None:
            key = name if value is None else f'{name}="{value}"'
            d = self.derived.get(crate.dir, {}).get(key)
            if d is not None:
                return d.value
        return False if value is None else None

    def cfg(self, pred: str, file: str) -> Tri:
        return cfgexpr.evaluate(pred, lambda n, v: self.cfg_option(n, v, file))

    def cfg_all(self, preds: list[str], file: str) -> Tri:
        vals = [self.cfg(p, file) for p in preds]
        return False if False in vals else (None if None in vals else True)

    def macro(self, name: str, file: str, device: bool | None) -> tuple[Tri, int | None]:
        if name in self.p.defines:
            v = self.p.defines[name]
            return True, int(v) if v.lstrip("-").isdigit() else None
        if name == "__CUDA_ARCH__":
            if device is False:
                return False, None
            num = arch_number(self.p.arch) if self.p.arch else None
            if device and num is not None:
                return True, num * 10
            return None, None
        if name == "__CUDACC__" and PurePosixPath(file).suffix in (".cu", ".cuh"):
            return True, None
        if name == "__cplusplus":
            return True, None
        crate = self._crate(file)
        if crate is not None:
            d = self.defines.get(crate.dir, {}).get(name)
            if d is not None:
                if d.value is False:
                    return False, None
                return d.value, None
            if any(name in t for t in self.defines.values()):
                return None, None
        return None, None

    def pp(self, text: str, file: str, device: bool | None, negated: list[str] | None = None) -> Tri:
        """An ``#if``/``#elif``/``#else`` arm: its condition and the negation of the earlier ones."""
        def look(n: str) -> tuple[Tri, int | None]:
            return self.macro(n, file, device)
        vals: list[Tri] = []
        for prev in negated or []:
            v = ppexpr.evaluate(prev, look)
            vals.append(None if v is None else not v)
        if text.strip() not in ("else", "#else"):
            vals.append(ppexpr.evaluate(text, look))
        return False if False in vals else (None if None in vals else True)

    def env_gate(self, cond: str, file: str) -> Tri:
        lang = {".rs": "rust", ".py": "python", ".pyi": "python"}.get(PurePosixPath(file).suffix, "cuda")
        env: dict[str, str | None] = dict(self.p.env)
        return envgate.evaluate(cond, env, lang, lambda pred: self.cfg(pred, file))

    # -- description ---------------------------------------------------------------------

    def undecided(self) -> list[Derived]:
        return [d for table in self.derived.values() for d in table.values()
                if d.value is None and d.name not in self.on and d.name not in self.off]

    def describe(self) -> str:
        s = self.p.summary()
        und = self.undecided()
        if und:
            s += "; undecided: " + ", ".join(sorted({d.name for d in und}))
        return s

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.p.name, "arch": self.p.arch, "cfg_on": self.p.cfg_on, "cfg_off": self.p.cfg_off,
            "features_requested": self.p.features, "no_default_features": self.p.no_default_features,
            "env": self.p.env, "defines": self.p.defines, "assume_host": self.p.assume_host,
            "features": {c.name: sorted(self.features.get(c.dir, set())) for c in self.space.crates},
            "derived_cfg": [{"name": d.name, "crate": d.crate, "value": d.value, "derivation": d.steps,
                             "assumed": d.assumed} for t in self.derived.values() for d in t.values()],
            "derived_defines": [{"name": d.name, "crate": d.crate, "value": d.value, "derivation": d.steps}
                                for t in self.defines.values() for d in t.values()],
            "undecided": sorted({d.name for d in self.undecided()}),
            "warnings": self.warnings,
            "text": self.describe(),
        }
