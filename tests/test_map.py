"""The execution map (apxtui.map): rows, alternatives, loops, phases, classes, cuts and the report's path."""

from __future__ import annotations

import textwrap

import pytest

from apxtui.analysis.calls import CallsFileError, call_rules, parse_rules
from apxtui.map import Call, Choice, build_map, iter_calls
from apxtui.trace import find_symbol
from apxtui.vocab import CallClass, Phase

SELECT = ["BF16", "CudaBackend"]


def _map(index, entry, **kw):
    return build_map(index, find_symbol(index.graph, entry), **kw)


def _names(work) -> list:
    """Work as plain data: a call's name, or a tuple of the alternatives' names."""
    out = []
    for w in work:
        if isinstance(w, Call):
            out.append(w.name)
        else:
            out.append(tuple(tuple(_names(a.work)) for a in w.alternatives))
    return out


# -- rows ------------------------------------------------------------------------------------------


def test_block_forward_is_the_expected_rows_in_order(demo_index):
    m = _map(demo_index, "Block::forward", select=SELECT)
    assert [t.phase for t in m.phases] == [Phase.EAGER]
    rows = m.phases[0].rows
    lt = ["cublasLtMatmul"]
    add = [(("add_packed4_kernel",), ("add_packed2_kernel",), ("add_kernel",))]
    assert [(r.op, _names(r.work)) for r in rows if r.op != "B::attention"] == [
        ("B::rms_norm", ["rms_norm_kernel"]), ("B::linear", lt), ("B::linear", lt), ("B::linear", lt),
        ("B::rope", ["rope_kernel"]), ("B::rope", ["rope_kernel"]), ("B::kv_write", ["kv_write_kernel"]),
        ("B::linear", lt), ("B::add", add), ("B::rms_norm", ["rms_norm_kernel"]), ("B::linear", lt),
        ("B::linear", lt), ("B::silu_mul", ["silu_mul_kernel"]),
        ("quantize_fp8", ["amax_kernel", "finalize_scale_kernel", "quantize_fp8_kernel"]),
        ("linear_fp8", lt), ("B::linear", lt), ("B::add", add)]
    assert [r.op for r in rows].index("B::attention") == 7
    by_op = {}
    for r in rows:
        by_op.setdefault(r.op, r)
    assert by_op["B::rms_norm"].site.file.endswith("model/block.rs") and by_op["B::rms_norm"].site.line == 83
    assert [a.name for a in by_op["B::rms_norm"].adapter] == ["apxinf_rms_norm_bf16"]
    lin = rows[1].work[0]
    assert lin.kind == CallClass.LIBRARY and lin.dtypes.startswith("A/B bf16")
    assert rows[0].work[0].kind == CallClass.DEVICE and rows[0].counts.device == "1"
    # the fp8 / not-fp8 blocks are conditions on their rows, and one of the two, never both, counts
    assert [str(c) for c in by_op["quantize_fp8"].condition] == ['feature = "fp8"']
    assert [str(c) for c in rows[-2].condition] == ['not(feature = "fp8")']
    attn = rows[7].work[0]
    assert isinstance(attn, Choice) and attn.construct == "candidates"  # cfg candidates × env gate × head_dim
    assert {a.condition.split(";")[0] for a in attn.alternatives} == {
        "candidate attention::attention [cfg(apxinf_fa2_sm80)]",
        "candidate attention::attention [cfg(apxinf_cutlass_fmha)]",
        "candidate attention::attention [cfg(all(not(apxinf_fa2_sm80), not(apxinf_cutlass_fmha)))]"}


