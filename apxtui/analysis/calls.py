"""Call classes as data: ``queries/calls.toml`` loaded (user-overridable like ``queries/*.scm``).

:func:`call_rules` reads the first ``calls.toml`` found in :func:`apxtui.parse.languages.query_dirs`;
:meth:`CallRules.classify` gives the :class:`~apxtui.vocab.CallClass` of one traced stage.  Only calls
with no definition in the checkout are classified by name; a function the project defines is
``CODE`` (followed by the map, never taken for a vendor call because of its name).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from apxtui.parse.languages import query_dirs
from apxtui.trace import Via
from apxtui.vocab import CallClass, EdgeKind, NodeKind

CALLS_FILE = "calls.toml"


class CallsFileError(ValueError):
    """calls.toml is unreadable or malformed (the message names the file and the key)."""


@dataclass(frozen=True)
class Classified:
    cls: CallClass
    how: str  # "kernel launch", "calls.toml memory: cudaMalloc", "project function", …


@dataclass
class _Class:
    names: frozenset[str]
    vendor_names: frozenset[str]
    patterns: list[re.Pattern[str]]
    vendor_prefixes: tuple[str, ...] = ()  # a vendor API whose qualified name starts so (`thrust::`)


@dataclass
class CallRules:
    """The parsed calls.toml: classes in match order, first-call guards, closure kinds, model phases."""

    path: Path
    order: list[CallClass]
    classes: dict[CallClass, _Class]
    first_call: dict[str, list[re.Pattern[str]]] = field(default_factory=dict)
    cache_helpers: list[str] = field(default_factory=list)
    closure_loops: frozenset[str] = frozenset()
    model_phases: dict[str, list[str]] = field(default_factory=dict)
    error_values: list[re.Pattern[str]] = field(default_factory=list)
    families: dict[str, frozenset[str]] = field(default_factory=dict)  # "alloc" → names, "capture_begin" → …

    def classify_name(self, name: str, vendor: bool) -> Classified | None:
        """Class of an undefined call by its bare name (None: no class matches)."""
        for c in self.order:
            rule = self.classes[c]
            if name in rule.names or vendor and name in rule.vendor_names:
                return Classified(c, f"{self.path.name} {c.value}: {name}")
            for p in rule.patterns:
                if p.search(name):
                    return Classified(c, f"{self.path.name} {c.value}: /{p.pattern}/")
        return None

    def classify_prefix(self, qualname: str) -> Classified | None:
        """Class of a vendor API by its qualified name's prefix (``thrust::count`` is library work,
        whatever its bare name says)."""
        for c in self.order:
            hit = next((p for p in self.classes[c].vendor_prefixes if qualname.startswith(p)), None)
            if hit is not None:
                return Classified(c, f"{self.path.name} {c.value}: {hit}*")
        return None

    def classify(self, kind: str, qualname: str, via_kind: str, defined: bool) -> Classified:
        """Class of one reached call: ``kind`` the node kind, ``via_kind`` the edge kind reaching it,
        ``defined`` whether the checkout defines it (an extern declaration with a definition counts)."""
        if kind == NodeKind.KERNEL and via_kind != EdgeKind.CALL:
            return Classified(CallClass.DEVICE, "kernel launch")
        # a vendor edge to a definition is a project definition that won over the vendor name table
        vendor = kind == NodeKind.VENDOR_API or (via_kind == EdgeKind.VENDOR and not defined)
        if defined and not vendor:
            return Classified(CallClass.CODE, "a function the project defines")
        name = bare_name(qualname)
        got = self.classify_prefix(qualname) if vendor else None
        got = got or self.classify_name(name, vendor)
        if got is not None:
            return got
        if vendor:
            return Classified(CallClass.LIBRARY, f"vendor API not classified in {self.path.name}: "
                                                 "counted as a library call")
        return Classified(CallClass.HOST, f"no definition in the checkout and no class in {self.path.name}")

    def first_call_condition(self, text: str) -> bool:
        return any(p.search(text) for p in self.first_call.get("conditions", []))

    def hit_condition(self, text: str) -> bool:
        return any(p.search(text) for p in self.first_call.get("hit_conditions", []))

    def miss_arm(self, subject: str, label: str) -> bool:
        return any(p.search(subject) for p in self.first_call.get("lookup_subjects", [])) and \
            any(p.search(label.strip()) for p in self.first_call.get("miss_arms", []))

    def family(self, name: str) -> str | None:
        """The family (``alloc``, ``copy``, ``capture_begin``, …) of a bare call name, or None."""
        return next((f for f, names in self.families.items() if name in names), None)

    def is_error_exit(self, value: str) -> bool:
        """Does ``return VALUE`` leave on an error path (not followed by the map)?"""
        return any(p.search(value.strip()) for p in self.error_values)

    def is_cache_helper(self, callee: str) -> bool:
        name = bare_name(callee).lower()
        return any(h in name for h in self.cache_helpers)

    def model_phase(self, text: str) -> str:
        """The model phase a function name / loop header names (``prefill``, ``decode``, …), or ""."""
        low = text.lower()
        for phase, pat in self._phase_patterns().items():
            if pat.search(low):
                return phase
        return ""

    def _phase_patterns(self) -> dict[str, re.Pattern[str]]:
        if not hasattr(self, "_phase_re"):
            self._phase_re = {p: re.compile("(^|[^a-z])(" + "|".join(re.escape(w) for w in ws) + ")")
                              for p, ws in self.model_phases.items() if ws}
        return self._phase_re


def bare_name(qualname: str) -> str:
    """``cudarc::driver::sys::cuStreamBeginCapture_v2`` → ``cuStreamBeginCapture``."""
    name = re.split(r"::|\.", qualname or "")[-1] or qualname or ""
    return re.sub(r"_v\d+$", "", name)


def calls_path() -> Path:
    for d in query_dirs():
        p = d / CALLS_FILE
        if p.is_file():
            return p
    raise CallsFileError(f"no {CALLS_FILE} in any of: " + ", ".join(str(d) for d in query_dirs()))


def _strings(data: dict[str, Any], key: str, where: str) -> list[str]:
    v = data.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise CallsFileError(f"{where}: `{key}` must be a list of strings")
    return v


def _regexes(data: dict[str, Any], key: str, where: str) -> list[re.Pattern[str]]:
    out = []
    for x in _strings(data, key, where):
        try:
            out.append(re.compile(x))
        except re.error as e:
            raise CallsFileError(f"{where}: `{key}`: invalid regular expression {x!r}: {e}") from None
    return out


def parse_rules(path: Path, text: str) -> CallRules:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CallsFileError(f"{path}: {e}") from None
    order_names = _strings(data, "order", str(path))
    try:
        order = [CallClass(x) for x in order_names]
    except ValueError as e:
        raise CallsFileError(f"{path}: `order`: {e} (classes: "
                             + ", ".join(c.value for c in CallClass if c not in (CallClass.DEVICE, CallClass.CODE))
                             + ")") from None
    tables = data.get("classes", {})
    classes: dict[CallClass, _Class] = {}
    for c in order:
        t = tables.get(c.value, {})
        where = f"{path} [classes.{c.value}]"
        if not isinstance(t, dict):
            raise CallsFileError(f"{where}: must be a table")
        classes[c] = _Class(frozenset(_strings(t, "names", where)), frozenset(_strings(t, "vendor_names", where)),
                            _regexes(t, "patterns", where), tuple(_strings(t, "vendor_prefixes", where)))
    fc = data.get("first_call", {})
    where = f"{path} [first_call]"
    first = {k: _regexes(fc, k, where) for k in ("conditions", "hit_conditions", "miss_arms", "lookup_subjects")}
    phases = data.get("model_phases", {})
    fam = data.get("families", {})
    return CallRules(path, order, classes, first, [h.lower() for h in _strings(fc, "cache_helpers", where)],
                     frozenset(_strings(data.get("closures", {}), "loops", f"{path} [closures]")),
                     {k: _strings(phases, k, f"{path} [model_phases]") for k in phases},
                     _regexes(data.get("exits", {}), "error_values", f"{path} [exits]"),
                     {k: frozenset(_strings(fam, k, f"{path} [families]")) for k in fam})


@cache
def call_rules() -> CallRules:
    """The active calls.toml (cached for the process)."""
    p = calls_path()
    try:
        text = p.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CallsFileError(f"{p}: {e}") from None
    return parse_rules(p, text)


# -- guards that make work run on a first call only --------------------------------------------------


def first_call_arm(rules: CallRules, construct: str, subject: str, label: str, kind: str, implicit: bool) -> bool:
    """Is this dispatch arm the miss of a lazy initialisation (``handle == nullptr``, ``it == m.end()``,
    ``None`` of ``cache.get(k)``, the ``else`` of ``if let Some(x) = cache.get(k)``)?"""
    if implicit:
        return False
    if construct == "match":
        return rules.miss_arm(subject, label)
    if kind == "else":
        negated = label.removeprefix("else (not: ").removesuffix(")")
        return bool(negated) and any(rules.hit_condition(x) for x in negated.split("; "))
    return kind == "if" and rules.first_call_condition(label)


def closure_receiver(via: Via, siblings: list[Via]) -> Via | None:
    """The sibling call whose argument is the closure a call sits in (``cached_or_build(k, || build())``
    for ``build``): the edges (``via``) of the calls of one function."""
    text = via.text
    line = via.line
    for header in via.closures:
        for sib in siblings:
            if sib is via or sib.line > line:
                continue
            for a in sib.args:
                if a.lstrip().startswith(header.strip()[:2]) and (not text or text in a):
                    return sib
    return None


def cache_miss_closure(rules: CallRules, via: Via, siblings: list[Via]) -> str:
    """Why a call runs on a cache miss only (it sits in a closure passed to a cache helper), or ""."""
    recv = closure_receiver(via, siblings)
    if recv is None:
        return ""
    name = bare_name(recv.callee)
    if not rules.is_cache_helper(name):
        return ""
    return f"closure passed to `{name}` at {recv.at} (runs on a cache miss)"
