"""The stored index: lazy reads equal a full load, cached facts follow every input they
derive from, a reader keeps one generation while another process re-indexes, and a
damaged or unwritable cache is handled with one clear notice."""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
import sqlite3
import sys
from contextlib import redirect_stdout

import pytest

from apxtui.cli import main
from apxtui.demo import DEMO_CHECKOUT
from apxtui.index.build import build_index
from apxtui.index.db import db_path
from apxtui.index.store import StoredGraph

TRACES = [
    ["trace", "--demo", "--from", "Pi05Policy.infer", "--format", "json"],
    ["trace", "--demo", "--from", "Pi05Policy.infer", "--format", "md"],
    ["trace", "--demo", "--from", "Pi05Policy.infer", "--format", "text"],
    ["trace", "--demo", "--from", "kernels::norm::rms_norm", "--select", "BF16", "--format", "json"],
]


def _out(argv: list[str]) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(argv) == 0
    return buf.getvalue()


@pytest.mark.parametrize("argv", [["symbols", "--demo", "--json"], ["graph", "--demo"], *TRACES],
                         ids=lambda a: " ".join(a[:1] + a[3:]))
def test_lazy_store_gives_the_same_output_as_a_full_load(argv, monkeypatch):
    import apxtui.commands.common as common

    lazy = _out(argv)
    real = common.load_index

    def full_load(args, quiet=False):
        idx = real(args, quiet)
        assert isinstance(idx.graph, StoredGraph)
        return dataclasses.replace(idx, graph=idx.graph.to_networkx())

    monkeypatch.setattr(common, "load_index", full_load)
    for name in ("symbols", "graph", "trace"):
        monkeypatch.setattr(f"apxtui.commands.{name}.load_index", full_load)
    assert _out(argv) == lazy


def test_stored_graph_reads_only_what_it_is_asked(demo_index):
    assert isinstance(demo_index.graph, StoredGraph)
    g = StoredGraph(demo_index.db, demo_index.summary())  # a fresh view: nothing read yet
    assert not g._node
    entry = next(n for n, _ in g.nodes_named("infer") if n.startswith("apxinf.policy.Pi05Policy.infer@"))
    assert g.out_edges(entry) and len(g._node) < g.number_of_nodes() / 4
    full = g.to_networkx()
    assert full.number_of_nodes() == g.number_of_nodes() and full.number_of_edges() == g.number_of_edges()
    for n in list(full)[:40]:
        assert list(full.out_edges(n, keys=True, data=True)) == g.out_edges(n, keys=True, data=True)
        assert list(full.in_edges(n, keys=True, data=True)) == g.in_edges(n, keys=True, data=True)


# -- every input of a cached fact ---------------------------------------------------------------

CRATE = {
    "k/Cargo.toml": '[package]\nname = "old_name"\n',
    "k/src/lib.rs": "pub mod ops;\npub fn entry() { ops::norm(); }\n",
    "k/src/ops.rs": "pub fn norm() {}\n",
    "py/pkg/__init__.py": "",
    "py/pkg/mod.py": "def helper():\n    return 1\n",
    "k/third_party/lib/vendor.cuh": "__device__ void vendor_helper(float* x) { }\n",
    "k/adapters/a.cu": '#include "../third_party/lib/vendor.cuh"\n'
                       "__global__ void kern(float* x) { vendor_helper(x); other_vendor(x); }\n",
}


def _checkout(tmp_path, files=CRATE):
    root = tmp_path / "co"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _qualnames(idx) -> set[str]:
    return {d.get("qualname", "") for _, d in idx.graph.nodes(data=True)}


def test_renaming_a_crate_is_seen_through_the_cache(tmp_path):
    root = _checkout(tmp_path)
    assert "old_name::ops::norm" in _qualnames(build_index(root, workers=1))
    (root / "k/Cargo.toml").write_text('[package]\nname = "old_name"\n[lib]\nname = "new_name"\n')
    warm = build_index(root, workers=1)
    names = _qualnames(warm)
    assert "new_name::ops::norm" in names and not any(q.startswith("old_name") for q in names)
    assert names == _qualnames(build_index(root, use_cache=False, workers=1))
    assert sorted(warm.parsed) == ["k/src/lib.rs", "k/src/ops.rs"]  # their module path is part of the key


def test_removing_an_init_py_is_seen_through_the_cache(tmp_path):
    root = _checkout(tmp_path)
    assert "pkg.mod.helper" in _qualnames(build_index(root, workers=1))
    (root / "py/pkg/__init__.py").unlink()
    names = _qualnames(build_index(root, workers=1))
    assert "mod.helper" in names and "pkg.mod.helper" not in names
    assert names == _qualnames(build_index(root, use_cache=False, workers=1))


def test_an_edit_to_a_vendored_file_is_seen_through_the_cache(tmp_path):
    root = _checkout(tmp_path)
    first = build_index(root, workers=1)
    assert "k/third_party/lib/vendor.cuh" in first.vendored_indexed
    assert "external:other_vendor" in first.graph
    p = root / "k/third_party/lib/vendor.cuh"
    p.write_text(p.read_text() + "__device__ void other_vendor(float* x) { }\n")
    warm = build_index(root, workers=1)
    assert "external:other_vendor" not in warm.graph
    assert any(d.get("qualname") == "other_vendor" for _, d in warm.graph.nodes(data=True))
    assert _qualnames(warm) == _qualnames(build_index(root, use_cache=False, workers=1))


