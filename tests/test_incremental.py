"""One-file re-index re-links only the changed file, and gives the same graph as a full link."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import write_tree

from apxtui.demo import DEMO_CHECKOUT
from apxtui.index.build import build_index
from apxtui.index.db import db_path

NORM = "crates/apxinf-cuda/src/kernels/norm.rs"
BLOCK = "crates/apxinf-model/src/pi05/model/block.rs"
ADAPTER = "crates/apxinf-cuda/adapters/norm.cu"


def _copy(tmp_path):
    root = tmp_path / "demo"
    shutil.copytree(DEMO_CHECKOUT, root)
    return root


@pytest.fixture(scope="module")
def indexed_demo(tmp_path_factory):
    """A copy of the demo and its index database, made once for the module."""
    import os

    base = tmp_path_factory.mktemp("indexed")
    old = os.environ.get("APXTUI_CACHE_DIR")
    os.environ["APXTUI_CACHE_DIR"] = str(base / "cache")
    try:
        root = _copy(base)
        build_index(root, workers=1)
        return root, db_path(root.resolve())
    finally:
        if old is None:
            os.environ.pop("APXTUI_CACHE_DIR", None)
        else:
            os.environ["APXTUI_CACHE_DIR"] = old


def _indexed_copy(tmp_path, indexed_demo):
    """The demo at a new path with the index the module made (its state does not depend on the path)."""
    src_root, src_db = indexed_demo
    root = _copy(tmp_path)
    dst = db_path(root.resolve())
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src_db, dst)
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
    (NORM, lambda s: s.replace("{", "{ let broken = ;", 1)),  # a syntax error: the file's issues change
])
def test_body_edit_is_relinked_incrementally_and_matches_a_full_link(tmp_path, indexed_demo, rel, edit):
    root = _indexed_copy(tmp_path, indexed_demo)
    p = root / rel
    p.write_text(edit(p.read_text()))
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == [rel]
    full = _full(root)
    assert _shape(inc.graph) == _shape(full.graph)
    assert inc.summary() == full.summary()  # the counts `index` prints, updated in place
    assert inc.dropped_sample() == full.dropped_sample() and inc.dropped_sample()
    # and the snapshot written by the incremental run is itself a valid warm start
    warm = build_index(root, workers=1)
    assert "snapshot" in warm.timings and _shape(warm.graph) == _shape(inc.graph)


@pytest.mark.parametrize("rel, edit, relinks", [
    (BLOCK, lambda s: s + "\n// a trailing comment: the same facts\n", False),  # a file with imports
    (BLOCK, lambda s: s.replace("use ", "use  ", 1), False),  # white space inside a line
    # a module-level caller node ends at the file's last line: patched in place
    ("python/examples/run_pi05.py", lambda s: s + "\n# a trailing comment\n", False),
    ("python/examples/run_pi05.py", lambda s: s + "\nprint()\n", True),  # a new call: re-linked
])
def test_an_edit_leaving_the_facts_as_stored_relinks_nothing(tmp_path, indexed_demo, monkeypatch, rel, edit,
                                                             relinks):
    import apxtui.index.incremental as inc_mod

    root = _indexed_copy(tmp_path, indexed_demo)
    p = root / rel
    p.write_text(edit(p.read_text()))
    linked = []
    real = inc_mod.link_file
    monkeypatch.setattr(inc_mod, "link_file", lambda f, ctx: linked.append(f.file) or real(f, ctx))
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == [rel]
    assert (rel in linked) is relinks
    full = _full(root)
    assert _shape(inc.graph) == _shape(full.graph) and inc.summary() == full.summary()
    warm = build_index(root, workers=1)
    assert "snapshot" in warm.timings and _shape(warm.graph) == _shape(inc.graph)


MODEL = "crates/apxinf-model/src/pi05/model/mod.rs"
POLICY = "python/apxinf/policy.py"
PYO3 = "crates/apxinf-py/src/lib.rs"


@pytest.mark.parametrize("rel, edit", [
    (NORM, lambda s: s + "\npub fn brand_new_operator() {}\n"),  # a new definition
    (NORM, lambda s: s.replace("pub fn rms_norm", "pub fn rms_norm_renamed", 1)),  # callers lose their target
    (BLOCK, lambda s: s.replace("use apxinf_cuda::DType;", "use apxinf_cuda::DType as Dt;", 1)),  # an import
    (MODEL, lambda s: s.replace("pub struct", "#[derive(Debug)]\npub struct", 1) + "\nfn extra() {}\n"),
    (ADAPTER, lambda s: s.replace("extern \"C\"", "static int helper_fn() { return 0; }\nextern \"C\"", 1)),
    (POLICY, lambda s: s + "\n\ndef added_helper():\n    return 1\n"),
    (PYO3, lambda s: s.replace("fn ", "fn renamed_", 1)),
    ("crates/apxinf-cuda/src/tensor.rs",
     lambda s: s.replace("impl Tensor {", "impl Tensor {\n    pub fn extra_method(&self) {}", 1)),
    ("crates/apxinf-cuda/kernels/rms_norm.cuh", lambda s: '#include "activation.cuh"\n' + s),  # an include
    (PYO3, lambda s: s + "\n#[pymodule]\nfn second_native(m: &Bound<'_, PyModule>) -> PyResult<()> {\n    Ok(())\n}\n"),
])
def test_interface_change_relinks_what_it_can_reach_and_matches_a_full_link(tmp_path, indexed_demo, rel, edit):
    root = _indexed_copy(tmp_path, indexed_demo)
    p = root / rel
    text = p.read_text()
    assert edit(text) != text, "the edit must change the file"
    p.write_text(edit(text))
    idx = build_index(root, workers=1)
    assert idx.parsed == [rel]
    full = _full(root)
    assert _shape(idx.graph) == _shape(full.graph) and idx.dropped_sample() == full.dropped_sample()
    assert _shape(build_index(root, workers=1).graph) == _shape(idx.graph)  # and it is a valid warm start


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


PICK_RS = '''use crate::ffi;
pub type Launcher = unsafe extern "C" fn(*const f32);

pub fn plain_launcher(q: u8) -> Option<Launcher> {
    let f: Launcher = match q {
        4 => ffi::launch_q4,
        _ => ffi::launch_q8,
    };
    Some(f)
}

pub fn own_choice(q: u8, x: *const f32) {
    let g: Launcher = match q {
        4 => ffi::launch_q4,
        _ => ffi::launch_q8,
    };
    unsafe { g(x) };
}
'''
PICKER_CRATE = {  # a picker (its returned function values read by lib.rs) and a function's own local choice
    "pa/Cargo.toml": '[package]\nname = "pa"\n',
    "pa/src/lib.rs": "pub mod ffi;\npub mod pick;\npub fn forward(q: u8, x: *const f32) {\n"
                     "    let launcher = pick::plain_launcher(q).unwrap();\n    unsafe { launcher(x) };\n}\n",
    "pa/src/ffi.rs": 'extern "C" {\n    pub fn launch_q4(x: *const f32);\n    pub fn launch_q8(x: *const f32);\n}\n',
    "pa/src/pick.rs": PICK_RS,
}


@pytest.mark.parametrize("edit, dependants", [
    # a line inside own_choice: its own function values move, the picker's do not: pick.rs alone
    (lambda s: s.replace("    let g: Launcher", "    // moved\n    let g: Launcher"), False),
    # a line above the picker: its returned values (and line, cited by lib.rs's edges) move: lib.rs too
    (lambda s: s.replace("pub fn plain_launcher", "// moved\npub fn plain_launcher"), True),
])
def test_only_a_pickers_returned_function_values_reach_other_files(tmp_path, monkeypatch, edit, dependants):
    import apxtui.index.incremental as inc_mod

    root = write_tree(tmp_path / "fp", PICKER_CRATE)
    first = build_index(root, workers=1)
    assert "returned by pa::pick::plain_launcher" in str(list(first.graph.edges(data=True)))
    p = root / "pa/src/pick.rs"
    p.write_text(edit(p.read_text()))
    linked = []
    real = inc_mod.link_file
    monkeypatch.setattr(inc_mod, "link_file", lambda f, ctx: linked.append(f.file) or real(f, ctx))
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == ["pa/src/pick.rs"]
    assert ("pa/src/lib.rs" in linked) is dependants
    assert _shape(inc.graph) == _shape(_full(root).graph)


RELATIVE_USE = {  # `use ops::norm` inside crate k: a 2018-edition relative path the tables make absolute
    "k/Cargo.toml": '[package]\nname = "k"\n',
    "k/src/lib.rs": "pub mod ops;\nuse ops::norm;\npub use ops::Scale;\npub fn entry() { norm(); }\n",
    "k/src/ops.rs": "pub struct Scale;\npub fn norm() { helper(); }\nfn helper() {}\n",
}


def _relative_use_checkout(tmp_path):
    root = write_tree(tmp_path / "rel", RELATIVE_USE)
    return root


def test_linking_leaves_the_files_own_imports_as_extracted(tmp_path):
    from apxtui.index.incremental import interface_key
    from apxtui.index.link import link
    from apxtui.parse import extract_file

    root = _relative_use_checkout(tmp_path)
    src = (root / "k/src/lib.rs").read_bytes()
    facts = {rel: extract_file(rel, (root / rel).read_bytes(), "rust", mod)
             for rel, mod in (("k/src/lib.rs", "k"), ("k/src/ops.rs", "k::ops"))}
    before = interface_key(facts["k/src/lib.rs"])
    _, linker = link(facts, set(facts), set())
    assert [i.path for i in facts["k/src/lib.rs"].imports if i.kind == "use"] == ["ops::norm", "ops::Scale"]
    again = extract_file("k/src/lib.rs", src, "rust", "k")
    assert interface_key(facts["k/src/lib.rs"]) == before == interface_key(again)
    assert [i.path for i in linker.t.uses["k"]["norm"]] == ["k::ops::norm"]  # the tables still see the absolute path


def test_body_edit_in_a_file_with_relative_use_paths_is_relinked_incrementally(tmp_path):
    root = _relative_use_checkout(tmp_path)
    build_index(root, workers=1)
    p = root / "k/src/lib.rs"
    p.write_text(p.read_text().replace("{ norm(); }", "{\n    norm();\n    norm();\n}"))
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == ["k/src/lib.rs"]
    assert _shape(inc.graph) == _shape(_full(root).graph)
    calls = [(inc.graph.nodes[v]["qualname"], d["resolution"]) for _, v, d in inc.graph.out_edges(
        "k::entry@k/src/lib.rs:4", data=True)]
    assert calls == [("k::ops::norm", "exact")] * 2


def _crossings(g, src_dir, dst_dir):
    """Call edges from files under ``src_dir`` to definitions in files under ``dst_dir``."""
    return {(u, v) for u, v, d in g.edges(data=True)
            if d.get("kind") in ("call", "launch") and g.nodes[u].get("file", "").startswith(src_dir)
            and g.nodes[v].get("file", "").startswith(dst_dir)}


@pytest.mark.parametrize("body_edit", [False, True])
def test_manifest_edit_relinks_with_the_new_package_boundaries(tmp_path, indexed_demo, body_edit):
    """Dropping a dependency from a Cargo.toml takes the crate's links into it away, also when a
    body edit elsewhere would otherwise be re-linked alone against the stored tables."""
    model, cuda = "crates/apxinf-model/", "crates/apxinf-cuda/"
    root = _indexed_copy(tmp_path, indexed_demo)
    before = build_index(root, workers=1)
    assert _crossings(before.graph, model, cuda), "the demo's model crate calls into the cuda crate"
    manifest = root / model / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('apxinf-cuda = { path = "../apxinf-cuda" }\n', ""))
    if body_edit:
        p = root / NORM
        p.write_text("// shifted\n" + p.read_text())
    idx = build_index(root, workers=1)
    assert not _crossings(idx.graph, model, cuda)
    assert _shape(idx.graph) == _shape(_full(root).graph)
    assert _shape(build_index(root, workers=1).graph) == _shape(idx.graph)  # and it is a valid warm start


def _rust_indexes(root):
    """The Rust resolver's stored indexes, by file and line (comparable across databases)."""
    import sqlite3

    from apxtui.index import rust_indexes

    with sqlite3.connect(db_path(root.resolve())) as c:
        stored = dict(c.execute("SELECT key, value FROM meta WHERE key LIKE 'rust_indexes%'"))
    ix = rust_indexes.unpack(stored["rust_indexes"], stored.get("rust_indexes_patch"))
    out = {"types_by_qual": {q: [(d.file, d.line) for d in ds] for q, ds in ix["types_by_qual"].items()},
           "test_only": ix["test_only"]}
    for name in ("impl_methods", "trait_impl_methods", "trait_decls"):
        out[name] = {k: v for k, v in ix[name].items() if v}
    return out


