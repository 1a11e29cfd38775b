"""Static launch counts: device launches vs library calls, loop multipliers, alternatives, phases."""

from __future__ import annotations

from test_analysis_dtypes import MiniIndex

from apxtui.analysis.annotate import annotate
from apxtui.analysis.loops import consts_of, multiplier
from apxtui.trace import Tracer, dispatches, find_symbol

ADAPTER_CU = """
template <typename T> __global__ void scale_kernel(T* x, int n) { x[0] = x[0]; }
extern "C" int fused(void* x, void* w, void* out, int n, cudaStream_t s) {
    scale_kernel<float><<<n, 256, 0, s>>>(static_cast<float*>(x), n);
    const int passes = 3;
    for (int i = 0; i < passes; ++i) {
        scale_kernel<float><<<n, 256, 0, s>>>(static_cast<float*>(x), n);
    }
    cublasLtMatmul(h, d, &a, w, la, x, lb, &b, out, lc, out, lc, nullptr, nullptr, 0, s);
    cublasLtMatrixLayoutDestroy(la);
    return 0;
}
extern "C" int pick(void* x, int n, int mode, cudaStream_t s) {
    if (mode == 1) {
        scale_kernel<float><<<n, 256, 0, s>>>(static_cast<float*>(x), n);
        scale_kernel<float><<<n, 256, 0, s>>>(static_cast<float*>(x), n);
    } else {
        scale_kernel<float><<<n, 256, 0, s>>>(static_cast<float*>(x), n);
    }
    return 0;
}
"""


def _totals(idx, entry, select=(), first_arm_at=None):
    """Launch totals; ``first_arm_at`` (file:line) picks arm 0 of the `if` there (a text selection of an
    if-arm also matches its else, whose label repeats the condition)."""
    entry = find_symbol(idx.graph, entry)
    root = Tracer(idx.graph, select=list(select)).trace(entry)
    if first_arm_at:
        keys = {d.key: 0 for d in dispatches(root) if f"{d.file}:{d.line}" == first_arm_at}
        assert keys
        root = Tracer(idx.graph, select=list(select), choices=keys).trace(entry)
    return annotate(idx, root).path.launch_totals


def test_library_call_counted_as_library_not_launch_and_const_loop_bound():
    lt = _totals(MiniIndex({"a.cu": ("", ADAPTER_CU)}), "fused")
    eager = lt.by_phase["eager"]
    assert eager["device"].max == "4" and eager["device"].exact  # 1 + 3 × (const passes = 3)
    assert eager["library"].max == "1"  # cublasLtMatmul: one library call, not a device launch
    assert eager["library_setup"].max == "1"  # the layout destroy is kept apart
    assert "static" in lt.scope and "not a device launch" in lt.scope


def test_unselected_branch_gives_min_max_not_a_sum():
    idx = MiniIndex({"a.cu": ("", ADAPTER_CU)})
    lt = _totals(idx, "pick")
    dev = lt.by_phase["eager"]["device"]
    assert (dev.min, dev.max, dev.exact) == ("1", "2", False)
    assert len(lt.alternatives) == 1 and len(lt.alternatives[0].arms) == 2
    dev = _totals(idx, "pick", first_arm_at="a.cu:14").by_phase["eager"]["device"]
    assert (dev.min, dev.max) == ("2", "2")


def test_multiplier_rules():
    assert multiplier("for (int i = 0; i < 4; ++i)").value == 4
    assert multiplier("for (int i = 1; i <= 4; i++)").value == 4
    assert multiplier("for step in 0..4").value == 4
    assert multiplier("for step in 0..=3").value == 4
    assert multiplier("for i in range(8):").value == 8
    m = multiplier("for layer in &self.layers")
    assert m.value is None and m.label == "for layer in &self.layers"
    m = multiplier("for step in 0..num_steps")
    assert m.value is None and "num_steps" in m.reason
    assert multiplier("|x: usize|").status == "unknown"


def test_const_bound_needs_a_single_literal_assignment():
    idx = MiniIndex({"a.cu": ("", ADAPTER_CU)})
    d = idx.definition(find_symbol(idx.graph, "fused"))
    assert consts_of(d)["passes"][0] == "3"
    assert multiplier("for (int i = 0; i < passes; ++i)", consts_of(d)).value == 3


def test_demo_block_forward_default_build(demo_index):
    sel = ["CudaBackend", "BF16", 'not(feature = "fp8")', "all(not(apxinf_fa2_sm80)", "else", "case 16"]
    eager = _totals(demo_index, "Block::forward", sel).by_phase["eager"]
    # rms_norm ×2, rope ×2, kv_write, attention, add ×2, silu_mul; q/k/v/o/gate/up/down through cuBLASLt
    assert (eager["device"].max, eager["device"].exact) == ("9", True)
    assert eager["library"].max == "7"


def test_demo_split_k_literal_loop_and_layer_loop(demo_index):
    sel = ["CudaBackend", "BF16", 'not(feature = "fp8")', "all(not(apxinf_fa2_sm80)", "case 16"]
    lt = _totals(demo_index, "Pi05Model::forward", sel, first_arm_at="crates/apxinf-cuda/src/kernels/attention.rs:55")
    dev = lt.by_phase["eager"]["device"]
    # per layer: 8 + 4 split launches (literal `for (int i = 0; i < 4; ++i)`) + 1 combine; embed + final norm
    assert dev.max == "2 + 13 × [for layer in &self.layers]" and dev.exact


def test_demo_infer_keeps_capture_apart(demo_index):
    sel = ["CudaBackend", "BF16", 'not(feature = "fp8")', "all(not(apxinf_fa2_sm80)", "else", "case 16"]
    lt = _totals(demo_index, "Pi05ModelRunner::infer", sel)
    assert lt.by_phase["eager"]["device"].max == "2 + 9 × [for layer in &self.layers]"
    cap = lt.by_phase["captured"]["device"]
    assert cap.min == "0"  # the capture-miss arm is one alternative of the graph-cache match
    assert "[for layer in &self.layers] × [for step in 0..num_steps]" in cap.max
    assert lt.by_phase["capture"]["graph_launches"].max == "1 × [for step in 0..num_steps]"


def test_stream_memops_and_graph_replays_come_from_the_calls_toml_families():
    from types import SimpleNamespace

    from apxtui.analysis.launches import own_kind
    from apxtui.trace import Via
    from apxtui.vocab import EdgeKind, Resolution

    def kind(name: str):
        via = Via(EdgeKind.CALL, Resolution.UNRESOLVED)
        return own_kind(SimpleNamespace(via=via, kind="external", qualname=name, name=name), None)

    assert [kind(n) for n in ("cuMemcpyDtoDAsync", "cudaMemset2DAsync", "cudaMemcpyAsync")] == ["memops"] * 3
    assert kind("cudaMemPrefetchAsync") is None  # memory class, but neither a copy nor a memset
    assert kind("cuGraphLaunch") == "graph_launches" and kind("cudaGraphInstantiate") is None


def test_importing_the_capture_role_table_reads_no_calls_toml():
    import importlib

    from apxtui.analysis import calls, hostops

    calls.call_rules.cache_clear()
    importlib.reload(hostops)
    assert calls.call_rules.cache_info().currsize == 0  # read on first use only
    assert "cudaStreamBeginCapture" in hostops.capture_prims()["begin"]