# -- one generation per reader ------------------------------------------------------------------

def test_a_reader_keeps_its_generation_while_another_process_reindexes(tmp_path):
    rel = "crates/apxinf-cuda/src/kernels/norm.rs"
    root = tmp_path / "demo"
    shutil.copytree(DEMO_CHECKOUT, root)
    before = tmp_path / "before"
    shutil.copytree(DEMO_CHECKOUT, before)
    build_index(root, workers=1)
    reader = build_index(root, workers=1)  # warm: reads lazily from here on
    assert isinstance(reader.graph, StoredGraph) and not reader.graph._node
    p = root / rel
    p.write_text("// shifted\n\n" + p.read_text().replace("pub fn rms_norm", "pub fn rms_norm_v2", 1)
                 + "\npub fn added_later() {}\n")
    writer = _in_another_process(str(root))  # commits a new generation meanwhile
    assert writer["parsed"] == [rel] and "added_later" in writer["names"]
    # the reader still sees its own generation: its graph and facts are those of the old files
    assert _shape(reader.graph.to_networkx()) == _shape(build_index(before, use_cache=False, workers=1).graph)
    assert not any(d.name == "added_later" for d in reader.facts[rel].defs)
    assert build_index(root, workers=1).parsed == []  # and the new generation is the checkout's state now


def _shape(g):
    nodes = sorted((n, d.get("kind"), d.get("qualname"), d.get("line")) for n, d in g.nodes(data=True))
    edges = sorted((u, v, d["kind"], d.get("site", ""), d.get("resolution", "")) for u, v, d in g.edges(data=True))
    return nodes, edges


def _in_another_process(root: str) -> dict:
    import json
    import subprocess

    code = ("import json, sys; from apxtui.index.build import build_index; i = build_index(sys.argv[1], workers=1); "
            "print(json.dumps({'parsed': i.parsed, 'names': sorted(d.get('name', '') for _, d in "
            "i.graph.nodes(data=True))}))")
    out = subprocess.run([sys.executable, "-c", code, root], capture_output=True, text=True, check=True,
                         env={**os.environ})
    return json.loads(out.stdout)


# -- a damaged or unwritable cache -------------------------------------------------------------------

def test_a_failed_write_leaves_no_transaction_open(tmp_path):
    root = _checkout(tmp_path)
    idx = build_index(root, workers=1)
    db = idx.db
    with pytest.raises(sqlite3.IntegrityError), db.write() as c:
        c.execute("INSERT INTO blobs VALUES ('k', NULL)")  # NOT NULL: fails inside the transaction
    assert not db.conn.in_transaction
    with db.write() as c:
        c.execute("INSERT INTO blobs VALUES ('k', x'00')")
    assert db.conn.execute("SELECT count(*) FROM blobs WHERE key='k'").fetchone() == (1,)


def test_a_table_with_the_wrong_layout_is_rebuilt_once(tmp_path):
    root = _checkout(tmp_path)
    build_index(root, workers=1)
    conn = sqlite3.connect(db_path(root.resolve()))
    conn.execute("DROP TABLE blobs")
    conn.execute("CREATE TABLE blobs (key TEXT)")
    conn.commit()
    conn.close()
    rebuilt = build_index(root, workers=1)
    assert len(rebuilt.notices) == 1 and "layout" in rebuilt.notices[0]
    assert len(rebuilt.parsed) == 6  # five project files and the vendored header they include
    again = build_index(root, workers=1)
    assert again.notices == [] and again.parsed == []


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_cache_says_so_once_and_indexes_anyway(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    cache = tmp_path / "ro-cache"
    cache.mkdir()
    cache.chmod(0o500)
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(cache))
    try:
        idx = build_index(root, workers=1)
    finally:
        cache.chmod(0o700)
    assert len(idx.notices) == 1 and idx.notices[0].startswith("cache disabled") and "rebuilding" not in idx.notices[0]
    assert "old_name::ops::norm" in _qualnames(idx)


def test_an_unwritable_cache_file_says_so_once(tmp_path, monkeypatch):
    """The same with a cache file the process may not write (checked by permission bits, so also as root)."""
    root = _checkout(tmp_path)
    build_index(root, workers=1)
    path = db_path(root.resolve())
    monkeypatch.setattr("apxtui.index.db.os.access", lambda p, mode: str(p) != str(path) and os.path.exists(p))
    idx = build_index(root, workers=1)
    assert len(idx.notices) == 1 and idx.notices[0].startswith("cache disabled")
    assert "rebuilding" not in idx.notices[0] and len(idx.parsed) == 6


def test_a_derived_value_is_made_once_and_replaces_what_other_code_stored(demo_index):
    import sqlite3
    from contextlib import closing

    g = demo_index.graph

    def never() -> list[int]:
        raise AssertionError("made again")

    assert g.derived("probe", "code-a", lambda: [1]) == [1]
    assert g.derived("probe", "code-a", never) == [1]  # kept in memory
    assert g.derived("probe", "code-b", lambda: [2]) == [2]
    with closing(sqlite3.connect(demo_index.db.path)) as c:
        keys = [k for (k,) in c.execute("SELECT key FROM blobs") if k.startswith("derived:probe:")]
    assert len(keys) == 1 and keys[0].startswith("derived:probe:code-b:")  # the other code's row is gone
