"""The weight join: name patterns from code facts (placeholders, consts, helper prefixes, caller-filled
parameters) matched against checkpoint headers; duplicates and empty sides."""

from __future__ import annotations

import json
from pathlib import Path

from apxtui.checkpoint import read_checkpoint
from apxtui.checkpoint.join import CLEAN, EMPTY_HEADER, EMPTY_PATTERNS, NO_OVERLAP, PARTIAL, join, join_index
from apxtui.checkpoint.patterns import collect_patterns
from apxtui.checkpoint.synth import llama_like, write_safetensors
from apxtui.cli import main
from apxtui.index.link import link
from apxtui.parse import extract_file
from apxtui.scan import EXTENSIONS


def _facts(files: dict[str, str], root: Path | None = None):
    facts = {}
    for rel, src in files.items():
        if root is not None:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(src)
        mod = "loader" if rel.endswith(".rs") else rel.removesuffix(".py").replace("/", ".")
        facts[rel] = extract_file(rel, src.encode(), EXTENSIONS[Path(rel).suffix], mod)
    g, _ = link(facts, set(files), set())
    return facts, g


def _ckpt(tmp_path, spec):
    d = tmp_path / "ckpt"
    d.mkdir(exist_ok=True)
    write_safetensors(d / "model.safetensors", spec)
    return read_checkpoint(d)


RUST_LOADER = r'''
const EMBED: &str = "model.embed_tokens.weight";

fn layer_prefix(i: usize) -> String {
    format!("model.layers.{}", i)
}

fn take_linear(st: &St, prefix: &str) -> Tensor {
    take(st, &format!("{prefix}.weight"))
}

fn load_layer(st: &St, i: usize) -> Layer {
    let prefix = layer_prefix(i);
    let attn = format!("{prefix}.self_attn");
    Layer {
        input_norm: take(st, &format!("{prefix}.input_layernorm.weight")),
        post_norm: take(st, &format!("model.layers.{i}.post_attention_layernorm.weight")),
        q: take_linear(st, &format!("{attn}.q_proj")),
        k: take_linear(st, &format!("{attn}.k_proj")),
        v: take_linear(st, &format!("{attn}.v_proj")),
        o: take_linear(st, &format!("{attn}.o_proj")),
        gate: take(st, &format!("model.layers.{:?}.mlp.gate_proj.weight", i)),
        up: take(st, &format!("{}.mlp.up_proj.weight", prefix)),
        down: take(st, &format!("{prefix}.mlp.down_proj.weight")),
    }
}

fn load(st: &St, n: usize) -> Model {
    let layers = (0..n).map(|i| load_layer(st, i)).collect();
    println!("{}.weight", n);
    Model {
        embed: take(st, EMBED),
        norm: take(st, "model.norm.weight"),
        head: take(st, "lm_head.weight"),
        missing: take(st, "model.rotary_emb.inv_freq"),
        layers,
    }
}
'''


def test_demo_loader_joins_demo_checkpoint_cleanly(demo_index):
    from apxtui.demo import DEMO_CHECKPOINT

    ckpt = read_checkpoint(DEMO_CHECKPOINT)
    j = join_index(demo_index, ckpt)
    assert j.status == CLEAN
    assert j.tensors == len(ckpt.tensors) and not j.unclaimed and not j.duplicates and not j.unmatched
    texts = {m.pattern.text for m in j.matched}
    assert "model.layers.{*}.mlp.down_proj.weight" in texts  # {prefix} from layer_prefix(i), one call deep
    down = j.by_text()["model.layers.{*}.mlp.down_proj.weight"]
    assert len(down.tensors) == ckpt.config["top"]["num_hidden_layers"]
    assert all(s.at.startswith("crates/apxinf-model/src/pi05/load.rs:") for s in down.pattern.sources)


def test_placeholders_consts_helpers_and_caller_params(tmp_path):
    facts, g = _facts({"src/load.rs": RUST_LOADER}, tmp_path / "co")
    pats, skipped = collect_patterns(facts, g, tmp_path / "co")
    by = {p.text: p for p in pats}
    layer = "model.layers.{*}."
    for name in ("input_layernorm.weight", "post_attention_layernorm.weight", "mlp.gate_proj.weight",
                 "mlp.up_proj.weight", "mlp.down_proj.weight", "self_attn.q_proj.weight", "self_attn.o_proj.weight"):
        assert layer + name in by, (name, sorted(by))
    assert "model.embed_tokens.weight" in by and by["model.embed_tokens.weight"].sources[0].field == "embed"
    q = by["model.layers.{*}.self_attn.q_proj.weight"]
    assert q.sources[0].at.startswith("src/load.rs:")  # the helper's format!("{prefix}.weight") line
    assert any("take_linear" in h or "{prefix}" in h for h in q.how)
    # prefixes that feed other names are not patterns of their own; messages are skipped
    assert "model.layers.{*}" not in by and "model.layers.{*}.self_attn" not in by
    assert skipped["messages"] >= 1 and skipped["consumed_as_prefix"] >= 2
    assert not any("{prefix}" in t or "{attn}" in t for t in by)

    spec = llama_like(layers=2)
    spec["model.layers.0.mlp.extra_proj.weight"] = ("BF16", (4, 4))
    j = join(pats, _ckpt(tmp_path, spec))
    assert j.status == PARTIAL
    assert [t.name for t in j.unclaimed] == ["model.layers.0.mlp.extra_proj.weight"]
    assert [m.pattern.text for m in j.unmatched] == ["model.rotary_emb.inv_freq"]
    assert not j.duplicates
    assert len(j.by_text()["model.layers.{*}.self_attn.k_proj.weight"].tensors) == 2