def test_loop_folded_with_the_checkpoint_config_bound(demo_index):
    from apxtui.checkpoint import read_checkpoint
    from apxtui.checkpoint.ontrace import loop_binder
    from apxtui.demo import DEMO_CHECKPOINT

    bind = loop_binder(read_checkpoint(DEMO_CHECKPOINT))
    m = _map(demo_index, "Pi05Model::forward", select=SELECT, loop_bind=bind)
    rows = m.phases[0].rows
    layer = [r for r in rows if r.context and r.context[-1].name == "layer.forward"]
    assert len(layer) == 18  # the block's rows, once: folded, not repeated per layer
    rep = layer[0].context[-1].repeat[0]
    assert rep.value == 2 and "num_hidden_layers" in rep.label and rep.header == "for layer in &self.layers"
    assert all(r.repeat == [rep] for r in layer)
    assert [r.op for r in rows if r.work][0] == "B::embed"
    alloc = [r for r in rows if r.context and r.context[-1].name == "Scratch::new"]  # per call: scratch allocated
    assert alloc and all(r.op == "Tensor::empty" and not r.work and r.other[0].cls == CallClass.MEMORY for r in alloc)
    assert "[" not in m.phases[0].totals.device  # no symbolic term left: the loop is bound
    symbolic = _map(demo_index, "Pi05Model::forward", select=SELECT)
    srow = next(r for r in symbolic.phases[0].rows if r.repeat)
    assert "layers" in symbolic.phases[0].totals.device and srow.repeat[0].label == "× layers (symbolic)"


def test_mutually_exclusive_kernels_count_as_one(demo_index):
    m = _map(demo_index, "kernels::activation::add")
    (row,) = m.phases[0].rows
    (choice,) = row.work
    assert isinstance(choice, Choice) and choice.construct == "if"
    assert [a.condition for a in choice.alternatives] == ["n % 4 == 0", "n % 2 == 0",
                                                          "else (not: n % 4 == 0; n % 2 == 0)"]
    assert row.counts.device == "1" and row.counts.exact  # one of the three launches, never 3
    assert m.phases[0].totals.device == "1"


def test_setup_containers_and_error_checks_are_never_device_work(demo_index):
    m = _map(demo_index, "kernels::linear::linear", select=SELECT)
    (row,) = m.phases[0].rows
    assert [c.name for c in iter_calls(row.work)] == ["cublasLtMatmul"]
    setup = {o.name: o for o in row.other if o.cls == CallClass.SETUP}
    assert {"cublasLtMatmulAlgoCheck", "cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmulDescCreate"} <= set(setup)
    # under find == end / a null check
    assert setup["cublasLtMatmulAlgoCheck"].first_call and setup["cublasLtCreate"].first_call
    assert not setup["cublasLtMatmulDescCreate"].first_call
    names = {o.name for o in row.other}
    assert not names & {"find", "end", "emplace", "cudaGetLastError"}  # host bookkeeping: neither work nor listed
    assert row.counts.library == "1" and row.counts.device == "0"
    rules = call_rules()
    for name, cls in [("cublasLtMatmulAlgoCheck", CallClass.SETUP), ("find", CallClass.HOST),
                      ("cudaGetLastError", CallClass.HOST), ("cudaMalloc", CallClass.MEMORY),
                      ("cudaStreamSynchronize", CallClass.TRANSFER), ("cudaGraphLaunch", CallClass.GRAPH),
                      ("cublasGemmEx", CallClass.LIBRARY)]:
        assert rules.classify("external", name, "call", defined=False).cls == cls, name
    assert rules.classify("vendor_api", "cublasLtMatmulAlgoCheck", "vendor", defined=False).cls == CallClass.SETUP


def test_a_project_function_is_never_classified_by_its_name():
    rules = call_rules()
    assert rules.classify("rust_fn", "my::cublasGemmEx", "call", defined=True).cls == CallClass.CODE
    assert rules.classify("host_fn", "cudaMalloc", "call", defined=True).cls == CallClass.CODE
    # a call the vendor name table matched that the project defines (its vendor edge won by the definition)
    assert rules.classify("host_fn", "cublasGemmEx", "vendor", defined=True).cls == CallClass.CODE
    assert rules.classify("ffi_decl", "ffi::cublasGemmEx", "call", defined=False).cls == CallClass.LIBRARY


