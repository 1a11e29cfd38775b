"""Speed of light on the demo path: arithmetic against hand calculations, loop bounds from the
config, stored weights per stage, the device table and INSUFFICIENT_EVIDENCE cases."""

from __future__ import annotations

import json
import shutil

import pytest

from apxtui.analysis.path import analyse
from apxtui.checkpoint import read_checkpoint
from apxtui.checkpoint.join import join_index
from apxtui.checkpoint.sol import Device, find_device, load_devices, speed_of_light
from apxtui.checkpoint.solfacts import IE, Figure
from apxtui.checkpoint.weights import LibraryCompute, bind_loops, stage_weights
from apxtui.cli import main
from apxtui.demo import DEMO_CHECKPOINT
from apxtui.trace import Tracer, find_symbol

TEST_DEV = Device("T", bandwidth=Figure(1000.0, "test"), peaks={"bf16": Figure(100.0, "test")})


class Forward:
    """The demo forward pass analysed, with its stored weights and loops bound to the demo config."""

    def __init__(self, demo_index) -> None:
        self.ckpt = read_checkpoint(DEMO_CHECKPOINT)
        g = demo_index.graph
        root = Tracer(g, select=["CudaBackend"], depth=40).trace(find_symbol(g, "Pi05Model::forward"))
        self.path = analyse(demo_index, root)
        self.weights = stage_weights(self.path.stages, join_index(demo_index, self.ckpt))
        self.bounds = bind_loops(self.path, self.ckpt)

    def sol(self, device, *args, ckpt=None, **kw):
        return speed_of_light(self.path, self.weights, self.bounds, ckpt or self.ckpt, device, *args, **kw)


@pytest.fixture(scope="module")
def forward(demo_index):
    f = Forward(demo_index)
    return f, f.ckpt


def _hand(ckpt, b: int, s: int, ctx: int):
    """FLOPs and bytes of the demo forward pass, from the config and checkpoint shapes by hand."""
    c = ckpt.config["top"]
    h, layers, heads, kvh, hd, inter, vocab = (c[k] for k in (
        "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
        "intermediate_size", "vocab_size"))
    t = b * s
    gemms = [(heads * hd, h), (kvh * hd, h), (kvh * hd, h), (h, heads * hd), (inter, h), (inter, h), (h, inter)]
    pairs = s * (ctx - s) + s * (s + 1) // 2
    flops = layers * (sum(2 * t * n * k for n, k in gemms) + 4 * b * heads * hd * pairs) + 2 * t * vocab * h
    w = sum(t_.nbytes for t_ in ckpt.tensors if "embed_tokens" not in t_.name) + min(vocab * h * 2, t * h * 2)
    act = (layers * sum(t * (n + k) * 2 for n, k in gemms) + t * (vocab + h) * 2  # GEMM in/out
           + (2 * layers + 1) * 2 * t * h * 2 + t * h * 2  # norms in/out, embedding rows out
           + layers * 2 * t * heads * hd * 2)  # attention Q in, O out
    kv = layers * b * (ctx + s) * 2 * kvh * hd * 2
    return flops, w, act, kv


@pytest.mark.parametrize(("b", "s", "ctx"), [(1, 128, None), (4, 16, 64)])
def test_bound_matches_hand_calculation(forward, b, s, ctx):
    fwd, ckpt = forward
    r = fwd.sol(TEST_DEV, b, s, ctx)
    flops, w, act, kv = _hand(ckpt, b, s, ctx or s)
    d = r.demand
    assert d.flops_by_dtype == {"bf16": pytest.approx(flops)}
    assert d.weight_bytes == pytest.approx(w)
    assert d.activation_bytes == pytest.approx(act)
    assert d.kv_bytes == pytest.approx(kv)
    mem, comp = (w + act + kv) / 1000e9, flops / 100e12
    assert r.bound.status == "ok"
    assert r.bound.seconds == pytest.approx(max(mem, comp))
    assert r.bound.limiter == ("memory" if mem > comp else "compute")
    assert all(a.consistent for a in r.anchors) and len(r.anchors) == 12
    doc = r.to_dict()  # the report's form
    assert doc["bound"]["seconds"] == r.bound.seconds and doc["anchors"][0]["pattern"] == r.anchors[0].pattern


