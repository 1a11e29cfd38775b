"""A PyTorch-extension-shaped checkout traced end to end: Python op call → torch.ops binding →
host function → ATen dispatch macro → kernel; a pybind11 module (tests/fixtures/torch_ext)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import build_isolated

from apxtui.trace import Tracer, find_symbol, walk

FIXTURE = Path(__file__).parent / "fixtures" / "torch_ext"
MAIN = ("python_fn", "cpp_binding", "host_fn", "kernel")


@pytest.fixture(scope="module")
def torch_index(tmp_path_factory):
    return build_isolated(FIXTURE, tmp_path_factory.mktemp("torch-cache"))


def _out(g, node):
    return [(g.nodes[v], d) for _, v, d in g.out_edges(node, data=True)]


def test_torch_library_block_makes_binding_nodes_with_an_edge_per_dispatch_key(torch_index):
    g = torch_index.graph
    binds = {d["qualname"]: n for n, d in g.nodes(data=True) if d.get("kind") == "cpp_binding"}
    assert set(binds) == {"torch.ops.TORCH_EXTENSION_NAME.rms_norm", "torch.ops.TORCH_EXTENSION_NAME.silu_and_mul",
                          "torch.ops._C.silu_and_mul", "flash_attn_2_cuda.fwd"}
    rms = _out(g, binds["torch.ops.TORCH_EXTENSION_NAME.rms_norm"])
    assert [(t["qualname"], d["kind"], d["resolution"]) for t, d in rms] == [("rms_norm", "exposes", "exact")]
    assert rms[0][1]["attrs"]["dispatch_key"] == "CUDA"
    cpu = _out(g, binds["torch.ops._C.silu_and_mul"])
    assert [(t["qualname"], d["attrs"]["dispatch_key"]) for t, d in cpu] == [("silu_and_mul_cpu", "CPU")]


def test_python_torch_ops_call_reaches_the_kernel_through_the_dispatch_macro(torch_index):
    g = torch_index.graph
    entry = find_symbol(g, "RMSNorm.forward_cuda")
    tree = Tracer(g, select=["Half"]).trace(entry)
    path = [(st.kind, st.qualname) for _, st, _ in walk(tree) if st.kind in MAIN]
    assert path == [
        ("python_fn", "vllm_like.layernorm.RMSNorm.forward_cuda"),
        ("python_fn", "vllm_like._custom_ops.rms_norm"),
        ("cpp_binding", "torch.ops.TORCH_EXTENSION_NAME.rms_norm"),
        ("host_fn", "rms_norm"),
        ("kernel", "vllm::rms_norm_kernel"),
    ]
    stages = [st for _, st, _ in walk(tree) if st.kind in MAIN]
    via = stages[2].via
    assert via.kind == "binding" and via.resolution == "heuristic"  # namespace set by the build
    launch = stages[4].via
    assert launch.kind == "launch" and launch.template_args == ("c10::Half",)
    assert [c.text for c in launch.conditions] == ["case at::ScalarType::Half"]
    assert launch.attrs["macro"] == "VLLM_DISPATCH_FLOATING_TYPES"
    assert "pytorch model" in " ".join(launch.attrs["macro_defs"])  # AT_DISPATCH_* from the model


def test_dispatch_macro_arms_bind_the_scalar_type(torch_index):
    g = torch_index.graph
    node = find_symbol(g, "csrc/activation_kernels.cu::silu_and_mul")
    got = sorted((tuple(d["template_args"]), d["conditions"][-1]["text"]) for t, d in _out(g, node)
                 if d["kind"] == "launch")
    assert got == [(("c10::Half",), "case at::ScalarType::Half"), (("double",), "case at::ScalarType::Double"),
                   (("float",), "case at::ScalarType::Float")]


def test_pybind11_module_function_called_from_python(torch_index):
    g = torch_index.graph
    entry = find_symbol(g, "attention.flash_forward")
    path = [(st.kind, st.qualname) for _, st, _ in walk(Tracer(g).trace(entry)) if st.kind in MAIN]
    assert path == [("python_fn", "vllm_like.attention.flash_forward"), ("cpp_binding", "flash_attn_2_cuda.fwd"),
                    ("host_fn", "mha_fwd"), ("kernel", "flash::flash_fwd_kernel")]
    b = find_symbol(g, "flash_attn_2_cuda.fwd")
    edge = next(d for _, _, d in g.in_edges(b, data=True))
    assert edge["resolution"] == "exact" and edge["kind"] == "binding"


def test_the_execution_map_follows_a_python_op_call_through_its_binding(torch_index):
    """The map walks into C++ bindings as it does into PyO3 ones (it stopped at the binding: no device work)."""
    from apxtui.map import build_map, iter_calls

    m = build_map(torch_index, find_symbol(torch_index.graph, "vllm_like._custom_ops.rms_norm"))
    rows = [r for t in m.phases for r in t.rows]
    assert [str(r.site) for r in rows] == ["csrc/torch_bindings.cpp:9"]
    names = {c.name for r in rows for c in iter_calls(r.work)}
    assert "vllm::rms_norm_kernel" in names, names