def test_phases_first_call_graph_key_capture_and_replay(demo_index):
    m = _map(demo_index, "Pi05ModelRunner::infer", select=SELECT)
    tables = {t.phase: t for t in m.phases}
    assert list(tables)[:1] == [Phase.EAGER] and {Phase.CAPTURED, Phase.PREPARE} <= set(tables)
    prep = tables[Phase.PREPARE].rows
    assert prep and all(r.frequency.startswith("once per graph key") for r in prep)
    assert {"begin capture", "end capture", "instantiate the captured graph"} <= {r.note for r in prep}
    assert all(any(c.text == "None" and "graphs.get" in c.subject for c in r.condition) for r in prep)
    replay = [r for r in tables[Phase.EAGER].rows if r.note.startswith("graph replay")]
    assert len(replay) == 1 and any(c.text == "Some(graph)" for c in replay[0].condition)
    captured = tables[Phase.CAPTURED].rows
    assert captured[0].op == "B::embed" and any(r.context[-1].name == "layer.forward" for r in captured if r.context)
    assert not any(r.op == "B::embed" and r.phase == Phase.EAGER and r.context and r.context[-1].name == "decode_step"
                   for r in tables[Phase.EAGER].rows)  # the decode step runs only as a replay


# -- small checkouts on disk ------------------------------------------------------------------------

MINI = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/ops", "crates/model"]\n',
    "crates/ops/Cargo.toml": '[package]\nname = "ops"\nversion = "0.1.0"\n',
    "crates/ops/src/lib.rs": """
        extern "C" {
            fn ops_a(n: i32) -> i32;
            fn ops_b(n: i32) -> i32;
        }
        pub fn a(n: i32) -> i32 { unsafe { ops_a(n) } }
        pub fn b(n: i32) -> i32 { unsafe { ops_b(n) } }
        pub fn cudaMalloc(n: usize) -> usize { n }
        """,
    "crates/ops/adapters/ops.cu": """
        __global__ void ka(int n) {}
        __global__ void kb(int n) {}
        extern "C" int ops_a(int n) { ka<<<1, 32>>>(n); return 0; }
        extern "C" int ops_b(int n) { kb<<<1, 32>>>(n); return 0; }
        """,
    "crates/model/Cargo.toml": (
        '[package]\nname = "model"\nversion = "0.1.0"\n\n[dependencies]\nops = { path = "../ops" }\n'
    ),
    "crates/model/src/lib.rs": """
        pub fn layer(x: i32, tail: bool) -> Result<i32, String> {
            ops::a(x);
            if !tail {
                return Ok(x);
            }
            ops::b(x);
            if x < 0 {
                return Err("negative".to_string());
            }
            ops::cudaMalloc(4);
            Ok(x)
        }

        pub fn forward(x: i32, depth: usize) -> Result<i32, String> {
            for index in 0..depth {
                layer(x, index + 1 < depth)?;
            }
            walk(x)
        }

        pub fn walk(x: i32) -> Result<i32, String> {
            ops::a(x);
            walk(x - 1)
        }
        """,
}


@pytest.fixture(scope="module")
def mini_index(tmp_path_factory):
    from apxtui.index.build import build_index

    root = tmp_path_factory.mktemp("mini")
    for rel, text in MINI.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return build_index(root, workers=1)


def test_early_return_guards_the_rest_and_error_returns_are_not_followed(mini_index):
    m = _map(mini_index, "model::layer")
    rows = m.phases[0].rows
    assert [(r.op, _names(r.work)) for r in rows] == [("ops::a", ["ka"]), ("ops::b", ["kb"])]
    assert rows[0].condition == [] and [c.text for c in rows[1].condition] == ["tail (else: returns early)"]
    assert m.phases[0].totals.device == "1 .. 2"  # the early return is an alternative; the Err return is not
    assert "ops::cudaMalloc" not in [r.op for r in rows]  # a project fn named like a CUDA call reaches nothing


