"""CUDA Graph capture regions over a trace tree: body, captured constants, hazards, caches, replays.

A region is a begin-role call and the next end-role call among the direct calls of
one function (same branch); its body is every call between them and what they
reach.  For each kernel launch in the body, scalar arguments are captured constants
(followed back up the traced chain to their origin: a per-request parameter, a loop
variable, a struct field or a literal); pointer arguments are device buffers.
"""

from __future__ import annotations

import re
from typing import Any

from apxtui.analysis import types as ty
from apxtui.analysis.evidence import EXACT, HEURISTIC, UNKNOWN, identifiers, loc
from apxtui.analysis.hostops import Roles, api_name, host_op
from apxtui.trace import Dispatch, Stage

_DEFAULT_STREAM = {"0", "nullptr", "NULL", "cudaStreamLegacy", "cudaStreamPerThread", "0x0"}
_PER_REQUEST_HINT = re.compile(r"pos|position|seq|len|step|token|offset|start|idx|index|batch|num", re.I)
MAX_HOPS = 12


def _children_stages(items: list[Stage | Dispatch], arms: tuple[str, ...] = ()):
    """Direct call stages of a function (through its dispatch arms), with the arm labels."""
    for it in items:
        if isinstance(it, Stage):
            yield it, arms
        else:
            for a in it.arms:
                if a.selected is False:
                    continue
                yield from _children_stages(a.children, (*arms, a.label))


def _conds(st: Stage) -> list[tuple[str, int]]:
    return [(c.get("group", ""), c.get("arm", 0)) for c in (st.via or {}).get("conditions", [])]


