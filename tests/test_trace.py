"""Trace tests on the embedded demo: the whole chain, dispatch points, selections, cuts."""

from __future__ import annotations

import pytest

from apxtui.trace import Dispatch, Stage, SymbolError, Tracer, find_symbol, walk


def kinds_path_to(root: Stage, predicate) -> list[tuple[str, str]]:
    """(kind, qualname) of the stages from the root down to the first stage matching ``predicate``."""
    path: list[Stage] = []
    for depth, st, _ in walk(root):
        path = path[:depth] + [st]
        if predicate(st):
            return [(s.kind, s.qualname) for s in path]
    raise AssertionError("no stage matches")


def test_chain_python_to_kernel_in_order(demo_index):
    g = demo_index.graph
    root = Tracer(g, select=["Vla", "BF16"]).trace(find_symbol(g, "Pi05Policy.infer"))
    chain = kinds_path_to(root, lambda s: s.kind == "kernel" and s.name == "rms_norm_kernel")
    kinds = [k for k, _ in chain]
    # Python → PyO3 → Rust … → ffi decl → adapter (extern "C") → kernel, in this order
    order = ["python_fn", "pyo3_binding", "rust_fn", "ffi_decl", "abi_fn", "kernel"]
    positions = [kinds.index(k) for k in order]
    assert positions == sorted(positions), chain
    quals = [q for _, q in chain]
    assert quals[0] == "apxinf.policy.Pi05Policy.infer"
    assert quals[1] == "apxinf_py.ModelRunner.infer"
    assert "apxinf_py::PyModelRunner::infer_py" in quals
    assert "apxinf_model::pi05::model_runner::Pi05ModelRunner::infer" in quals
    assert "apxinf_cuda::kernels::norm::rms_norm" in quals
    assert quals[-3:] == ["apxinf_cuda::ffi::apxinf_rms_norm_bf16", "apxinf_rms_norm_bf16", "rms_norm_kernel"]


def _dtype_dispatch(root: Stage) -> Dispatch:
    for item in root.children:
        if isinstance(item, Dispatch) and item.construct == "match" and "dtype" in item.subject:
            return item
    raise AssertionError("no dtype match in rms_norm")


def test_dispatch_point_keeps_every_arm_without_selection(demo_index):
    g = demo_index.graph
    root = Tracer(g).trace(find_symbol(g, "kernels::norm::rms_norm"))
    d = _dtype_dispatch(root)
    labels = [a.label for a in d.arms]
    assert labels[:3] == ["DType::BF16", "DType::F16", "DType::F32"]
    assert all(a.selected is None for a in d.arms)
    reached = {st.qualname for _, st, _ in walk(root) if st.kind == "abi_fn"}
    assert reached == {"apxinf_rms_norm_bf16", "apxinf_rms_norm_f16", "apxinf_rms_norm_f32"}


def test_select_picks_arms_by_condition_text(demo_index):
    g = demo_index.graph
    root = Tracer(g, select=["F16"]).trace(find_symbol(g, "kernels::norm::rms_norm"))
    d = _dtype_dispatch(root)
    assert [a.label for a in d.arms if a.selected] == ["DType::BF16", "DType::F16"]  # substring of both
    root = Tracer(g, select=["DType::F32"]).trace(find_symbol(g, "kernels::norm::rms_norm"))
    reached = [st.qualname for _, st, _ in walk(root) if st.kind == "abi_fn"]
    assert reached == ["apxinf_rms_norm_f32"]
    launches = [st.via.template_args for _, st, _ in walk(root) if st.kind == "kernel" and st.via]
    assert launches == [("float", "float")]


def test_choices_by_dispatch_key_override_text(demo_index):
    g = demo_index.graph
    entry = find_symbol(g, "kernels::norm::rms_norm")
    key = _dtype_dispatch(Tracer(g).trace(entry)).key
    root = Tracer(g, select=["BF16"], choices={key: 1}).trace(entry)
    assert [st.qualname for _, st, _ in walk(root) if st.kind == "abi_fn"] == ["apxinf_rms_norm_f16"]


def test_cfg_alternatives_are_a_candidates_dispatch_with_their_cfgs(demo_index):
    g = demo_index.graph
    root = Tracer(g, depth=3).trace(find_symbol(g, "CudaBackend::attention"))
    disp = [it for it in root.children if isinstance(it, Dispatch) and it.construct == "candidates"]
    assert len(disp) == 1
    labels = " | ".join(a.label for a in disp[0].arms)
    for cfg in ("cfg(apxinf_fa2_sm80)", "cfg(apxinf_cutlass_fmha)", "not(apxinf_fa2_sm80)"):
        assert cfg in labels


def test_loops_and_edge_evidence(demo_index):
    g = demo_index.graph
    root = Tracer(g).trace(find_symbol(g, "Pi05Model::forward"))
    layer_calls = [st for _, st, _ in walk(root) if st.name == "forward" and st.via and st.via.loops]
    assert layer_calls and layer_calls[0].via and layer_calls[0].via.loops == ("for layer in &self.layers",)
    for _, st, _ in walk(root):
        if st.via:
            assert st.via.resolution in {"exact", "heuristic", "ambiguous", "unresolved"}
            assert st.via.file and st.via.line > 0


def test_depth_limit_and_recursion_are_marked(demo_index):
    g = demo_index.graph
    root = Tracer(g, depth=2).trace(find_symbol(g, "Pi05Policy.infer"))
    cut = [st for _, st, _ in walk(root) if st.cut]
    assert cut and all(st.cut == "depth" for st in cut)
    assert max(d for d, _, _ in walk(root)) <= 2


def test_recursion_is_cut(tmp_path):
    from helpers import graph_of

    g, _ = graph_of({"r/src/lib.rs": ("r", "pub fn a(n: u32) { if n > 0 { b(n - 1) } }\npub fn b(n: u32) { a(n) }\n")})
    root = Tracer(g).trace(find_symbol(g, "r::a"))
    cuts = [(st.qualname, st.cut) for _, st, _ in walk(root) if st.cut]
    assert cuts == [("r::a", "recursion")]


def test_symbol_lookup_errors_name_candidates(demo_index):
    g = demo_index.graph
    with pytest.raises(SymbolError) as e:
        find_symbol(g, "forward")
    assert "ambiguous" in str(e.value) and len(e.value.candidates) > 1
    with pytest.raises(SymbolError) as e:
        find_symbol(g, "rms_nrom")
    assert "no symbol" in str(e.value)
    node = find_symbol(g, "crates/apxinf-cuda/src/kernels/norm.rs::rms_norm")
    assert g.nodes[node]["qualname"] == "apxinf_cuda::kernels::norm::rms_norm"


def test_select_does_not_match_inside_negations_or_else_labels(demo_index):
    from apxtui.trace import Arm, select_matches

    assert select_matches(Arm("apxinf_fa2_sm80", "cfg", 0), "apxinf_fa2_sm80")
    assert not select_matches(Arm("all(not(apxinf_fa2_sm80), not(x))", "cfg", 0), "apxinf_fa2_sm80")
    assert select_matches(Arm("all(not(apxinf_fa2_sm80), not(x))", "cfg", 0), "not(apxinf_fa2_sm80)")
    assert not select_matches(Arm("not(not(feature = \"fp8\")) (statement compiled out)", "implicit", 1),
                              "not(feature = \"fp8\")")
    assert not select_matches(Arm("else (not: n > 4)", "else", 1), "n > 4")
    assert select_matches(Arm("n > 4", "if", 0), "n > 4")
    assert not select_matches(Arm("!defined(USE_FP8)", "pp_if", 0), "defined(USE_FP8)")
