"""Tracing under a profile: cfg alternatives, __CUDA_ARCH__ guards, env gates, the demo."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import pytest

from apxtui.commands.profile_flags import add_profile_args, profile_from_args
from apxtui.index.build import build_index
from apxtui.profile import Profile, resolve
from apxtui.trace import Tracer, dispatches, find_symbol, walk

LIB_RS = textwrap.dedent('''
    mod ffi;

    #[cfg(fa_sm8x)]
    pub fn attention() { flash() }

    #[cfg(not(fa_sm8x))]
    pub fn attention() { generic() }

    pub fn flash() {}
    pub fn generic() {}
    pub fn split() {}

    pub fn entry() {
        attention();
        if std::env::var("SPLIT").map(|v| v == "1").unwrap_or(false) {
            split();
        } else {
            generic();
        }
        unsafe { ffi::launch_k() };
    }
''')

FFI_RS = 'extern "C" {\n    pub fn launch_k();\n}\n'

KERNEL_CU = textwrap.dedent('''
    __device__ float fast_path(float x) { return x * 2.0f; }
    __device__ float slow_path(float x) { return x + 1.0f; }

    __global__ void k(float* out) {
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        out[0] = fast_path(out[0]);
    #else
        out[0] = slow_path(out[0]);
    #endif
    }

    extern "C" void launch_k() {
        float* out = nullptr;
        k<<<1, 1>>>(out);
    }
''')

BUILD_RS = textwrap.dedent('''
    fn detect_arch() -> u32 { 80 }
    fn main() {
        let arch = detect_arch();
        if arch >= 80 && arch < 90 {
            println!("cargo:rustc-cfg=fa_sm8x");
        }
    }
''')


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def index(tmp_path: Path):
    c = tmp_path / "crates" / "gpu"
    (c / "src").mkdir(parents=True)
    (c / "kernels").mkdir()
    (c / "Cargo.toml").write_text('[package]\nname = "gpu"\nversion = "0.1.0"\n')
    (c / "build.rs").write_text(BUILD_RS)
    (c / "src" / "lib.rs").write_text(LIB_RS)
    (c / "src" / "ffi.rs").write_text(FFI_RS)
    (c / "kernels" / "k.cu").write_text(KERNEL_CU)
    return build_index(tmp_path, use_cache=False, workers=1)


def _trace(idx, entry: str, profile: Profile | None):
    rp = resolve(profile, idx)
    return Tracer(idx.graph, profile=rp).trace(find_symbol(idx.graph, entry))


def _names(root) -> list[str]:
    return [st.name for _, st, _ in walk(root)]


def test_no_profile_keeps_every_alternative(index):
    root = _trace(index, "gpu::entry", None)
    kinds = [d.construct for d in dispatches(root)]
    assert "candidates" in kinds and "if" in kinds and "pp_if" in kinds
    names = _names(root)
    assert {"flash", "generic", "split", "fast_path", "slow_path"} <= set(names)


@pytest.mark.parametrize(("profile", "present", "absent"), [
    (Profile(cfg_on=["fa_sm8x"]), {"flash"}, {"split"}),
    (Profile(arch="sm_86"), {"flash", "slow_path"}, {"split", "fast_path"}),
    (Profile(arch="sm_90"), {"generic", "fast_path"}, {"flash", "split", "slow_path"}),
    (Profile(arch="sm_90", env={"SPLIT": "1"}), {"split", "fast_path"}, {"flash", "slow_path"}),
])
def test_profile_resolves_alternatives(index, profile, present, absent):
    root = _trace(index, "gpu::entry", profile)
    names = set(_names(root))
    assert present <= names
    assert not (absent & names)
    constructs = {d.construct for d in dispatches(root)}
    assert "candidates" not in constructs  # one surviving definition is no dispatch
    if profile.arch:
        assert "pp_if" not in constructs and "if" not in constructs


def test_host_pass_has_no_cuda_arch(index):
    from apxtui.profile.decide import device_pass

    rp = resolve(Profile(arch="sm_90"), index)
    node = next(n for n, d in index.graph.nodes(data=True) if d.get("name") == "launch_k" and d.get("kind") == "abi_fn")
    assert device_pass(rp, node, index.graph.nodes[node]) is False
    assert rp.pp("defined(__CUDA_ARCH__)", "crates/gpu/kernels/k.cu", False) is False
    assert rp.pp("defined(__CUDA_ARCH__)", "crates/gpu/kernels/k.cu", True) is True
    # the #else arm: its negated earlier condition
    assert rp.pp("else", "crates/gpu/kernels/k.cu", True, ["__CUDA_ARCH__ >= 900"]) is False


def test_undecided_stays_a_dispatch_with_note(index):
    # features only: the arch cfg is undecided, so the candidates stay, marked
    root = _trace(index, "gpu::entry", Profile(features=[], env={"X": "1"}))
    cands = [d for d in dispatches(root) if d.construct == "candidates"]
    assert cands and cands[0].note == "undecided under profile"
    assert len(cands[0].arms) == 2


# -- the demo checkout ------------------------------------------------------------------------

PROFILES_TOML = textwrap.dedent('''
    [profile.ampere]
    arch = "sm_80"

    [profile.blackwell]
    arch = "sm_100"

    [profile.hopper-splitk]
    arch = "sm_90"
    env = { APXINF_ATTN_SPLITK = "1" }
''')


def _demo_trace(profile_name: str | None, tmp_path: Path, monkeypatch, entry: str = "CudaBackend::attention"):
    from apxtui.demo import DEMO_CHECKOUT

    (tmp_path / "apxtui").mkdir(exist_ok=True)
    (tmp_path / "apxtui" / "profiles.toml").write_text(PROFILES_TOML)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    p = argparse.ArgumentParser()
    add_profile_args(p)
    args = p.parse_args(["--profile", profile_name] if profile_name else [])
    idx = build_index(DEMO_CHECKOUT)
    rp = resolve(profile_from_args(args, DEMO_CHECKOUT), idx)
    root = Tracer(idx.graph, profile=rp).trace(find_symbol(idx.graph, entry))
    kernels = {st.name for _, st, _ in walk(root) if st.kind in ("kernel", "vendor_api")}
    return root, kernels, rp


@pytest.mark.parametrize(("name", "want", "excluded"), [
    ("ampere", {"run_mha_fwd"}, {"attention_kernel", "attention_split_kernel", "initialize", "run"}),
    ("blackwell", {"initialize", "run"}, {"attention_kernel", "attention_split_kernel", "run_mha_fwd"}),
    ("hopper-splitk", {"attention_split_kernel", "attention_combine_kernel"}, {"attention_kernel", "run_mha_fwd"}),
])
def test_demo_named_profiles_reach_different_kernels(name, want, excluded, tmp_path, monkeypatch):
    _, kernels, rp = _demo_trace(name, tmp_path, monkeypatch)
    assert want <= kernels
    assert not (excluded & kernels)
    assert rp.describe().startswith(f"profile {name}: arch")


def test_demo_sm90_default_env_runs_custom_kernel(tmp_path, monkeypatch):
    from apxtui.demo import DEMO_CHECKOUT

    idx = build_index(DEMO_CHECKOUT)
    rp = resolve(Profile(arch="sm_90"), idx)
    root = Tracer(idx.graph, profile=rp).trace(find_symbol(idx.graph, "CudaBackend::attention"))
    kernels = {st.name for _, st, _ in walk(root) if st.kind == "kernel"}
    assert "attention_kernel" in kernels and "attention_split_kernel" not in kernels
    # the head_dim switch is a runtime choice: still a dispatch point, labelled runtime
    sw = [d for d in dispatches(root) if d.construct == "switch"]
    assert sw and all(d.note == "runtime" for d in sw)


def test_demo_without_profile_is_ambiguous(tmp_path, monkeypatch):
    root, kernels, rp = _demo_trace(None, tmp_path, monkeypatch)
    assert rp is None
    cands = [d for d in dispatches(root) if d.construct == "candidates"]
    assert cands and len(cands[0].arms) == 3
    assert {"run_mha_fwd", "attention_kernel", "initialize"} <= kernels


def test_demo_report_header_and_cli(tmp_path, monkeypatch, capsys):
    from apxtui.cli import main

    (tmp_path / "apxtui").mkdir()
    (tmp_path / "apxtui" / "profiles.toml").write_text(PROFILES_TOML)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert main(["trace", "--demo", "--from", "CudaBackend::attention", "--profile", "blackwell",
                 "--format", "json", "-o", str(tmp_path / "t.json")]) == 0
    import json

    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["profile"].startswith("profile blackwell: arch sm_100")
    assert doc["profile_detail"]["arch"] == "sm_100"
    assert main(["trace", "--demo", "--from", "CudaBackend::attention"]) == 0
    assert "no profile: all configurations" in capsys.readouterr().out
    assert main(["trace", "--demo", "--from", "CudaBackend::attention", "--profile", "nope"]) == 1
    assert main(["config", "--demo", "--arch", "sm_80"]) == 0
    out = capsys.readouterr().out
    assert "apxinf_fa2_sm80 [apxinf-cuda] on" in out
    assert "build.rs:44 `arch >= 80 && arch < 90` = true" in out
