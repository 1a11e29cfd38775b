"""tree-sitter languages, parsers and the user-extensible queries in ``queries/*.scm``.

Query files are looked up, first match wins, in: ``$APXTUI_QUERIES``, the user's
``$XDG_CONFIG_HOME/apxtui/queries``, the repository's ``queries/`` folder next to the
package (a source checkout), and the copy packaged as ``apxtui/_queries`` (a wheel).
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import cache
from pathlib import Path

import tree_sitter as ts


@cache
def language(lang: str) -> ts.Language:
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


@cache
def query(lang: str) -> ts.Query:
    try:
        return ts.Query(language(lang), query_source(lang))
    except Exception as e:  # tree-sitter raises QueryError subclasses
        raise ValueError(f"{query_path(lang)}: invalid query: {e}") from e


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


def queries_fingerprint() -> str:
    """Hash of all query texts: part of the cache key (a changed query re-extracts)."""
    h = hashlib.blake2b(digest_size=8)
    for lang in ("rust", "cuda", "python"):
        try:
            h.update(query_source(lang).encode())
        except FileNotFoundError:
            h.update(b"-")
    return h.hexdigest()


def matches(lang: str, node: ts.Node) -> list[tuple[int, dict[str, list[ts.Node]]]]:
    """All matches of the language's query under ``node``: (pattern index, captures)."""
    return ts.QueryCursor(query(lang)).matches(node)
