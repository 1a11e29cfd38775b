"""CUDA Graph capture regions as typed records (what :mod:`apxtui.analysis.capture` finds).

:class:`CaptureRegion` is one region: its lifecycle call sites (:class:`LifecycleSite`), the replaying
methods (:class:`ReplayMethod`), and once its body is analysed the launches with their captured constants
and buffers, the hazards grouped by site, the library calls (:class:`CaptureBody`) and the graph caches
keyed on it (:class:`GraphCache`).  The renderers (``report/capture_lines.py``, the Markdown / text reports,
``apxtui capture``) and the explorer read fields; ``to_dict`` is the JSON form, used only where a document
is serialised.  Each ``to_dict`` reproduces the key order the reports have always had: it depends on the
kind of record (a region whose begin is in another function, a default-stream hazard, a map-insert cache),
and the body fields of a region come in two orders, one for the trace document and one for
``apxtui capture --json`` (``audit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

#: What ``apxtui capture`` and ``apxtui kernels`` say first.
STATIC_NOTE = "static analysis of the source: not runtime validation"

if TYPE_CHECKING:
    from apxtui.analysis.hazards import ArmRef
    from apxtui.trace import Stage


def fields_dict(record: Any) -> dict[str, Any]:
    """A record's JSON form when it is its fields in order: tuples as lists, nested records by their own
    ``to_dict()`` (the records whose JSON keeps another order write their own)."""

    def plain(v: Any) -> Any:
        if isinstance(v, tuple):
            return [plain(x) for x in v]
        return v.to_dict() if hasattr(v, "to_dict") else v

    return {f.name: plain(getattr(record, f.name)) for f in fields(record)}


@dataclass(frozen=True)
class PrimitiveSite:
    """A call of a lifecycle primitive (``cudaGraphInstantiate``, ``cudaGraphLaunch``, …) below a node:
    ``at`` the project call site, ``through`` the functions from the node down to ``function``, its caller."""

    call: str
    at: str
    function: str
    through: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True)
class LifecycleSite:
    """A call in a capture region's function: a begin, an end, a body call, an instantiate or a replay.

    ``path``/``condition`` are set for ends (``normal``/``error``, the failure arm's label or ""),
    ``primitive`` for lifecycle calls (the primitives below them), ``through``/``from_end`` for an
    instantiate found inside an end call rather than called by the region's function."""

    call: str
    target: str
    at: str
    role: str | None
    path: str | None = None
    condition: str | None = None
    primitive: tuple[PrimitiveSite, ...] | None = None
    through: tuple[str, ...] | None = None
    from_end: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"call": self.call, "target": self.target, "at": self.at, "role": self.role}
        if self.path is not None:
            out.update(path=self.path, condition=self.condition)
        if self.primitive is not None:
            out["primitive"] = [p.to_dict() for p in self.primitive]
        if self.through is not None:
            out.update(through=list(self.through), from_end=self.from_end)
        return out


@dataclass(frozen=True)
class ReplayMethod:
    """A method of the type a capturing function returns (or belongs to) that launches the graph."""

    method: str
    at: str
    launches: tuple[PrimitiveSite, ...]
    type: str = ""
    how: str = ""
    status: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "at": self.at, "launches": [p.to_dict() for p in self.launches],
                "type": self.type, "how": self.how, "status": self.status}


@dataclass(frozen=True)
class GraphKeyUse:
    """The graph cache whose key fixes a frozen per-request value (so freezing it is safe)."""

    key: str
    key_type: str
    field: str
    cache_at: str
    function: str
    chain: tuple[str, ...]
    unkeyed_paths: int
    status: str

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True)
class CapturedConstant:
    """A scalar argument of a captured launch: its value is frozen into the graph.

    ``origin``/``derivation`` follow the argument back up the traced chain (``type`` None: the kernel
    definition has no parameter at this position, and nothing was followed); ``flagged`` when it derives
    from a per-request value that no graph key covers."""

    param: str
    arg: str
    status: str
    reason: str
    type: str | None = None
    origin: tuple[str, ...] = ()
    derivation: tuple[str, ...] = ()
    flagged: bool = False
    key_check: tuple[str, ...] | None = None  # why the graph keys on the path do not cover it
    in_graph_key: GraphKeyUse | None = None
    req_params: tuple[str, ...] = field(default=(), compare=False, repr=False)  # the region function's
    req_locals: tuple[str, ...] = field(default=(), compare=False, repr=False)  # …parameters/locals it reads

    def to_dict(self) -> dict[str, Any]:
        if self.type is None:
            return {"param": self.param, "arg": self.arg, "status": self.status, "reason": self.reason}
        out: dict[str, Any] = {"param": self.param, "type": self.type, "arg": self.arg,
                               "origin": list(self.origin), "derivation": list(self.derivation),
                               "flagged": self.flagged, "status": self.status, "reason": self.reason}
        if self.key_check is not None:
            out["key_check"] = list(self.key_check)
        if self.in_graph_key is not None:
            out["in_graph_key"] = self.in_graph_key.to_dict()
        return out


