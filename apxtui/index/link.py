"""Linking: all files' facts → one networkx MultiDiGraph.

Node kinds: ``python_fn``, ``python_class``, ``pyo3_binding``, ``rust_fn``, ``ffi_decl``,
``abi_fn``, ``host_fn``, ``device_fn``, ``kernel``, ``vendor_api``, ``external`` (a callee
with no definition in the indexed code), ``file`` (for ``include`` edges).

Edge kinds: ``call``, ``binding`` (Python → PyO3 binding), ``exposes`` (binding → the
Rust item), ``ffi`` (Rust extern declaration → C definition, by symbol), ``launch``
(host → kernel), ``vendor`` (→ library API), ``include`` (file → file).

Every call-like edge carries its call site (``file``, ``line``, ``col``), the
enclosing branch/loop contexts (``conditions``, ``loops``) and ``resolution``
(exact / heuristic / ambiguous / unresolved) with ``how`` it was established.  An
ambiguous call gets one edge per candidate (same ``site``), never one picked.
"""

from __future__ import annotations

import gc
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from apxtui.facts import Binding, CallSite, Context, Definition, FileFacts
from apxtui.index.includes import files_by_base, resolve_include
from apxtui.index.resolve import AMBIGUOUS, UNRESOLVED, Resolved
from apxtui.index.resolve_cuda import CudaResolver
from apxtui.index.resolve_fnptr import FnPointers, arm_call, arm_resolved
from apxtui.index.resolve_frameworks import Frameworks, PythonOps, Registration, registrations, with_context
from apxtui.index.resolve_python import PythonResolver
from apxtui.index.resolve_rust import RustResolver
from apxtui.index.tables import Tables, node_id
from apxtui.packages import Packages
from apxtui.vocab import GRAPH_NODE_KINDS, module_node_id

if TYPE_CHECKING:
    import networkx as nx

_T = TypeVar("_T")
BRANCH_KINDS = {"if", "else", "match_arm", "switch_case", "cfg", "pp_if", "except"}
MAX_CANDIDATES = 12


def _node_attrs(d: Definition, vendored: bool) -> dict[str, Any]:
    return {
        "kind": d.kind,
        "name": d.name,
        "qualname": d.qualname,
        "lang": d.lang,
        "file": d.file,
        "line": d.line,
        "end_line": d.end_line,
        "container": d.container,
        "trait": d.trait,
        "symbol": d.symbol,
        "cfg": list(d.cfg),
        "pp": [c.text for c in d.pp],
        "template_params": list(d.template_params),
        "params": [f"{p.name}: {p.type}" if p.type else p.name for p in d.params],
        "visibility": d.visibility,
        "vendored": vendored,
        "decl_only": bool(d.attrs.get("decl_only")),
    }


def makes_node(d: Definition) -> bool:
    """Does the definition become a graph node?  (A C/C++ prototype declares, it does not define.)"""
    return d.kind in GRAPH_NODE_KINDS and not (d.lang == "cuda" and d.attrs.get("decl_only"))


def memo_on(t: Any, name: str, make: Callable[[], _T]) -> _T:
    """``make()`` computed once per tables object (linking file by file asks for whole-table
    scans per file: the tables are shared, so is the answer)."""
    got: _T | None = getattr(t, name, None)
    if got is None:
        got = make()
        try:
            setattr(t, name, got)
        except AttributeError:
            pass
    return got


def cpp_registrations(t: Tables) -> list[Registration]:
    """TORCH_LIBRARY / PYBIND11_MODULE registrations of every file (once per tables object)."""
    return memo_on(t, "_cpp_registrations", lambda: registrations(t))


def cpp_binding_ids(t: Tables) -> dict[str, str]:
    """Node id → ``cpp_binding`` of every registered binding (for ``known`` in per-file links)."""
    return {f"{r.framework}:{r.dotted}": "cpp_binding" for r in cpp_registrations(t)}