def test_serial_estimate_with_launch_floor(forward):
    fwd, ckpt = forward
    r = fwd.sol(TEST_DEV, 1, 128, launch_floor_us=1000.0)
    e = r.estimate
    assert e.status == "ok"
    lt = fwd.bounds.totals["by_phase"]["eager"]
    launches = int(lt["device"]["value"]) + int(lt["library"]["value"])
    # a 1 ms floor dominates every stage of this tiny model: estimate = floor × every launch
    assert e.seconds == pytest.approx(launches * 1e-3)
    assert e.seconds >= r.bound.seconds
    small = fwd.sol(TEST_DEV, 1, 128, launch_floor_us=0.0).estimate
    assert small.seconds >= r.bound.seconds * 0.999  # serial sum never below the resource max


def test_estimate_without_launch_floor_is_insufficient(forward):
    fwd, ckpt = forward
    r = fwd.sol(TEST_DEV, 1, 128)
    assert r.estimate.status == IE and any("launch floor" in m for m in r.estimate.missing)
    assert r.to_dict()["estimate"] == {"status": IE, "missing": list(r.estimate.missing)}
    assert r.bound.status == "ok"  # the bound needs no launch floor


def test_missing_peak_gives_partial_bound_naming_it(forward):
    fwd, ckpt = forward
    orin = find_device("jetson-agx-orin", load_devices())
    r = fwd.sol(orin, 1, 128, launch_floor_us=5.0)
    assert r.bound.status == "partial" and r.bound.limiter == "memory"
    assert any("peak for bf16" in m for m in r.bound.missing)
    assert r.estimate.status == IE and any("peak for bf16" in m for m in r.estimate.missing)
    bare = fwd.sol(Device("bare"), 1, 128)
    assert bare.bound.status == IE
    assert any("memory bandwidth" in m for m in bare.bound.missing)


def test_missing_config_dims_named(forward, tmp_path):
    fwd, _ = forward
    d = tmp_path / "ck"
    shutil.copytree(DEMO_CHECKPOINT, d)
    cfg = json.loads((d / "config.json").read_text())
    for k in ("num_attention_heads", "num_hidden_layers"):
        cfg.pop(k)
    (d / "config.json").write_text(json.dumps(cfg))
    ckpt = read_checkpoint(d)
    r = fwd.sol(TEST_DEV, 1, 8, ckpt=ckpt)
    att = [s for s in r.stages if s.kind == "attention"]
    assert att and all("config top.num_attention_heads" in s.missing for s in att)
    assert r.bound.status == "partial"
    assert r.kv_cache.status == IE and "config top.num_hidden_layers" in r.kv_cache.missing


def test_kv_cache_bytes_per_token(forward):
    fwd, ckpt = forward
    c = ckpt.config["top"]
    r = fwd.sol(TEST_DEV, 2, 8, 100)
    per = 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * c["head_dim"] * 2
    assert r.kv_cache.bytes_per_token == per
    assert r.kv_cache.bytes_at_context == per * 100 * 2


def test_layer_loop_bound_to_config_field(forward):
    fwd, ckpt = forward
    rec = next(r for r in fwd.bounds.loops if "self.layers" in r.loop)
    assert rec.value == ckpt.config["top"]["num_hidden_layers"] and rec.config_field == "num_hidden_layers"
    assert rec.to_dict()["config_field"] == "num_hidden_layers"  # the report's form
    kernel_loops = [r for r in fwd.bounds.loops if "blockIdx" in r.loop]
    assert all(r.value is None and r.status == "symbolic" for r in kernel_loops)


