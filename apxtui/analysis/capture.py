"""CUDA Graph capture regions over a trace tree: body, captured constants, hazards, caches, replays.

A region is a begin-role call and the end-role calls after it among the direct calls of
one function (same branch): every end is kept, those on a failure arm labelled ``error``;
its body is every call between the begin and the first normal end, and what they reach.
Instantiation and replay are found through helper functions (:mod:`apxtui.analysis.lifecycle`).
For each kernel launch in the body, scalar arguments are captured constants (followed back
up the traced chain to their origin: a per-request parameter, a loop variable, a struct
field or a literal); pointer arguments are device buffers.  A per-request value that is
part of a graph key (:mod:`apxtui.analysis.graphkeys`) is safe by construction.  Hazards
are grouped by site with their guards (:mod:`apxtui.analysis.hazards`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from apxtui.analysis import types as ty
from apxtui.analysis.capturefacts import (
    CaptureBody,
    CapturedBuffer,
    CapturedConstant,
    CapturedLaunch,
    CaptureRegion,
    GraphCache,
    GraphKeyUse,
    LibraryCall,
    LifecycleSite,
    PrimitiveSite,
    ReplayMethod,
)
from apxtui.analysis.dtypes import is_library_gemm
from apxtui.analysis.evidence import EXACT, HEURISTIC, UNKNOWN, identifiers, loc
from apxtui.analysis.graphkeys import GraphKeys, graph_keys
from apxtui.analysis.hazards import ArmRef, Occurrence, wrapper_notes
from apxtui.analysis.hazards import group as hazard_group
from apxtui.analysis.hostops import HostOp, Roles, api_name, host_op
from apxtui.analysis.lifecycle import holder_type, is_error_path, primitive_sites, replay_methods
from apxtui.analysis.overloads import best_candidates
from apxtui.trace import Dispatch, Stage
from apxtui.vocab import EdgeKind, Resolution

_DEFAULT_STREAM = {"0", "nullptr", "NULL", "cudaStreamLegacy", "cudaStreamPerThread", "0x0"}
_PER_REQUEST_HINT = re.compile(r"pos|position|seq|len|step|token|offset|start|idx|index|batch|num", re.I)
MAX_HOPS = 12
_CLOSURE_ARG = re.compile(r"^\s*(?:move\s+)?\|")


def _via(path: tuple[Stage, ...]) -> str:
    """The nearest Rust/Python function above the last stage of a path (else the nearest C/C++ one)."""
    up = list(reversed(path[:-1]))
    return next((p.qualname for p in up if p.kind in ("rust_fn", "python_fn")),
                next((p.qualname for p in up if p.kind in ("host_fn", "abi_fn")), ""))


def _children_stages(items: list[Stage | Dispatch],
                     arms: tuple[ArmRef, ...] = ()) -> Iterator[tuple[Stage, tuple[ArmRef, ...]]]:
    """Direct call stages of a function (through its dispatch arms), with the arms taken."""
    for it in items:
        if isinstance(it, Stage):
            yield it, arms
        else:
            live = tuple(a.index for a in it.arms if a.selected is not False)
            for a in it.arms:
                if a.selected is False:
                    continue
                yield from _children_stages(a.children, (*arms, ArmRef(a.label, it.key, a.index, it.construct, live)))


def _conds(st: Stage) -> list[tuple[str, int]]:
    return [(c.group, c.arm) for c in st.via.conditions] if st.via else []


def _line(st: Stage) -> int:
    return st.via.line if st.via else 0


def _site_key(st: Stage) -> str:
    """The call site of a stage (the candidates of one ambiguous call share it)."""
    v = st.via
    if v is None:
        return ":0:"
    return v.site or f"{v.file}:{v.line}:{v.callee}"


def labels(arms: tuple[ArmRef, ...]) -> list[str]:
    return [a.label for a in arms]


def _branches(arms: tuple[ArmRef, ...]) -> tuple[ArmRef, ...]:
    """The branch arms of a path (the candidates of an ambiguous call are not branches)."""
    return tuple(a for a in arms if a.construct != "candidates")


def subtree(st: Stage, path: tuple[Stage, ...] = (),
            arms: tuple[ArmRef, ...] = ()) -> Iterator[tuple[Stage, tuple[Stage, ...], tuple[ArmRef, ...]]]:
    """(stage, path from the region's body call to it, arms taken) over the selected/shown arms."""
    path = (*path, st)
    yield st, path, arms
    if st.cut:
        return
    for child, a in _children_stages(st.children):
        yield from subtree(child, path, (*arms, *a))


class CaptureAnalysis:
    def __init__(self, index: Any):
        self.index = index
        self.g = index.graph
        self.roles = Roles(self.g)
        self._req_params: set[str] = set()
        self._req_locals: set[str] = set()

    # -- regions ---------------------------------------------------------------------------

    def regions_in(self, fn: Stage) -> list[CaptureRegion]:
        """Capture regions among the direct calls of one traced function stage.

        Every end after a begin is kept (``ends``), the ones on a failure arm (``Err(error) =>``,
        ``status != cudaSuccess``) labelled ``error``; the region's ``end`` is the first normal
        one and its body the calls between, failure arms excluded.
        """
        calls = list(_children_stages(fn.children))
        roles = [(c, a, self.roles.role(c.node)) for c, a in calls]
        out = []
        begins = [(c, a) for c, a, r in roles if r == "begin"]
        ends = [(c, a) for c, a, r in roles if r == "end"]
        for b, barms in begins:
            bl, bc, nb = _line(b), _conds(b), len(_branches(barms))

            def inside(c: Stage, bc: list[tuple[str, int]] = bc) -> bool:  # same branch as the begin
                return _conds(c)[: len(bc)] == bc

            end_list: dict[str, LifecycleSite] = {}
            end_stage: dict[str, Stage] = {}
            for e, ea in ends:
                if _line(e) <= bl or not inside(e):
                    continue
                site = self._site(e)
                if site.at in end_list:
                    continue
                err = is_error_path(labels(_branches(ea)[nb:])
                                    + [c.text for c in (e.via.conditions if e.via else ())[len(bc):]])
                end_list[site.at] = replace(site, path="error" if err else "normal", condition=err,
                                            primitive=self._prims(e, "end"))
                end_stage[site.at] = e
            region_ends = tuple(end_list.values())
            normal = [x for x in region_ends if x.path == "normal"]
            chosen = normal[0] if normal else (region_ends[0] if region_ends else None)
            note: str | None = None
            if chosen is None:
                note = f"capture begun in {fn.qualname} and not ended there: the end is in another function"
                status = HEURISTIC
                el = 10**9
            else:
                status = EXACT if normal else HEURISTIC
                if not normal:
                    note = f"only a failure-path end ({chosen.condition}) in {fn.qualname}"
                el = int(chosen.at.rsplit(":", 1)[-1] or 0)
            lifecycle_sites = {_site_key(c) for c, _a, r in roles if r}
            body = [c for c, a, r in roles if bl < _line(c) < el and r is None and inside(c)
                    and _site_key(c) not in lifecycle_sites and not is_error_path(labels(_branches(a)[nb:]))]
            after = [(c, r) for c, _a, r in roles if _line(c) > el and r in ("instantiate", "replay") and inside(c)]
            inst = _dedupe([replace(self._site(c), primitive=self._prims(c, "instantiate"))
                            for c, r in after if r == "instantiate"])
            for es in [x for x in region_ends if x.path == "normal"] + [x for x in region_ends if x.path == "error"]:
                for p in primitive_sites(self.g, end_stage[es.at].node, "instantiate"):
                    if all(p.at != x.at for x in inst):
                        inst.append(LifecycleSite(p.call, p.call, p.at, "instantiate", through=p.through,
                                                  from_end=es.at))
            out.append(CaptureRegion(
                id=f"{fn.qualname}@{b.via.file if b.via else ''}:{bl}", function=fn.qualname, function_node=fn.node,
                file=fn.file, begin=replace(self._site(b), primitive=self._prims(b, "begin")), end=chosen,
                ends=region_ends, arms=tuple(labels(barms)), body_calls=tuple(self._site(c) for c in body),
                instantiate=tuple(inst),
                replay_after_capture=tuple(_dedupe([replace(self._site(c), primitive=self._prims(c, "replay"))
                                                    for c, r in after if r == "replay"])),
                replay=self._holder_replays(fn), status=status, note=note, body_stages=tuple(body),
                wrappers=tuple((c, c.call_at) for c in body
                               if c.via is not None and any(_CLOSURE_ARG.match(x) for x in c.via.args))))
        if ends and not begins:
            for e, ea in ends:
                site = self._site(e)
                out.append(CaptureRegion(
                    id=f"{fn.qualname}@{site.at}", function=fn.qualname, function_node=fn.node, file=fn.file,
                    begin=None, end=site, ends=(site,), arms=tuple(labels(ea)), body_calls=(), instantiate=(),
                    replay_after_capture=(), replay=(), status=HEURISTIC,
                    note=f"capture ended in {fn.qualname}, begun in another function"))
        return out

    def _prims(self, st: Stage, role: str) -> tuple[PrimitiveSite, ...]:
        return tuple(primitive_sites(self.g, st.node, role))

    def _holder_replays(self, fn: Stage) -> tuple[ReplayMethod, ...]:
        """Replaying methods of the type the capturing function returns (or belongs to)."""
        d = self.index.definition(fn.node)
        out = []
        seen = set()
        for t, how in ((holder_type(d.return_type) if d else "", "returns"),
                       (d.container if d else "", "belongs to")):
            if not t or t in seen:
                continue
            seen.add(t)
            for m in replay_methods(self.g, t, self.roles, fn.qualname):
                if m.method != fn.qualname:
                    out.append(replace(m, type=t, how=f"method of {t}, the type {fn.qualname} {how}",
                                       status=HEURISTIC))
        return tuple(out)

    def _site(self, st: Stage) -> LifecycleSite:
        return LifecycleSite(st.via.callee if st.via else st.name, st.qualname, st.call_at, self.roles.role(st.node))

    # -- body ------------------------------------------------------------------------------

    def body(self, fn: Stage, region: CaptureRegion) -> CaptureRegion:
        """The region with its body analysed (launches with their captured constants, hazards one per site,
        library calls) and the graph caches keyed on it."""
        launches: list[CapturedLaunch] = []
        occurrences: list[Occurrence] = []
        library: dict[tuple[str, str], LibraryCall] = {}  # one per call site, with the paths reaching it
        allocs = False
        items = [(s, p, a) for c in region.body_stages for s, p, a in subtree(c)]
        for st, _p, _a in items:
            op = host_op(st.qualname, st.via.args if st.via else ()) if st.kind == "external" else None
            if op and op.kind == "alloc":
                allocs = True
        parents: dict[int, Stage] = {}
        for st, path, _a in items:
            if len(path) > 1:
                parents[id(st)] = path[-2]
        for st, path, arms in items:
            v = st.via
            where = st.call_at
            ekind = v.kind if v else ""
            if ekind == EdgeKind.LAUNCH:
                if not self._overload_fits(st, parents.get(id(st), fn)):
                    continue
                launches.append(self.launch(fn, st, path, arms, allocs))
                cfg: tuple[str, ...] = v.launch_config if v else ()
                if len(cfg) < 4 or cfg[3].strip() in _DEFAULT_STREAM:
                    occurrences.append(Occurrence("default stream", st.qualname, where, where, arms, _via(path),
                                                  "launch without an explicit stream inside a capture region "
                                                  "(legacy default stream: capture error or not recorded)"))
            elif ekind == EdgeKind.VENDOR or (st.kind == "ffi_decl" and is_library_gemm(st.name or "")):
                key = (api_name(st.qualname), where)
                if key in library:
                    library[key] = replace(library[key], paths=library[key].paths + 1)
                else:
                    library[key] = LibraryCall(key[0], v.attrs.get("library", "") if v else "", where,
                                               tuple(labels(arms)), 1)
            elif st.kind == "external":
                h = self._hazard(st, path, arms, where)
                if h is not None:
                    occurrences.append(h)
        cuts = sorted({f"{s.qualname} ({s.cut})" for s, _p, _a in items if s.cut in ("budget", "depth")})
        hazards = wrapper_notes(self.index, list(region.wrappers), hazard_group(occurrences))
        launches, used = self._key_coverage(fn, launches)
        launches = mark_alternatives(launches)
        body = CaptureBody(tuple(launches), tuple(hazards), tuple(library.values()), allocs, not cuts,
                           tuple(cuts[:20]))
        keys = graph_keys(self.index, self.roles).keyed_on(fn.node, used)
        return replace(region, body=body, graph_keys=tuple(keys))

    def _hazard(
        self, st: Stage, path: tuple[Stage, ...], arms: tuple[ArmRef, ...], where: str
    ) -> Occurrence | None:
        op = host_op(st.qualname, st.via.args if st.via else ())
        if op is None:
            return None
        call_at = where
        if len(path) > 1 and path[-2].kind == "ffi_decl":  # the Rust call of the extern declaration
            call_at = path[-2].call_at
        d = hazard_detail(op)
        if d is None:
            return None
        copy = op.kind == "copy"
        return Occurrence(op.kind, op.api, where, call_at, arms, _via(path), d, op.direction if copy else None,
                          op.size if copy else None)

    def _overload_fits(self, st: Stage, parent: Stage) -> bool:
        """False for an overload the launch's argument types rule out (another candidate fits better)."""
        v = st.via
        if v is None or v.resolution != Resolution.AMBIGUOUS or not v.site:
            return True
        best = best_candidates(self.index, parent.node, v.site, list(v.args))
        return best is None or st.node in best

    # -- graph keys ------------------------------------------------------------------------

    def _key_coverage(
        self, fn: Stage, launches: list[CapturedLaunch]
    ) -> tuple[list[CapturedLaunch], list[GraphCache]]:
        """A frozen per-request scalar that is part of a graph key is safe by construction: unflag it.
        Also the caches whose keys cover a frozen value (listed with the region's graph keys)."""
        if not any(c.flagged for la in launches for c in la.constants):
            return launches, []
        gk = graph_keys(self.index, self.roles)
        used: list[GraphCache] = []
        out = []
        for la in launches:
            consts = []
            for c in la.constants:
                if c.flagged:
                    c, cache = self._covered(gk, fn, c)
                    if cache is not None:
                        used.append(cache)
                consts.append(c)
            out.append(replace(la, constants=tuple(consts)))
        return out, used

    @staticmethod
    def _covered(gk: GraphKeys, fn: Stage, c: CapturedConstant) -> tuple[CapturedConstant, GraphCache | None]:
        """The constant, unflagged when a graph key covers it, and that key's cache."""
        local = gk.local_in_key(fn.node, set(c.req_locals))
        paths = [p for prm in c.req_params for p in gk.coverage(fn.node, prm)]
        keyed = [p for p in paths if p.in_key]
        cache = local or (keyed[0].cache if keyed else None)
        if cache is None:
            if paths:
                return replace(c, key_check=tuple(f"{' ← '.join(p.chain[-3:])}: {p.reason}" for p in paths[:4])), None
            return c, None
        fld = keyed[0].field if keyed and not local else ""
        use = GraphKeyUse(cache.key, cache.key_type, fld, cache.at, cache.function,
                          keyed[0].chain if keyed and not local else (),
                          0 if local else len(paths) - len(keyed), HEURISTIC)
        what = f"{cache.key_type or cache.key}{'.' + fld if fld else ''}"
        return replace(c, flagged=False, in_graph_key=use,
                       reason=f"part of the graph key {what} ({cache.function} at {cache.at}): a different "
                              "value builds another graph, so the frozen value is safe by construction"), cache

    # -- constants -------------------------------------------------------------------------

    def launch(self, fn: Stage, st: Stage, path: tuple[Stage, ...], arms: tuple[ArmRef, ...],
               allocs: bool) -> CapturedLaunch:
        v = st.via
        d = self.index.definition(st.node)
        params = d.params if d else []
        args = list(v.args) if v else []
        consts: list[CapturedConstant] = []
        buffers: list[CapturedBuffer] = []
        chain = (fn, *path)
        for i, a in enumerate(args):
            p = params[i] if i < len(params) else None
            ptype = p.type if p else ""
            if p is None:
                consts.append(CapturedConstant(f"#{i}", a, UNKNOWN,
                                               "no parameter at this position in the kernel definition"))
                continue
            if ty.is_pointer(ptype):
                buffers.append(CapturedBuffer(
                    p.name, ptype, a, None if allocs else True, UNKNOWN if allocs else HEURISTIC,
                    "an allocation is reachable inside the body" if allocs else
                    "no allocation is reachable inside the capture body, so the buffer "
                    "exists before capture (its address is baked into the graph)"))
                continue
            consts.append(self.origin(chain, len(chain) - 1, a, p.name, ptype))
        return CapturedLaunch(st.qualname, st.call_at, tuple(labels(arms)),
                              tuple(v.template_args) if v else (), tuple(consts), tuple(buffers))

    def origin(self, chain: tuple[Stage, ...], k: int, expr: str, param: str, ptype: str) -> CapturedConstant:
        """Follow an argument (``expr``, for the kernel parameter ``param``) of the call into ``chain[k]``
        back up the chain to the region function."""
        steps: list[str] = []
        kinds: set[str] = set()
        work = [(k - 1, expr)]
        seen: set[tuple[int, str]] = set()
        hops = 0
        self._req_params, self._req_locals = set(), set()
        while work and hops < MAX_HOPS * 4:
            hops += 1
            j, e = work.pop()
            if j < 0:
                kinds.add("unknown")
                continue
            ids = [i for i in identifiers(e) if not _is_type_or_macro(i)]
            if not ids:
                kinds.add("literal")
                continue
            for ident in ids:
                if (j, ident) in seen:
                    continue
                seen.add((j, ident))
                kind, step, nxt = self._ident(chain, j, ident, e)
                steps.append(step)
                kinds.add(kind)
                if nxt is not None:
                    work.append(nxt)
        kinds.discard("local")
        kinds.discard("param")
        per_request = "per-request" in kinds
        status = UNKNOWN if "unknown" in kinds else HEURISTIC
        reason = ("derives from a per-request value: the value at capture time is replayed" if per_request
                  else "origin not fully established (see derivation)" if status == UNKNOWN
                  else "no per-request origin on the traced chain")
        return CapturedConstant(param, expr, status, reason, ptype, tuple(sorted(kinds)), tuple(steps), per_request,
                                req_params=tuple(sorted(self._req_params)),
                                req_locals=tuple(sorted(self._req_locals)))

    def _ident(self, chain: tuple[Stage, ...], j: int, ident: str,
               expr: str) -> tuple[str, str, tuple[int, str] | None]:
        """Classify ``ident`` evaluated inside ``chain[j]``: (kind, step text, next work item)."""
        st = chain[j]
        d = self.index.definition(st.node)
        if ident == "self":
            return "struct field", f"`{expr}`: reads self (a field or method of the object) in {st.qualname}", None
        if d is not None:
            a = next((x for x in reversed(d.attrs.get("assigns", [])) if x["var"] == ident), None)
            if a is not None and a["value"].strip() != ident:
                if j == 0:
                    self._req_locals.add(ident)
                return "local", f"`{ident} = {a['value']}` in {st.qualname} ({loc(d.file, a['line'])})", (j, a["value"])
            names = [p.name for p in d.params]
            if ident in names:
                idx = names.index(ident)
                if j == 0:
                    self._req_params.add(ident)
                    return "per-request", f"`{ident}`: parameter of {st.qualname} (per call)", None
                inc = st.via
                if inc is not None and inc.kind == EdgeKind.FFI:  # extern decl → C definition: same positions
                    prev = self.index.definition(chain[j - 1].node)
                    pn = [p.name for p in prev.params] if prev else []
                    if idx < len(pn):
                        return "param", f"`{ident}` ← `{pn[idx]}` of {chain[j - 1].qualname} (FFI)", (j - 1, pn[idx])
                    return "unknown", f"`{ident}`: no parameter #{idx} in {chain[j - 1].qualname}", None
                off = 1 if names[0] == "self" and inc is not None and inc.call_kind == "method" else 0
                args = inc.args if inc is not None else ()
                pos = idx - off
                if 0 <= pos < len(args):
                    at = st.call_at
                    return "param", f"`{ident}` ← `{args[pos]}` at {at}", (j - 1, args[pos])
                return "unknown", f"`{ident}`: argument #{pos} missing at the call of {st.qualname}", None
        if self._is_loop_var(chain, j, ident):
            if j == 0:
                return "per-request", f"`{ident}`: loop variable in {st.qualname} (changes per iteration)", None
            return "loop constant", f"`{ident}`: loop variable in {st.qualname} (fixed per recorded launch)", None
        if re.fullmatch(r"[A-Z][A-Z0-9_]*|k[A-Z]\w*", ident):
            return "literal", f"`{ident}`: named constant", None
        return "unknown", f"`{ident}` in {st.qualname}: no recorded definition", None

    @staticmethod
    def _is_loop_var(chain: tuple[Stage, ...], j: int, ident: str) -> bool:
        nxt = chain[j + 1] if j + 1 < len(chain) else None
        loops = nxt.via.loops if nxt is not None and nxt.via is not None else ()
        pat = re.compile(rf"\bfor\s*\(?\s*(?:[\w:]+\s+)?\(?[\w\s,]*\b{re.escape(ident)}\b[\w\s,]*\)?\s*(in\b|=|:)")
        return any(pat.search(lp) for lp in loops)


def hazard_detail(op: HostOp) -> str | None:
    """What a host operation (:func:`apxtui.analysis.hostops.host_op`) inside a capture body does wrong
    (None when it is no hazard)."""
    if op.kind == "sync":
        return "host synchronisation inside capture: illegal while capturing (capture fails)"
    if op.kind == "alloc":
        return "allocation inside capture: the address is baked into the graph"
    if op.kind == "copy":
        detail = {"D2H": "host read of device values inside capture",
                  "H2D": "host→device copy recorded: the host buffer is read again at every replay"
                  }.get(op.direction or "", "copy recorded into the graph")
        return detail + ("; blocking copy (synchronises)" if op.blocking else "")
    if op.kind == "memset":
        # an async memset on the capturing stream is a graph node, not a hazard
        return "blocking memset inside capture" if op.blocking else None
    if op.kind == "free":
        return "free inside capture"
    return None


def mark_alternatives(launches: list[CapturedLaunch]) -> list[CapturedLaunch]:
    """Launches of one if / else if / else (or match), one launch per arm, are alternatives: one of them is
    recorded per capture.  A run of consecutive launches in the same file whose arm paths differ only in
    the last arm, each arm launching once, gets ``alternative_group`` (the first's index) and
    ``alternatives`` (the run's size).  Arms that launch several kernels are left as they are."""
    out = list(launches)
    i = 0
    while i < len(out):
        a = out[i]
        j = i + 1
        while j < len(out) and a.arms and out[j].arms[:-1] == a.arms[:-1] and len(out[j].arms) == len(a.arms) \
                and out[j].at.rsplit(":", 1)[0] == a.at.rsplit(":", 1)[0]:
            j += 1
        last = [out[k].arms[-1] for k in range(i, j)] if j - i > 1 else []
        if last and len(set(last)) == len(last):
            for k in range(i, j):
                out[k] = replace(out[k], alternative_group=i, alternatives=j - i)
        i = j
    return out


def _dedupe(sites: list[LifecycleSite]) -> list[LifecycleSite]:
    """One entry per call site (an ambiguous call has one stage per candidate)."""
    seen: dict[str, LifecycleSite] = {}
    for x in sites:
        seen.setdefault(x.at, x)
    return list(seen.values())


def _is_type_or_macro(ident: str) -> bool:
    return ident in {"as", "i32", "u32", "usize", "i64", "u64", "f32", "f64", "int", "float", "size_t", "static_cast",
                     "sizeof", "true", "false", "nullptr", "mut", "const", "reinterpret_cast", "unsigned", "long",
                     "dim3", "min", "max"} or ident.startswith("__") or api_name(ident) != ident
