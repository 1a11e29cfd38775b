"""One-file re-index re-links only the changed file, and gives the same graph as a full link."""

from __future__ import annotations

import shutil

import pytest

from apxtui.demo import DEMO_CHECKOUT
from apxtui.index.build import build_index

NORM = "crates/apxinf-cuda/src/kernels/norm.rs"
BLOCK = "crates/apxinf-model/src/pi05/model/block.rs"
ADAPTER = "crates/apxinf-cuda/adapters/norm.cu"


def _copy(tmp_path):
    root = tmp_path / "demo"
    shutil.copytree(DEMO_CHECKOUT, root)
    return root


def _shape(g):
    nodes = {n: {k: v for k, v in d.items() if k != "dropped"} for n, d in g.nodes(data=True)}
    edges = sorted((u, v, d["kind"], d.get("site", ""), d.get("resolution", ""), d.get("how", ""),
                    tuple(c["text"] for c in d.get("conditions", []))) for u, v, d in g.edges(data=True))
    return nodes, edges, sorted(g.graph.get("file_issues", [])), g.graph.get("dropped", {})


def _full(root):
    return build_index(root, use_cache=False, workers=1)


@pytest.mark.parametrize("rel, edit", [
    (NORM, lambda s: "// a comment that shifts every line\n\n" + s),  # node ids move
    (BLOCK, lambda s: s.replace("{", "{\n", 1)),
    (ADAPTER, lambda s: "\n\n" + s.replace("return", "cudaGetLastError();\n    return", 1)),  # a new call
])
def test_body_edit_is_relinked_incrementally_and_matches_a_full_link(tmp_path, rel, edit):
    root = _copy(tmp_path)
    build_index(root, workers=1)
    p = root / rel
    p.write_text(edit(p.read_text()))
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == [rel]
    assert _shape(inc.graph) == _shape(_full(root).graph)
    # and the snapshot written by the incremental run is itself a valid warm start
    warm = build_index(root, workers=1)
    assert "snapshot" in warm.timings and _shape(warm.graph) == _shape(inc.graph)


def test_interface_change_falls_back_to_a_full_link(tmp_path):
    root = _copy(tmp_path)
    build_index(root, workers=1)
    p = root / NORM
    p.write_text(p.read_text() + "\npub fn brand_new_operator() {}\n")
    idx = build_index(root, workers=1)
    assert "incremental" not in idx.timings and "link" in idx.timings
    assert any(d.get("qualname", "").endswith("brand_new_operator") for _, d in idx.graph.nodes(data=True))
    assert _shape(idx.graph) == _shape(_full(root).graph)


def test_added_file_falls_back_to_a_full_link(tmp_path):
    root = _copy(tmp_path)
    build_index(root, workers=1)
    (root / "python/apxinf/extra.py").write_text("def helper():\n    return 1\n")
    idx = build_index(root, workers=1)
    assert "incremental" not in idx.timings
    assert _shape(idx.graph) == _shape(_full(root).graph)


def test_a_picker_in_another_file_is_followed_after_a_one_file_relink(tmp_path):
    """Function pointers read the picker's returns from another file: kept in the interface facts."""
    root = tmp_path / "fp"
    (root / "k").mkdir(parents=True)
    (root / "k/kern.cuh").write_text("__global__ void k_a(float* x) {}\n__global__ void k_b(float* x) {}\n")
    (root / "k/pick.cuh").write_text('#include "kern.cuh"\ntypedef void (*fp_t)(float*);\n'
                                     "fp_t pick(int bit) {\n  if (bit == 4) return k_a;\n  return k_b;\n}\n")
    run = root / "k/run.cu"
    run.write_text('#include "pick.cuh"\nextern "C" void run(float* x, int bit) {\n'
                   "  fp_t kernel = pick(bit);\n  kernel<<<1, 32, 0>>>(x);\n}\n")
    build_index(root, workers=1)
    run.write_text("\n" + run.read_text())
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == ["k/run.cu"]
    launched = sorted(inc.graph.nodes[v]["qualname"] for _, v, d in inc.graph.edges(data=True) if d["kind"] == "launch")
    assert launched == ["k_a", "k_b"]
    assert _shape(inc.graph) == _shape(_full(root).graph)