@pytest.mark.parametrize("edit", [
    lambda s: "// shifted\n\n" + s.replace("impl Tensor {", "impl Tensor {\n    pub fn extra_method(&self) {}", 1),
    lambda s: s + "\npub struct Tensor2;\nimpl Default for Tensor2 {\n    fn default() -> Self { Tensor2 }\n}\n"
                  "impl Tensor2 {\n    pub fn len(&self) -> usize { 0 }\n}\n",
])
def test_rust_indexes_patched_by_a_relink_equal_a_full_builds(tmp_path, indexed_demo, monkeypatch, edit):
    rel = "crates/apxinf-cuda/src/tensor.rs"
    root = _indexed_copy(tmp_path, indexed_demo)
    p = root / rel
    p.write_text(edit(p.read_text()))
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings
    patched = _rust_indexes(root)
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path / "fresh-cache"))
    build_index(root, workers=1)
    assert patched == _rust_indexes(root)


def test_rust_indexes_stay_stored_beside_the_change_of_successive_relinks(tmp_path, indexed_demo, monkeypatch):
    """Each re-link stores the change to the indexes a full build stored (not the indexes again); a
    second one applies to the first's result; both equal a full build's."""
    import sqlite3

    import apxtui.index.resolve_rust as rr

    rel = "crates/apxinf-cuda/src/tensor.rs"
    root = _indexed_copy(tmp_path, indexed_demo)
    with sqlite3.connect(db_path(root.resolve())) as c:
        base = c.execute("SELECT value FROM meta WHERE key='rust_indexes'").fetchone()[0]
    p = root / rel
    for i, edit in enumerate([lambda s: "// shifted\n\n" + s,
                              lambda s: s.replace("impl Tensor {", "impl Tensor {\n    pub fn extra(&self) {}", 1)]):
        p.write_text(edit(p.read_text()))
        with monkeypatch.context() as m:
            m.setattr(rr, "pack_indexes", lambda _ix: pytest.fail("the indexes were stored whole again"))
            inc = build_index(root, workers=1)
        assert "incremental" in inc.timings and inc.parsed == [rel]
        with sqlite3.connect(db_path(root.resolve())) as c:
            stored = dict(c.execute("SELECT key, value FROM meta WHERE key LIKE 'rust_indexes%'"))
        assert stored["rust_indexes"] == base and stored["rust_indexes_patch"]
        patched = _rust_indexes(root)
        with monkeypatch.context() as m:
            m.setenv("APXTUI_CACHE_DIR", str(tmp_path / f"fresh-cache-{i}"))
            build_index(root, workers=1)
            assert patched == _rust_indexes(root)



