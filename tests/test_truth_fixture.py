"""Truth of the analyses on an ApxInf-shaped fixture (tests/fixtures/truth_checkout), one rule per test:
capture ends, instantiate/replay through helpers, hazards grouped under guards, graph keys, launch
overloads, vendor dtypes through Rust FFI and cuBLASLt plans, and the weight join's claims and families."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import build_isolated

from apxtui.analysis.annotate import annotate
from apxtui.analysis.checkout import capture_report
from apxtui.analysis.dtypefacts import LibraryDtypes
from apxtui.checkpoint import read_checkpoint
from apxtui.checkpoint.join import ALTERNATIVE_UNUSED, CLEAN, NOT_APPLICABLE, PARTIAL, UNMATCHED, join_index
from apxtui.checkpoint.synth import write_safetensors
from apxtui.cli import main
from apxtui.trace import Tracer, find_symbol, walk

FIXTURE = Path(__file__).parent / "fixtures" / "truth_checkout"


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    return build_isolated(FIXTURE, tmp_path_factory.mktemp("fx-cache"))


def _annotated(idx, entry):
    root = Tracer(idx.graph).trace(find_symbol(idx.graph, entry))
    return root, annotate(idx, root)


def _region(idx):
    """The fixture's one region in its trace-document form (what ``trace --format json`` writes)."""
    _root, ann = _annotated(idx, "Runtime::capture")
    regions = ann.path.capture_regions
    assert len(regions) == 1
    return regions[0].to_dict()


# -- capture ------------------------------------------------------------------------------------


def test_every_end_kept_and_the_error_path_labelled(fx):
    r = _region(fx)
    ends = {e["at"].rsplit(":", 1)[1]: e for e in r["ends"]}
    assert set(ends) == {"72", "76"}
    assert ends["72"]["path"] == "error" and ends["72"]["condition"] == "Err(error)"
    assert ends["76"]["path"] == "normal"
    assert r["end"]["at"].endswith("runtime.rs:76") and r["status"] == "exact"
    assert [c["call"] for c in r["body_calls"]] == ["kernels::with_workspace", "body"]


def test_instantiate_and_replay_found_through_helper_functions(fx):
    r = _region(fx)
    inst = r["instantiate"]
    assert [(i["call"], i["at"]) for i in inst] == [("cudaGraphInstantiate", "crates/fxcuda/src/graph.rs:32")]
    assert inst[0]["through"] == ["fxcuda::backend::CudaBackend::end_capture", "fxcuda::graph::end"]
    assert inst[0]["from_end"].endswith("runtime.rs:76")
    rep = {m["method"]: m for m in r["replay"]}
    held = rep["fxmodel::runtime::CapturedGraph::replay"]  # the type capture() returns
    assert [(p["call"], p["at"]) for p in held["launches"]] == [("cudaGraphLaunch", "crates/fxcuda/src/graph.rs:16")]
    assert "fxcuda::graph::CapturedGraph::replay" not in rep  # a same-named type of another crate


def test_hazards_grouped_by_site_conditional_under_their_guard(fx):
    r = _region(fx)
    by = {(h["kind"], h["api"]): h for h in r["hazards"]}
    assert len(r["hazards"]) == len(by)  # one entry per site
    alloc = by[("alloc", "cudaMalloc")]
    assert alloc["paths"] == 4 and alloc["call_sites"] == ["crates/fxcuda/src/buffer.rs:17"]
    assert alloc["conditional"] and alloc["guards"] == ["workspace.is_null()"]
    w = alloc["wrapper"][0]
    assert w["state"] == "ACTIVE_WORKSPACE" and w["installed_by"] == "fxcuda::workspace::with_workspace"
    assert w["likely_not_taken"] and alloc["likely_not_taken"]
    libs = sorted((x["api"], x["paths"]) for x in r["library_calls"])  # one per call site
    assert libs == [("cublasGemmEx", 1), ("cublasLtMatmul", 1)]


def test_guard_on_every_arm_is_not_a_guard():
    from apxtui.analysis.hazards import ArmRef, Occurrence, group

    both = [ArmRef("x > 0", "f#if:1", 0, "if", (0, 1)), ArmRef("else", "f#if:1", 1, "if", (0, 1))]
    occ = [Occurrence("alloc", "cudaMalloc", "a.cu:3", "a.cu:3", (a,), "f", "allocation inside capture") for a in both]
    h = group(occ)[0]
    assert h.paths == 2 and not h.conditional and h.guards == ()
    h = group(occ[:1])[0]
    assert h.conditional and h.guards == ("x > 0",)