@dataclass(frozen=True)
class CapturedBuffer:
    """A pointer argument of a captured launch: its address is baked into the graph."""

    param: str
    type: str
    arg: str
    allocated_before_capture: bool | None
    status: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"param": self.param, "type": self.type, "arg": self.arg,
                "allocated_before_capture": self.allocated_before_capture, "status": self.status,
                "reason": self.reason}


@dataclass(frozen=True)
class CapturedLaunch:
    """A kernel launch site in a capture body (``alternative_group``/``alternatives``: one of the launches
    of an if / else if / else, one recorded per capture)."""

    kernel: str
    at: str
    arms: tuple[str, ...]
    template_args: tuple[str, ...]
    constants: tuple[CapturedConstant, ...]
    buffers: tuple[CapturedBuffer, ...]
    alternative_group: int | None = None
    alternatives: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kernel": self.kernel, "at": self.at, "arms": list(self.arms),
                               "template_args": list(self.template_args),
                               "constants": [c.to_dict() for c in self.constants],
                               "buffers": [b.to_dict() for b in self.buffers]}
        if self.alternative_group is not None:
            out.update(alternative_group=self.alternative_group, alternatives=self.alternatives)
        return out


@dataclass(frozen=True)
class WrapperNote:
    """What a body wrapper tells about a hazard's guard: it installs state the guarded function reads."""

    guard: str
    state: str
    read_in: str
    installed_by: str
    wrapper_at: str
    installed_at: str
    status: str
    detail: str
    likely_not_taken: bool

    def to_dict(self) -> dict[str, Any]:
        return {"guard": self.guard, "state": self.state, "read_in": self.read_in,
                "installed_by": self.installed_by, "wrapper_at": self.wrapper_at,
                "installed_at": self.installed_at, "status": self.status, "detail": self.detail,
                "likely_not_taken": self.likely_not_taken}


@dataclass(frozen=True)
class Hazard:
    """A host operation inside a capture body (sync, alloc, copy, memset, free, a default-stream launch),
    one per (kind, api, site) with the paths that reach it and the guards on them."""

    kind: str
    api: str
    at: str
    detail: str
    paths: int = 1
    vias: tuple[str, ...] = ()
    call_sites: tuple[str, ...] = ()
    conditional: bool = False
    guards: tuple[str, ...] = ()
    unguarded_paths: int = 0
    status: str = ""
    call_at: str = ""  # the project call site of the first path
    arms: tuple[str, ...] = ()  # the arms of the first path
    via: str = ""  # the nearest project function of the first path
    direction: str | None = None  # a copy's
    size: str | None = None
    wrapper: tuple[WrapperNote, ...] | None = None
    likely_not_taken: bool | None = None
    guard_arms: tuple[ArmRef, ...] = field(default=(), compare=False, repr=False)  # the decisive arms

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "api": self.api, "at": self.at}
        if self.kind == "default stream":
            out.update(arms=list(self.arms), call_at=self.call_at)
        else:
            out.update(call_at=self.call_at, arms=list(self.arms))
        out.update(via=self.via, detail=self.detail)
        if self.direction is not None:
            out.update(direction=self.direction, size=self.size)
        out.update(paths=self.paths, vias=list(self.vias), call_sites=list(self.call_sites),
                   conditional=self.conditional, guards=list(self.guards), unguarded_paths=self.unguarded_paths,
                   status=self.status)
        if self.wrapper is not None:
            out.update(wrapper=[w.to_dict() for w in self.wrapper], likely_not_taken=self.likely_not_taken)
        return out


