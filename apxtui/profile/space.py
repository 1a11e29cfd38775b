"""The configuration space of a checkout: crates and their features, build-script cfg
names and macros with the conditions that emit them, CUDA architectures mentioned,
environment variables read.  Read statically (``Cargo.toml`` via tomllib, build
scripts via tree-sitter, the rest from the index's facts)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from apxtui.errors import InputFileError
from apxtui.facts import EnvRead, FileFacts
from apxtui.inputs import confine, read_toml
from apxtui.profile import cfgexpr
from apxtui.profile.buildscript import ARCH_STR, BuildScript
from apxtui.profile.ppexpr import identifiers
from apxtui.scan import SKIP_DIRS, is_vendored

_CUDA_ARCH_CMP = re.compile(r"__CUDA_ARCH__\s*(?:[<>]=?|[!=]=)\s*(\d+)|(\d+)\s*(?:[<>]=?|[!=]=)\s*__CUDA_ARCH__")


@dataclass
class Crate:
    name: str
    dir: str  # relative, "" for the root
    manifest: str
    features: dict[str, list[str]] = field(default_factory=dict)
    default: list[str] = field(default_factory=list)
    build: str = ""  # build script, relative to the checkout
    optional_deps: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ArchMention:
    """A CUDA architecture named in the checkout (``sm_90``), where, and how (build script, ``#if``, string)."""

    arch: str
    file: str
    line: int
    how: str

    @property
    def at(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class EmitCond:
    """One condition on the way to a build-script emission (``negated``: in the else branch)."""

    at: str
    text: str
    negated: bool


@dataclass(frozen=True)
class CfgEmit:
    """A build script's ``cargo:rustc-cfg``/``-D`` emission; ``conditions`` is OR over paths, AND within."""

    at: str
    value: str | None
    conditions: tuple[tuple[EmitCond, ...], ...]

    def when(self) -> str:
        """``unconditionally`` or ``when `cond` (path:line) && … || …``."""
        if not any(self.conditions):
            return "unconditionally"
        alts = [" && ".join(("!" if c.negated else "") + f"`{c.text}` ({c.at})" for c in p) for p in self.conditions]
        return "when " + " || ".join(alts)


@dataclass(frozen=True)
class CfgEntry:
    """A cfg name (or ``name="value"``, or a C/CUDA define): its crate, declarations, emissions and uses."""

    name: str
    crate: str  # "" when only used, never emitted by a build script
    declared: tuple[str, ...]  # path:line of each ``cargo:rustc-check-cfg``
    emitted: tuple[CfgEmit, ...]
    used: int = 0  # #[cfg]/cfg! uses in the indexed sources
    first_use: str = ""  # path:line of the first use

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"crate": self.crate, "declared": list(self.declared), "emitted": [
            {"at": em.at, "value": em.value,
             "conditions": [[{"at": c.at, "text": c.text, "negated": c.negated} for c in p] for p in em.conditions]}
            for em in self.emitted]}
        if self.used:
            d["used"] = self.used
            d["first_use"] = self.first_use
        return d


@dataclass
class ConfigSpace:
    root: Path
    crates: list[Crate]
    scripts: dict[str, BuildScript]  # crate dir → build script
    cfg_uses: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # name → (file, line)
    archs: list[ArchMention] = field(default_factory=list)
    env: dict[str, list[EnvRead]] = field(default_factory=dict)  # variable → its reads, in file order
    pp_macros: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, why it was not read)

    def crate_of(self, rel: str) -> Crate | None:
        best: Crate | None = None
        p = PurePosixPath(rel)
        for c in self.crates:
            d = PurePosixPath(c.dir) if c.dir else None
            if (d is None or d in p.parents) and (best is None or len(c.dir) > len(best.dir)):
                best = c
        return best

    def crate_named(self, name: str) -> Crate | None:
        key = name.replace("-", "_")
        return next((c for c in self.crates if c.name.replace("-", "_") == key), None)

    def cfg_entries(self, kind: str = "cfg") -> dict[str, CfgEntry]:
        """``kind`` ``cfg``: cfg names emitted by a build script or used in the sources; ``define``: C/CUDA
        macros a build script passes.  In emission order (first crate wins), then first use."""
        acc: dict[str, tuple[str, list[str], list[CfgEmit]]] = {}
        for cdir, bs in self.scripts.items():
            crate = next(c.name for c in self.crates if c.dir == cdir)
            for em in bs.emissions:
                if (em.kind == "define") != (kind == "define"):
                    continue
                name = em.name if kind == "define" or em.value is None else f'{em.name}="{em.value}"'
                _crate, declared, emitted = acc.setdefault(name, (crate, [], []))
                if em.kind == "check_cfg":
                    declared.append(f"{em.file}:{em.line}")
                else:
                    emitted.append(CfgEmit(f"{em.file}:{em.line}", em.value, tuple(
                        tuple(EmitCond(f"{c.file}:{c.line}", c.text, not c.positive) for c in p) for p in em.paths)))
        out = {name: CfgEntry(name, crate, tuple(d), tuple(e)) for name, (crate, d, e) in acc.items()}
        if kind == "define":
            return out
        for name, uses in self.cfg_uses.items():
            ent = out.get(name) or CfgEntry(name, "", (), ())
            out[name] = replace(ent, used=len(uses), first_use=f"{uses[0][0]}:{uses[0][1]}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``apxtui config --json`` (after its header)."""
        return {
            "crates": [{"name": c.name, "dir": c.dir, "manifest": c.manifest, "default": c.default,
                        "features": c.features, "build": c.build} for c in self.crates],
            "cfg": {k: e.to_dict() for k, e in self.cfg_entries("cfg").items()},
            "archs": [{"arch": a.arch, "at": a.at, "how": a.how} for a in self.archs],
            "env": {k: [{"at": f"{r.file}:{r.line}", "caller": r.caller, "default": r.default, "text": r.text}
                        for r in v] for k, v in self.env.items()},
            "defines": {k: e.to_dict() for k, e in self.cfg_entries("define").items()},
            "problems": [{"file": f, "problem": m} for f, m in self.problems],
            "pp_macros": {k: [f"{f}:{ln}" for f, ln in v[:5]] + ([f"… {len(v) - 5} more"] if len(v) > 5 else [])
                          for k, v in self.pp_macros.items()},
        }


def find_crates(root: Path, problems: list[tuple[str, str]] | None = None) -> list[Crate]:
    """Every crate under ``root`` (its ``Cargo.toml``); manifests that cannot be used go to ``problems``."""
    problems = [] if problems is None else problems
    crates: list[Crate] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                             and not is_vendored(f"{rel_dir}/{d}".lstrip("/")))
        if "Cargo.toml" not in filenames:
            continue
        manifest = f"{rel_dir}/Cargo.toml".lstrip("/")
        try:
            data = read_toml(root, manifest)
        except InputFileError as e:
            problems.append((manifest, str(e).removeprefix(f"{manifest}: ")))
            continue
        pkg = data.get("package")
        if not isinstance(pkg, dict):
            continue
        feats = {k: [str(x) for x in v] for k, v in (data.get("features") or {}).items() if isinstance(v, list)}
        default = feats.pop("default", [])
        build = pkg.get("build")
        if build is False:
            script = ""
        elif isinstance(build, str):
            try:  # a build script outside the checkout is not read
                script = confine(root, build, rel_dir).relative_to(root).as_posix()
            except (InputFileError, ValueError) as e:
                problems.append((manifest, f"build = {build!r}: {str(e).removeprefix(f'{build}: ')}"))
                script = ""
        else:
            script = f"{rel_dir}/build.rs".lstrip("/") if (Path(dirpath) / "build.rs").is_file() else ""
        optional = [k for k, v in (data.get("dependencies") or {}).items() if isinstance(v, dict) and v.get("optional")]
        crates.append(Crate(str(pkg.get("name", rel_dir)), rel_dir, manifest, feats, list(default), script, optional))
    return crates


