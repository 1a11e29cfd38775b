"""Capture regions: wrappers followed, frozen per-request scalars, hazards, host-transfer audit, commands."""

from __future__ import annotations

import json

from test_analysis_dtypes import MiniIndex

from apxtui.analysis.annotate import annotate
from apxtui.analysis.checkout import capture_report, kernels_report
from apxtui.cli import main
from apxtui.trace import Tracer, find_symbol

SEL = ["CudaBackend", "BF16", 'not(feature = "fp8")', "all(not(apxinf_fa2_sm80)", "else", "case 16"]


def _path(idx, entry, select=()):
    root = Tracer(idx.graph, select=list(select)).trace(find_symbol(idx.graph, entry))
    return annotate(idx, root).path


def test_demo_region_through_wrappers(demo_index):
    regions = _path(demo_index, "Pi05ModelRunner::infer", SEL).capture_regions
    assert len(regions) == 1
    r = regions[0]
    assert r.begin is not None and r.begin.target == "apxinf_cuda::graph::begin_capture"
    assert r.end is not None and r.end.role == "end"
    assert [c.call for c in r.body_calls] == ["decode_step"]
    assert [c.target for c in r.instantiate] == ["apxinf_cuda::graph::CudaGraph::instantiate"]
    doc = r.to_dict()  # the trace document's form: the begin, then the body calls, the ends, status
    assert list(doc)[:11] == ["id", "function", "function_node", "file", "begin", "arms", "body_calls", "ends", "end",
                              "status", "instantiate"]
    assert doc["begin"]["target"] == r.begin.target and doc["body_calls"][0]["call"] == "decode_step"


def test_demo_position_in_graph_key_buffer_not_flagged(demo_index):
    r = _path(demo_index, "Pi05ModelRunner::infer", SEL).capture_regions[0]
    rope = [x for x in r.launches if x.kernel == "rope_kernel"]
    assert rope
    consts = {c.param: c for c in rope[0].constants}
    assert "per-request" in consts["pos"].origin
    assert any("tokens.len() + step" in s for s in consts["pos"].derivation)
    # the graphs are cached per seq_len = pos + 1: a different pos builds another graph
    key = consts["pos"].in_graph_key
    assert not consts["pos"].flagged and key is not None and key.key == "seq_len"
    assert "safe by construction" in consts["pos"].reason
    assert consts["pos"].to_dict()["in_graph_key"]["key"] == "seq_len"
    assert not consts["theta"].flagged and consts["theta"].origin == ("struct field",)
    buf = {b.param: b for b in rope[0].buffers}
    assert buf["x"].allocated_before_capture is True and "flagged" not in buf["x"].to_dict()


def test_explorer_capture_section_reads_the_stage_records(demo_index):
    """The details pane gets a stage's typed records from the path server: a captured launch's constants
    and buffers one line each (as ``apxtui capture`` writes them), not a dict's repr."""
    from apxtui.trace import walk
    from apxtui.tui import details
    from apxtui.tui.background import StageRecord
    from apxtui.tui.session import Session

    root = Tracer(demo_index.graph, select=SEL).trace(find_symbol(demo_index.graph, "Pi05ModelRunner::infer"))
    ann = annotate(demo_index, root)
    rope = next(st for _d, st, _a in walk(root) if st.qualname == "rope_kernel" and ann.stage(st).capture)
    title, rows = details.capture(Session(demo_index), rope, StageRecord(ann.stage(rope)), "")
    got = dict(rows[:2])
    assert title == "Capture role" and got["role"] == "body" and got["region"].endswith("model_runner/mod.rs:57")
    consts = [v for k, v in rows if k == "constant"]
    assert any(v.startswith("rope_kernel.pos = ") and "in graph key" in v and ": safe]" in v for v in consts)
    assert [v.split(" = ")[0] for k, v in rows if k == "buffer"][:1] == ["x"]
    assert not any("{" in v for _k, v in rows)


def test_demo_sync_inside_capture_is_a_hazard(demo_index):
    r = _path(demo_index, "Pi05ModelRunner::infer", SEL).capture_regions[0]
    syncs = [h for h in r.hazards if h.kind == "sync"]
    assert [(h.api, h.via) for h in syncs] == [
        ("cudaStreamSynchronize", "apxinf_cuda::stream::Stream::synchronize")
    ]
    assert "APXINF_SYNC_DEBUG" in syncs[0].arms[-1]


def test_demo_d2h_copy_outside_capture(demo_index):
    tr = _path(demo_index, "Pi05ModelRunner::infer", SEL).host_transfers
    d2h = [t for t in tr if t.kind == "copy" and t.direction == "D2H"]
    assert d2h and all(t.in_capture is None and t.phase == "eager" for t in d2h)
    assert any("Tensor::to_host" in " ".join(t.via) for t in d2h)
    h2d = [t for t in tr if t.kind == "copy" and t.direction == "H2D"]
    assert any("per step" in t.frequency for t in h2d)  # input_buf upload before each replay


def test_begin_and_end_in_one_cpp_function_with_default_stream_launch():
    src = """
__global__ void k(float* x, int pos) { x[pos] = 0.f; }
void step(cudaStream_t s, float* buf, int pos, cudaGraph_t* g) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    k<<<1, 32, 0, s>>>(buf, pos);
    k<<<1, 32>>>(buf, 7);
    cudaDeviceSynchronize();
    cudaStreamEndCapture(s, g);
}
"""
    idx = MiniIndex({"g.cu": ("", src)})
    r = _path(idx, "step").capture_regions[0]
    assert r.status == "exact" and len(r.launches) == 2
    first, second = r.launches
    assert {c.param: c.flagged for c in first.constants} == {"pos": True}
    assert {c.param: c.flagged for c in second.constants} == {"pos": False}
    kinds = sorted(h.kind for h in r.hazards)
    assert kinds == ["default stream", "sync"]
    # the JSON form keeps each hazard kind's key order (a default-stream launch names its arms first)
    by = {h.kind: list(h.to_dict()) for h in r.hazards}
    assert by["default stream"][3:5] == ["arms", "call_at"] and by["sync"][3:5] == ["call_at", "arms"]