def test_graph_key_makes_a_frozen_scalar_safe_and_others_stay_flagged(fx):
    r = _region(fx)
    consts = {(la["kernel"], c["param"]): c for la in r["launches"] for c in la["constants"]}
    rows = consts[("rms_norm_bf16_kernel", "rows")]
    assert not rows["flagged"] and rows["in_graph_key"]["key_type"] == "Spec"
    assert rows["in_graph_key"]["field"] == "token_count" and "safe by construction" in rows["reason"]
    pos = consts[("rope_bf16_kernel", "pos")]
    assert pos["flagged"] and "in_graph_key" not in pos  # `offset` is per request and not in Spec
    (cache,) = r["graph_keys"]
    assert cache["kind"] == "build on miss" and cache["key"] == "spec"
    assert cache["key_fields"] == ["token_count", "raw_images"] and cache["at"].endswith("runtime.rs:61")
    assert cache["key_type_at"] == "crates/fxmodel/src/runtime.rs:15"  # `pub struct Spec`


def test_launch_overload_chosen_by_argument_types(fx):
    r = _region(fx)
    rms = [la for la in r["launches"] if la["kernel"] == "rms_norm_bf16_kernel"]
    assert len(rms) == 2  # one launch per adapter, not one per overload
    for la in rms:
        assert {c["param"]: c["arg"] for c in la["constants"]} == {"rows": "rows", "cols": "cols"}