def test_loop_last_iteration_and_recursion_cut_are_said(mini_index):
    m = _map(mini_index, "model::forward")
    rows = m.phases[0].rows
    rep = rows[0].context[0].repeat[0]
    assert rep.value is None and rep.header == "for index in 0..depth" and "depth" in rep.label
    assert rep.last_differs == "tail = index + 1 < depth: differs on the last iteration"
    assert [(c.reason, c.name) for c in m.cuts] == [("recursion", "model::walk")]
    from apxtui.report.markdown import render_map_markdown
    from apxtui.report.model import map_report

    md = render_map_markdown(map_report(mini_index, find_symbol(mini_index.graph, "model::forward")))
    assert "## Cuts" in md and "- recursion: `model::walk`" in md and "last iteration differs" in md


def test_budget_cuts_of_the_call_tree_are_listed(demo_index):
    from apxtui.report.markdown import render_map_markdown
    from apxtui.report.model import map_report

    entry = find_symbol(demo_index.graph, "Pi05Policy.infer")
    rep = map_report(demo_index, entry, select=SELECT, detail=True, budget=60)
    tc = rep.trace["trace_cuts"]
    assert tc["count"] > 0 and tc["by_reason"].get("budget") and tc["first"][0]["site"]
    assert rep.cuts is not None and rep.cuts.to_dict() == tc and rep.cuts.budget == 60
    md = render_map_markdown(rep)
    assert "## Call-tree cuts" in md and f"{tc['count']} subtree(s)" in md
    assert rep.map.phases and not rep.map.cuts  # the map is not budgeted


