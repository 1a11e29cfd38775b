"""Extractor output is frozen for the demo checkout: a speed-up must not change any fact.

``tests/fixtures/demo_facts.json.gz`` holds every demo file's facts (``FileFacts.to_dict``)
as extracted before the extractors were restructured for speed.  A deliberate change of
the facts regenerates it:

    python benchmarks/facts_diff.py apxtui/demo/checkout --save tests/fixtures/demo_facts.json.gz

Demo files edited since the fixture was written (other content hash) are not compared.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from apxtui.demo import DEMO_CHECKOUT
from apxtui.parse import content_hash, extract_file
from apxtui.scan import scan

FIXTURE = Path(__file__).parent / "fixtures" / "demo_facts.json.gz"


def _normalised(facts) -> dict:
    return json.loads(json.dumps(facts.to_dict(), sort_keys=True))


def test_demo_facts_unchanged():
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as fh:
        expected = json.load(fh)
    sr = scan(DEMO_CHECKOUT)
    compared, differ = 0, []
    for f in sr.files:
        data = (sr.root / f.rel).read_bytes()
        want = expected.get(f.rel)
        if want is None or want["sha"] != content_hash(data):
            continue
        compared += 1
        got = _normalised(extract_file(f.rel, data, f.lang, f.module))
        if got != want:
            keys = [k for k in want if got.get(k) != want[k]]
            differ.append(f"{f.rel}: {keys}")
    assert compared >= len(expected) // 2, "demo changed too much: regenerate the fixture"
    assert not differ, differ


def test_fixture_covers_every_record_kind():
    """The frozen facts exercise calls with contexts, defs, imports, bindings, env reads and strings."""
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as fh:
        expected = json.load(fh)
    langs = {f["lang"] for f in expected.values()}
    assert langs == {"rust", "cuda", "python"}
    kinds = {c["kind"] for f in expected.values() for c in f["calls"] for c in c["contexts"]}
    assert {"if", "else", "match_arm", "loop", "cfg"} <= kinds, kinds
    for key in ("defs", "calls", "imports", "bindings", "env_reads", "strings"):
        assert any(f[key] for f in expected.values()), key