def subtree(st: Stage, path: tuple[Stage, ...] = (), arms: tuple[str, ...] = ()):
    """(stage, path from the region's body call to it, arm labels) over the selected/shown arms."""
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

    # -- regions ---------------------------------------------------------------------------

    def regions_in(self, fn: Stage) -> list[dict[str, Any]]:
        """Capture regions among the direct calls of one traced function stage."""
        calls = list(_children_stages(fn.children))
        roles = [(c, a, self.roles.role(c.node)) for c, a in calls]
        out = []
        begins = [(c, a) for c, a, r in roles if r == "begin"]
        ends = [(c, a) for c, a, r in roles if r == "end"]
        for b, barms in begins:
            bl = (b.via or {}).get("line", 0)
            end = next(((e, ea) for e, ea in ends if (e.via or {}).get("line", 0) > bl
                        and _conds(e)[: len(_conds(b))] == _conds(b)), None)
            region: dict[str, Any] = {
                "id": f"{fn.qualname}@{(b.via or {}).get('file', '')}:{bl}",
                "function": fn.qualname, "function_node": fn.node, "file": fn.file,
                "begin": self._site(b), "arms": list(barms), "body_calls": [],
            }
            if end is None:
                region["end"] = None
                region["note"] = (f"capture begun in {fn.qualname} and not ended there: "
                                  "the end is in another function")
                region["status"] = HEURISTIC
                el = 10**9
            else:
                region["end"] = self._site(end[0])
                region["status"] = EXACT
                el = (end[0].via or {}).get("line", 0)
            body = [c for c, _a, r in roles if bl < (c.via or {}).get("line", 0) < el and r is None
                    and _conds(c)[: len(_conds(b))] == _conds(b)]
            region["_body"] = body
            region["body_calls"] = [self._site(c) for c in body]
            after = [(c, r) for c, _a, r in roles if (c.via or {}).get("line", 0) > el and r in ("instantiate", "replay")
                     and _conds(c)[: len(_conds(b))] == _conds(b)]
            region["instantiate"] = _dedupe([self._site(c) for c, r in after if r == "instantiate"])
            region["replay_after_capture"] = _dedupe([self._site(c) for c, r in after if r == "replay"])
            out.append(region)
        if ends and not begins:
            for e, ea in ends:
                out.append({"id": f"{fn.qualname}@{self._site(e)['at']}", "function": fn.qualname,
                            "function_node": fn.node, "file": fn.file, "begin": None, "end": self._site(e),
                            "arms": list(ea), "body_calls": [], "_body": [], "instantiate": [],
                            "replay_after_capture": [], "status": HEURISTIC,
                            "note": f"capture ended in {fn.qualname}, begun in another function"})
        return out

    def _site(self, st: Stage) -> dict[str, Any]:
        v = st.via or {}
        return {"call": v.get("callee", st.name), "target": st.qualname, "at": loc(v.get("file", ""), v.get("line", 0)),
                "role": self.roles.role(st.node)}

    # -- body ------------------------------------------------------------------------------

    def body(self, fn: Stage, region: dict[str, Any]) -> dict[str, Any]:
        """Launches with their captured constants, hazards and library calls reachable in the body."""
        launches, hazards, library = [], [], []
        allocs = False
        items = [(s, p, a) for c in region["_body"] for s, p, a in subtree(c)]
        for st, _p, _a in items:
            op = host_op(st.qualname, (st.via or {}).get("args", [])) if st.kind == "external" else None
            if op and op["kind"] == "alloc":
                allocs = True
        for st, path, arms in items:
            v = st.via or {}
            where = loc(v.get("file", ""), v.get("line", 0))
            if v.get("kind") == "launch":
                launches.append(self.launch(fn, region, st, path, arms, allocs))
                cfg = v.get("launch_config", [])
                if len(cfg) < 4 or cfg[3].strip() in _DEFAULT_STREAM:
                    hazards.append({"kind": "default stream", "api": st.qualname, "at": where, "arms": list(arms),
                                    "detail": "launch without an explicit stream inside a capture region "
                                              "(legacy default stream: capture error or not recorded)"})
            elif v.get("kind") == "vendor":
                library.append({"api": st.qualname, "library": (v.get("attrs") or {}).get("library", ""),
                                "at": where, "arms": list(arms)})
            elif st.kind == "external":
                op = host_op(st.qualname, v.get("args", []))
                if op is None:
                    continue
                h = {"kind": op["kind"], "api": op["api"], "at": where, "arms": list(arms),
                     "via": next((p.qualname for p in reversed(path[:-1]) if p.kind == "rust_fn"), "")}
                if op["kind"] == "sync":
                    h["detail"] = "host synchronisation inside capture: illegal while capturing (capture fails)"
                elif op["kind"] == "alloc":
                    h["detail"] = "allocation inside capture: the address is baked into the graph"
                elif op["kind"] == "copy":
                    h["direction"] = op["direction"]
                    h["size"] = op["size"]
                    h["detail"] = {"D2H": "host read of device values inside capture",
                                   "H2D": "host→device copy recorded: the host buffer is read again at every replay"
                                   }.get(op["direction"], "copy recorded into the graph")
                    if op["blocking"]:
                        h["detail"] += "; blocking copy (synchronises)"
                elif op["kind"] == "memset":
                    if not op["blocking"]:
                        continue  # an async memset on the capturing stream is a graph node, not a hazard
                    h["detail"] = "blocking memset inside capture"
                elif op["kind"] == "free":
                    h["detail"] = "free inside capture"
                hazards.append(h)
        cuts = sorted({f"{s.qualname} ({s.cut})" for s, _p, _a in items if s.cut in ("budget", "depth")})
        uniq: dict[tuple, dict[str, Any]] = {}
        for h in hazards:  # one entry per site and arm path
            uniq.setdefault((h["kind"], h["api"], h["at"], tuple(h["arms"]), h.get("via", "")), h)
        hazards = list(uniq.values())
        return {"launches": launches, "hazards": hazards, "library_calls": library,
                "complete": not cuts, "cut": cuts[:20],
                "allocations_in_body": allocs}

    # -- constants -------------------------------------------------------------------------

    def launch(self, fn: Stage, region: dict[str, Any], st: Stage, path: tuple[Stage, ...], arms, allocs: bool):
        v = st.via or {}
        d = self.index.definition(st.node)
        params = d.params if d else []
        args = list(v.get("args", []))
        consts, buffers = [], []
        chain = (fn, *path)
        for i, a in enumerate(args):
            p = params[i] if i < len(params) else None
            ptype = p.type if p else ""
            if p is None:
                consts.append({"param": f"#{i}", "arg": a, "status": UNKNOWN,
                               "reason": "no parameter at this position in the kernel definition"})
                continue
            if ty.is_pointer(ptype):
                buffers.append({"param": p.name, "type": ptype, "arg": a,
                                "allocated_before_capture": None if allocs else True,
                                "status": UNKNOWN if allocs else HEURISTIC,
                                "reason": ("an allocation is reachable inside the body" if allocs else
                                           "no allocation is reachable inside the capture body, so the buffer "
                                           "exists before capture (its address is baked into the graph)")})
                continue
            origin = self.origin(chain, len(chain) - 1, a)
            consts.append({"param": p.name, "type": ptype, "arg": a, **origin})
        return {"kernel": st.qualname, "at": loc(v.get("file", ""), v.get("line", 0)), "arms": list(arms),
                "template_args": list(v.get("template_args", [])), "constants": consts, "buffers": buffers}

    def origin(self, chain: tuple[Stage, ...], k: int, expr: str) -> dict[str, Any]:
        """Follow an argument of the call into ``chain[k]`` back up the chain to the region function."""
        steps: list[str] = []
        kinds: set[str] = set()
        work = [(k - 1, expr)]
        seen: set[tuple[int, str]] = set()
        hops = 0
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
        return {"origin": sorted(kinds), "derivation": steps, "flagged": per_request, "status": status,
                "reason": reason}

    def _ident(self, chain, j: int, ident: str, expr: str):
        """Classify ``ident`` evaluated inside ``chain[j]``: (kind, step text, next work item)."""
        st = chain[j]
        d = self.index.definition(st.node)
        if ident == "self":
            return "struct field", f"`{expr}`: reads self (a field or method of the object) in {st.qualname}", None
        if d is not None:
            a = next((x for x in reversed(d.attrs.get("assigns", [])) if x["var"] == ident), None)
            if a is not None and a["value"].strip() != ident:
                return "local", f"`{ident} = {a['value']}` in {st.qualname} ({loc(d.file, a['line'])})", (j, a["value"])
            names = [p.name for p in d.params]
            if ident in names:
                idx = names.index(ident)
                if j == 0:
                    return "per-request", f"`{ident}`: parameter of {st.qualname} (per call)", None
                inc = st.via or {}
                if inc.get("kind") == "ffi":  # extern decl → C definition: same positions
                    prev = self.index.definition(chain[j - 1].node)
                    pn = [p.name for p in prev.params] if prev else []
                    if idx < len(pn):
                        return "param", f"`{ident}` ← `{pn[idx]}` of {chain[j - 1].qualname} (FFI)", (j - 1, pn[idx])
                    return "unknown", f"`{ident}`: no parameter #{idx} in {chain[j - 1].qualname}", None
                off = 1 if names[0] == "self" and inc.get("call_kind") == "method" else 0
                args = inc.get("args", [])
                pos = idx - off
                if 0 <= pos < len(args):
                    at = loc(inc.get("file", ""), inc.get("line", 0))
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
    def _is_loop_var(chain, j: int, ident: str) -> bool:
        nxt = chain[j + 1] if j + 1 < len(chain) else None
        loops = (nxt.via or {}).get("loops", []) if nxt is not None else []
        pat = re.compile(rf"\bfor\s*\(?\s*(?:[\w:]+\s+)?\(?[\w\s,]*\b{re.escape(ident)}\b[\w\s,]*\)?\s*(in\b|=|:)")
        return any(pat.search(lp) for lp in loops)


def _dedupe(sites: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per call site (an ambiguous call has one stage per candidate)."""
    seen: dict[str, dict[str, Any]] = {}
    for x in sites:
        seen.setdefault(x["at"], x)
    return list(seen.values())


def _is_type_or_macro(ident: str) -> bool:
    return ident in {"as", "i32", "u32", "usize", "i64", "u64", "f32", "f64", "int", "float", "size_t", "static_cast",
                     "sizeof", "true", "false", "nullptr", "mut", "const", "reinterpret_cast", "unsigned", "long",
                     "dim3", "min", "max"} or ident.startswith("__") or api_name(ident) != ident