@dataclass(frozen=True)
class LibraryCall:
    """A library (vendor) call site in a capture body and how many paths reach it."""

    api: str
    library: str
    at: str
    arms: tuple[str, ...]
    paths: int

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True)
class GraphCache:
    """A cache of CUDA Graphs keyed on a value (``kind``: ``build on miss``, a helper that captures on a
    miss, or ``map insert``, an insert after an instantiate)."""

    kind: str
    function: str
    at: str
    cache: str
    key: str
    key_type: str
    key_fields: tuple[str, ...]
    key_derivation: tuple[str, ...]
    status: str
    how: str
    call: str = ""  # build on miss: the helper called
    key_type_at: str = ""
    builds: tuple[str, ...] = ()  # build on miss: what the closure calls
    insert_at: str = ""  # map insert
    lookups: tuple[str, ...] = ()
    # the analysis's own (not in the reports): the function holding the cache, the variables the key fixes,
    # the lines of the closure a build-on-miss helper runs
    function_node: str = field(default="", repr=False)
    key_vars: frozenset[str] = field(default=frozenset(), repr=False)
    lines: tuple[int, int] = field(default=(0, 0), repr=False)

    def to_dict(self) -> dict[str, Any]:
        if self.kind == "map insert":
            return {"kind": self.kind, "function": self.function, "cache": self.cache, "key": self.key,
                    "key_type": self.key_type, "key_fields": list(self.key_fields),
                    "key_derivation": list(self.key_derivation), "at": self.at, "insert_at": self.insert_at,
                    "lookups": list(self.lookups), "status": self.status, "how": self.how}
        return {"kind": self.kind, "function": self.function, "call": self.call, "at": self.at,
                "cache": self.cache, "key": self.key, "key_type": self.key_type,
                "key_fields": list(self.key_fields), "key_type_at": self.key_type_at,
                "key_derivation": list(self.key_derivation), "builds": list(self.builds),
                "status": self.status, "how": self.how}


@dataclass(frozen=True)
class KeyPath:
    """A path from a caller along which a value reaches a capturing function: whether it is part of a graph
    cache's key (``cache``: the cache whose key it is, or None) and why not (``reason``)."""

    in_key: bool
    cache: GraphCache | None
    field: str  # the field of the key the value is ("" when the whole key)
    chain: tuple[str, ...]  # the argument steps from the capturing function up
    reason: str


@dataclass(frozen=True)
class CaptureBody:
    """What a region's body records: launch sites, hazards, library call sites; ``complete`` False when
    the trace below it was cut (``cut``: where)."""

    launches: tuple[CapturedLaunch, ...]
    hazards: tuple[Hazard, ...]
    library_calls: tuple[LibraryCall, ...]
    allocations_in_body: bool
    complete: bool
    cut: tuple[str, ...]

    def fields(self, audit: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"launches": [la.to_dict() for la in self.launches],
                               "hazards": [h.to_dict() for h in self.hazards],
                               "library_calls": [c.to_dict() for c in self.library_calls]}
        if audit:
            out.update(complete=self.complete, cut=list(self.cut), allocations_in_body=self.allocations_in_body)
        else:
            out.update(allocations_in_body=self.allocations_in_body, complete=self.complete, cut=list(self.cut))
        return out