def test_a_body_edit_moving_no_definition_keeps_the_stored_rust_indexes(tmp_path, indexed_demo, monkeypatch):
    """The changed file's definitions and imports are as stored (same lines): the stored indexes are
    reused as they are (never re-made), and still equal a full build's."""
    import apxtui.index.resolve_rust as rr

    rel = "crates/apxinf-cuda/src/tensor.rs"
    root = _indexed_copy(tmp_path, indexed_demo)
    p = root / rel
    p.write_text(p.read_text().replace("DType::F8E4M3 => 1,", "DType::F8E4M3 => 1 + 0,", 1))
    with monkeypatch.context() as m:
        m.setattr(rr, "pack_indexes", lambda _ix: pytest.fail("the stored indexes were re-made"))
        inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == [rel]
    kept = _rust_indexes(root)
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path / "fresh-cache"))
    build_index(root, workers=1)
    assert kept == _rust_indexes(root)

# -- macro expansion and C++ bindings in the stored index (issue 13 on the per-file store) ------------------

PAGED_H = r'''
template <typename T, int BS> __global__ void attn_kernel(T* o) {}
template <typename T, int BS> void launcher(void* o, cudaStream_t s) { attn_kernel<T, BS><<<1, 128, 0, s>>>((T*)o); }
#define CALL_LAUNCHER(T, BS) launcher<T, BS>(out, stream);
#define CALL_BLOCK_SIZE(T) \
  switch (block_size) {    \
  case 8: CALL_LAUNCHER(T, 8); break; \
  case 16: CALL_LAUNCHER(T, 16); break; \
  default: break; }
'''
PAGED_CU = r'''#include "paged.cuh"
extern "C" void paged_bf16(void* out, int block_size, cudaStream_t stream) {
  CALL_BLOCK_SIZE(__nv_bfloat16);
}
'''


