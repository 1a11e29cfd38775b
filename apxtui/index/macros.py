"""Macro invocations expanded across files, before linking.

Extraction reads one file at a time, so it can only note where a function-like macro
*may* be invoked (``macro_call`` on a call site: a name defined as a macro in the file or
written in ALL_CAPS; file-level ``NAME(args)`` lines as ``macro`` call sites).  Here,
with every file's ``#define``s known, each such invocation is expanded with the
definitions visible from its file — the file's own and those of the files it
``#include``s, transitively — by the preprocessor model (:mod:`apxtui.parse.cpp_macros`),
and the expansion is read as code:

* a statement invocation's calls and launches replace the invocation's own call sites,
  in the enclosing function, under the invocation's contexts plus the expansion's own
  (``switch (block_size) { case 8: … }`` inside a macro becomes a dispatch point);
  each carries ``macro`` (name), ``macro_at`` (the invocation, path:line) and
  ``macro_defs`` (the definitions used, path:line);
* a file-level invocation adds the kernels and functions it defines (``BINARY_OP(float,
  badd_f32, x + y)`` → kernel ``badd_f32``), with the calls and launches in their bodies;
* a macro defined differently in several visible places (``#if`` alternatives) is
  expanded once per definition, each expansion under a ``pp_if`` context naming the
  definition's condition, so a profile decides it as it decides any ``#if``;
* an expansion that adds nothing but standard-library or CUDA-runtime calls (error
  checks such as ``CUDA_CHECK``) is not used: the invocation is kept as a ``macro`` call
  site (counted, not drawn) and the calls in its arguments stay as extracted.

Invocations the preprocessor cannot expand stay as they were and are reported as
``macro`` issues of the file.  Vendored files are not expanded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from apxtui.facts import CallSite, Context, FileFacts, Issue
from apxtui.index import framework_models as fm
from apxtui.index.gcpause import gc_paused
from apxtui.index.includes import files_by_base, resolve_include
from apxtui.index.resolve_cuda import _RUNTIME_RE, CPP_STD
from apxtui.index.rust_macros import RustMacros, expand_rust_file
from apxtui.index.tables import MacroRule
from apxtui.parse.cpp_macros import (
    Expander,
    ExpansionError,
    Invocation,
    MacroDef,
    macro_defs,
    read_expansions,
    shape,
)

T = TypeVar("T")  # what an encoder makes of expanded facts

_BRANCHES = frozenset(("if", "else", "switch_case", "match_arm", "pp_if"))
#: Invocations expanded per file at most (the rest are kept as written and counted).
MAX_PER_FILE = 5000


class _Visible:
    """Function-like macro definitions visible from each file (its own, then its includes')."""

    def __init__(self, facts: Mapping[str, FileFacts], all_files: set[str],
                 rust_table: Mapping[str, list[MacroRule]] | None = None):
        self.facts = facts
        self.rust_table = rust_table  # the checkout's macro_rules! (Tables.macro_rules), else gathered from facts
        self.all_files = all_files
        self.by_base = files_by_base(all_files)  # the linker's index: includes resolve the same way
        self._defs: dict[str, dict[str, list[MacroDef]]] = {}
        self._model: dict[str, MacroDef] | None = None
        self._rust: RustMacros | None = None
        self.scalar_types: dict[str, str] = fm.merged("scalar_types")
        self.shapes: dict[MacroDef, bool] = {}  # definition → only library calls (see _static_library_only)
        self._closure: dict[str, list[str]] = {}

    def expand(self, f: FileFacts) -> FileFacts:
        """``f`` with its C macro invocations or Rust item-level ``macro_rules!`` invocations expanded."""
        if f.lang == "rust":
            return expand_rust_file(f, self.rust_macros())
        return expand_file(f, self)

    def rust_macros(self) -> RustMacros:
        """The checkout's ``macro_rules!`` (made on first use)."""
        if self._rust is None:
            self._rust = RustMacros(self.facts, self.rust_table)
        return self._rust

    def defs(self, file: str) -> dict[str, list[MacroDef]]:
        got = self._defs.get(file)
        if got is None:
            got = defaultdict(list)
            f = self.facts.get(file)
            if f is not None and f.lang == "cuda":
                for d in macro_defs(f):
                    got[d.name].append(d)
            self._defs[file] = got
        return got

    def closure(self, file: str) -> list[str]:
        """``file`` and what it includes, transitively, in breadth-first order."""
        hit = self._closure.get(file)
        if hit is not None:
            return hit
        order, seen = [file], {file}
        i = 0
        while i < len(order):
            f = self.facts.get(order[i])
            i += 1
            if f is None:
                continue
            for imp in f.imports:
                if imp.kind != "include" or imp.system:
                    continue
                t = resolve_include(imp.path, f.file, self.all_files, self.by_base)
                if t is not None and t not in seen:
                    seen.add(t)
                    order.append(t)
        self._closure[file] = order
        return order

    def candidates(self, file: str, name: str, line: int) -> list[MacroDef]:
        """Distinct definitions of ``name`` visible at ``file:line`` (own file: the last before the line)."""
        own = self.defs(file).get(name, [])
        before = [d for d in own if d.line < line]
        if before:
            return [before[-1]]
        out: list[MacroDef] = []
        bodies: set[tuple[str, str]] = set()
        for inc in self.closure(file)[1:]:
            for d in self.defs(inc).get(name, []):
                if (d.params, d.body) not in bodies:
                    bodies.add((d.params, d.body))
                    out.append(d)
        return out or own[:1] or self.model(name)

    def model(self, name: str) -> list[MacroDef]:
        """A framework model's definition of ``name`` (``AT_DISPATCH_*``: headers not in the checkout)."""
        if self._model is None:
            self._model = {}
            for m in fm.models():
                for mname, text in (m.get("macros") or {}).items():
                    params, _, body = str(text).partition(")")
                    self._model.setdefault(mname, MacroDef(mname, params.strip() + ")", body.strip(),
                                                           f"{m['name']} model", 0))
        d = self._model.get(name)
        return [d] if d is not None else []


def _library_only(calls: list[CallSite], inv: Invocation) -> bool:
    """Does the expansion only add standard-library / CUDA-runtime calls (an error check)?"""
    for c in calls:
        if c.kind in ("launch", "vendor"):
            return False
        if c.attrs.get("macro_origin") == "argument":
            if any(x.kind in _BRANCHES for x in c.contexts[len(inv.contexts):]):
                return False  # an argument's call now under a branch of the macro: a dispatch
            continue
        name = c.callee.split("::")[-1]
        if c.kind == "method" or not (_RUNTIME_RE.match(name) or name in CPP_STD or c.callee.startswith("std::")
                                      or name.startswith("__")):
            return False
    return True


def _library_name(name: str) -> bool:
    return bool(_RUNTIME_RE.match(name)) or name in CPP_STD or name.startswith("__")


def _static_library_only(top: MacroDef, lookup: Callable[[str], MacroDef | None], memo: dict[MacroDef, bool],
                         depth: int = 0) -> bool:
    """Is a definition, with the macros its body invokes, visibly only library calls with no
    launch and no branch around its arguments?  Then expanding it could add nothing worth drawing."""
    hit = memo.get(top)
    if hit is not None:
        return hit
    memo[top] = False  # a cycle: not decided this way
    called, launches, branched = shape(top)
    ok = not launches and not branched and depth < 8
    for name in called if ok else ():
        inner = lookup(name)
        if inner is not None:
            ok = _static_library_only(inner, lookup, memo, depth + 1)
        else:
            ok = _library_name(name)
        if not ok:
            break
    memo[top] = ok
    return ok


def expand_file(f: FileFacts, vis: _Visible) -> FileFacts:
    """``f`` with its macro invocations expanded (the same object when there is nothing to do)."""
    cands = [c for c in f.calls if "macro_call" in c.attrs and "macro_expanded" not in c.attrs]
    if not cands:
        return f
    expander_for: dict[tuple[str, int], Expander] = {}
    invs: list[tuple[CallSite, Invocation, tuple[int, int]]] = []
    issues: list[Issue] = []
    covered: list[tuple[str, int, int, tuple[int, int]]] = []  # (caller, line, col, end) of expanded ones
    marked_static: set[int] = set()
    for c in sorted(cands, key=lambda c: (c.line, c.col)):
        end = tuple(c.attrs.get("macro_end") or (c.line, c.col))
        if any(caller == c.caller and (ln, col) <= (c.line, c.col) <= e for caller, ln, col, e in covered):
            continue  # inside an invocation being expanded: pcpp expands it there
        alts = vis.candidates(f.file, c.callee, c.line)
        if not alts:
            continue
        if len(invs) >= MAX_PER_FILE:
            issues.append(Issue(f.file, "macro", f"more than {MAX_PER_FILE} macro invocations; the rest not expanded",
                                c.line))
            break
        library_only = False
        for i, top in enumerate(alts):
            key = (top.file, top.line)

            def lookup(name: str, top: MacroDef = top) -> MacroDef | None:
                if name == top.name:
                    return top
                found = vis.candidates(top.file, name, 1 << 30) or vis.candidates(f.file, name, 1 << 30)
                return found[0] if found else None

            if not c.attrs.get("file_level") and len(alts) == 1 and _static_library_only(top, lookup, vis.shapes):
                library_only = True
                break
            ex = expander_for.setdefault(key, Expander(lookup, vis.scalar_types))
            try:
                expansion = ex.expand(c.attrs["macro_call"])
            except ExpansionError as e:
                issues.append(Issue(f.file, "macro", f"macro {c.callee} (defined at {top.where}) not expanded: {e}",
                                    c.line))
                continue
            except RecursionError:
                issues.append(Issue(f.file, "macro", f"macro {c.callee} (defined at {top.where}) not expanded: "
                                    "nested too deeply", c.line))
                continue
            ctxs = list(c.contexts)
            if len(alts) > 1:
                cond = " && ".join(top.cond) or f"{c.callee} as defined at {top.where}"
                ctxs.append(Context("pp_if", cond, c.line, f"mdef:{c.line}:{c.col}", i))
            inv = Invocation(c.attrs["macro_call"], f.file, c.line, c.col, c.caller, ctxs,
                             list(c.attrs.get("scope", [])), bool(c.attrs.get("abi")), expansion)
            invs.append((c, inv, end))
        if library_only:
            marked_static.add(id(c))
        elif invs and invs[-1][0] is c:
            covered.append((c.caller, c.line, c.col, end))
    if not invs and not issues and not marked_static:
        return f
    new_defs, new_calls, returns = read_expansions(f.file, [inv for _, inv, _ in invs])
    by_inv: dict[tuple[int, int], list[CallSite]] = defaultdict(list)
    for nc in new_calls:
        at = nc.attrs.get("macro_site", "").split("#")[0]
        ln, _, col = at.partition(":")
        by_inv[(int(ln or 0), int(col or 0))].append(nc)
    with_returns = {tuple(int(x) for x in e["macro_site"].split(":")) for es in returns.values() for e in es}
    keep_calls: list[CallSite] = []
    used: dict[int, tuple[CallSite, tuple[int, int]]] = {}
    marked: dict[int, str] = dict.fromkeys(marked_static, "library calls only")
    for c, inv, end in invs:
        if id(c) in used or id(c) in marked:
            continue  # another definition of the same invocation: its calls are in the same list
        derived = by_inv.get((inv.line, inv.col), [])
        if not inv.file_level and (inv.line, inv.col) not in with_returns and _library_only(derived, inv):
            marked[id(c)] = "library calls only"
            continue
        used[id(c)] = (c, end)
        keep_calls.extend(derived)
    calls: list[CallSite] = []
    # the calls written in an expanded invocation's arguments are the expansion's (a file-level one's too:
    # `UNARY_OP(float, f, floorg(x))` is a call in kernel `f`, not one by the file)
    spans = [(c.caller, (c.line, c.col), end) for c, end in used.values()]
    for c in f.calls:
        if id(c) in used and c.attrs.get("file_level"):
            calls.append(replace(c, attrs={**c.attrs, "macro_expanded": True}))
            continue
        if any(c.caller == caller and start <= (c.line, c.col) <= end for caller, start, end in spans):
            continue  # the invocation and the calls in its arguments: replaced by the expansion's
        if id(c) in marked:
            c = replace(c, kind="macro", attrs={**c.attrs, "macro_expanded": marked[id(c)]})
        calls.append(c)
    calls.extend(keep_calls)
    calls.sort(key=lambda c: (c.line, c.col))
    old_defs = [replace(d, attrs={**d.attrs, "returns": [*d.attrs.get("returns", []), *returns[d.qualname]]})
                if d.qualname in returns and d.kind != "cpp_type" else d for d in f.defs]
    defs = sorted([*old_defs, *new_defs], key=lambda d: (d.line, d.name))
    return replace(f, defs=defs, calls=calls, issues=[*f.issues, *issues])


def expand_macros(facts: Mapping[str, FileFacts], all_files: set[str], vendored: set[str],
                  only: set[str] | None = None, workers: int = 1) -> dict[str, FileFacts]:
    """``facts`` with every project C/C++ file's macro invocations expanded (a new dict; files
    without invocations keep their object).  ``only``: expand just these files.  With
    ``workers`` > 1 and enough files, the files are shared out over forked worker processes
    (they inherit ``facts``; only the files expansion changed come back)."""
    out = dict(facts)
    out.update(expand_encoded(facts, all_files, vendored, _identity, only, workers))
    return out


def _identity(f: FileFacts) -> FileFacts:
    return f


def expand_encoded(facts: Mapping[str, FileFacts], all_files: set[str], vendored: set[str],
                   encode: Callable[[FileFacts], T], only: set[str] | None = None,
                   workers: int = 1, rust_table: Mapping[str, list[MacroRule]] | None = None
                   ) -> dict[str, T]:
    """``encode`` of the expanded facts of each file expansion changes (see :func:`expand_macros`);
    files it leaves unchanged are left out.  In parallel, ``encode`` runs in the forked workers
    (inherited, never pickled), so only its result travels back to the parent."""
    work = [rel for rel in facts  # (keys only: ``facts`` may read other files' facts on demand)
            if (only is None or rel in only) and rel not in vendored and facts[rel].lang in ("cuda", "rust")
            and any("macro_call" in c.attrs or c.attrs.get("item_level") for c in facts[rel].calls)]
    if not work:
        return {}
    with gc_paused():
        if workers > 1 and len(work) >= 8:
            return _expand_parallel(facts, all_files, work, workers, encode, rust_table)
        vis = _Visible(facts, all_files, rust_table)
        return {rel: encode(g) for rel in work if (g := vis.expand(facts[rel])) is not facts[rel]}


# what forked workers inherit: the facts, the checkout's files, the encoder
_SHARED: tuple[Mapping[str, FileFacts], set[str], Callable[[FileFacts], object], Any] | None = None


def _expand_chunk(rels: list[str]) -> list[tuple[str, object]]:
    assert _SHARED is not None
    facts, all_files, encode, rust_table = _SHARED
    vis = _Visible(facts, all_files, rust_table)
    with gc_paused():  # only the files expansion changed go back to the parent, encoded here
        return [(r, encode(g)) for r in rels if (g := vis.expand(facts[r])) is not facts[r]]


def _expand_parallel(facts: Mapping[str, FileFacts], all_files: set[str], work: list[str],
                     workers: int, encode: Callable[[FileFacts], T],
                     rust_table: Mapping[str, list[MacroRule]] | None = None) -> dict[str, T]:
    global _SHARED
    weight = {r: sum(len(c.attrs.get("macro_call", "")) for c in facts[r].calls) for r in work}
    chunks: list[list[str]] = [[] for _ in range(workers * 4)]
    for i, r in enumerate(sorted(work, key=lambda r: -weight[r])):  # big first, dealt round-robin
        chunks[i % len(chunks)].append(r)
    _SHARED = (facts, all_files, encode, rust_table)
    out: dict[str, T] = {}
    import multiprocessing  # lazy: start-up (a re-link expands in-process)
    from concurrent.futures import ProcessPoolExecutor

    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as ex:
            for res in ex.map(_expand_chunk, [c for c in chunks if c]):
                out.update(res)  # type: ignore[arg-type]
    finally:
        _SHARED = None
    return out


Visible = _Visible  # the definitions visible from each file (what expansion reads of other files)
