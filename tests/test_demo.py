"""The embedded demo checkout and checkpoint are well-formed and agree with each other.

Nothing here uses apxtui's own index: the checks read the demo files with tree-sitter
and regular expressions, so they pin down the fixture itself, not the engine under test.
"""

from __future__ import annotations

import importlib.util
import json
import re
import struct
from pathlib import Path

import pytest
import tree_sitter as ts
import tree_sitter_cuda
import tree_sitter_python
import tree_sitter_rust

from apxtui.demo import DEMO_CHECKOUT, DEMO_CHECKPOINT

REPO = Path(__file__).resolve().parent.parent
GRAMMARS = {
    ".rs": tree_sitter_rust,
    ".cu": tree_sitter_cuda,
    ".cuh": tree_sitter_cuda,
    ".h": tree_sitter_cuda,
    ".py": tree_sitter_python,
}
CUDA_CRATE = DEMO_CHECKOUT / "crates" / "apxinf-cuda"
LOAD_RS = DEMO_CHECKOUT / "crates" / "apxinf-model" / "src" / "pi05" / "load.rs"


def _sources() -> list[Path]:
    return sorted(p for p in DEMO_CHECKOUT.rglob("*") if p.suffix in GRAMMARS and p.is_file())


def _first_error(node: ts.Node) -> ts.Node | None:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            return n
        stack.extend(c for c in n.children if c.has_error or c.is_error or c.is_missing)
    return None


def _header(path: Path) -> dict:
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header.pop("__metadata__", None)
    return header


def _config() -> dict:
    return json.loads((DEMO_CHECKPOINT / "config.json").read_text("utf-8"))


def test_demo_paths_exist() -> None:
    assert DEMO_CHECKOUT.is_dir() and DEMO_CHECKPOINT.is_dir()
    assert (DEMO_CHECKOUT / "AGENTS.md").is_file()
    assert (DEMO_CHECKPOINT / "model.safetensors").is_file()


def test_demo_has_every_layer() -> None:
    by_suffix: dict[str, int] = {}
    for p in _sources():
        by_suffix[p.suffix] = by_suffix.get(p.suffix, 0) + 1
    assert by_suffix.get(".py", 0) >= 2
    assert by_suffix.get(".rs", 0) >= 20
    assert by_suffix.get(".cu", 0) >= 10
    assert by_suffix.get(".cuh", 0) >= 4


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(DEMO_CHECKOUT)))
def test_source_parses_without_errors(path: Path) -> None:
    parser = ts.Parser(ts.Language(GRAMMARS[path.suffix].language()))
    tree = parser.parse(path.read_bytes())
    err = _first_error(tree.root_node)
    assert err is None, f"{path.name}: syntax error at line {err.start_point[0] + 1}"


def _loader_tensor_names(num_layers: int) -> set[str]:
    """Tensor names load.rs asks for, read from its string constants and format! strings."""
    src = LOAD_RS.read_text("utf-8")
    names = set(re.findall(r'const\s+\w+\s*:\s*&str\s*=\s*"([^"]+)"', src))
    prefix_fn = re.search(r'fn\s+layer_prefix\s*\([^)]*\)[^{]*\{\s*format!\("([^"]+)"', src)
    assert prefix_fn, "load.rs: no layer_prefix helper"
    prefix = prefix_fn.group(1)
    formats = [f for f in re.findall(r'format!\("([^"]+)"', src) if f != prefix]
    assert formats, "load.rs: no format! tensor names"
    placeholder = re.compile(r"\{\w*\}")
    for fmt in formats:
        fmt = fmt.replace("{prefix}", prefix)
        if placeholder.search(fmt):
            names.update(placeholder.sub(str(i), fmt) for i in range(num_layers))
        else:
            names.add(fmt)
    return names


def test_checkpoint_has_exactly_the_tensors_the_loader_asks_for() -> None:
    cfg = _config()
    asked = _loader_tensor_names(cfg["num_hidden_layers"])
    stored = set(_header(DEMO_CHECKPOINT / "model.safetensors"))
    assert asked - stored == set(), "loader asks for tensors missing from the checkpoint"
    assert stored - asked == set(), "checkpoint has tensors the loader never reads"
    assert len(asked) == 3 + 9 * cfg["num_hidden_layers"]


