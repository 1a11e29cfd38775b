"""Parsing: source bytes → :class:`apxtui.facts.FileFacts`, one file at a time, no linking.

``extract_file`` handles bad input (binary, non-UTF-8, syntax errors) by recording
an :class:`~apxtui.facts.Issue` and keeping whatever error recovery gives; it never
raises for a file's content.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import TYPE_CHECKING

from apxtui.facts import FileFacts, Issue
from apxtui.parse import languages
from apxtui.parse.budget import Budget, BudgetExceeded
from apxtui.parse.plain import TREE_FILES, from_tree

if TYPE_CHECKING:
    import tree_sitter as ts


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def prepare() -> None:
    """Import the extractors and compile their queries now: worker processes forked
    afterwards inherit them instead of each compiling its own."""
    from apxtui.parse import cuda, python, rust  # noqa: F401 - lazy: grammars load on the first parse

    for lang in ("rust", "cuda", "python"):
        languages.query(lang)
    cuda.queries()
    languages.name_tests("cuda", cuda._CALLEE_FAMILIES)


#: CPU seconds one file may take to parse and extract; a file past it is skipped with a
#: ``budget`` issue (extraction is linear in the file size, so only hostile input gets there).
FILE_BUDGET = 10.0
#: Parse-error regions reported per file (the rest summed in one more issue).
MAX_ERROR_ISSUES = 20


def file_budget() -> float:
    """The per-file budget in CPU seconds (``$APXTUI_FILE_BUDGET`` overrides :data:`FILE_BUDGET`)."""
    try:
        return float(os.environ.get("APXTUI_FILE_BUDGET", FILE_BUDGET))
    except ValueError:
        return FILE_BUDGET


def error_regions(root: ts.Node) -> list[tuple[int, int, str]]:
    """(first line, last line, what) of each outermost ERROR node (code the parser could not
    read: ``what`` is "") and each MISSING node (a token it assumed: ``what`` is its type),
    in source order.  Walks only the nodes that contain an error."""
    out: list[tuple[int, int, str]] = []
    if not root.has_error:
        return out
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error:
            (a, _), (b, col) = n.start_point, n.end_point
            out.append((a + 1, b if col == 0 and b > a else b + 1, ""))  # an end at column 0: the line before
        elif n.is_missing:
            out.append((n.start_point[0] + 1, n.start_point[0] + 1, n.type))
        elif n.has_error:
            stack.extend(reversed(n.children))
    if not out:  # has_error without a node saying where
        out.append((root.start_point[0] + 1, root.start_point[0] + 1, ""))
    return out


def _syntax_issues(rel: str, root: ts.Node) -> list[Issue]:
    """One ``syntax`` issue per region of code the parser could not read (regions on the same
    or adjacent lines merged), with its lines; only a missing token assumed: one issue."""
    regions = error_regions(root)
    spans: list[list[int]] = []
    for first, last, missing in regions:
        if missing:
            continue
        if spans and first <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], last)
        else:
            spans.append([first, last])
    out = []
    for first, last in spans[:MAX_ERROR_ISSUES]:
        where = f"line {first}" if first == last else f"lines {first}-{last}"
        n = last - first + 1
        msg = f"parse error: {where} not understood ({n} line{'s' if n != 1 else ''} left out of the facts)"
        out.append(Issue(rel, "syntax", msg, first, last))
    rest = spans[MAX_ERROR_ISSUES:]
    if rest:
        lost = sum(b - a + 1 for a, b in rest)
        out.append(Issue(rel, "syntax", f"parse error: {len(rest)} more regions not understood ({lost} lines left "
                         "out of the facts)", rest[0][0], rest[0][0] + lost - 1))
    if not spans and regions:
        first, _, missing = regions[0]
        more = f" (and {len(regions) - 1} more)" if len(regions) > 1 else ""
        out.append(Issue(rel, "syntax", f"parse error: a missing `{missing}` assumed at line {first}{more}; "
                         "extracted with error recovery", first, first))
    return out


#: ``dyn 'a + Fn(..)``: the Rust grammar fails on a lifetime as a trait object's first bound.  The
#: lifetime and its ``+`` are blanked for parsing only (same length: byte offsets and lines stay, and
#: the extractor reads the text as written).
_DYN_LIFETIME = re.compile(rb"\bdyn(\s+)'\w+\s*\+")


def _blank_lifetime(m: re.Match[bytes]) -> bytes:
    return b"dyn" + m.group(1) + b" " * (len(m.group(0)) - 3 - len(m.group(1)))


def extract_file(rel: str, data: bytes, lang: str, module: str = "", budget: float | None = None) -> FileFacts:
    """Extract the facts of one file (``rel`` relative to the checkout root).

    ``budget``: CPU seconds for parsing and extraction (default :func:`file_budget`); past
    it the file's facts are left empty but for a ``budget`` issue saying so.
    """
    sha = content_hash(data)
    facts = FileFacts(file=rel, lang=lang, sha=sha, module=module)
    if b"\0" in data[:8192]:
        facts.issues.append(Issue(rel, "binary", "contains NUL bytes; looks binary, not parsed"))
        return facts
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        facts.issues.append(
            Issue(rel, "encoding", f"not valid UTF-8 at byte {e.start}; parsed with error recovery", line)
        )
    facts.lines = data.count(b"\n") + 1
    seconds = file_budget() if budget is None else budget
    clock = Budget(seconds)
    parsed = _DYN_LIFETIME.sub(_blank_lifetime, data) if lang == "rust" and b"dyn '" in data else data
    tree = languages.parser(lang).parse(parsed)  # linear in the input (a progress callback costs a call per token)
    if clock.over():
        return _over_budget(facts, seconds, "parsing")
    facts.issues.extend(_syntax_issues(rel, tree.root_node))
    if lang == "rust":
        from apxtui.parse.rust import extract  # lazy: grammars load on the first parse
    elif lang == "cuda":
        from apxtui.parse.cuda import extract  # lazy: grammars load on the first parse
    else:
        from apxtui.parse.python import extract  # lazy: grammars load on the first parse
    if lang == "rust" and rel.rsplit("/", 1)[-1] in TREE_FILES:  # a build script: its syntax is evaluated later
        facts.syntax = from_tree(tree.root_node, data)
    try:
        extract(facts, tree, data, clock)
    except RecursionError:
        facts.issues.append(Issue(rel, "too_deep", "syntax tree too deep to walk; facts may be incomplete"))
    except BudgetExceeded:
        return _over_budget(facts, seconds, "extraction")
    return facts


def _over_budget(facts: FileFacts, seconds: float, what: str) -> FileFacts:
    """The file's facts left out: only its issues and a ``budget`` issue stay."""
    kept = FileFacts(file=facts.file, lang=facts.lang, sha=facts.sha, module=facts.module, lines=facts.lines,
                     issues=facts.issues)
    kept.issues.append(Issue(facts.file, "budget", f"{what} took over {seconds:g} s CPU (the per-file budget, "
                             "APXTUI_FILE_BUDGET); file skipped, none of its facts are indexed"))
    return kept