def test_capture_report_lists_cache_and_replays(demo_index):
    rep = capture_report(demo_index)
    assert len(rep.regions) == 1
    cache = rep.graph_caches[0]
    assert cache.cache == "self.graphs" and cache.key == "seq_len"
    assert cache.key_derivation[0].startswith("seq_len = pos + 1")
    # the audit lists the body's completeness before the allocations (the trace document after them)
    assert list(rep.regions[0].to_dict(audit=True))[-4:] == ["complete", "cut", "allocations_in_body", "graph_keys"]
    assert list(rep.regions[0].to_dict())[-4:] == ["allocations_in_body", "complete", "cut", "graph_keys"]
    hit = [s for s in rep.replay_sites if s.conditions == ("Some(graph)",)][0]
    assert [w.call for w in hit.stable_buffer_writes_before] == ["copy_from_host"]
    assert rep.to_dict()["replay_sites"][rep.replay_sites.index(hit)]["stable_buffer_writes_before"][0]["direction"] \
        == "H2D"


def test_kernels_report(demo_index):
    rep = kernels_report(demo_index)
    by = {k.kernel: k for k in rep.kernels}
    rms = by["rms_norm_kernel"]
    assert rms.template_params == ("T", "AccT") and len(rms.launch_sites) == 3
    bf16 = [s for s in rms.launch_sites if s.template_args == ("__nv_bfloat16", "float")][0]
    assert bf16.dtypes.accumulator.value == ["f32"]
    assert any(e.path[-1] == "rms_norm_kernel" for e in rms.entries)
    doc = next(k for k in rep.to_dict()["kernels"] if k["kernel"] == "rms_norm_kernel")  # the --json form
    assert doc["launch_sites"][rms.launch_sites.index(bf16)]["dtypes"]["accumulator"]["value"] == ["f32"]


def test_cli_commands(demo_index, capsys):
    assert main(["capture", "--demo", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["regions"] and "not runtime validation" in rep["static_analysis"]
    assert main(["kernels", "--demo"]) == 0
    out = capsys.readouterr().out
    assert "rms_norm_kernel<T, AccT>" in out and "launch<__nv_bfloat16, float>" in out


def test_trace_json_and_md_carry_the_fields(demo_index, capsys):
    assert main(["trace", "--demo", "--from", "Block::forward", "--select", "CudaBackend", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"dtype_boundaries", "launch_totals", "host_transfers"} <= set(doc)
    kern = [s for s in doc["stages"] if s["kind"] == "kernel" and s["name"] == "rms_norm_kernel"][0]
    assert {"dtypes", "launches", "frequency"} <= set(kern)
    assert kern["dtypes"]["accumulator"]["value"] == ["f32"]
    assert any(b["kind"] == "accumulate" and b["to"] == "f32" for b in doc["dtype_boundaries"])
    assert main(["trace", "--demo", "--from", "Block::forward", "--select", "CudaBackend", "--format", "md",
                 "--detail", "full"]) == 0
    md = capsys.readouterr().out
    assert "| dtypes | launches | frequency | capture role | source |" in md and "## Launch totals (static)" in md


def test_a_region_reached_on_two_paths_is_listed_once_with_its_least_cut_body():
    from dataclasses import replace

    from apxtui.analysis.annotate import _distinct
    from apxtui.analysis.capturefacts import CaptureBody, CaptureRegion

    def region(rid: str, cut: tuple[str, ...]) -> CaptureRegion:
        body = CaptureBody((), (), (), False, not cut, cut)
        return CaptureRegion(rid, "f", "n", "a.rs", None, None, (), (), (), (), (), (), "exact", body=body)

    a_cut, a_full, b = region("f@a.rs:3", ("g (budget)", "h (budget)")), region("f@a.rs:3", ("h (budget)",)), \
        region("f@a.rs:9", ())
    assert _distinct([a_cut, b, a_full, replace(b)]) == (a_full, b)  # one per region, first-seen order


def test_layers_stored_beside_the_generation_answer_as_the_graph_does(demo_index):
    """Lifecycle roles and reach (every node), the capturing functions, methods by container and a function's own
    graph caches, read from what is stored beside the generation, equal what the in-memory graph gives."""
    from apxtui.analysis.graphkeys import GraphKeys
    from apxtui.analysis.hostops import Roles
    from apxtui.analysis.lifecycle import _methods_by_container, methods_by_container
    from apxtui.index.store import StoredGraph

    g, full = demo_index.graph, demo_index.full_graph()
    assert isinstance(g, StoredGraph)
    stored, mem = Roles(g), Roles(full)
    got = [(n, stored.role(n), stored.reach(n)) for n in full.nodes]
    assert got == [(n, mem.role(n), mem.reach(n)) for n in full.nodes]
    assert stored._table is not None and {"begin", "end", "replay"} <= {r for _, r, _ in got}
    assert methods_by_container(g) == _methods_by_container(full) and methods_by_container(g)
    gk = GraphKeys(demo_index, stored)
    assert gk.capturing == GraphKeys(demo_index, mem)._capturing() and gk.capturing
    own = {fn: gk.keyed_on(fn) for fn in gk.capturing}  # before caches(): only the function's own edges asked
    assert gk._caches is None and any(own.values())
    assert own == {fn: [c for c in GraphKeys(demo_index, mem).caches() if c.function_node == fn] for fn in own}