def test_capture_report_and_command(fx, capsys):
    rep = capture_report(fx)
    assert [s.at for s in rep.replay_sites] == ["crates/fxmodel/src/runtime.rs:63"]
    assert rep.replay_sites[0].graph_launches[0].call == "cudaGraphLaunch"
    assert [c.key for c in rep.graph_caches] == ["spec"]
    assert main(["capture", str(FIXTURE)]) == 0
    out = capsys.readouterr().out
    assert "(error path, under Err(error))" in out and "CONDITIONAL under workspace.is_null()" in out
    assert "in graph key Spec.token_count: safe" in out and "rope_bf16_kernel.pos = pos [FLAG per-request]" in out
    assert out.count("HAZARD alloc cudaMalloc") == 1
    assert main(["trace", str(FIXTURE), "--from", "Runtime::capture", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "(error path, under Err(error))" in md and "cudaGraphInstantiate @ crates/fxcuda/src/graph.rs:32" in md
    assert "**hazard** alloc cudaMalloc" in md and "CONDITIONAL under workspace.is_null()" in md


# -- vendor dtypes --------------------------------------------------------------------------------


def _libs(idx, entry):
    root, ann = _annotated(idx, entry)
    return [(st, ann.stage(st).dtypes) for _d, st, _a in walk(root)
            if isinstance(ann.stage(st).dtypes, LibraryDtypes)]


def test_rust_ffi_gemm_dtype_chosen_by_the_callers_argument(fx):
    libs = [(st, d) for st, d in _libs(fx, "Runtime::body") if st.name == "cublasGemmEx"]
    assert {st.kind for st, _ in libs} == {"ffi_decl", "external"}
    for _st, d in libs:
        assert d.operands.value == {"A": "bf16", "B": "bf16", "C": "bf16"}
        assert d.compute.value == "f32" and d.algorithm.value == "default"
        assert "`dtype` = `DType::BF16`" in d.operands.reason
        assert "crates/fxcuda/src/cublas.rs:22" in d.operands.evidence  # the `let cuda_type = if …`


def test_rust_ffi_gemm_without_a_binding_shows_the_alternatives(fx):
    (_st, d), *_ = [(st, d) for st, d in _libs(fx, "CublasHandle::gemm") if st.kind == "ffi_decl"]
    assert d.operands.status == "unknown" and d.operands.value["A"] is None
    assert d.operands.alternatives["A"] == {"dtype == DType::F16": "f16", "not (dtype == DType::F16)": "bf16"}


def test_cublaslt_plan_built_in_another_function(fx):
    (_st, d), = [(st, d) for st, d in _libs(fx, "Runtime::body") if st.name == "cublasLtMatmul"]
    assert d.operands.value == {"A": "bf16", "B": "bf16", "C": "bf16", "D": "bf16"}
    assert d.compute.value == "f32" and d.scale.value == "f32"
    assert "g_bf16_plans" in d.operands.reason and "bf16 = true" in d.operands.reason
    assert "crates/fxcuda/adapters/lt.cu:37" in d.operands.evidence  # layout created in make_plan
    assert "crates/fxcuda/adapters/lt.cu:35" in d.compute.evidence  # descriptor created in make_plan


# -- weight join ----------------------------------------------------------------------------------


def _ckpt(tmp_path, names):
    d = tmp_path / "ckpt"
    d.mkdir()
    write_safetensors(d / "model.safetensors", dict.fromkeys(names, ("BF16", (2, 2))))
    return read_checkpoint(d)


PI = [f"pi.layers.{i}.{n}" for i in range(2) for n in ("q_proj.weight", "fc.weight", "fc.bias")] + ["pi.lm_head.weight"]


def test_join_claims_and_families(fx, tmp_path):
    j = join_index(fx, _ckpt(tmp_path, PI))
    assert j.status == CLEAN and j.claimed == len(PI) and not j.unmatched
    by = j.by_text()
    assert by["pi.layers.{*}.fc.bias"].pattern.claim == "required"  # take_linear(.., true)
    assert "pi.layers.{*}.q_proj.bias" not in by  # take_linear(.., false): never read
    assert j.skipped["not_read_by_caller"] >= 1
    assert by["pi.embed_tokens.weight"].status == ALTERNATIVE_UNUSED  # take_any: lm_head matched
    assert not any(t.endswith(".fc.bias") and t.startswith("layer") for t in by)  # expect_shape message
    assert j.skipped["message_args"] >= 1
    assert by["model.embed_tokens.weight"].status == NOT_APPLICABLE  # the llama family
    fams = {f["family"]: f for f in j.families}
    assert fams["crates/fxmodel/src/pi"]["applies"] and not fams["crates/fxmodel/src/llama"]["applies"]
    assert j.skipped["scripts"] >= 1 and not any(t.startswith("converted.") for t in by)


def test_join_missing_required_and_both_alternatives(fx, tmp_path):
    names = [n for n in PI if not n.endswith("fc.bias") and "lm_head" not in n]
    j = join_index(fx, _ckpt(tmp_path, names))
    assert j.status == PARTIAL
    missing = {m.pattern.text for m in j.matches if m.status == UNMATCHED}
    assert missing == {"pi.layers.{*}.fc.bias", "pi.embed_tokens.weight", "pi.lm_head.weight"}


def test_join_cli_shows_families_and_claims(fx, tmp_path, capsys):
    ck = _ckpt(tmp_path, PI)
    assert main(["checkpoint", str(ck.path), "--code", str(FIXTURE), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["counts"]["not_applicable_patterns"] >= 2 and d["counts"]["alternatives_unused"] == 1
    assert {f["family"] for f in d["families"] if f["applies"]} == {"crates/fxmodel/src/pi"}
    assert main(["checkpoint", str(ck.path), "--code", str(FIXTURE)]) == 0
    out = capsys.readouterr().out
    assert "Loader families" in out and "Alternatives not needed" in out


def test_listed_graph_caches_do_not_depend_on_what_ran_before(fx):
    """The caches the map lists for a region (and the capture audit's) are the same whether the capture
    audit's key-coverage analysis ran first in this process or not (the graph-key memo is per graph)."""
    from apxtui.analysis import graphkeys
    from apxtui.map import build_map

    def map_keys():
        m = build_map(fx, find_symbol(fx.graph, "Runtime::infer"))
        return [[c.to_dict() for c in r.graph_keys or ()] for r in m.capture_regions]

    def audit_keys():
        return [[c.to_dict() for c in r.graph_keys or ()] for r in capture_report(fx).regions]

    graphkeys._CACHE.pop(fx.graph, None)  # a fresh process's memo
    map_first = (map_keys(), audit_keys())
    graphkeys._CACHE.pop(fx.graph, None)
    audit = audit_keys()
    audit_first = (map_keys(), audit)
    assert map_first == audit_first
    runtime_cache = ["crates/fxmodel/src/runtime.rs:61"]  # Runtime::infer's, keyed on the frozen token_count
    assert [[c["at"] for c in keys] for keys in audit] == [runtime_cache]
    assert map_first[0] == [[]]  # the map lists Runtime::capture's own caches (it has none)
