"""Build scripts are parsed once, by parse/, and their syntax travels (pickled) with their facts."""

from __future__ import annotations

import pickle

from apxtui.parse import extract_file, languages, plain
from apxtui.profile import buildscript
from apxtui.profile.buildscript import BuildScript

SCRIPT = b"""
fn main() {
    if std::env::var("CARGO_FEATURE_FAST").is_ok() {
        println!("cargo:rustc-cfg=fast_path");
    } else {
        println!("cargo:rustc-cfg=other");
    }
}
"""


def _shape(n, out):
    out.append((n.type, n.start_byte, n.end_byte, n.start_point[0], n.parent.type if n.parent else None,
                [c.type for c in n.named_children], getattr(n.child_by_field_name("name"), "type", None)))
    for c in n.children:
        _shape(c, out)
    return out


def test_plain_tree_reads_like_the_tree_sitter_tree():
    ts_root = languages.parser("rust").parse(SCRIPT).root_node
    pt = plain.parse("rust", SCRIPT)
    assert _shape(pt.root, []) == _shape(ts_root, [])
    again = pickle.loads(pickle.dumps(pt))
    assert _shape(again.root, []) == _shape(ts_root, [])
    assert pt.root.named_children[0].text.startswith(b"fn main")


def test_build_script_facts_carry_their_syntax_and_the_evaluator_uses_it(tmp_path, monkeypatch):
    facts = extract_file("build.rs", SCRIPT, "rust", "x")
    assert facts.syntax is not None and "syntax" not in facts.to_dict()
    assert extract_file("src/lib.rs", SCRIPT, "rust", "x").syntax is None
    facts = pickle.loads(pickle.dumps(facts))  # as read back from the fact cache
    (tmp_path / "build.rs").write_bytes(SCRIPT)

    def no_parse(*_a, **_k):
        raise AssertionError("parsed again")

    monkeypatch.setattr(buildscript.plain, "parse", no_parse)
    bs = BuildScript(tmp_path, "build.rs", {"build.rs": facts})
    assert {e.name for e in bs.emissions if e.kind == "cfg"} == {"fast_path", "other"}
    em = next(e for e in bs.emissions if e.name == "fast_path")
    assert bs.decide(em, None, {"fast"}, {"fast", "slow"}).value is True
    monkeypatch.undo()
    (tmp_path / "build.rs").write_bytes(SCRIPT.replace(b"FAST", b"SLOW"))  # edited since: parsed anew
    bs = BuildScript(tmp_path, "build.rs", {"build.rs": facts})
    em = next(e for e in bs.emissions if e.name == "fast_path")
    assert bs.decide(em, None, {"fast"}, {"fast", "slow"}).value is False
