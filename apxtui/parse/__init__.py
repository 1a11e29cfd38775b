"""Parsing: source bytes → :class:`apxtui.facts.FileFacts`, one file at a time, no linking.

``extract_file`` handles bad input (binary, non-UTF-8, syntax errors) by recording
an :class:`~apxtui.facts.Issue` and keeping whatever error recovery gives; it never
raises for a file's content.
"""

from __future__ import annotations

import hashlib

from apxtui.facts import FileFacts, Issue


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def prepare() -> None:
    """Import the extractors and compile their queries now: worker processes forked
    afterwards inherit them instead of each compiling its own."""
    from apxtui.parse import cuda, languages, python, rust  # noqa: F401

    for lang in ("rust", "cuda", "python"):
        languages.query(lang)
    cuda.queries()


def _first_error(node) -> int | None:
    """1-based line of the first ERROR/MISSING node, or None."""
    if not node.has_error:
        return None
    cursor = [node]
    while cursor:
        n = cursor.pop()
        if n.is_error or n.is_missing:
            return n.start_point[0] + 1
        if n.has_error:
            cursor.extend(reversed(n.children))
    return node.start_point[0] + 1


def extract_file(rel: str, data: bytes, lang: str, module: str = "") -> FileFacts:
    """Extract the facts of one file (``rel`` relative to the checkout root)."""
    sha = content_hash(data)
    facts = FileFacts(file=rel, lang=lang, sha=sha, module=module)
    if b"\0" in data[:8192]:
        facts.issues.append(Issue(rel, "binary", "contains NUL bytes; looks binary, not parsed"))
        return facts
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        facts.issues.append(Issue(rel, "encoding", f"not valid UTF-8 at byte {e.start}; parsed with error recovery", line))
    facts.lines = data.count(b"\n") + 1
    from apxtui.parse import languages

    tree = languages.parser(lang).parse(data)
    err = _first_error(tree.root_node)
    if err is not None:
        facts.issues.append(Issue(rel, "syntax", f"syntax error near line {err}; extracted with error recovery", err))
    if lang == "rust":
        from apxtui.parse.rust import extract
    elif lang == "cuda":
        from apxtui.parse.cuda import extract
    else:
        from apxtui.parse.python import extract
    try:
        extract(facts, tree, data)
    except RecursionError:
        facts.issues.append(Issue(rel, "too_deep", "syntax tree too deep to walk; facts may be incomplete"))
    return facts