def pyo3_names(t: Tables) -> list[tuple[Binding, str]]:
    """(binding, python-visible dotted name) of every PyO3 method/function binding (computed once
    per tables object: linking file by file asks for it per file)."""
    cached: list[tuple[Binding, str]] | None = getattr(t, "_pyo3_names", None)
    if cached is not None:
        return cached
    out = []
    fn_module = {b.rust_qualname.split("::")[-1]: b.python_module for b in t.bindings
                 if b.kind == "module_member" and b.attrs.get("what") == "function"}
    only = next(iter(t.pymodules)) if len(t.pymodules) == 1 else ""
    for b in t.bindings:
        if b.kind not in ("method", "function"):
            continue  # a class itself is reached through its constructor/methods
        if b.kind == "function":
            module = fn_module.get(b.rust_qualname.split("::")[-1], only)
            out.append((b, f"{module}.{b.python_name}" if module else b.python_name))
            continue
        rtype = b.rust_type or b.rust_qualname.split("::")[-2]
        cls = t.pyclasses.get(rtype)
        cls_name = cls.python_name if cls else (b.python_class or rtype)
        module = t.pyclass_module.get(rtype, only)
        prefix = f"{module}.{cls_name}" if module else cls_name
        out.append((b, f"{prefix}.{'__new__' if b.attrs.get('constructor') else b.python_name}"))
    try:
        t._pyo3_names = out  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return out


