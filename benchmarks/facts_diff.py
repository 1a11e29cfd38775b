"""Extractor regression check: the facts of every file of a checkout, saved or compared.

    python benchmarks/facts_diff.py CHECKOUT --save BASELINE.json.gz     (before a change)
    python benchmarks/facts_diff.py CHECKOUT --compare BASELINE.json.gz  (after it)
    … [--lang python] [--show 50]                                        (one language, more lines)

Every scanned file (vendored ones too) is extracted in this process with
:func:`apxtui.parse.extract_file`; the facts are normalised with ``FileFacts.to_dict``.
``--compare`` prints the number of files whose facts differ and the first differences,
and exits 1 if any differ.  Also prints the single-process extraction time.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apxtui.parse import extract_file  # noqa: E402
from apxtui.scan import scan  # noqa: E402


def checkout_facts(root: Path, langs: tuple[str, ...] = ()) -> tuple[dict[str, Any], float]:
    """rel → normalised facts of every scanned file (of ``langs``, all when empty), and the
    seconds extraction took."""
    sr = scan(root)
    out: dict[str, Any] = {}
    spent = 0.0
    for f in sr.files:
        if langs and f.lang not in langs:
            continue
        data = (sr.root / f.rel).read_bytes()
        t = time.perf_counter()
        facts = extract_file(f.rel, data, f.lang, f.module)
        spent += time.perf_counter() - t
        out[f.rel] = facts.to_dict()
    return out, spent


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """Path and values of the first place where ``a`` and ``b`` differ, or None."""
    if type(a) is not type(b):
        return f"{where}: {a!r:.200} != {b!r:.200}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'new' if k in b else 'baseline'}"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{where}: {len(a)} items != {len(b)} items"
    return None if a == b else f"{where}: {a!r:.200} != {b!r:.200}"


def compare(base: dict[str, Any], new: dict[str, Any]) -> list[str]:
    diffs = []
    for rel in sorted(set(base) | set(new)):
        if rel not in base or rel not in new:
            diffs.append(f"{rel}: only in {'new' if rel in new else 'baseline'}")
            continue
        d = first_difference(base[rel], new[rel], rel)
        if d:
            diffs.append(d)
    return diffs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", metavar="FILE")
    g.add_argument("--compare", metavar="FILE")
    p.add_argument("--show", type=int, default=20, help="differences printed (first per file)")
    p.add_argument("--lang", action="append", default=[], help="only files of this language (repeatable)")
    args = p.parse_args()
    facts, spent = checkout_facts(Path(args.checkout), tuple(args.lang))
    print(f"{args.checkout}: {len(facts)} files extracted in {spent:.2f} s (one process)")
    if args.save:
        with gzip.open(args.save, "wt", encoding="utf-8") as fh:
            json.dump(facts, fh, sort_keys=True)
        return
    with gzip.open(args.compare, "rt", encoding="utf-8") as fh:
        base = json.load(fh)
    if args.lang:
        base = {rel: f for rel, f in base.items() if f["lang"] in args.lang}
    # JSON turns tuples into lists: compare like with like
    diffs = compare(base, json.loads(json.dumps(facts, sort_keys=True)))
    print(f"{len(diffs)} file(s) differ")
    for d in diffs[: args.show]:
        print("  " + d)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
