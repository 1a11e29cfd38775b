"""Graph caches and their keys: which per-request values a captured graph is specialised on.

A frozen per-request scalar is a bug only when the next request can replay a graph captured
for another value.  Engines prevent that by caching graphs per key:

* build-on-miss: ``cached_or_build(&mut cache, spec, || self.build_prepared(&spec))`` — a call
  with a key argument and a closure whose calls lead to a capture (a function that both begins
  and ends one);
* map insert: ``self.graphs.insert(seq_len, exec)`` after an instantiate in the capturing function.

:func:`GraphKeys.coverage` follows a region function's parameter up its callers (argument by
argument, ``spec.token_count`` keeps the field) to a cache call whose key it reaches; a value
reached that way is part of the key, so a different value builds another graph.  Heuristic
(name and structure rules), and every record says how it was found.
"""

from __future__ import annotations

import re
import weakref
from collections import deque
from collections.abc import Iterable
from typing import Any

from apxtui.analysis.capturefacts import GraphCache, KeyPath
from apxtui.analysis.evidence import HEURISTIC, identifiers, loc
from apxtui.analysis.hostops import DEPTH, ROLE_EDGES, api_name, capture_prims
from apxtui.analysis.lifecycle import holder_type
from apxtui.vocab import FN_KINDS

ANCESTOR_DEPTH = 8
UP_DEPTH = 8
_CLOSURE = re.compile(r"^\s*(?:move\s+)?\|")
_KEY_PARAM = re.compile(r"key", re.I)
_LOOKUP = ("get", "contains_key", "find", "entry", "get_mut", "count")
_INSERT = ("insert", "emplace", "try_emplace")
_CACHE: weakref.WeakKeyDictionary[Any, GraphKeys] = weakref.WeakKeyDictionary()


def graph_keys(index: Any, roles: Any) -> GraphKeys:
    """The (memoised per graph) cache analysis of an index."""
    gk = _CACHE.get(index.graph)
    if gk is None or gk.index is not index:
        gk = GraphKeys(index, roles)
        _CACHE[index.graph] = gk
    return gk