def test_duplicate_claims_reported(tmp_path):
    src = r'''
fn load(st: &St, i: usize) {
    let a = take(st, &format!("model.layers.{}.mlp.up_proj.weight", i));
    let b = take(st, &format!("model.layers.{}.mlp.{}.weight", i, kind));
}
'''
    facts, g = _facts({"src/w.rs": src})
    pats, _ = collect_patterns(facts, g)
    spec = {f"model.layers.{i}.mlp.{p}.weight": ("BF16", (2, 2)) for i in range(2) for p in ("up_proj", "down_proj")}
    j = join(pats, _ckpt(tmp_path, spec))
    assert sorted(j.duplicates) == ["model.layers.0.mlp.up_proj.weight", "model.layers.1.mlp.up_proj.weight"]
    assert len(j.duplicates["model.layers.0.mlp.up_proj.weight"]) == 2
    assert j.status == PARTIAL and not j.unclaimed


def test_python_fstring_format_and_percent(tmp_path):
    src = '''
def load_weights(sd, n):
    out = {}
    for i in range(n):
        out[i] = sd[f"model.layers.{i}.self_attn.q_proj.weight"]
        out[i] = sd["model.layers.{}.self_attn.k_proj.weight".format(i)]
        out[i] = sd["model.layers.%d.self_attn.v_proj.weight" % i]
    return out
'''
    facts, g = _facts({"pkg/loader.py": src})
    pats, _ = collect_patterns(facts, g)
    texts = {p.text for p in pats}
    assert {f"model.layers.{{*}}.self_attn.{x}_proj.weight" for x in "qkv"} <= texts
    spec = {f"model.layers.{i}.self_attn.{x}_proj.weight": ("F8_E4M3", (4, 4)) for i in range(3) for x in "qkv"}
    j = join(pats, _ckpt(tmp_path, spec))
    assert j.status == CLEAN and j.claimed == 9


def test_empty_header_is_not_a_clean_join(tmp_path):
    facts, g = _facts({"src/load.rs": RUST_LOADER})
    pats, _ = collect_patterns(facts, g)
    j = join(pats, _ckpt(tmp_path, {}))
    assert j.status == EMPTY_HEADER and j.tensors == 0 and not j.matched


def test_empty_pattern_set_is_not_a_clean_join(tmp_path):
    facts, g = _facts({"src/lib.rs": "fn f() -> usize { 1 + 2 }\n"})
    pats, _ = collect_patterns(facts, g)
    assert pats == []
    j = join(pats, _ckpt(tmp_path, llama_like(layers=1)))
    assert j.status == EMPTY_PATTERNS and len(j.unclaimed) == len(llama_like(layers=1))


def test_no_overlap(tmp_path):
    facts, g = _facts({"src/load.rs": 'fn load_w(st: &St) { take(st, "decoder.final.weight"); }\n'})
    pats, _ = collect_patterns(facts, g)
    j = join(pats, _ckpt(tmp_path, llama_like(layers=1)))
    assert j.status == NO_OVERLAP and [m.pattern.text for m in j.unmatched] == ["decoder.final.weight"]


def test_cli_join_text_and_json(capsys):
    from apxtui.demo import DEMO_CHECKOUT, DEMO_CHECKPOINT

    assert main(["checkpoint", str(DEMO_CHECKPOINT), "--code", str(DEMO_CHECKOUT)]) == 0
    out = capsys.readouterr().out
    assert "status       clean" in out and "model.layers.{*}.self_attn.q_proj.weight" in out
    assert "crates/apxinf-model/src/pi05/load.rs:42" in out
    assert main(["checkpoint", str(DEMO_CHECKPOINT), "--code", str(DEMO_CHECKOUT), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["status"] == "clean" and d["counts"]["tensors"] == d["counts"]["claimed"] == 21
    assert all(s["at"] for p in d["matched"] for s in p["sources"])


def test_cli_join_without_patterns_exits_one(tmp_path, capsys):
    co = tmp_path / "co"
    co.mkdir()
    (co / "lib.rs").write_text("fn f() {}\n")
    write_safetensors(tmp_path / "m.safetensors", llama_like(layers=1))
    assert main(["checkpoint", str(tmp_path / "m.safetensors"), "--code", str(co)]) == 1
    assert "NO PATTERNS" in capsys.readouterr().out
