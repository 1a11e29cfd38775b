"""Bad input never stops indexing: each problem is named with its file and kept in `index`."""

from __future__ import annotations

import json
import os

from apxtui.cli import main
from apxtui.index.build import build_index


def make_bad_checkout(tmp_path):
    root = tmp_path / "bad"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text('[package]\nname = "bad"\n')
    (root / "src/lib.rs").write_text('pub fn ok() { if s == "\x1b[31m[bold]x[/]" { broken(); } }\n')
    (root / "src/broken.rs").write_text("pub fn broken( { let = ; }\npub fn after() {}\n")
    (root / "src/binary.rs").write_bytes(b"\x7fELF\x00\x00\x01\x02" * 100)
    (root / "adapters").mkdir()
    (root / "adapters/latin1.cu").write_bytes('// caf\xe9\n__global__ void k(float* x) {}\n'.encode("latin-1"))
    (root / "big.py").write_text("x = 1\n" * 800_000)  # > 4 MB
    os.symlink(root / "loop_a.py", root / "loop_b.py")
    os.symlink(root / "loop_b.py", root / "loop_a.py")
    os.symlink("/etc/hostname", root / "outside.py")
    return root


def test_bad_files_are_skipped_or_recovered_with_a_reason(tmp_path):
    root = make_bad_checkout(tmp_path)
    idx = build_index(root, workers=1)
    kinds = {(i.file, i.kind) for i in idx.issues}
    assert ("src/broken.rs", "syntax") in kinds
    assert ("src/binary.rs", "binary") in kinds
    assert ("adapters/latin1.cu", "encoding") in kinds
    assert ("big.py", "too_large") in kinds
    assert ("loop_a.py", "symlink") in kinds and ("outside.py", "symlink") in kinds
    quals = {d.get("qualname") for _, d in idx.graph.nodes(data=True)}
    assert {"bad::broken::after", "k", "bad::ok"} <= quals  # recovery keeps what parses


def test_index_command_lists_every_problem(tmp_path, capsys):
    root = make_bad_checkout(tmp_path)
    assert main(["index", str(root), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert {i["kind"] for i in s["skipped"]} >= {"syntax", "binary", "encoding", "too_large", "symlink"}
    assert all(i["file"] and i["message"] for i in s["skipped"])


def test_source_text_with_escapes_prints_literally(tmp_path, capsys):
    root = make_bad_checkout(tmp_path)
    assert main(["trace", str(root), "--from", "bad::ok", "--view", "tree"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u241b[31m[bold]x[/]" in out
    for fmt in ("text", "md"):  # the map views list the unresolved callee by name, literally too
        assert main(["trace", str(root), "--from", "bad::ok", "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out