def test_config_dims_compose_with_tensor_shapes() -> None:
    cfg = _config()
    header = _header(DEMO_CHECKPOINT / "model.safetensors")
    h, inter, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    q_dim = cfg["num_attention_heads"] * cfg["head_dim"]
    kv_dim = cfg["num_key_value_heads"] * cfg["head_dim"]
    assert cfg["num_attention_heads"] % cfg["num_key_value_heads"] == 0
    expected = {
        "model.embed_tokens.weight": [vocab, h],
        "model.norm.weight": [h],
        "lm_head.weight": [vocab, h],
    }
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}"
        expected |= {
            f"{p}.input_layernorm.weight": [h],
            f"{p}.post_attention_layernorm.weight": [h],
            f"{p}.self_attn.q_proj.weight": [q_dim, h],
            f"{p}.self_attn.k_proj.weight": [kv_dim, h],
            f"{p}.self_attn.v_proj.weight": [kv_dim, h],
            f"{p}.self_attn.o_proj.weight": [h, q_dim],
            f"{p}.mlp.gate_proj.weight": [inter, h],
            f"{p}.mlp.up_proj.weight": [inter, h],
            f"{p}.mlp.down_proj.weight": [h, inter],
        }
    assert {k: v["shape"] for k, v in header.items()} == expected
    for name, info in header.items():
        assert info["dtype"] == "BF16", name
        start, end = info["data_offsets"]
        numel = 1
        for d in info["shape"]:
            numel *= d
        assert end - start == 2 * numel, name


def test_checkpoint_regenerates_identically(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_demo_checkpoint", REPO / "scripts" / "make_demo_checkpoint.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.write_checkpoint(tmp_path)
    for name in ("config.json", "model.safetensors"):
        assert (tmp_path / name).read_bytes() == (DEMO_CHECKPOINT / name).read_bytes(), name


def _ffi_decls() -> dict[str, str]:
    """Rust name → link symbol of every fn in the crate's extern "C" block."""
    src = (CUDA_CRATE / "src" / "ffi" / "mod.rs").read_text("utf-8")
    decls = {}
    for m in re.finditer(
        r'(?:#\[link_name\s*=\s*"(\w+)"\]\s*)?(?:#\[[^\]]*\]\s*)*pub\(crate\)\s+fn\s+(\w+)', src
    ):
        decls[m.group(2)] = m.group(1) or m.group(2)
    return decls


def test_every_ffi_call_is_declared_and_defined_by_an_adapter() -> None:
    decls = _ffi_decls()
    called = set()
    for rs in (CUDA_CRATE / "src").rglob("*.rs"):
        called.update(re.findall(r"\bffi::(apxinf_\w+)\s*\(", rs.read_text("utf-8")))
    assert len(called) >= 20
    assert called - set(decls) == set(), "ffi:: calls without a declaration"
    assert set(decls) - called == set(), "declared but never called"
    defined = set()
    for cu in (CUDA_CRATE / "adapters").glob("*.cu"):
        defined.update(re.findall(r'extern\s+"C"\s+\w+\s+(\w+)\s*\(', cu.read_text("utf-8")))
    assert set(decls.values()) - defined == set(), 'declared symbols with no extern "C" definition'
    assert decls["apxinf_gemm_bf16"] != "apxinf_gemm_bf16", "the #[link_name] renaming case is gone"


def test_every_launched_kernel_is_defined_global() -> None:
    launched = set()
    cuda_files = [p for p in CUDA_CRATE.rglob("*") if p.suffix in (".cu", ".cuh", ".h")]
    for path in cuda_files:
        launched.update(re.findall(r"(\w+)\s*(?:<[^<>;]*>)?\s*<<<", path.read_text("utf-8")))
    globals_ = set()
    for path in cuda_files:
        globals_.update(re.findall(r"__global__\s+void\s+(\w+)\s*\(", path.read_text("utf-8")))
    assert {
        "rms_norm_kernel",
        "rope_kernel",
        "attention_kernel",
        "flash_fwd_kernel",
        "device_kernel",
    } <= launched
    assert launched - globals_ == set()