def test_per_stage_weights_beside_compute_dtypes(forward):
    fwd, _ = forward
    rows = {w.arg: (s, w) for s in fwd.weights.values() for w in s.rows if w.first_at_site}
    s, w = rows["&self.down_proj"]
    assert w.pattern == "model.layers.{*}.mlp.down_proj.weight" and w.stored.dtype == ("BF16",)
    assert w.stored.shape == ((64, 128),) and w.status == "heuristic"
    assert w.to_dict()["stored"]["shape"] == [[64, 128]]  # the report's form
    lib = [c for c in s.compute if isinstance(c, LibraryCompute)]
    assert lib and lib[0].operands["A"] == "bf16" and lib[0].compute == "f32"
    assert "&s.q" not in rows and "&mut s.q" not in rows  # activations are not weights


def test_device_table_sources_and_user_override(tmp_path, monkeypatch):
    devs = load_devices()
    for name in ("H100 SXM", "H200", "A100 80GB SXM", "L40S", "RTX 4090", "Jetson AGX Orin", "Jetson AGX Thor"):
        d = devs[name]
        assert d.bandwidth and d.bandwidth.source and "no source" not in d.bandwidth.source
        assert all(p.source and "no source" not in p.source for p in d.peaks.values())
        assert d.launch_floor is None  # no datasheet gives one
    assert "fp8" not in devs["A100 80GB SXM"].peaks
    cfg = tmp_path / "xdg" / "apxtui"
    cfg.mkdir(parents=True)
    (cfg / "devices.toml").write_text(
        '[[device]]\nname = "H100 SXM"\nlaunch_floor_us = { value = 3.5, source = "measured here" }\n'
        '[device.peak_tflops]\nbf16 = { value = 700, source = "measured clock" }\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    h = find_device("h100", load_devices())
    assert h.peaks["bf16"].value == 700 and h.launch_floor == Figure(3.5, "measured here")
    assert h.bandwidth is not None and h.bandwidth.value == 3350  # figures not overridden are kept
    with pytest.raises(KeyError):
        find_device("no-such-gpu", devs)


def test_trace_cli_sol_json_and_markdown(tmp_path, capsys):
    args = ["trace", "--demo", "--from", "Pi05Model::forward", "--select", "CudaBackend",
            "--checkpoint", str(DEMO_CHECKPOINT), "--sol", "h100", "--batch", "1", "--seq", "128"]
    assert main([*args, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["checkpoint_join"]["join"]["status"] == "clean"
    sol = doc["speed_of_light"]
    assert sol["device"] == "H100 SXM" and sol["bound"]["status"] == "ok"
    assert sol["estimate"]["status"] == IE
    assert main([*args, "--format", "md", "--launch-floor-us", "2"]) == 0
    md = capsys.readouterr().out
    assert "## Checkpoint weight join" in md and "## Speed of light on H100 SXM" in md
    assert "| serial estimate | " in md and "INSUFFICIENT_EVIDENCE" not in md.split("| serial estimate |")[1][:40]
    assert main(["trace", "--demo", "--from", "Pi05Model::forward", "--sol", "h100"]) == 1
    assert "--sol needs" in capsys.readouterr().err


def test_nothing_priced_is_insufficient_evidence_not_a_zero_bound(demo_index):
    """A path with no modelled stage (here: a tensor accessor) must not read as a 0 s bound."""
    ckpt = read_checkpoint(DEMO_CHECKPOINT)
    g = demo_index.graph
    root = Tracer(g).trace(find_symbol(g, "Tensor::numel"))
    sol = speed_of_light(analyse(demo_index, root), {}, None, ckpt, TEST_DEV, 1, 8, launch_floor_us=2.0)
    assert sol.bound.status == IE and "nothing could be priced" in " ".join(sol.bound.missing)
    assert sol.estimate.status == IE
