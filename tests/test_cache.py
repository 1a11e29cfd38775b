"""Fact cache and warm starts: only changed files are re-parsed; bad caches are rebuilt."""

from __future__ import annotations

import shutil
import sqlite3

from apxtui.index.build import LazyFacts, build_index
from apxtui.index.db import db_path

SRC = {
    "k/Cargo.toml": '[package]\nname = "k"\n',
    "k/src/lib.rs": "pub mod ops;\npub fn entry() { ops::norm(); }\n",
    "k/src/ops.rs": "pub fn norm() { unsafe { apx_norm(); } }\nextern \"C\" { fn apx_norm(); }\n",
    "k/adapters/norm.cu": "__global__ void norm_kernel(float* x) {}\n"
                          "extern \"C\" void apx_norm() { norm_kernel<<<1, 32>>>(0); }\n",
}


def make_checkout(tmp_path):
    root = tmp_path / "co"
    for rel, text in SRC.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_second_run_parses_nothing_and_editing_one_file_reparses_only_it(tmp_path):
    root = make_checkout(tmp_path)
    first = build_index(root, workers=1)
    assert sorted(first.parsed) == ["k/adapters/norm.cu", "k/src/lib.rs", "k/src/ops.rs"]
    second = build_index(root, workers=1)
    assert second.parsed == []
    assert isinstance(second.facts, LazyFacts)  # warm start from the snapshot
    assert second.graph.number_of_edges() == first.graph.number_of_edges()
    assert second.facts["k/src/ops.rs"].defs[0].qualname == "k::ops::norm"
    (root / "k/src/ops.rs").write_text(SRC["k/src/ops.rs"] + "pub fn extra() {}\n")
    third = build_index(root, workers=1)
    assert third.parsed == ["k/src/ops.rs"]
    assert any(d.get("qualname") == "k::ops::extra" for _, d in third.graph.nodes(data=True))


def test_corrupt_cache_is_rebuilt_with_a_notice(tmp_path):
    root = make_checkout(tmp_path)
    build_index(root, workers=1)
    db = db_path(root.resolve())
    for suffix in ("-wal", "-shm"):
        (db.parent / (db.name + suffix)).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    idx = build_index(root, workers=1)
    assert idx.notices and "rebuilding" in idx.notices[0]
    assert sorted(idx.parsed) == ["k/adapters/norm.cu", "k/src/lib.rs", "k/src/ops.rs"]
    assert build_index(root, workers=1).parsed == []


def test_old_cache_version_is_rebuilt(tmp_path):
    root = make_checkout(tmp_path)
    build_index(root, workers=1)
    conn = sqlite3.connect(db_path(root.resolve()))
    conn.execute("UPDATE meta SET value='0.0.0/1/x' WHERE key='stamp'")
    conn.commit()
    conn.close()
    idx = build_index(root, workers=1)
    assert any("made by 0.0.0/1/x" in n for n in idx.notices)
    assert len(idx.parsed) == 3


def test_no_cache_writes_nothing(tmp_path):
    root = make_checkout(tmp_path)
    idx = build_index(root, use_cache=False, workers=1)
    assert len(idx.parsed) == 3 and not db_path(root.resolve()).exists()


def test_two_processes_index_the_same_checkout(tmp_path):
    import multiprocessing as mp

    root = make_checkout(tmp_path)
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.map(_edges_of, [str(root)] * 4)
    assert len(set(results)) == 1 and results[0] > 0
    assert build_index(root, workers=1).parsed == []


def _edges_of(root: str) -> int:
    return build_index(root, workers=1).graph.number_of_edges()


def test_checkout_is_never_written(tmp_path):
    root = make_checkout(tmp_path)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    build_index(root, workers=1)
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    shutil.rmtree(root)


def test_code_fingerprint_follows_an_edit_to_a_source(tmp_path, monkeypatch):
    """Remembered under the sources' stat signatures, read again after any write (ctime moves even
    when the size and mtime are put back)."""
    import os
    import time

    from apxtui.index import db

    src = tmp_path / "src" / "link.py"
    src.parent.mkdir()
    src.write_text("a = 1\n")
    monkeypatch.setattr(db, "_fingerprinted", lambda: [src])
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path / "cache"))
    first = db.code_fingerprint()  # written just now: by content, nothing remembered
    assert first == db._content_fingerprint([src]) and not (tmp_path / "cache").exists()
    monkeypatch.setattr(db, "_RACY_NS", -1)
    assert db.code_fingerprint() == first and len(list((tmp_path / "cache").glob("code-*"))) == 1
    monkeypatch.setattr(db, "_content_fingerprint", lambda files: "remembered, not read")
    assert db.code_fingerprint() == first
    monkeypatch.undo()
    monkeypatch.setattr(db, "_fingerprinted", lambda: [src])
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(db, "_RACY_NS", -1)
    st = src.stat()
    time.sleep(0.02)  # past the file system clock's tick: the write moves the ctime
    src.write_text("a = 2\n")  # same size
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert db.code_fingerprint() == db._content_fingerprint([src]) != first
    assert len(list((tmp_path / "cache").glob("code-*"))) == 1
