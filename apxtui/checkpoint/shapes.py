"""Check that config dimensions compose with tensor shapes.

Linear weights are read as ``[out, in]`` (HF ``nn.Linear``); a weight stored the other
way round (GPT-2 ``Conv1D``) is accepted when it matches transposed.  Each check
yields a :class:`Finding`; identical findings over repeated blocks are merged into
one with a ``count``.  Kinds: ``mismatch`` (config and tensor disagree),
``unstated`` (the config does not state a dimension a tensor shows), ``unchecked``
(tensors that cannot be compared, e.g. packed quantised storage), ``info`` and ``ok``.
An expected value built from a derived dimension says so (``derived=True``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Literal

from apxtui.checkpoint.config import Dim, dims_for, text_section
from apxtui.checkpoint.dtypes import PACKING_DTYPES
from apxtui.checkpoint.model import Checkpoint, TensorInfo
from apxtui.checkpoint.names import pattern, stack_split

Kind = Literal["mismatch", "unstated", "unchecked", "info", "ok"]
#: A sum of products: ``((coef, (dim, dim, …)), …)``.
Terms = tuple[tuple[int, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Finding:
    """One check result; ``tensor`` is the first tensor showing it, ``count`` how many do."""

    kind: Kind
    section: str
    message: str
    tensor: str | None = None
    count: int = 1
    expected: int | None = None
    actual: int | None = None
    keys: tuple[str, ...] = ()
    derived: bool = False


def _t(*names: str, coef: int = 1) -> Terms:
    return ((coef, names),)


HIDDEN = _t("hidden_size")
Q = _t("num_attention_heads", "head_dim")
KV = _t("num_key_value_heads", "head_dim")
QKV = Q + _t("num_key_value_heads", "head_dim", coef=2)
MLA_Q = _t("num_attention_heads", "qk_nope_head_dim") + _t("num_attention_heads", "qk_rope_head_dim")
MLA_KV_A = _t("kv_lora_rank") + _t("qk_rope_head_dim")
MLA_KV_B = _t("num_attention_heads", "qk_nope_head_dim") + _t("num_attention_heads", "v_head_dim")
MLA_O = _t("num_attention_heads", "v_head_dim")

_ATTN_ROLES = {
    **dict.fromkeys(("q_proj", "wq", "query", "q", "to_q"), "q"),
    **dict.fromkeys(("k_proj", "wk", "key", "k", "to_k"), "k"),
    **dict.fromkeys(("v_proj", "wv", "value", "v", "to_v"), "v"),
    **dict.fromkeys(("o_proj", "wo", "out_proj", "dense", "c_proj", "o", "proj"), "o"),
    **dict.fromkeys(("qkv_proj", "query_key_value", "Wqkv", "c_attn", "qkv", "in_proj"), "qkv"),
    "q_a_proj": "q_a",
    "q_b_proj": "q_b",
    "kv_a_proj_with_mqa": "kv_a",
    "kv_b_proj": "kv_b",
}
_MLP_ROLES = {
    **dict.fromkeys(
        ("gate_proj", "up_proj", "w1", "w3", "fc1", "c_fc", "dense_h_to_4h", "wi", "wi_0", "wi_1", "linear_fc1"), "up"
    ),
    "gate_up_proj": "gate_up",
    **dict.fromkeys(("down_proj", "w2", "fc2", "c_proj", "dense_4h_to_h", "wo", "linear_fc2"), "down"),
    **dict.fromkeys(("gate", "router"), "router"),
}
_MLP_PARENTS = frozenset({"mlp", "ffn", "feed_forward", "DenseReluDense", "block_sparse_moe", "moe", "experts"})
_VISION = ("vision", "visual", "vit", "image", "img", "siglip")
_AUDIO = ("audio", "whisper", "speech")
_EMBEDDINGS = ("embed_tokens", "wte", "word_embeddings", "tok_embeddings")


def check_shapes(ckpt: Checkpoint) -> list[Finding]:
    """Every config-versus-tensor check over ``ckpt``, merged across repeated blocks."""
    sections_dims = dims_for(ckpt.config)
    text = text_section(ckpt.config)
    acc = _Acc()
    if not ckpt.config:
        acc.add(Finding("unstated", "-", "no config.json: no dimension is stated, nothing can be checked"))
        return acc.out()
    stacks: dict[str, dict[int, list[TensorInfo]]] = defaultdict(lambda: defaultdict(list))
    for t in ckpt.tensors:
        split = stack_split(t.name)
        if split:
            stacks[split[0]][split[1]].append(t)
        else:
            sec = _section_for(t.name, ckpt.config, text)
            if sec in sections_dims and _is_embedding(t.name):
                _check_tensor(acc, sec, sections_dims[sec], t, (_t("vocab_size"), HIDDEN), "embedding")
    for stack, layers in stacks.items():
        sec = _section_for(stack, ckpt.config, text)
        if sec not in sections_dims:
            acc.add(Finding("unstated", sec, f"no config section states the dims of {stack}; not checked", stack))
            continue
        dims = sections_dims[sec]
        _check_layer_count(acc, sec, dims, stack, layers)
        _check_experts(acc, sec, dims, stack, layers)
        # Tensors alike but for their indices give the same result: check one, count all.
        groups: dict[tuple[str, str, tuple[int, ...]], list[Any]] = {}
        for tensors in layers.values():
            for t in tensors:
                groups.setdefault((pattern(t.name), t.dtype, t.shape), [t, 0])[1] += 1
        acc.weight = 1
        for t, n in groups.values():
            acc.weight = n
            _check_layer_tensor(acc, sec, dims, t)
        acc.weight = 1
    _check_quant(acc, ckpt, sections_dims.get(text, {}), text)
    return acc.out()


class _Acc:
    """Merges findings that differ only by block index."""

    def __init__(self) -> None:
        self._by: dict[tuple[Any, ...], Finding] = {}
        self.weight = 1  # how many tensors the finding being added stands for

    def add(self, f: Finding, key: str = "") -> None:
        k = (f.kind, f.section, pattern(f.tensor or ""), key or f.message)
        if k in self._by:
            self._by[k] = replace(self._by[k], count=self._by[k].count + self.weight)
        else:
            self._by[k] = replace(f, count=self.weight) if self.weight != 1 else f

    def out(self) -> list[Finding]:
        order = {"mismatch": 0, "unstated": 1, "unchecked": 2, "info": 3, "ok": 4}
        return sorted(self._by.values(), key=lambda f: order[f.kind])


def _section_for(name: str, config: dict[str, Any], text: str) -> str:
    low = name.lower()
    for tokens, word in ((_VISION, "vision"), (_AUDIO, "audio")):
        if any(tok in low for tok in tokens):
            return next((s for s in config if word in s), f"{word}_config")
    return text


def _is_embedding(name: str) -> bool:
    parts = name.split(".")
    if len(parts) < 2 or parts[-1] != "weight":
        return False
    return parts[-2] in _EMBEDDINGS or name in ("lm_head.weight", "output.weight") or name.endswith(".lm_head.weight")


def _check_layer_tensor(acc: _Acc, sec: str, dims: dict[str, Dim], t: TensorInfo) -> None:
    parts = t.name.split(".")
    if parts[-1] not in ("weight", "bias") or len(parts) < 3:
        return
    module, parents = parts[-2], parts[:-2]
    low_parents = [p.lower() for p in parents]
    rule: tuple[Terms | None, Terms | None] | None = None
    label = module
    if any("attn" in p or "attention" in p for p in low_parents) and module in _ATTN_ROLES:
        rule = _attn_rule(_ATTN_ROLES[module], dims)
    elif _MLP_PARENTS & set(parents) and module in _MLP_ROLES:
        role = _MLP_ROLES[module]
        inter = _intermediate(parents, dims)
        if role == "router":
            rule = (_t("num_experts"), HIDDEN)
        elif role == "up":
            rule = (inter, HIDDEN)
        elif role == "gate_up":
            rule = (tuple((2 * c, n) for c, n in inter), HIDDEN)
        else:
            rule = (HIDDEN, inter)
    if rule is None:
        return
    if t.dtype in PACKING_DTYPES and "quantization_config" in dims:
        acc.add(
            Finding("unchecked", sec, f"packed {t.dtype} quantised storage; logical shape not in the header", t.name)
        )
        return
    if parts[-1] == "bias":
        rule = (rule[0], None)
    _check_tensor(acc, sec, dims, t, rule, label)


def _attn_rule(role: str, dims: dict[str, Dim]) -> tuple[Terms | None, Terms | None]:
    mla = "kv_lora_rank" in dims
    return {
        "q": (MLA_Q if mla else Q, HIDDEN),
        "k": (KV, HIDDEN),
        "v": (KV, HIDDEN),
        "o": (HIDDEN, MLA_O if mla else Q),
        "qkv": (QKV, HIDDEN),
        "q_a": (_t("q_lora_rank"), HIDDEN),
        "q_b": (MLA_Q, _t("q_lora_rank")),
        "kv_a": (MLA_KV_A, HIDDEN),
        "kv_b": (MLA_KV_B, _t("kv_lora_rank")),
    }[role]


def _intermediate(parents: list[str], dims: dict[str, Dim]) -> Terms:
    """The MLP width that applies: dense, routed expert, or shared expert(s)."""
    if "shared_expert" in parents:
        return _t("shared_expert_intermediate_size")
    if "shared_experts" in parents:
        return _t("moe_intermediate_size", "num_shared_experts")
    if "experts" in parents:
        return _t("moe_intermediate_size" if "moe_intermediate_size" in dims else "intermediate_size")
    return _t("intermediate_size")


def _evaluate(terms: Terms, dims: dict[str, Dim]) -> tuple[int | None, str, list[str], bool, tuple[str, ...]]:
    """(value, explanation, missing dims, uses a derived dim, source keys)."""
    missing = sorted({n for _, names in terms for n in names if n not in dims})
    names_txt = " + ".join(("" if c == 1 else f"{c} × ") + " × ".join(ns) for c, ns in terms)
    if missing:
        return None, names_txt, missing, False, ()
    used = [dims[n] for _, ns in terms for n in ns]
    value = sum(c * math.prod(dims[n].value for n in ns) for c, ns in terms)
    nums = " + ".join(("" if c == 1 else f"{c} × ") + " × ".join(str(dims[n].value) for n in ns) for c, ns in terms)
    text = names_txt if names_txt == nums else f"{names_txt} = {nums}"
    return value, text, [], any(d.derived for d in used), tuple(d.source for d in used)


def _check_tensor(
    acc: _Acc, sec: str, dims: dict[str, Dim], t: TensorInfo, rule: tuple[Terms | None, Terms | None], label: str
) -> None:
    shape = t.shape
    axes = [(i, terms) for i, terms in enumerate(rule) if terms is not None and i < len(shape)]
    if not axes or (len(shape) > 2 and any(i for i, _ in axes)):
        return
    evals = {i: _evaluate(terms, dims) for i, terms in axes}
    for i, (_, text, missing, _, _) in evals.items():
        for name in missing:
            acc.add(
                Finding(
                    "unstated", sec, f"config does not state {name}; {t.name} {_axis(i)} = {shape[i]} "
                    f"should equal {text}", t.name, actual=shape[i],
                ),
                key=f"unstated:{name}",
            )
    known = {i: e for i, e in evals.items() if e[0] is not None}
    if not known:
        return
    bad = [i for i, e in known.items() if shape[i] != e[0]]
    if bad and len(shape) == 2 and all(shape[1 - i] == e[0] for i, e in known.items()):
        bad = []  # stored transposed ([in, out], e.g. GPT-2 Conv1D)
    for i, (value, text, _, derived, keys) in known.items():
        tag = " (uses a derived value)" if derived else ""
        if i in bad:
            terms = rule[i]
            assert terms is not None  # an axis with a value has a rule
            msg = f"{label} {_axis(i)} is {shape[i]} but {text} = {value}{tag}{_implied(terms, dims, shape[i])}"
            acc.add(Finding("mismatch", sec, msg, t.name, expected=value, actual=shape[i], keys=keys, derived=derived),
                    key=f"{label}:{i}:{shape[i]}")
        else:
            msg = f"{label} {_axis(i)} = {text} = {value}{tag}"
            acc.add(Finding("ok", sec, msg, t.name, expected=value, actual=value, keys=keys, derived=derived),
                    key=f"{label}:{i}")


def _implied(terms: Terms, dims: dict[str, Dim], actual: int) -> str:
    """For a single product with one derived factor: the value the tensor implies for it."""
    if len(terms) != 1:
        return ""
    coef, names = terms[0]
    derived = [n for n in names if dims[n].derived]
    if len(derived) != 1:
        return ""
    rest = coef * math.prod(dims[n].value for n in names if n != derived[0])
    if rest and actual % rest == 0:
        return f"; the tensor implies {derived[0]} = {actual // rest}"
    return ""


def _axis(i: int) -> str:
    return "out width (dim 0)" if i == 0 else "in width (dim 1)"


def _check_layer_count(acc: _Acc, sec: str, dims: dict[str, Dim], stack: str,
                       layers: dict[int, list[TensorInfo]]) -> None:
    idx = sorted(layers)
    n, first = len(idx), f"{stack}.{idx[-1]}"
    holes = sorted(set(range(idx[-1] + 1)) - set(idx))
    if holes:
        acc.add(Finding("info", sec, f"{stack} indices are not contiguous: missing {holes[:8]}", first))
    stated = dims.get("num_hidden_layers")
    if stated is None:
        acc.add(Finding("unstated", sec, f"config does not state num_hidden_layers; {stack} has {n} blocks", first,
                        actual=n))
        return
    extra = dims.get("num_nextn_predict_layers")
    keys = (stated.source,)
    if n == stated.value:
        acc.add(Finding("ok", sec, f"{stack}: {n} blocks = {stated.source}", first, expected=n, actual=n, keys=keys))
    elif extra and n == stated.value + extra.value:
        acc.add(Finding("info", sec, f"{stack}: {n} blocks = {stated.source} {stated.value} + "
                        f"{extra.source} {extra.value} (multi-token-prediction layers)", first,
                        expected=stated.value, actual=n, keys=(stated.source, extra.source)))
    else:
        acc.add(Finding("mismatch", sec, f"{stack} has {n} blocks but {stated.source} = {stated.value}", first,
                        expected=stated.value, actual=n, keys=keys))


def _check_experts(acc: _Acc, sec: str, dims: dict[str, Dim], stack: str,
                   layers: dict[int, list[TensorInfo]]) -> None:
    counts: dict[int, set[int]] = defaultdict(set)
    example = None
    for i, tensors in layers.items():
        for t in tensors:
            parts = t.name.split(".")
            for j in range(len(parts) - 1):
                if parts[j] == "experts" and parts[j + 1].isdigit():
                    counts[i].add(int(parts[j + 1]))
                    example = example or t.name
                elif parts[j] == "experts" and len(t.shape) == 3:  # fused experts [E, …]
                    example = example or t.name
                    _check_tensor(acc, sec, dims, t, (_t("num_experts"), None), "fused experts")
    if example is None:
        return
    for name in ("num_experts", "num_experts_per_tok"):
        if name not in dims:
            acc.add(Finding("unstated", sec, f"config does not state {name}; {stack} has experts", example),
                    key=f"unstated:{name}")
    if counts and "num_experts" in dims:
        n, e = max(len(s) for s in counts.values()), dims["num_experts"]
        kind: Kind = "ok" if n == e.value else "mismatch"
        acc.add(Finding(kind, sec, f"{stack}: {n} experts per layer; {e.source} = {e.value}", example,
                        expected=e.value, actual=n, keys=(e.source,)))


def _check_quant(acc: _Acc, ckpt: Checkpoint, dims: dict[str, Dim], sec: str) -> None:
    if "quantization_config" in dims:
        return
    narrow = {"F8_E4M3", "F8_E5M2", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F4", "F6_E2M3", "F6_E3M2", "I8"}
    for t in ckpt.tensors:
        if t.name.endswith("weight") and (t.dtype in narrow or t.name.endswith(("qweight", "weight_packed"))):
            acc.add(Finding("unstated", sec, f"config does not state quantization_config; {t.name} is {t.dtype}",
                            t.name), key="unstated:quantization_config")
            return
