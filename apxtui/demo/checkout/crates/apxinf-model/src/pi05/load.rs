//! PI0.5 weight loading: checkpoint tensor names → device tensors (BF16 storage).

use std::path::Path;

use apxinf_cuda::{Result, Stream, Tensor};

use super::config::Pi05Config;
use crate::weights;

const EMBED: &str = "model.embed_tokens.weight";
const FINAL_NORM: &str = "model.norm.weight";
const LM_HEAD: &str = "lm_head.weight";

pub struct LayerWeights {
    pub input_norm: Tensor,
    pub post_norm: Tensor,
    pub q: Tensor,
    pub k: Tensor,
    pub v: Tensor,
    pub o: Tensor,
    pub gate: Tensor,
    pub up: Tensor,
    pub down: Tensor,
}

pub struct Pi05Weights {
    pub embed: Tensor,
    pub final_norm: Tensor,
    pub lm_head: Tensor,
    pub layers: Vec<LayerWeights>,
}

fn layer_prefix(i: usize) -> String {
    format!("model.layers.{i}")
}

fn load_layer(st: &safetensors::SafeTensors<'_>, i: usize, stream: &Stream) -> Result<LayerWeights> {
    let prefix = layer_prefix(i);
    Ok(LayerWeights {
        input_norm: weights::upload(st, &format!("{prefix}.input_layernorm.weight"), stream)?,
        post_norm: weights::upload(st, &format!("{prefix}.post_attention_layernorm.weight"), stream)?,
        q: weights::upload(st, &format!("model.layers.{}.self_attn.q_proj.weight", i), stream)?,
        k: weights::upload(st, &format!("model.layers.{}.self_attn.k_proj.weight", i), stream)?,
        v: weights::upload(st, &format!("model.layers.{}.self_attn.v_proj.weight", i), stream)?,
        o: weights::upload(st, &format!("{prefix}.self_attn.o_proj.weight"), stream)?,
        gate: weights::upload(st, &format!("{prefix}.mlp.gate_proj.weight"), stream)?,
        up: weights::upload(st, &format!("{prefix}.mlp.up_proj.weight"), stream)?,
        down: weights::upload(st, &format!("{prefix}.mlp.down_proj.weight"), stream)?,
    })
}

/// Read `model.safetensors` under `dir` and upload every tensor the model uses.
pub fn load_weights(dir: &Path, cfg: &Pi05Config, stream: &Stream) -> Result<Pi05Weights> {
    let bytes = weights::read_safetensors(dir)?;
    let st = weights::parse(&bytes)?;
    let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
    for i in 0..cfg.num_hidden_layers {
        layers.push(load_layer(&st, i, stream)?);
    }
    Ok(Pi05Weights {
        embed: weights::upload(&st, EMBED, stream)?,
        final_norm: weights::upload(&st, FINAL_NORM, stream)?,
        lm_head: weights::upload(&st, LM_HEAD, stream)?,
        layers,
    })
}