@dataclass(frozen=True)
class CaptureRegion:
    """A capture begin and the ends after it among the direct calls of one function (``begin`` None: the
    region was begun in another function), with the body once analysed (``body``) and the graph caches
    keyed on it (``graph_keys``).  ``body_stages``/``wrappers`` are the analysis's own (the traced body
    calls; those taking the body as a closure, with their call sites): :meth:`public` drops them."""

    id: str
    function: str
    function_node: str
    file: str
    begin: LifecycleSite | None
    end: LifecycleSite | None  # the first normal end (else the first end)
    ends: tuple[LifecycleSite, ...]
    arms: tuple[str, ...]
    body_calls: tuple[LifecycleSite, ...]
    instantiate: tuple[LifecycleSite, ...]
    replay_after_capture: tuple[LifecycleSite, ...]
    replay: tuple[ReplayMethod, ...]
    status: str
    note: str | None = None
    body: CaptureBody | None = None
    graph_keys: tuple[GraphCache, ...] | None = None
    body_stages: tuple[Stage, ...] = field(default=(), compare=False, repr=False)
    wrappers: tuple[tuple[Stage, str], ...] = field(default=(), compare=False, repr=False)

    @property
    def failure_ends(self) -> list[LifecycleSite]:
        return [e for e in self.ends if e.path == "error"]

    @property
    def launches(self) -> tuple[CapturedLaunch, ...]:
        return self.body.launches if self.body is not None else ()

    @property
    def hazards(self) -> tuple[Hazard, ...]:
        return self.body.hazards if self.body is not None else ()

    @property
    def library_calls(self) -> tuple[LibraryCall, ...]:
        return self.body.library_calls if self.body is not None else ()

    def public(self) -> CaptureRegion:
        """The region without the analysis's own fields (small to pickle)."""
        return replace(self, body_stages=(), wrappers=())

    def to_dict(self, audit: bool = False) -> dict[str, Any]:
        """The JSON form: the trace document's (``audit``: ``apxtui capture --json``, whose body fields
        come in another order)."""
        begin = self.begin.to_dict() if self.begin is not None else None
        end = self.end.to_dict() if self.end is not None else None
        sites = {"ends": [e.to_dict() for e in self.ends], "arms": list(self.arms),
                 "body_calls": [c.to_dict() for c in self.body_calls]}
        lifecycle = {"instantiate": [c.to_dict() for c in self.instantiate],
                     "replay_after_capture": [c.to_dict() for c in self.replay_after_capture],
                     "replay": [m.to_dict() for m in self.replay]}
        out: dict[str, Any] = {"id": self.id, "function": self.function, "function_node": self.function_node,
                               "file": self.file, "begin": begin}
        if self.begin is None:  # an end whose begin is in another function
            out.update(end=end, ends=sites["ends"], arms=sites["arms"], body_calls=sites["body_calls"])
            out.update(lifecycle)
            out.update(status=self.status, note=self.note)
        else:
            out.update(arms=sites["arms"], body_calls=sites["body_calls"], ends=sites["ends"], end=end)
            if self.end is None:
                out.update(note=self.note, status=self.status)
            else:
                out["status"] = self.status
                if self.note is not None:
                    out["note"] = self.note
            out.update(lifecycle)
        if self.body is not None:
            out.update(self.body.fields(audit))
        if self.graph_keys is not None:
            out["graph_keys"] = [c.to_dict() for c in self.graph_keys]
        return out


@dataclass(frozen=True)
class BufferWrite:
    """A call before a replay, on the same branch, that copies host data to the device (a stable buffer
    written before the graph reads it)."""

    call: str
    receiver: str
    args: tuple[str, ...]
    at: str
    direction: str

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True)
class ReplaySite:
    """A call site that replays a graph (``targets``: the candidates of an ambiguous call), the graph launches
    below it and the host→device writes before it."""

    function: str
    call: str
    receiver: str
    at: str
    targets: tuple[str, ...]
    graph_launches: tuple[PrimitiveSite, ...]
    conditions: tuple[str, ...]
    loops: tuple[str, ...]
    stable_buffer_writes_before: tuple[BufferWrite, ...]

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True)
class RegionError:
    """A function whose capture regions could not be analysed (the execution map keeps going)."""

    function: str
    error: str

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True)
class CaptureAudit:
    """``apxtui capture``: every region (bodies analysed), the replay sites and the graph caches."""

    regions: tuple[CaptureRegion, ...]
    replay_sites: tuple[ReplaySite, ...]
    graph_caches: tuple[GraphCache, ...]
    static_analysis: str = STATIC_NOTE

    def to_dict(self) -> dict[str, Any]:
        return {"static_analysis": self.static_analysis, "regions": [r.to_dict(audit=True) for r in self.regions],
                "replay_sites": [s.to_dict() for s in self.replay_sites],
                "graph_caches": [c.to_dict() for c in self.graph_caches]}