def _paged_checkout(tmp_path):
    root = tmp_path / "paged"
    (root / "k").mkdir(parents=True)
    (root / "k/paged.cuh").write_text(PAGED_H)
    (root / "k/paged_bf16.cu").write_text(PAGED_CU)
    return root


def _launcher_sizes(g):
    return sorted(d["template_args"][-1] for u, v, d in g.edges(data=True)
                  if g.nodes[v].get("qualname") == "launcher" and g.nodes[u].get("qualname") == "paged_bf16")


def test_a_relinked_file_has_its_statement_macros_expanded(tmp_path):
    root = _paged_checkout(tmp_path)
    assert _launcher_sizes(build_index(root, workers=1).graph) == ["16", "8"]
    p = root / "k/paged_bf16.cu"
    p.write_text("// shifted\n" + p.read_text())
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == ["k/paged_bf16.cu"]
    assert _launcher_sizes(inc.graph) == ["16", "8"]
    assert {c.attrs.get("macro_at") for c in inc.facts["k/paged_bf16.cu"].calls if c.callee == "launcher"} == {
        "k/paged_bf16.cu:4"}  # the facts shown are the expanded ones too
    assert _shape(inc.graph) == _shape(_full(root).graph)


def test_an_edited_header_macro_re_expands_the_files_including_it(tmp_path):
    """The expanded facts of a file are keyed on its include closure's #defines, not its own content."""
    import sqlite3

    root = _paged_checkout(tmp_path)
    build_index(root, workers=1)
    with sqlite3.connect(db_path(root.resolve())) as c:
        key0 = c.execute("SELECT key FROM files WHERE rel='k/paged_bf16.cu'").fetchone()[0]
    h = root / "k/paged.cuh"
    case32 = "case 32: CALL_LAUNCHER(T, 32); break; \\\n  default: break;"
    h.write_text(h.read_text().replace("default: break;", case32))
    idx = build_index(root, workers=1)
    assert _launcher_sizes(idx.graph) == ["16", "32", "8"]
    assert _shape(idx.graph) == _shape(_full(root).graph)
    with sqlite3.connect(db_path(root.resolve())) as c:
        key1 = c.execute("SELECT key FROM files WHERE rel='k/paged_bf16.cu'").fetchone()[0]
    assert key0.split("+")[0] == key1.split("+")[0] and key0 != key1  # same parse, another expansion


