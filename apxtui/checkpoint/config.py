"""``config.json`` sections and the dimensions they state, with the key each came from.

HF multimodal configs nest one config per tower (``text_config``, ``vision_config``,
``audio_config``, ``llm_config``…); :func:`split_sections` keeps them apart.
:func:`model_dims` reads one section, trying the common HF aliases for each
dimension in order, and records the key that supplied the value.  A value computed
from others (``head_dim = hidden_size / num_attention_heads``) is marked ``derived``
with the rule used; it is never presented as stated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Canonical dimension name -> config keys that state it, tried in order.
ALIASES: dict[str, tuple[str, ...]] = {
    "hidden_size": ("hidden_size", "n_embd", "d_model", "dim", "model_dim", "embed_dim", "width"),
    "num_attention_heads": ("num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads"),
    "num_key_value_heads": ("num_key_value_heads", "n_kv_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"),
    "head_dim": ("head_dim", "kv_channels", "attention_head_dim", "head_size", "d_kv"),
    "intermediate_size": (
        "intermediate_size",
        "ffn_hidden_size",
        "n_inner",
        "ffn_dim",
        "d_ff",
        "hidden_dim",
        "mlp_dim",
    ),
    "moe_intermediate_size": ("moe_intermediate_size", "expert_intermediate_size"),
    "shared_expert_intermediate_size": ("shared_expert_intermediate_size",),
    "num_experts": ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts", "n_experts"),
    "num_experts_per_tok": (
        "num_experts_per_tok",
        "experts_per_token",
        "moe_top_k",
        "num_selected_experts",
        "n_experts_per_tok",
    ),
    "num_shared_experts": ("n_shared_experts", "num_shared_experts"),
    "vocab_size": ("vocab_size", "n_vocab", "padded_vocab_size"),
    "num_hidden_layers": ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "depth"),
    "num_nextn_predict_layers": ("num_nextn_predict_layers",),
    "q_lora_rank": ("q_lora_rank",),
    "kv_lora_rank": ("kv_lora_rank",),
    "qk_nope_head_dim": ("qk_nope_head_dim",),
    "qk_rope_head_dim": ("qk_rope_head_dim",),
    "v_head_dim": ("v_head_dim",),
    "quantization_config": ("quantization_config", "quantization", "compression_config"),
}

#: Keys looked up in the top level when a nested section lacks them.
INHERITED = ("vocab_size", "quantization_config")

_SECTION_MARKERS = frozenset(k for keys in ALIASES.values() for k in keys) | {"model_type", "architectures"}


@dataclass(frozen=True)
class Dim:
    """One dimension: its value, where it came from and whether it was stated."""

    value: Any
    source: str  # config key (``text_config.hidden_size``) or the derivation rule
    derived: bool = False


def split_sections(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"top": …, "<name>_config": …}``: nested model configs kept apart from the top level."""
    sections: dict[str, dict[str, Any]] = {}
    top: dict[str, Any] = {}
    for key, value in config.items():
        if (
            key.endswith("_config")
            and key not in ALIASES["quantization_config"]
            and isinstance(value, dict)
            and _SECTION_MARKERS & value.keys()
        ):
            sections[key] = value
        else:
            top[key] = value
    return {"top": top, **sections}


def text_section(sections: dict[str, dict[str, Any]]) -> str:
    """The section that describes the language model (``text_config``/``llm_config``… or ``top``)."""
    for name in ("text_config", "llm_config", "language_config", "thinker_config"):
        if name in sections:
            return name
    return "top"


def model_dims(section: dict[str, Any], prefix: str = "", top: dict[str, Any] | None = None) -> dict[str, Dim]:
    """The dimensions ``section`` states, by canonical name; derived ones are marked.

    ``prefix`` (``"text_config."``) qualifies the recorded source keys; ``top`` is the
    top-level config, consulted for :data:`INHERITED` keys missing from a nested section.
    """
    dims: dict[str, Dim] = {}
    vision = "vision" in prefix or "visual" in prefix
    for name, keys in ALIASES.items():
        if name == "hidden_size" and vision and "embed_dim" in section:
            # Qwen2-VL-style vision configs: embed_dim is the tower width, hidden_size the LLM's.
            keys = ("embed_dim", *keys)
        hit = _lookup(section, keys, prefix)
        if hit is None and top is not None and name in INHERITED:
            hit = _lookup(top, keys, "")
        if hit is not None:
            dims[name] = hit
    _derive(dims, section)
    return dims


def _lookup(section: dict[str, Any], keys: tuple[str, ...], prefix: str) -> Dim | None:
    for key in keys:
        value = section.get(key)
        if value is None:
            continue
        if key == "quantization_config" or isinstance(value, int) and not isinstance(value, bool):
            return Dim(value, prefix + key)
        if isinstance(value, dict) and key in ALIASES["quantization_config"]:
            return Dim(value, prefix + key)
    return None


def _derive(dims: dict[str, Dim], section: dict[str, Any]) -> None:
    hidden, heads = dims.get("hidden_size"), dims.get("num_attention_heads")
    ratio = section.get("mlp_ratio")
    if "intermediate_size" not in dims and hidden and isinstance(ratio, int | float) and ratio > 0:
        dims["intermediate_size"] = Dim(int(hidden.value * ratio), "derived: hidden_size × mlp_ratio", True)
    mla = "qk_nope_head_dim" in dims or "kv_lora_rank" in dims  # MLA heads are not hidden / heads wide
    if "head_dim" not in dims and not mla and hidden and heads and heads.value and hidden.value % heads.value == 0:
        dims["head_dim"] = Dim(hidden.value // heads.value, "derived: hidden_size / num_attention_heads", True)
    if "num_key_value_heads" not in dims and heads:
        dims["num_key_value_heads"] = Dim(
            heads.value, "derived: num_attention_heads (HF default when unstated)", True
        )


def dims_for(sections: dict[str, dict[str, Any]]) -> dict[str, dict[str, Dim]]:
    """:func:`model_dims` for every section that states at least one dimension."""
    top = sections.get("top", {})
    out: dict[str, dict[str, Dim]] = {}
    for name, section in sections.items():
        d = model_dims(section, "" if name == "top" else f"{name}.", None if name == "top" else top)
        if any(not v.derived for k, v in d.items() if k not in INHERITED):
            out[name] = d
    return out