class Linker:
    """Builds the graph.  With ``only`` (a set of files) and ``graph``, adds just those
    files' nodes and outgoing edges to an existing graph (see ``incremental.py``).

    A linker of a few files may be given the symbol ``tables`` of every file (eager or
    stored), the ``includes`` of every file and ``known``: node id → kind of the nodes
    other files own, which ``graph`` then need not hold (parallel and stored re-links).
    """

    def __init__(self, facts: dict[str, FileFacts], all_files: set[str], vendored: set[str],
                 only: set[str] | None = None, graph: Any = None,
                 tables: Tables | None = None, known: Mapping[str, str] | None = None,
                 includes: Mapping[str, set[str]] | None = None, by_base: dict[str, list[str]] | None = None,
                 indexed: set[str] | None = None, packages: Packages | None = None, expand: bool = True):
        if expand:  # macro invocations need every file's #defines: expanded here, before the tables
            from apxtui.index.macros import expand_macros  # lazy: start-up (a build expands beforehand)

            facts = expand_macros(facts, all_files, vendored, only)
        self.facts = facts
        self.only = only
        self.packages = packages if packages is not None else Packages()
        self.all_files = all_files
        self.vendored = vendored
        if tables is None:
            tables = Tables()
            for f in facts.values():
                tables.add_file(f)
            tables.finish()
        self.t = tables
        self.known = known
        if graph is None:
            import networkx as nx

            graph = nx.MultiDiGraph()
        self.g = graph
        self.by_base = by_base if by_base is not None else files_by_base(all_files)
        self.includes: Mapping[str, set[str]] = includes if includes is not None else defaultdict(set)
        self._own_includes = includes is None
        self.indexed = indexed if indexed is not None else set(facts)  # files with facts (an include target)
        self.pending_includes: set[str] = set()  # vendored files included but not parsed
        self.dropped: dict[str, Counter[str]] = defaultdict(Counter)  # file → reason → count
        self.dropped_lines: dict[str, list[tuple[int, str]]] = defaultdict(list)  # file → (line, reason)

    def _has(self, node: str) -> bool:
        return node in self.g or (self.known is not None and node in self.known)

    def _kind(self, node: str) -> str:
        if self.known is not None and node in self.known:
            return self.known[node]
        kind: str = self.g.nodes[node].get("kind", "")
        return kind

    def _own_defs(self) -> Iterator[tuple[str, Definition]]:
        """(node id, definition) of the linked files' definitions, as the tables index them."""
        for f in self.facts.values():
            if not self._mine(f.file):
                continue
            ids: dict[str, Definition] = {}
            for d in f.defs:
                ids[node_id(d)] = d
            yield from ids.items()

    # -- nodes -------------------------------------------------------------------------

    def _mine(self, file: str) -> bool:
        return self.only is None or file in self.only

    def _nodes(self) -> None:
        for nid, d in self._own_defs():
            if makes_node(d):
                self.g.add_node(nid, **_node_attrs(d, d.file in self.vendored))

    def _pyo3(self) -> dict[str, str]:
        """Binding nodes, keyed by the python-visible dotted name; `exposes` edges to Rust."""
        out: dict[str, str] = {}
        for b, dotted in pyo3_names(self.t):
            nid = f"pyo3:{dotted}"
            out[dotted] = nid
            if not self._mine(b.file):
                continue
            self.g.add_node(nid, kind="pyo3_binding", name=dotted.rsplit(".", 1)[-1], qualname=dotted, lang="rust",
                            file=b.file, line=b.line, end_line=b.line, vendored=False, attrs=dict(b.attrs))
            targets = [i for i in self.t.by_qual.get(b.rust_qualname, []) if self._has(i)]
            if not targets:
                targets = [i for i in self.t.by_name.get(("rust", b.rust_qualname.split("::")[-1]), [])
                           if self._has(i) and self.t.defs[i].container == (b.rust_type or self.t.defs[i].container)]
            res = Resolved.of(targets, "PyO3 attribute on the Rust item")
            for tgt in res.targets:
                self.g.add_edge(nid, tgt, kind="exposes", file=b.file, line=b.line, col=0, site=f"{b.file}:{b.line}:0",
                                resolution=res.status, how=res.how, conditions=[], loops=[], callee=b.rust_qualname)
        return out

    def _wants_bindings(self) -> bool:
        """Do the linked files call Python bindings or register C++ functions?  (Else the
        registrations of every file need not be read.)"""
        return any(f.lang == "python" or any(d.attrs.get("macro_like") for d in f.defs)
                   for f in self.facts.values() if self._mine(f.file))

    def _cpp_bindings(self, cuda: CudaResolver) -> PythonOps:
        """Binding nodes of C++ functions registered for Python (TORCH_LIBRARY, PYBIND11_MODULE;
        queries/frameworks/pytorch.toml, pybind11.toml), one ``exposes`` edge per registered
        implementation (a dispatch point over the dispatch keys when there are several)."""
        nodes: dict[str, str] = {}
        by_op: dict[str, list[str]] = defaultdict(list)
        by_fn: dict[str, list[str]] = defaultdict(list)
        regs = cpp_registrations(self.t)
        by_dotted: dict[str, list[Registration]] = defaultdict(list)
        for r in regs:
            by_dotted[r.dotted].append(r)
        for dotted, rs in by_dotted.items():
            r0 = rs[0]
            nid = f"{r0.framework}:{dotted}"
            nodes[dotted] = nid
            if r0.from_build:
                (by_op if r0.framework == "pytorch" else by_fn)[r0.name].append(nid)
            if not self._mine(r0.file):
                continue
            self.g.add_node(nid, kind="cpp_binding", name=r0.name, qualname=dotted, lang="cuda", file=r0.file,
                            line=r0.line, end_line=r0.line, vendored=r0.file in self.vendored, framework=r0.framework,
                            namespace_from_build=r0.from_build)
            impls = [r for r in rs if r.fn]
            for i, r in enumerate(impls):
                fake = CallSite("call", r.fn, r.fn.split("::"), "", r.file, r.line, 0)
                res = cuda.resolve(fake, None, ("host_fn", "abi_fn"))
                key = r.key or ("any dispatch key" if r.framework == "pytorch" else "")
                ctx = [Context("switch_case", f"dispatch key {key}", r.line, f"torchop:{dotted}", i,
                               subject="dispatch key")] if len(impls) > 1 else []
                site = CallSite("call", r.fn, r.fn.split("::"), dotted, r.file, r.line, 0, contexts=ctx,
                                attrs={"site_tag": f"impl{i}", "dispatch_key": key})
                how = f"{'m.impl' if r.framework == 'pytorch' else 'm.def'} at {r.file}:{r.line}; {res.how}"
                self._add_call_edges(nid, site, Resolved(res.targets, res.status, how, res.external,
                                                         res.external_kind))
                for _, _, data in self.g.out_edges(nid, data=True):
                    data["kind"] = "exposes"
        return PythonOps(nodes, dict(by_op), dict(by_fn), memo_on(
            self.t, "_py_roots", lambda: frozenset(m.split(".")[0] for m in self.t.py_modules)))

    def _includes(self) -> None:
        for f in self.facts.values():
            if not self._own_includes and not self._mine(f.file):
                continue
            for imp in f.imports:
                if imp.kind != "include":
                    continue
                target = resolve_include(imp.path, f.file, self.all_files, self.by_base)
                if target is None:
                    continue
                if self._own_includes:
                    self.includes[f.file].add(target)
                if not self._mine(f.file):
                    continue
                if target not in self.indexed:
                    self.pending_includes.add(target)
                    continue
                src, dst = f"file:{f.file}", f"file:{target}"
                for n, rel in ((src, f.file), (dst, target)):
                    if n not in self.g:
                        self.g.add_node(n, kind="file", name=rel, qualname=rel, lang="cuda", file=rel, line=1,
                                        end_line=1, vendored=rel in self.vendored)
                self.g.add_edge(src, dst, kind="include", file=f.file, line=imp.line, col=0,
                                site=f"{f.file}:{imp.line}:0", resolution="exact", how="#include path",
                                conditions=[], loops=[], callee=imp.path)

    # -- edges -------------------------------------------------------------------------

    def _caller(self, f: FileFacts, call: CallSite, index: dict[tuple[str, str], list[str]]) -> str:
        ids = index.get((f.file, call.caller), [])
        if len(ids) > 1:
            inside = [i for i in ids if self._defs[i].line <= call.line <= self._defs[i].end_line]
            ids = inside or ids
        if ids:
            return ids[0]
        # module-level code (Python scripts, C++ globals): a synthetic node per file
        nid = module_node_id(f.module, f.file)
        if nid not in self.g:
            lang = f.lang
            self.g.add_node(nid, kind="python_fn" if lang == "python" else "host_fn", name="<module>",
                            qualname=f"{f.module or f.file}.<module>", lang=lang, file=f.file, line=1,
                            end_line=f.lines, vendored=f.file in self.vendored, module_level=True)
        return nid

    def _edge_kind(self, call: CallSite, target_kind: str) -> str:
        if call.kind == "launch":
            return "launch"
        if call.kind == "vendor" or target_kind == "vendor_api":
            return "vendor"
        if target_kind in ("pyo3_binding", "cpp_binding"):
            return "binding"
        if target_kind == "kernel":
            return "launch"
        return "call"

    def _calls(self, pyo3: dict[str, str]) -> None:
        rust = RustResolver(self.t, self.packages, self.facts)
        cuda = CudaResolver(self.t, cast("dict[str, set[str]]", self.includes), self.vendored)
        py = PythonResolver(self.t, pyo3, self.packages)
        pyops = self._cpp_bindings(cuda) if self._wants_bindings() else PythonOps({}, {}, {})
        fnptr = FnPointers(self.t, rust, cuda)
        fw = Frameworks(self.t, rust)
        index: dict[tuple[str, str], list[str]] = defaultdict(list)
        for nid, d in self._own_defs():
            if nid in self.g:
                index[(d.file, d.qualname)].append(nid)
        for f in self.facts.values():
            if not self._mine(f.file):
                continue
            for call in f.calls:
                if call.attrs.get("file_level"):  # a file-level macro invocation: its expansion's defs are nodes
                    self.dropped[f.file]["file-level macro invocation"] += 1
                    self.dropped_lines[f.file].append((call.line, "file-level macro invocation"))
                    continue
                src = self._caller(f, call, index)
                caller = self._defs.get(src)
                if f.lang == "rust":  # framework models (queries/frameworks/*.toml)
                    lib = fw.library(call)
                    if lib is not None:
                        call = replace(call, kind="vendor", callee=lib[1], path=[lib[1]],
                                       attrs={**call.attrs, "library": lib[0], **lib[2]})
                    else:
                        extras = fw.custom_op(call, caller) or fw.map_call(call, caller)
                        for x in extras or fw.load_by_name(call, caller, f):
                            res = Resolved([x.target], x.resolution, x.how) if x.target else Resolved(
                                status=x.resolution, how=x.how, external=call.args[0].strip('&"'),
                                external_kind="kernel")
                            self._add_call_edges(src, with_context(call, x), res)
                        if extras:
                            continue  # the op's own methods replace the generic entry point
                local = cuda.project_definition(call, caller) if call.kind == "vendor" and f.lang == "cuda" else None
                if local is not None:
                    res = local
                elif call.kind == "vendor":
                    lib = call.attrs.get("library", "vendor")
                    name = call.callee or call.attrs.get("operator_type", "?")
                    res = Resolved([f"vendor:{lib}:{name}"], "exact", f"{lib} API named in the source")
                    if res.targets[0] not in self.g:
                        self.g.add_node(res.targets[0], kind="vendor_api", name=name, qualname=name, lang="cuda",
                                        library=lib, file="", line=0, end_line=0, vendored=False,
                                        operator_type=call.attrs.get("operator_type", ""))
                elif call.kind == "cast":
                    continue  # a conversion, not a call (kept in the facts for dtype analysis)
                elif call.kind == "macro" and f.lang == "rust" and call.args and (
                        passed := fnptr.rust_passed(call, caller)):  # `launch!(F32, ffi::rms_f32)`
                    for i, arm in enumerate(passed):
                        site = replace(call, attrs={**call.attrs, "site_tag": f"arg{i}"})
                        self._add_call_edges(src, site, arm_resolved(arm))
                    self.g.nodes[src].setdefault("macros", []).append(
                        {"name": call.callee, "line": call.line, "wraps": call.attrs.get("wrapped_calls", [])})
                    continue
                elif call.kind == "macro":
                    res = Resolved(drop=True, how="macro (not expanded)")
                    self.g.nodes[src].setdefault("macros", []).append(
                        {"name": call.callee, "line": call.line, "wraps": call.attrs.get("wrapped_calls", [])})
                    continue
                elif (arms := fnptr.rust_call(call, caller, f.defs) if f.lang == "rust" else
                      fnptr.cuda_launch(call, caller) if f.lang == "cuda" else None):
                    for i, arm in enumerate(arms):  # a function pointer: one edge per value it may hold
                        self._add_call_edges(src, arm_call(call, arm, i), arm_resolved(arm))
                    continue
                elif f.lang == "rust":
                    res = rust.resolve(call, caller)
                    if call.args and call.kind in ("call", "method"):
                        for i, arm in enumerate(fnptr.rust_passed(call, caller)):
                            site = replace(call, attrs={**call.attrs, "site_tag": f"arg{i}"})
                            self._add_call_edges(src, site, arm_resolved(arm))
                elif f.lang == "python":
                    hit = pyops.resolve(py.expand(".".join(call.path or [call.callee]), call)) if pyops.nodes else None
                    res = Resolved(hit[0], hit[1] if len(hit[0]) == 1 else "ambiguous", hit[2]) if hit \
                        else py.resolve(call, caller)
                else:
                    kinds = ("kernel",) if call.kind == "launch" else ("host_fn", "abi_fn", "device_fn", "kernel")
                    res = cuda.resolve(call, caller, kinds)
                if f.lang != "rust":  # (the Rust resolver filters every candidate list itself)
                    res = self._in_closure(call, res)
                if (res.status == AMBIGUOUS or not res.targets) and self.g.nodes[src].get("vendored") \
                        and call.kind != "launch":
                    res = Resolved(drop=True, how="vendored code: only exact links are kept")
                if res.drop:
                    self.dropped[f.file][res.how] += 1
                    self.dropped_lines[f.file].append((call.line, res.how))
                    self.g.nodes[src]["dropped"] = self.g.nodes[src].get("dropped", 0) + 1
                    continue
                self._add_call_edges(src, call, res)

    def _in_closure(self, call: CallSite, res: Resolved) -> Resolved:
        """Never a candidate outside the caller's dependency closure (the resolvers filter first;
        this keeps the rule for every language and rule)."""
        if not res.targets:
            return res
        defs, vis = self.t.defs, self.packages.visible
        keep = [t for t in res.targets if t not in defs or vis(call.file, defs[t].file)]
        if len(keep) == len(res.targets):
            return res
        if not keep:
            return Resolved(drop=True, how="every candidate is outside the caller's dependency closure")
        # never upgraded here: a resolver's `ambiguous` stays so with one candidate left
        return Resolved(keep, res.status, f"{res.how}; {len(keep)} of {len(res.targets)} in the caller's dependency "
                        "closure", name_only=res.name_only)

    def _add_call_edges(self, src: str, call: CallSite, res: Resolved) -> None:
        targets = [t for t in res.targets if self._has(t)]
        how = res.how
        if len(targets) > MAX_CANDIDATES:  # kept and listed on one node, not drawn as N edges
            amb = f"ambiguous:{call.callee}@{call.file}:{call.line}"
            self.g.add_node(amb, kind="external", name=call.callee.split("::")[-1], qualname=call.callee,
                            lang=self.g.nodes[src].get("lang", ""), file="", line=0, end_line=0, vendored=False,
                            external_kind="ambiguous", candidates=sorted(targets))
            how = f"{res.how}; {len(targets)} candidates, listed on the node"
            targets = [amb]
            status = AMBIGUOUS
        elif not targets:
            name = res.external or call.callee
            ext = f"external:{name}"
            if ext not in self.g:
                self.g.add_node(ext, kind="external", name=name.split("::")[-1].split(".")[-1], qualname=name,
                                lang=self.g.nodes[src].get("lang", ""), file="", line=0, end_line=0, vendored=False,
                                external_kind=res.external_kind or "external")
            targets = [ext]
            status = UNRESOLVED
        else:
            status = res.status
        conditions = [dict(vars(c)) for c in call.contexts if c.kind in BRANCH_KINDS]
        loops = [c.text for c in call.contexts if c.kind == "loop"]
        closures = [c.text for c in call.contexts if c.kind == "closure"]
        base = {
            "file": call.file, "line": call.line, "col": call.col,
            # chained calls share a column; the calls of one macro expansion share its position, and
            # so do the arms of a function-pointer dispatch: their tags tell them apart
            "site": f"{call.file}:{call.line}:{call.col}:{call.callee}" + "".join(
                f"#{call.attrs[k]}" for k in ("macro_site", "site_tag") if k in call.attrs),
            "callee": call.callee, "receiver": call.receiver, "args": list(call.args),
            "template_args": list(call.template_args), "launch_config": list(call.launch_config),
            "conditions": conditions, "loops": loops, "closures": closures, "resolution": status, "how": how,
            "candidates": len(targets), "text": call.text, "call_kind": call.kind, "attrs": dict(call.attrs),
            "name_only": res.name_only,
        }
        for tgt in targets:
            kind = self._edge_kind(call, self._kind(tgt))
            self.g.add_edge(src, tgt, key=base["site"], kind=kind, **base)

    def _ffi(self) -> None:
        for nid, d in self._own_defs():
            if d.kind != "ffi_decl" or nid not in self.g:
                continue
            sym = d.symbol or d.name
            targets = [i for i in self.t.symbols.get(sym, []) if self._has(i) and i != nid]
            res = Resolved.of(targets, f"C symbol {sym}")
            if not targets:
                res = Resolved(status=UNRESOLVED, how=f"no definition of C symbol {sym} in the indexed code",
                               external=sym, external_kind="abi")
            call = CallSite("call", sym, [sym], d.qualname, d.file, d.line, 0)
            self._add_call_edges(nid, call, res)
            for _, _, data in self.g.out_edges(nid, data=True):
                data["kind"] = "ffi"

    def link(self) -> Any:
        """Link the files: the graph written to (``graph``, or a new networkx one)."""
        was = gc.isenabled()
        gc.disable()  # linking makes many small acyclic objects; collector passes over them cost more than the work
        try:
            return self._link()
        finally:
            if was:
                gc.enable()

    def _link(self) -> Any:
        self._defs = dict(self._own_defs())  # the linked files' own definitions (with their locals)
        self._nodes()
        pyo3 = self._pyo3()
        self._includes()
        self._calls(pyo3)
        self._ffi()
        by_file = self.g.graph.setdefault("dropped_by_file", {})
        for f in self.only if self.only is not None else list(by_file):
            by_file.pop(f, None)
        by_file.update({f: dict(c) for f, c in self.dropped.items()})
        total: Counter[str] = Counter()
        for c in by_file.values():
            total.update(c)
        self.g.graph["dropped"] = dict(total)
        return self.g


def link(facts: dict[str, FileFacts], all_files: set[str], vendored: set[str],
         packages: Packages | None = None, expand: bool = True) -> tuple[nx.MultiDiGraph[str], Linker]:
    """The graph of ``facts`` (macro invocations expanded first unless ``expand`` is False:
    the caller did it, see :func:`apxtui.index.macros.expand_macros`)."""
    linker = Linker(facts, all_files, vendored, packages=packages, expand=expand)
    return linker.link(), linker


__all__ = ["link", "Linker", "node_id", "resolve_include", "makes_node"]