def test_budget_is_shared_per_branch(demo_index):
    from apxtui.trace import Tracer, walk

    g = demo_index.graph
    entry = find_symbol(g, "Pi05ModelRunner::infer")
    full = Tracer(g, select=SELECT).trace(entry)
    total = sum(1 for _ in walk(full))
    t = Tracer(g, select=SELECT, budget=total // 3)
    root = t.trace(entry)
    assert t.count <= total // 3
    # both the eager prefill and the capture path were expanded down to kernel launches
    reached: set[str] = set()
    chain: list[str] = []
    for depth, st, _arms in walk(root):
        del chain[depth:]
        chain.append(st.name)
        if st.kind == "kernel":
            reached |= set(chain)
    assert {"forward", "decode_step"} <= reached


def test_export_path_follows_the_chosen_row_and_lists_every_choice(demo_index):
    from apxtui.report.markdown import render_map_markdown
    from apxtui.report.model import map_report

    entry = find_symbol(demo_index.graph, "Block::forward")
    m = build_map(demo_index, entry, select=SELECT)
    add = next(r for r in m.phases[0].rows if r.op == "B::add")
    choice = add.work[0]
    packed2 = choice.alternatives[1].work[0]
    rep = map_report(demo_index, entry, select=SELECT, path=packed2.key)
    assert [s.name for s in rep.path][-1] == "add_packed2_kernel"
    md = render_map_markdown(rep)
    path = next(line for line in md.splitlines() if line.startswith("**Path:**"))
    assert path.endswith("kernel: `add_packed2_kernel`") and "Rust: `add`" in path
    # choose the arm as the explorer's ] does: the row collapses to it and the header lists the choice
    rep = map_report(demo_index, entry, select=SELECT, choices={choice.dispatch: 1})
    row = next(r for r in rep.map.phases[0].rows if r.op == "B::add")
    assert _names(row.work) == ["add_packed2_kernel"]
    made = {c.dispatch: c for c in rep.map.choices}
    assert made[choice.dispatch].chosen == ["n % 2 == 0"] and made[choice.dispatch].by == "choice"
    md = render_map_markdown(rep)
    assert "→ `n % 2 == 0` (choice)" in md
    assert md.count("(select BF16, CudaBackend)") == len(rep.map.choices) - 1  # every choice listed


def test_operator_layer_override(demo_index):
    m = _map(demo_index, "Block::forward", select=SELECT, operators=["crates/apxinf-cuda/src/kernels"])
    rows = m.phases[0].rows
    assert rows[0].op == "kernels::norm::rms_norm" and rows[0].context[0].name == "B::rms_norm"
    assert "configured" in m.operator_rule


def test_calls_file_is_data_and_bad_files_are_named(tmp_path):
    base = call_rules().path.read_text("utf-8")
    text = base.replace('names = [\n  "cudaGetLastError"', 'names = [\n  "xyz_nothing"', 1)
    text = text.replace('names = ["can_implement",', 'names = ["cudaGetLastError", "can_implement",', 1)
    rules = parse_rules(tmp_path / "calls.toml", text)
    assert rules.classify("external", "cudaGetLastError", "call", defined=False).cls == CallClass.SETUP
    with pytest.raises(CallsFileError, match="calls.toml"):
        parse_rules(tmp_path / "calls.toml", "order = [")
    with pytest.raises(CallsFileError, match=r"\[classes.memory\].*invalid regular expression"):
        parse_rules(tmp_path / "calls.toml", 'order = ["memory"]\n[classes.memory]\npatterns = ["("]\n')
    with pytest.raises(CallsFileError, match="order"):
        parse_rules(tmp_path / "calls.toml", 'order = ["gpu"]\n')


def test_json_execution_map_shape(demo_index):
    m = _map(demo_index, "Block::forward", select=SELECT)
    d = m.to_dict()
    (t,) = d["phases"]
    assert t["phase"] == "eager" and t["frequency"].startswith("per call of")
    row = next(r for r in t["rows"] if r["op"] == "B::add")
    assert set(row) >= {"op", "site", "adapter", "work", "repeat", "condition"}
    (w,) = row["work"]
    assert w["kind"] == "kernel" and w["launches"] == "1"
    assert [a["name"] for a in w["alternatives"]] == ["add_packed4_kernel", "add_packed2_kernel", "add_kernel"]
    assert all(a["condition"] for a in w["alternatives"])
    assert set(t["totals"]) >= {"device", "library", "exact", "arms"}


def test_each_adapter_carries_its_definition_and_the_site_and_resolution_of_its_edge(demo_index):
    """Model → JSON → details pane → Markdown cell: each adapter with path:line and how its edge was linked."""
    from apxtui.report.markdown import adapter_cell
    from apxtui.tui.details import map_row_details

    m = _map(demo_index, "Block::forward", select=SELECT)
    rms = next(r for r in m.rows() if r.op == "B::rms_norm")
    (a,) = rms.adapter
    assert (a.name, str(a.definition), str(a.site), a.resolution) == (
        "apxinf_rms_norm_bf16", "crates/apxinf-cuda/adapters/norm.cu:10", "crates/apxinf-cuda/src/ffi/mod.rs:22",
        "exact")
    g = demo_index.graph
    node = {d["qualname"]: n for n, d in g.nodes(data=True) if d.get("kind") == "abi_fn"}
    n_checked = 0
    for r in m.rows():
        for a in r.adapter:  # the resolution of the graph edge into the adapter at the adapter's site
            n = node[a.name]
            edges = {(d.get("file"), d.get("line")): d.get("resolution") for _, _, d in g.in_edges(n, data=True)}
            assert edges[(a.site.file, a.site.line)] == a.resolution != "", (r.op, a)
            assert str(a.definition) == f"{g.nodes[n]['file']}:{g.nodes[n]['line']}"
            n_checked += 1
    assert n_checked >= 10
    row = next(x for x in m.to_dict()["phases"][0]["rows"] if x["op"] == "B::rms_norm")
    assert row["adapter"] == "apxinf_rms_norm_bf16"
    assert row["adapters"] == [{"name": "apxinf_rms_norm_bf16", "definition": "crates/apxinf-cuda/adapters/norm.cu:10",
                                "site": "crates/apxinf-cuda/src/ffi/mod.rs:22", "resolution": "exact",
                                "how": "C symbol apxinf_rms_norm_bf16"}]
    op = dict(map_row_details(rms))["Map row  (enter: call tree · [ ]: arm)"]
    i = op.index(("adapter", "apxinf_rms_norm_bf16  @ crates/apxinf-cuda/adapters/norm.cu:10"))
    assert op[i + 1] == ("  linked", "exact — C symbol apxinf_rms_norm_bf16  @ crates/apxinf-cuda/src/ffi/mod.rs:22")
    assert adapter_cell(rms.adapter) == "`apxinf_rms_norm_bf16` (crates/apxinf-cuda/adapters/norm.cu:10, exact)"


def test_per_stage_frequency_labels_first_call_and_graph_key(demo_index):
    from apxtui.analysis.annotate import annotate
    from apxtui.trace import Tracer, walk

    g = demo_index.graph
    root = Tracer(g, select=SELECT).trace(find_symbol(g, "Pi05ModelRunner::infer"))
    ann = annotate(demo_index, root)
    freq: dict[str, set[str]] = {}
    for _, st, _arms in walk(root):
        label = ann.stage(st).frequency.label
        freq.setdefault(st.name, set()).add(label.split(" (")[0].split(" —")[0])
    assert freq["begin_capture"] == {"once per graph key"}  # the capture miss arm, not "per call"
    assert "first call" in freq["cublasLtCreate"] and "first call" in freq["cublasLtMatmulAlgoCheck"]
    assert all(not x.startswith("per call") for x in freq["cublasLtMatmulAlgoCheck"])
    lt = ann.path.launch_totals.by_phase
    # 7 projections + lm_head and a FlashAttention call at most: the AlgoChecks (setup) would double it
    assert lt["eager"]["library"].max == "1 + 8 × [for layer in &self.layers]"


def test_capture_lists_if_else_launches_as_one_with_alternatives(demo_index):
    from apxtui.analysis.annotate import annotate
    from apxtui.analysis.pathfacts import PathFacts
    from apxtui.trace import Tracer
    from apxtui.tui.background import capture_rows

    g = demo_index.graph
    root = Tracer(g, select=[*SELECT, "None"]).trace(find_symbol(g, "Pi05ModelRunner::infer"))
    regions = annotate(demo_index, root).path.capture_regions
    launches = [la for r in regions for la in r.launches]
    adds = [la for la in launches if la.kernel.startswith("add_")]
    assert adds and {la.alternatives for la in adds} == {3}
    rows = [row for row in capture_rows(PathFacts(capture_regions=regions))
            if row[0] == "  launch" and "add_" in row[1]]
    assert rows and all(r[1] == "add_packed4_kernel | add_packed2_kernel | add_kernel" and "one of 3" in r[3]
                        for r in rows)
    assert len(rows) == len(adds) // 3


CUB = {
    "k.cu": """
        #include <cub/cub.cuh>
        namespace cub { struct DeviceSelect { static int Flagged(int n) { return n; } }; }
        extern "C" void count_sum(const float *d_in, float *d_out, int n, cudaStream_t stream) {
          size_t bytes = 0;
          void *tmp = nullptr;
          cub::DeviceReduce::Sum(nullptr, bytes, d_in, d_out, n, stream);
          cub::DeviceReduce::Sum(tmp, bytes, d_in, d_out, n, stream);
          cub::DeviceScan::ExclusiveSum<const float *, float *>(tmp, bytes, d_in, d_out, n, stream);
          cub::DeviceSelect::Flagged(n);
          cub::BlockScan<int, 128>::Sum(n);
        }
        extern "C" void thrust_ops(int *p, int n, cudaStream_t stream) {
          thrust::inclusive_scan(thrust::cuda::par.on(stream), p, p + n, p);
          int c = thrust::count(thrust::device, p, p + n, 0);
          thrust::sort(p, p + n);
        }
    """,
}


def test_cub_device_algorithms_are_library_work_unless_the_project_defines_them(tmp_path):
    from apxtui.index.build import build_index

    for rel, text in CUB.items():
        (tmp_path / rel).write_text(textwrap.dedent(text))
    idx = build_index(tmp_path, workers=1)
    m = _map(idx, "count_sum")
    assert m.phases[0].totals.library == "2" and m.phases[0].totals.device == "0"
    libs = [(c.name, c.library) for r in m.phases[0].rows for c in iter_calls(r.work) if c.kind == CallClass.LIBRARY]
    assert libs == [("Sum", "cub"), ("ExclusiveSum", "cub")]
    lib_nodes = {n for n, k in idx.graph.nodes(data="kind") if k == "vendor_api" and "thrust" not in n}
    assert lib_nodes == {"vendor:cub:cub::DeviceReduce::Sum", "vendor:cub:cub::DeviceScan::ExclusiveSum"}
    # the project's own cub::DeviceSelect::Flagged wins over the table and is followed as code
    ops = {r.op for r in m.phases[0].rows}
    assert "cub::DeviceSelect::Flagged" not in ops and "cub::BlockScan::Sum" not in ops
    # the workspace-size query (null temp storage) runs nothing on the device: not a library call
    sites = sorted(e["line"] for _, v, e in idx.graph.edges(data=True) if v.startswith("vendor:cub:"))
    assert sites == [8, 9]
    # Thrust algorithms given a device execution policy are library work (`count` too, a host name
    # in calls.toml otherwise); without a policy the source does not say where it runs
    m = _map(idx, "thrust_ops")
    libs = [(c.name, c.library) for r in m.phases[0].rows for c in iter_calls(r.work) if c.kind == CallClass.LIBRARY]
    assert libs == [("inclusive_scan", "thrust"), ("count", "thrust")]
    assert "vendor:thrust:thrust::sort" not in idx.graph


def _incremental(index, entry):
    from apxtui.map.build import MapBuilder
    from apxtui.map.operators import operator_layer
    from apxtui.trace import Tracer

    b = MapBuilder(index, Tracer(index.graph), call_rules(), operator_layer(index.graph, index.root, None))
    b.build(entry)
    return b


@pytest.mark.parametrize("name", ["Pi05Policy.infer", "model::forward"])
def test_a_choice_changed_on_a_kept_builder_maps_as_a_fresh_build(demo_index, mini_index, name):
    """set_choices + build (memos kept, only what the choice reaches redone) == build_map with those choices,
    for each arm of each dispatch point, in a sequence (so kept memos from several walks are reused)."""
    import json

    index = demo_index if "." in name else mini_index
    entry = find_symbol(index.graph, name)
    b = _incremental(index, entry)
    keys = [(k, [a.index for a in d.arms]) for k, d in b.dispatches.items() if len(d.arms) > 1]
    assert keys
    choices: dict[str, int] = {}
    steps = 0
    for key, arms in keys[:12]:
        for arm in arms[::-1]:
            choices[key] = arm
            b.set_choices(choices)
            b.build(entry)
            got = b.result()
            want = build_map(index, entry, choices=dict(choices))
            got.lead, want.lead = [], []
            assert json.dumps(got.to_dict()) == json.dumps(want.to_dict()), (key, arm)
            assert got == want
            steps += 1
    assert steps >= 2


def test_operator_layer_of_the_stored_graph_equals_the_in_memory_graphs(demo_index, monkeypatch):
    """The stored graph's discovery (function rows only, attributes on a hit) finds the same packages,
    counts and order as the scan of every edge of the whole graph in memory."""
    import sqlite3
    from contextlib import closing

    from apxtui.index.store import StoredGraph
    from apxtui.map.operators import _discover, _stored_counts

    assert isinstance(demo_index.graph, StoredGraph)
    stored, full = _discover(demo_index.graph), _discover(demo_index.full_graph())
    assert stored.packages and "(" in stored.rule
    assert (stored.packages, stored.rule) == (full.packages, full.rule)
    assert frozenset(_stored_counts(demo_index.graph)) == full.packages  # the scan itself (a stored count may exist)
    with closing(sqlite3.connect(demo_index.db.path)) as c:  # stored beside the generation (another connection)
        assert [k for (k,) in c.execute("SELECT key FROM blobs") if k.startswith("derived:operator-layer:")]
    demo_index.db.begin_read()  # a new snapshot: read from the store now, not made again
    monkeypatch.setattr(StoredGraph, "out_edges_of_kinds", None)  # the scan is not run again
    again = _discover(StoredGraph(demo_index.db, demo_index.graph.counts()))
    assert (again.packages, again.rule) == (full.packages, full.rule)


# -- counted merges (the builder folds as it goes; these check it against the plain definition) ----------


def test_other_calls_merged_as_counted_entries_equal_counting_the_concatenation():
    from apxtui.map.build import _add_others, _other_key
    from apxtui.map.model import OtherCall, Site

    def oc(name, line, guard="", key=("k",)):
        return OtherCall(CallClass.SETUP, name, Site("a.rs", line), key, bool(guard), "", guard=guard)

    raw = [oc("alloc", 1, key=("a",)), oc("sync", 2), oc("alloc", 1, key=("b",)), oc("alloc", 1, "x.is_null()"),
           oc("sync", 2, key=("c",))]
    inner: dict = {}
    _add_others(inner, raw[:3])
    _add_others(inner, raw[3:])
    outer: dict = {}
    _add_others(outer, inner.values(), ("p",), "first")  # re-keyed under a first call: the guard is kept or set
    _add_others(outer, [oc("alloc", 1, "first", key=("z",))])
    changed = [OtherCall(o.cls, o.name, o.site, ("p", *o.key), True, o.detail, guard=o.guard or "first") for o in raw]
    plain: dict = {}
    for o in [*changed, oc("alloc", 1, "first", key=("z",))]:  # the definition: count the concatenation
        k = _other_key(o)
        plain.setdefault(k, [o, 0])[1] += 1
    assert [(o.key, o.guard, o.count) for o in outer.values()] == [(o.key, o.guard, n) for o, n in plain.values()]
    assert [o.count for o in outer.values()] == [3, 2, 1]
    assert [o.count for o in inner.values()] == [2, 2, 1]  # merged into outer, not changed


def test_a_rekeyed_choice_keeps_its_count_scaled_by_the_added_loops():
    from apxtui.map.build import _rekey
    from apxtui.map.counts import choice_count, work_count
    from apxtui.map.model import Alternative, Repeat, Site
    from apxtui.vocab import Evidence

    s = Site("a.rs", 1)

    def call(name, kind=CallClass.DEVICE, reps=()):
        return Call(kind, name, s, s, ("c",), repeat=list(reps))

    sym = Repeat("for l in layers", None, "", s, Evidence.HEURISTIC, "", "per layer")
    three = Repeat("for i in 0..3", 3, "× 3", s, Evidence.EXACT, "", "")
    inner = Choice("if", "", s, "d1", [Alternative("a", s, "d1", 0, [call("k1"), call("k2", reps=[three])]),
                                       Alternative("b", s, "d1", 1, [call("lib", CallClass.LIBRARY)])])
    outer = Choice("match", "", s, "d2", [Alternative("x", s, "d2", 0, [inner, call("k3")]),
                                          Alternative("y", s, "d2", 1, [])])
    choice_count(outer)
    got = _rekey([outer], ("p",), [sym, three], (), None)[0]
    assert isinstance(got, Choice) and got.count is not None

    def fresh(c):  # the same choice with no count kept anywhere below
        return Choice(c.construct, c.subject, c.site, c.dispatch, [
            Alternative(a.condition, a.site, a.dispatch, a.arm,
                        [fresh(w) if isinstance(w, Choice) else w for w in a.work]) for a in c.alternatives])

    want = work_count([fresh(got)])
    assert work_count([got]).kinds() == want.kinds()
    assert want.kinds()["device"].max == "15 × [layers]"  # (k1 + 3 × k2 + k3) × 3 per layer: the test can fail
