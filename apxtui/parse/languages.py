"""tree-sitter languages, parsers and the user-extensible queries in ``queries/*.scm``.

Query files are looked up, first match wins, in: ``$APXTUI_QUERIES``, the user's
``$XDG_CONFIG_HOME/apxtui/queries``, the repository's ``queries/`` folder next to the
package (a source checkout), and the copy packaged as ``apxtui/_queries`` (a wheel).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import tree_sitter as ts


@cache
def language(lang: str) -> ts.Language:
    mod: Any
    if lang == "rust":
        import tree_sitter_rust as mod
    elif lang == "cuda":
        import tree_sitter_cuda as mod
    elif lang == "python":
        import tree_sitter_python as mod
    else:
        raise ValueError(f"unknown language {lang!r}")
    return ts.Language(mod.language())


def parser(lang: str) -> ts.Parser:
    return ts.Parser(language(lang))


def query_dirs() -> list[Path]:
    dirs = []
    env = os.environ.get("APXTUI_QUERIES")
    if env:
        dirs.append(Path(env))
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    dirs.append(Path(xdg) / "apxtui" / "queries")
    pkg = Path(__file__).resolve().parent.parent
    dirs.append(pkg.parent / "queries")
    dirs.append(pkg / "_queries")
    return dirs


def query_path(lang: str) -> Path:
    for d in query_dirs():
        p = d / f"{lang}.scm"
        if p.is_file():
            return p
    raise FileNotFoundError(f"no {lang}.scm in any of: " + ", ".join(str(d) for d in query_dirs()))


@cache
def query_source(lang: str) -> str:
    return query_path(lang).read_text("utf-8")


#: Compiled queries by language (see :func:`query`, :func:`compile_ahead`).
_COMPILED: dict[str, ts.Query] = {}
_ahead: threading.Thread | None = None


def query(lang: str) -> ts.Query:
    """The language's query, compiled once per process (waiting for :func:`compile_ahead`'s)."""
    if _ahead is not None and _ahead is not threading.current_thread():
        _ahead.join()
    got = _COMPILED.get(lang)
    if got is None:
        try:
            got = _COMPILED[lang] = ts.Query(language(lang), query_source(lang))
        except Exception as e:  # tree-sitter raises QueryError subclasses
            raise ValueError(f"{query_path(lang)}: invalid query: {e}") from e
    return got


def compile_ahead(langs: Iterable[str]) -> None:
    """Start compiling the queries of ``langs`` in a background thread, for a parse that is
    likely to come: tree-sitter releases the interpreter lock while it compiles (tens of
    milliseconds for Rust), so the caller's work meanwhile runs beside it.  :func:`query`
    waits for it; a query that fails to compile is left for :func:`query` to report."""
    global _ahead
    todo = sorted({lang for lang in langs if lang not in _COMPILED})
    if not todo or (_ahead is not None and _ahead.is_alive()):
        return

    def work() -> None:
        for lang in todo:
            try:
                _COMPILED.setdefault(lang, ts.Query(language(lang), query_source(lang)))
            except Exception:  # noqa: BLE001 - query() compiles it again and says why
                pass

    _ahead = threading.Thread(target=work, name="apxtui-compile-ahead", daemon=True)
    _ahead.start()


_CAPTURE_RE = re.compile(r"@([A-Za-z_][\w.]*)")
_STRING_RE = re.compile(r'"(?:\\.|[^"\\])*"')
_COMMENT_RE = re.compile(r";[^\n]*")
_PREDICATE_RE = re.compile(r"\(\s*#[^()]*\)")
_NODE_OPEN_RE = re.compile(r"\((?!\s*#)\s*[A-Za-z_]")
_STRUCTURE_RE = re.compile(r'[\[\]!.*+?:"]')  # alternatives, negated fields, anchors, quantifiers, fields, tokens


def _single_node_pattern(body: str) -> bool:
    """Is the pattern one node (``((identifier) @x (#match? @x "…"))``): no children, fields,
    alternatives, anchors or quantifiers, so its matches under any subtree are its matches there?"""
    body = _PREDICATE_RE.sub("", _STRING_RE.sub('""', _COMMENT_RE.sub("", body)))
    body = _CAPTURE_RE.sub("@", body)
    return len(_NODE_OPEN_RE.findall(body)) == 1 and not _STRUCTURE_RE.search(body)


@cache
def split_query(lang: str, families: tuple[str, ...]) -> tuple[ts.Query, ts.Query | None]:
    """The language's query as (the other patterns, the single-node patterns whose every
    capture not starting with ``_`` starts with one of ``families``); the second is None
    when there is no such pattern.  Lets an extractor run narrow name patterns on chosen
    subtrees only instead of testing their predicates on every node of the file."""
    full = query(lang)
    raw = query_source(lang).encode("utf-8")
    picked = set()
    for i in range(full.pattern_count):
        body = raw[full.start_byte_for_pattern(i) : full.end_byte_for_pattern(i)].decode("utf-8", "replace")
        names = [c for c in _CAPTURE_RE.findall(_COMMENT_RE.sub("", body)) if not c.startswith("_")]
        if names and all(c.startswith(families) for c in names) and _single_node_pattern(body):
            picked.add(i)
    if not picked:
        return full, None
    rest = ts.Query(language(lang), query_source(lang))
    for i in picked:
        rest.disable_pattern(i)
    sub = ts.Query(language(lang), b"\n".join(
        raw[full.start_byte_for_pattern(i) : full.end_byte_for_pattern(i)] for i in sorted(picked)).decode("utf-8"))
    return rest, sub


_PRED_RE = re.compile(r'\(\s*#([\w-]+[?!]?)\s+@([A-Za-z_][\w.]*)((?:\s+"(?:\\.|[^"\\])*")*)\s*\)')
_ARG_RE = re.compile(r'"((?:\\.|[^"\\])*)"')
_TYPE_RE = re.compile(r"\(\s*([A-Za-z_]\w*)\s*\)")


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def _text_test(op: str, args: list[str]) -> Callable[[str], bool] | None:
    """A Python test of a node's text equal to tree-sitter's text predicate, or None if unknown."""
    if op in ("eq?", "not-eq?") and len(args) == 1:
        want = args[0]
        return (lambda t: t == want) if op == "eq?" else (lambda t: t != want)
    if op in ("any-of?", "not-any-of?"):
        allowed = frozenset(args)
        return (lambda t: t in allowed) if op == "any-of?" else (lambda t: t not in allowed)
    if op in ("match?", "not-match?") and len(args) == 1:
        try:
            rx = re.compile(args[0])
        except re.error:
            return None
        return (lambda t: rx.search(t) is not None) if op == "match?" else (lambda t: rx.search(t) is None)
    return None


@dataclass(frozen=True)
class NameTest:
    """A single-node pattern (``((identifier) @cap (#match? @cap "…"))``) as a Python test."""

    node_type: str
    capture: str
    tests: tuple[Callable[[str], bool], ...]

    def __call__(self, node_type: str, text: str) -> bool:
        return node_type == self.node_type and all(t(text) for t in self.tests)


@cache
def name_tests(lang: str, families: tuple[str, ...]) -> tuple[tuple[NameTest, ...], ts.Query | None]:
    """The patterns :func:`split_query` splits out, as Python tests of a node's type and text
    (cheaper than running a query on each call's callee), and a query of those it cannot
    turn into tests (None when there is none)."""
    _, sub = split_query(lang, families)
    if sub is None:
        return (), None
    raw = query_source(lang).encode("utf-8")
    full = query(lang)
    tests: list[NameTest] = []
    rest: list[bytes] = []
    for i in range(full.pattern_count):
        body_b = raw[full.start_byte_for_pattern(i) : full.end_byte_for_pattern(i)]
        body = _COMMENT_RE.sub("", body_b.decode("utf-8", "replace"))
        caps: list[str] = _CAPTURE_RE.findall(_PREDICATE_RE.sub("", _STRING_RE.sub('""', body)))
        names = [c for c in caps if not c.startswith("_")]
        if not names or not all(c.startswith(families) for c in names) or not _single_node_pattern(body):
            continue
        test = _name_test(body, caps)
        if test is None:
            rest.append(body_b)
        else:
            tests.append(test)
    fallback = ts.Query(language(lang), b"\n".join(rest).decode("utf-8")) if rest else None
    return tuple(tests), fallback


def _name_test(body: str, caps: list[str]) -> NameTest | None:
    types = _TYPE_RE.findall(_PREDICATE_RE.sub("", _STRING_RE.sub('""', body)))
    if len(caps) != 1 or len(types) != 1:
        return None
    cap = caps[0]
    tests: list[Callable[[str], bool]] = []
    for m in _PRED_RE.finditer(body):
        op, on, args = m.group(1), m.group(2), [_unescape(a) for a in _ARG_RE.findall(m.group(3))]
        t = _text_test(op, args) if on == cap else None
        if t is None:
            return None
        tests.append(t)
    if len(tests) != len(re.findall(r"\(\s*#", body)):  # a predicate the regex did not read
        return None
    return NameTest(types[0], cap, tuple(tests))


@cache
def pattern_captures(lang: str) -> tuple[frozenset[str], ...]:
    """Per pattern index of the language's query: the capture names it declares (helpers
    starting with ``_`` left out), so an extractor can route a match by its pattern index."""
    full = query(lang)
    raw = query_source(lang).encode("utf-8")
    out = []
    for i in range(full.pattern_count):
        body = _COMMENT_RE.sub("", raw[full.start_byte_for_pattern(i) : full.end_byte_for_pattern(i)].decode("utf-8"))
        body = _PREDICATE_RE.sub("", _STRING_RE.sub('""', body))
        out.append(frozenset(c for c in _CAPTURE_RE.findall(body) if not c.startswith("_")))
    return tuple(out)


def framework_model_paths() -> list[Path]:
    """The framework model files in effect (``frameworks/*.toml`` of the query folders; a file
    in an earlier folder replaces the one of the same name in a later folder)."""
    seen: dict[str, Path] = {}
    for d in query_dirs():
        sub = d / "frameworks"
        if sub.is_dir():
            for p in sorted(sub.glob("*.toml")):
                seen.setdefault(p.name, p)
    return [seen[k] for k in sorted(seen)]


def queries_fingerprint() -> str:
    """Hash of all query texts and framework models: part of the cache key (a changed query
    re-extracts; a changed model re-links)."""
    h = hashlib.blake2b(digest_size=8)
    for lang in ("rust", "cuda", "python"):
        try:
            h.update(query_source(lang).encode())
        except FileNotFoundError:
            h.update(b"-")
    for p in framework_model_paths():
        h.update(p.name.encode())
        try:
            h.update(p.read_bytes())
        except OSError:
            h.update(b"-")
    return h.hexdigest()


def matches(lang: str, node: ts.Node) -> list[tuple[int, dict[str, list[ts.Node]]]]:
    """All matches of the language's query under ``node``: (pattern index, captures)."""
    return ts.QueryCursor(query(lang)).matches(node)