class GraphKeys:
    def __init__(self, index: Any, roles: Any):
        self.index = index
        self.g = index.graph
        self.roles = roles
        self.capturing = self._stored_capturing()
        self._caches: list[GraphCache] | None = None
        self._memo: dict[tuple[str, str], list[KeyPath]] = {}  # (function, parameter) → coverage (graph-only)

    # -- where captures happen ---------------------------------------------------------------

    def _stored_capturing(self) -> set[str]:
        """:meth:`_capturing`, stored beside a stored graph's generation (it asks every node).  Keyed on the
        code that derives it and the calls.toml in use (its capture families)."""
        if not hasattr(self.g, "derived") or self.roles.g is not self.g:
            return self._capturing()
        from apxtui import vocab  # lazy: its file is part of the stamp
        from apxtui.analysis import calls, hostops  # lazy: as above
        from apxtui.index.store import code_stamp  # lazy: only for a stored graph

        stamp = code_stamp(__file__, hostops.__file__, calls.__file__, vocab.__file__, calls.call_rules().path)
        return set(self.g.derived("capturing", stamp, lambda: sorted(self._capturing())))

    def _capturing(self) -> set[str]:
        """Functions that call a begin- or end-role function (and are not wrappers themselves).

        Only nodes within the role depth above a begin/end primitive can have those roles, so
        those are found first (a reverse walk) instead of asking every edge.
        """
        names = capture_prims()["begin"] | capture_prims()["end"]
        near = {n for n, d in self.g.nodes(data=True)
                if d.get("kind") in ("external", "vendor_api") and api_name(d.get("qualname", "")) in names}
        frontier = set(near)
        for _ in range(DEPTH):
            frontier = {u for n in frontier for u, _, k in self.g.in_edges(n, data="kind")
                        if k in ROLE_EDGES and u not in near}
            near |= frontier
        out = set()
        for v in near:
            if self.roles.role(v) not in ("begin", "end"):
                continue
            for u, _, k in self.g.in_edges(v, data="kind"):
                if k in ("call", "ffi") and self.g.nodes[u].get("kind") in FN_KINDS and not self.roles.role(u):
                    out.add(u)
        return out

    def _ancestors(self) -> set[str]:
        seen = set(self.capturing)
        q = deque((n, 0) for n in self.capturing)
        while q:
            n, d = q.popleft()
            if d >= ANCESTOR_DEPTH:
                continue
            for u, _, k in self.g.in_edges(n, data="kind"):
                if k in ("call", "exposes", "binding") and u not in seen:
                    seen.add(u)
                    q.append((u, d + 1))
        return seen

    # -- caches ------------------------------------------------------------------------------

    def caches(self) -> list[GraphCache]:
        if self._caches is None:
            self._caches = self._builder_caches() + [c for n in sorted(self.capturing) for c in self._insert_caches(n)]
        return self._caches

    def keyed_on(self, fn_node: str, used: Iterable[GraphCache] = ()) -> list[GraphCache]:
        """Caches keyed on the values a capturing function freezes: its own, and ``used`` (the caches whose key
        covers a value its region body freezes, as the body analysis found them), in :meth:`caches` order.

        A pure function of its arguments: nothing is recorded, so the listing never depends on which
        analyses ran before in this process."""
        ids = {id(c) for c in used}
        if not ids and self._caches is None:  # the function's own caches, in caches() order: without the others'
            return self._builder_caches(fn_node) + (self._insert_caches(fn_node) if fn_node in self.capturing else [])
        return [c for c in self.caches() if c.function_node == fn_node or id(c) in ids]

    def _builder_caches(self, caller: str | None = None) -> list[GraphCache]:
        """Build-on-miss caches in graph order (every edge asked), or only those ``caller`` calls."""
        anc = self._ancestors()
        out = []
        edges = self.g.edges(data=True) if caller is None else self.g.out_edges(caller, data=True)
        for u, v, e in edges:
            if e.get("kind") != "call":
                continue
            clo = [i for i, a in enumerate(e.get("args", [])) if _CLOSURE.match(a)]
            if not clo:
                continue
            body = " ".join(e["args"][i] for i in clo)
            inner = [(w, x) for _, w, x in self.g.out_edges(u, data=True)
                     if x.get("closures") and e.get("line", 0) <= x.get("line", 0) <= e.get("line", 0) + 40
                     and x.get("callee", "").split("::")[-1].split(".")[-1] in body and w in anc]
            if not inner:
                continue
            key_i = self._key_index(v, e, clo)
            if key_i is None:
                continue
            key = e["args"][key_i].strip().lstrip("&").strip()
            d = self.index.definition(u)
            key_type, fields, deriv, type_at = self._key_type(u, d, key, e.get("line", 0))
            lines = [x.get("line", 0) for _, x in inner]
            cache = e["args"][0].strip() if key_i != 0 else ""
            cache = re.sub(r"^&\s*(mut\s+)?", "", cache)
            ca = next((x for x in reversed((d.attrs.get("assigns", []) if d else [])) if x["var"] == cache), None)
            if ca is not None:
                cache += f" (= {ca['value']})"
            out.append(GraphCache(
                kind="build on miss", function=self.g.nodes[u].get("qualname", ""), function_node=u,
                call=e.get("callee", ""), at=loc(e.get("file", ""), e.get("line", 0)),
                cache=cache, key=key, key_type=key_type,
                key_fields=tuple(fields), key_type_at=type_at, key_derivation=tuple(deriv),
                builds=tuple(sorted({self.g.nodes[w].get("qualname", "") for w, _ in inner})),
                lines=(min(lines), max(lines)), key_vars=frozenset({key}),
                status=HEURISTIC,
                how=f"`{e.get('callee', '')}` takes the key `{key}` and a closure whose calls lead to a "
                    "CUDA Graph capture: it builds (captures) on a miss and reuses the result for an equal key",
            ))
        return out

    def _key_index(self, callee: str, e: dict[str, Any], clo: list[int]) -> int | None:
        """The argument that is the key: the callee's parameter named ``*key*``, else the only plain one."""
        d = self.index.definition(callee)
        args = e.get("args", [])
        if d is not None:
            params = [p.name for p in d.params if p.name != "self"]
            named = [i for i, p in enumerate(params) if _KEY_PARAM.search(p) and i < len(args)]
            if len(named) == 1:
                return named[0]
        plain = [i for i, a in enumerate(args) if i not in clo and not a.strip().startswith("&mut")]
        return plain[0] if len(plain) == 1 else None

    def _key_type(self, u: str, d: Any, key: str, line: int) -> tuple[str, list[str], list[str], str]:
        """The key's type and fields, from its declaration or the function whose result it holds."""
        deriv: list[str] = []
        files = [d.file] if d else []
        t = (d.locals.get(key) or next((p.type for p in d.params if p.name == key), "")) if d else ""
        a = next((x for x in reversed((d.attrs.get("assigns", []) if d else [])) if x["var"] == key
                  and x["line"] <= line), None)
        if a is not None:
            deriv.append(f"{key} = {a['value']} ({loc(d.file, a['line'])})")
            lit = re.match(r"^\s*([A-Z]\w*)\s*\{", a["value"])  # a struct literal: `Spec { token_count: … }`
            if not t and lit:
                t = lit.group(1)
            if not t:
                m = re.search(r"(\w+)\s*\([^()]*\)\s*\??\s*$", a["value"])
                if m:
                    for _, v, x in self.g.out_edges(u, data=True):
                        if x.get("line") == a["line"] and self.g.nodes[v].get("name") == m.group(1):
                            t = getattr(self.index.definition(v), "return_type", "") or ""
                            files.insert(0, self.g.nodes[v].get("file", ""))
                            break
        name = holder_type(t)
        for df in self._types(name, files):
            if df.fields:
                return name, list(df.fields), deriv, loc(df.file, df.line)
        return name, [], deriv, ""

    def _types(self, name: str, files: list[str]) -> list[Any]:
        """Struct/class definitions of a short type name: in ``files`` first (where the key is made or
        returned), else the linker's tables when they are already built (never rebuilt for this)."""
        if not name:
            return []
        out = []
        for f in dict.fromkeys(files):
            ff = self.index.facts.get(f) if hasattr(self.index.facts, "get") else None
            out += [d for d in (ff.defs if ff else []) if d.kind in ("rust_type", "cpp_type") and d.name == name]
        if out:
            return out
        linker = getattr(self.index, "linker", None)
        return list(linker.t.types.get(name, [])) if linker is not None else []

    def _insert_caches(self, node: str) -> list[GraphCache]:
        """``R.insert(key, exec)`` after an instantiate call in the capturing function, with ``R.get`` lookups."""
        d = self.index.definition(node)
        if d is None:
            return []
        facts = self.index.facts[d.file]
        calls = [c for c in facts.calls if c.caller == d.qualname and d.line <= c.line <= d.end_line]
        inst = [
            e.get("line", 0) for _, v, e in self.g.out_edges(node, data=True) if self.roles.role(v) == "instantiate"
        ]
        if not inst:
            return []
        assigns = {a["var"]: a for a in d.attrs.get("assigns", [])}
        out = []
        for c in calls:
            if c.kind != "method" or c.callee.split(".")[-1] not in _INSERT or not c.receiver \
                    or not any(x < c.line for x in inst):
                continue
            key = (c.args[0] if c.args else "").strip().lstrip("&")
            lookups = [
                loc(x.file, x.line) for x in calls if x.receiver == c.receiver and x.callee.split(".")[-1] in _LOOKUP
            ]
            derivation, key_vars, k = [], {key}, key
            for _ in range(4):  # follow single-identifier derivations: seq_len = pos + 1 → pos is fixed by the key
                if k not in assigns:
                    break
                derivation.append(f"{k} = {assigns[k]['value']} ({loc(d.file, assigns[k]['line'])})")
                ids = [i for i in identifiers(assigns[k]["value"]) if i not in ("as", "self")]
                if len(ids) != 1:
                    break
                k = ids[0]
                key_vars.add(k)
            out.append(GraphCache(
                kind="map insert", function=d.qualname, function_node=node, cache=c.receiver, key=key, key_type="",
                key_fields=(), key_derivation=tuple(derivation), at=loc(c.file, c.line),
                insert_at=loc(c.file, c.line), lookups=tuple(lookups), key_vars=frozenset(key_vars), status=HEURISTIC,
                how="an insert into this map follows a graph instantiate in the same function"))
        return out

    # -- is a value part of a key? -------------------------------------------------------------

    def local_in_key(self, fn_node: str, names: set[str]) -> GraphCache | None:
        """A map-insert cache of ``fn_node`` whose key determines one of the locals ``names``."""
        for c in self.caches():
            if c.function_node == fn_node and c.kind == "map insert" and names & c.key_vars:
                return c
        return None

    def coverage(self, fn_node: str, param: str) -> list[KeyPath]:
        """Paths from the callers of ``fn_node`` along which ``param`` is (or is not) part of a graph key."""
        key = (fn_node, param)
        if key not in self._memo:
            self._memo[key] = self._walk(fn_node, param)
        return self._memo[key]

    def _walk(self, fn_node: str, param: str) -> list[KeyPath]:
        by_fn: dict[str, list[GraphCache]] = {}
        for c in self.caches():
            if c.kind == "build on miss":
                by_fn.setdefault(c.function_node, []).append(c)
        out: list[KeyPath] = []
        seen: set[tuple[str, str]] = set()
        work: list[tuple[str, str, str, list[str]]] = [(fn_node, param, "", [])]
        while work:
            n, p, fld, chain = work.pop()
            if (n, p) in seen or len(chain) >= UP_DEPTH:
                continue
            seen.add((n, p))
            d = self.index.definition(n)
            callers = [(u, e) for u, _, e in self.g.in_edges(n, data=True) if e.get("kind") == "call"]
            if not callers:
                out.append(KeyPath(False, None, fld, tuple(chain),
                                   f"{self.g.nodes[n].get('qualname', n)} has no caller in the index"))
            for u, e in callers:
                arg = _arg_for(d, e, p)
                at = loc(e.get("file", ""), e.get("line", 0))
                if arg is None:
                    out.append(KeyPath(False, None, fld, tuple(chain), f"no argument for `{p}` at {at}"))
                    continue
                step = f"`{p}` ← `{arg}` at {at}"
                m = re.match(r"^\s*(?:&\s*(?:mut\s+)?|\*)?([A-Za-z_]\w*)((?:\.\w+)*)", arg)
                if not m:
                    out.append(KeyPath(False, None, fld, (*chain, step), f"`{arg}` is not a variable or field"))
                    continue
                base, rest = m.group(1), m.group(2).lstrip(".").split(".")[0] if m.group(2) else ""
                f2 = fld or rest
                hit = next((c for c in by_fn.get(u, []) if base in c.key_vars
                            and c.lines[0] <= e.get("line", 0) <= c.lines[1]), None)
                if hit is not None:
                    inside = not f2 or not hit.key_fields or f2 in hit.key_fields
                    out.append(KeyPath(inside, hit, f2, (*chain, step),
                                       "" if inside else f"`{f2}` is not a field of the key {hit.key_type}"))
                    continue
                ud = self.index.definition(u)
                if ud is not None and base in [x.name for x in ud.params]:
                    work.append((u, base, f2, [*chain, step]))
                    continue
                a = next((x for x in reversed(ud.attrs.get("assigns", []) if ud else []) if x["var"] == base), None)
                if a is not None:
                    m2 = re.match(r"^\s*&?([A-Za-z_]\w*)((?:\.\w+)*)\s*$", a["value"])
                    if m2 and ud is not None and m2.group(1) in [x.name for x in ud.params]:
                        f3 = f2 or (m2.group(2).lstrip(".").split(".")[0] if m2.group(2) else "")
                        work.append((u, m2.group(1), f3, [*chain, step, f"`{base} = {a['value']}`"]))
                        continue
                who = self.g.nodes[u].get("qualname", u)
                out.append(KeyPath(False, None, f2, (*chain, step),
                                   f"`{base}` in {who} is not a parameter or a graph key"))
        return out


def _arg_for(d: Any, e: dict[str, Any], param: str) -> str | None:
    """The argument expression a call passes for ``param`` (method calls skip ``self``)."""
    if d is None:
        return None
    names = [p.name for p in d.params]
    if param not in names:
        return None
    i = names.index(param)
    if names and names[0] == "self" and e.get("call_kind") == "method":
        i -= 1
    args = e.get("args", [])
    return args[i] if 0 <= i < len(args) else None