TORCH_EXT = Path(__file__).parent / "fixtures" / "torch_ext"


@pytest.mark.parametrize("rel, edit", [
    ("vllm_like/_custom_ops.py", lambda s: "\n\n" + s),
    ("csrc/layernorm_kernels.cu", lambda s: "// shifted\n" + s),
])
def test_python_calls_to_torch_ops_stay_linked_across_files_after_a_relink(tmp_path, rel, edit):
    root = tmp_path / "ext"
    shutil.copytree(TORCH_EXT, root)
    build_index(root, workers=1)
    p = root / rel
    p.write_text(edit(p.read_text()))
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == [rel]
    g = inc.graph
    binding = [(v, d["resolution"]) for u, v, d in g.edges(data=True)
               if g.nodes[u].get("qualname", "").endswith("_custom_ops.rms_norm")]
    assert binding == [("pytorch:torch.ops.TORCH_EXTENSION_NAME.rms_norm", "heuristic")]  # namespace: the build's
    assert g.nodes["pytorch:torch.ops.TORCH_EXTENSION_NAME.rms_norm"]["kind"] == "cpp_binding"
    launches = {d["attrs"].get("macro") for u, v, d in g.edges(data=True)
                if g.nodes[v].get("qualname") == "vllm::rms_norm_kernel" and d["kind"] == "launch"}
    assert launches == {"VLLM_DISPATCH_FLOATING_TYPES"}  # the host function's dispatch macro, expanded
    assert _shape(g) == _shape(_full(root).graph)


def test_a_full_relink_reads_the_stored_expansion_when_the_closure_is_unchanged(tmp_path, monkeypatch):
    from apxtui.index import macros

    root = _paged_checkout(tmp_path)
    build_index(root, workers=1)
    (root / "k/other.cu").write_text("void other() {}\n")  # a new file: everything is linked again

    def refuse(*a, **k):
        raise AssertionError("expanded again although its include closure's definitions are unchanged")

    monkeypatch.setattr(macros, "expand_encoded", refuse)  # (expanded.py imports it when it expands)
    idx = build_index(root, workers=1)
    assert "incremental" not in idx.timings and _launcher_sizes(idx.graph) == ["16", "8"]


def test_stored_tables_answer_a_files_module_path_without_reading_its_interface(indexed_demo):
    import sqlite3

    from apxtui.index.stored_tables import StoredTables
    from apxtui.scan import scan

    root, db = indexed_demo
    conn = sqlite3.connect(db)
    module_of = {f.rel: f.module for f in scan(root).files}
    lazy, eager = StoredTables(conn, {}, module_of), StoredTables(conn)
    f = lazy.file_of.get(BLOCK)
    assert f.module == eager.file_of[BLOCK].module == "apxinf_model::pi05::model::block"
    assert lazy.file_of.whole is None and not lazy.file_of.memo[BLOCK]._facts  # not read
    assert f.imports == eager.file_of[BLOCK].imports and f.imports  # read when asked
    assert lazy.file_of.get("no/such/file.rs") is None


