//! PI0.5 language-backbone dimensions, read from `config.json`.

use apxinf_cuda::{Error, Result};

#[derive(Clone, Debug)]
pub struct Pi05Config {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub head_dim: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub vocab_size: usize,
    pub max_seq_len: usize,
    pub rms_norm_eps: f32,
    pub rope_theta: f32,
}

impl Pi05Config {
    pub fn from_json(v: &serde_json::Value) -> Result<Self> {
        let int = |key: &str| {
            v.get(key).and_then(|x| x.as_u64()).map(|x| x as usize).ok_or_else(|| Error::Load(format!("config.json: missing `{key}`")))
        };
        let float = |key: &str, default: f64| v.get(key).and_then(|x| x.as_f64()).unwrap_or(default) as f32;
        Ok(Self {
            hidden_size: int("hidden_size")?,
            num_attention_heads: int("num_attention_heads")?,
            num_key_value_heads: int("num_key_value_heads")?,
            head_dim: int("head_dim")?,
            intermediate_size: int("intermediate_size")?,
            num_hidden_layers: int("num_hidden_layers")?,
            vocab_size: int("vocab_size")?,
            max_seq_len: int("max_position_embeddings")?,
            rms_norm_eps: float("rms_norm_eps", 1e-6),
            rope_theta: float("rope_theta", 10_000.0),
        })
    }

    pub fn q_dim(&self) -> usize {
        self.num_attention_heads * self.head_dim
    }

    pub fn kv_dim(&self) -> usize {
        self.num_key_value_heads * self.head_dim
    }
}
