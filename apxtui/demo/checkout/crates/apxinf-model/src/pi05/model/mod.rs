//! The PI0.5 language backbone, generic over the operator backend.

pub mod block;

use apxinf_cuda::{DType, Result, Stream, Tensor};

pub use block::Block;

use super::backend::Backend;
use super::config::Pi05Config;
use super::load::Pi05Weights;

/// Per-layer K/V caches `[max_seq_len, kv_heads * head_dim]`, allocated once.
pub struct KvCache {
    pub k: Vec<Tensor>,
    pub v: Vec<Tensor>,
}

impl KvCache {
    pub fn new(cfg: &Pi05Config) -> Result<Self> {
        let shape = [cfg.max_seq_len, cfg.kv_dim()];
        let mut k = Vec::with_capacity(cfg.num_hidden_layers);
        let mut v = Vec::with_capacity(cfg.num_hidden_layers);
        for _ in 0..cfg.num_hidden_layers {
            k.push(Tensor::empty(&shape, DType::BF16)?);
            v.push(Tensor::empty(&shape, DType::BF16)?);
        }
        Ok(Self { k, v })
    }
}

/// Activation buffers for `rows` tokens.
pub struct Scratch {
    pub hidden: Tensor,
    pub normed: Tensor,
    pub q: Tensor,
    pub k: Tensor,
    pub v: Tensor,
    pub ctx: Tensor,
    pub proj: Tensor,
    pub gate: Tensor,
    pub up: Tensor,
    pub act: Tensor,
    pub logits: Tensor,
    #[cfg(feature = "fp8")]
    pub act_fp8: Tensor,
    #[cfg(feature = "fp8")]
    pub act_scale: Tensor,
}

impl Scratch {
    pub fn new(cfg: &Pi05Config, rows: usize) -> Result<Self> {
        let bf16 = |cols: usize| Tensor::empty(&[rows, cols], DType::BF16);
        Ok(Self {
            hidden: bf16(cfg.hidden_size)?,
            normed: bf16(cfg.hidden_size)?,
            q: bf16(cfg.q_dim())?,
            k: bf16(cfg.kv_dim())?,
            v: bf16(cfg.kv_dim())?,
            ctx: bf16(cfg.q_dim())?,
            proj: bf16(cfg.hidden_size)?,
            gate: bf16(cfg.intermediate_size)?,
            up: bf16(cfg.intermediate_size)?,
            act: bf16(cfg.intermediate_size)?,
            logits: bf16(cfg.vocab_size)?,
            #[cfg(feature = "fp8")]
            act_fp8: Tensor::empty(&[rows, cfg.intermediate_size], DType::F8E4M3)?,
            #[cfg(feature = "fp8")]
            act_scale: Tensor::empty(&[1], DType::F32)?,
        })
    }
}

pub struct Pi05Model<B: Backend> {
    cfg: Pi05Config,
    embed: Tensor,
    layers: Vec<Block<B>>,
    final_norm: Tensor,
    lm_head: Tensor,
    /// One-row buffers for `decode_step`: stable addresses across graph replays.
    decode: Scratch,
}

impl<B: Backend> Pi05Model<B> {
    pub fn new(cfg: Pi05Config, weights: Pi05Weights, stream: &Stream) -> Result<Self> {
        let mut layers = Vec::with_capacity(weights.layers.len());
        for (i, w) in weights.layers.into_iter().enumerate() {
            layers.push(Block::new(i, &cfg, w, stream)?);
        }
        let decode = Scratch::new(&cfg, 1)?;
        Ok(Self { cfg, embed: weights.embed, layers, final_norm: weights.final_norm, lm_head: weights.lm_head, decode })
    }

    /// Eager prefill of the prompt at positions `0..tokens.numel()`; fills the KV cache.
    pub fn forward(&mut self, tokens: &Tensor, kv_cache: &mut KvCache, stream: &Stream) -> Result<Scratch> {
        let mut s = Scratch::new(&self.cfg, tokens.numel())?;
        B::embed(&self.embed, tokens, &mut s.hidden, stream)?;
        for layer in &self.layers {
            layer.forward(0, kv_cache, &mut s, stream)?;
        }
        B::rms_norm(&s.hidden, &self.final_norm, &mut s.normed, self.cfg.rms_norm_eps, stream)?;
        B::linear(&s.normed, &self.lm_head, &mut s.logits, stream)?;
        Ok(s)
    }

    /// One decode token at position `pos`, read from `input`. Recorded under
    /// CUDA Graph capture by the runner.
    pub fn decode_step(&mut self, pos: usize, input: &Tensor, kv_cache: &mut KvCache, stream: &Stream) -> Result<()> {
        let s = &mut self.decode;
        B::embed(&self.embed, input, &mut s.hidden, stream)?;
        for layer in &self.layers {
            layer.forward(pos, kv_cache, s, stream)?;
        }
        B::rms_norm(&s.hidden, &self.final_norm, &mut s.normed, self.cfg.rms_norm_eps, stream)?;
        B::linear(&s.normed, &self.lm_head, &mut s.logits, stream)?;
        if std::env::var("APXINF_SYNC_DEBUG").is_ok() {
            // Debug aid: surface asynchronous kernel faults at the step that raised them.
            stream.synchronize()?;
        }
        Ok(())
    }

    pub fn decode_logits(&self) -> &Tensor {
        &self.decode.logits
    }
}