MACRO_CRATE = {  # item-level macro_rules! invocations: expanded records keyed on the rules they use
    "k/Cargo.toml": '[package]\nname = "k"\n',
    "k/src/lib.rs": "#[macro_use]\npub mod a;\npub mod b;\n",
    "k/src/a.rs": "macro_rules! make_fn {\n    ($name:ident) => { pub fn $name() { helper(); } };\n}\n"
                  "make_fn!(made_in_a);\npub fn helper() {}\n",
    "k/src/b.rs": "macro_rules! make_b {\n    ($name:ident) => { pub fn $name() { crate::a::helper(); } };\n}\n"
                  "make_b!(made_in_b);\n",
}


@pytest.mark.parametrize("b_uses_a", [False, True])
def test_moved_macro_rules_relink_alone_unless_another_files_expansion_reads_them(tmp_path, b_uses_a):
    root = tmp_path / "mac"
    for rel, text in MACRO_CRATE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + ("make_fn!(also_in_b);\n" if b_uses_a and rel == "k/src/b.rs" else ""))
    first = build_index(root, workers=1)
    assert {"k::a::made_in_a", "k::b::made_in_b"} <= {d.get("qualname") for _, d in first.graph.nodes(data=True)}
    p = root / "k/src/a.rs"
    p.write_text("// a line above the macro: its rule's line moves\n" + p.read_text())
    inc = build_index(root, workers=1)
    assert ("incremental" in inc.timings) is not b_uses_a  # b's expansion cites the moved rule: all re-linked
    assert _shape(inc.graph) == _shape(_full(root).graph)


OPERATOR_CRATE = {  # user.rs's edge cites the line of ops.rs's `fn add` in its `how`
    "k/Cargo.toml": '[package]\nname = "k"\n',
    "k/src/lib.rs": "pub mod ops;\npub mod user;\n",
    "k/src/ops.rs": "pub struct Foo;\nimpl Foo {\n    pub fn finish(&self) {}\n}\n"
                    "impl std::ops::Add for Foo {\n    type Output = Foo;\n"
                    "    fn add(self, _o: Foo) -> Foo { Foo }\n}\n",
    "k/src/user.rs": "use crate::ops::Foo;\npub fn go(a: Foo, b: Foo) {\n    (a + b).finish();\n}\n",
}


def test_a_moved_operator_impl_relinks_the_files_citing_its_line(tmp_path):
    root = write_tree(tmp_path / "op", OPERATOR_CRATE)
    first = build_index(root, workers=1)
    assert "Output of Add for Foo (ops.rs:7)" in str([d.get("how") for _, _, d in first.graph.edges(data=True)])
    p = root / "k/src/ops.rs"
    p.write_text(p.read_text().replace("impl std::ops::Add", "// moved\nimpl std::ops::Add"))
    inc = build_index(root, workers=1)
    assert "incremental" in inc.timings and inc.parsed == ["k/src/ops.rs"]
    assert "Output of Add for Foo (ops.rs:8)" in str([d.get("how") for _, _, d in inc.graph.edges(data=True)])
    assert _shape(inc.graph) == _shape(_full(root).graph)


def test_the_query_of_an_edited_files_language_is_compiled_ahead(tmp_path, indexed_demo, monkeypatch):
    """A file whose stat signature differs from the stored one (or has none stored) is likely parsed:
    its language's query compiles beside the scan."""
    import apxtui.index.build as build_mod
    import apxtui.parse.languages as languages

    root = _indexed_copy(tmp_path, indexed_demo)
    monkeypatch.setattr(build_mod, "RACY_NS", -1)  # the copy's files were just written: trust their stat now
    build_index(root, workers=1)  # (the copy's files have new stat signatures: stored now)
    asked: list[set[str]] = []
    monkeypatch.setattr(languages, "compile_ahead", lambda langs: asked.append(set(langs)))
    p = root / ADAPTER
    p.write_text(p.read_text() + "\n// edited\n")
    build_index(root, workers=1)
    assert asked == [{"cuda"}]
    build_index(root, workers=1)  # nothing changed: nothing compiled
    assert asked == [{"cuda"}, set()]