def discover(root: str | Path, facts: Mapping[str, FileFacts] | None = None) -> ConfigSpace:
    root = Path(root).resolve()
    problems: list[tuple[str, str]] = []
    crates = find_crates(root, problems)
    scripts = {c.dir: BuildScript(root, c.build, facts) for c in crates if c.build and (root / c.build).is_file()}
    for bs in scripts.values():
        problems.extend(bs.problems)
    space = ConfigSpace(root, crates, scripts, problems=problems)
    for bs in scripts.values():
        for f, ln, a in bs.arch_mentions:
            space.archs.append(ArchMention(a, f, ln, "build script"))
    for rel, ff in sorted((facts or {}).items()):
        _from_facts(space, rel, ff)
    first: dict[tuple[str, str, int], ArchMention] = {}
    for arch in space.archs:
        first.setdefault((arch.arch, arch.file, arch.line), arch)
    space.archs = list(first.values())
    return space


def _from_facts(space: ConfigSpace, rel: str, ff: FileFacts) -> None:
    if is_vendored(rel):
        for e in ff.env_reads:
            space.env.setdefault(e.name, []).append(e)
        return  # vendored headers' #if arch guards and macros are not this checkout's configuration
    cfg_texts: list[tuple[str, int]] = []
    pp_texts: list[tuple[str, int]] = []
    for d in ff.defs:
        cfg_texts += [(c, d.line) for c in d.cfg]
        pp_texts += [(c.text, c.line) for c in d.pp]
    for c in ff.calls:
        for x in c.contexts:
            if x.kind == "cfg":
                cfg_texts.append((x.text, x.line))
            elif x.kind == "pp_if":
                pp_texts.append((x.text, x.line))
            elif x.kind in ("if", "else") and "cfg!(" in x.text:
                cfg_texts += [(m, x.line) for m in re.findall(r"cfg!\((.*?)\)", x.text)]
    for text, ln in dict.fromkeys(cfg_texts):
        for o in cfgexpr.options(text):
            name = o.name if o.value is None else f'{o.name}="{o.value}"'
            space.cfg_uses.setdefault(name, []).append((rel, ln))
    for text, ln in dict.fromkeys(pp_texts):
        for m in _CUDA_ARCH_CMP.finditer(text):
            num = int(m.group(1) or m.group(2))
            space.archs.append(ArchMention(f"sm_{num // 10}", rel, ln, f"#if {text}"))
        for ident in identifiers(text):
            space.pp_macros.setdefault(ident, []).append((rel, ln))
    for s in ff.strings:
        for m in ARCH_STR.finditer(str(s.get("text", ""))):
            space.archs.append(ArchMention(m.group(0), rel, int(s.get("line", 0)), "string"))
    for e in ff.env_reads:
        space.env.setdefault(e.name, []).append(e)
