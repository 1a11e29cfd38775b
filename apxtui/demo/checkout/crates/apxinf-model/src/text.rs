//! A minimal text model (bigram: embedding → final norm → LM head) for the
//! `Text` family. Calls the CUDA operators directly, not through a generic backend.

use std::path::Path;

use apxinf_cuda::backend::Backend;
use apxinf_cuda::{kernels, CudaBackend, DType, Error, Result, Stream, Tensor};

use crate::host::{argmax, bf16_to_f32};
use crate::weights;

pub struct TextModel {
    stream: Stream,
    embed: Tensor,
    final_norm: Tensor,
    lm_head: Tensor,
    eps: f32,
}

impl TextModel {
    pub fn load(dir: &Path) -> Result<Self> {
        let config = weights::read_config(dir)?;
        let eps = config.get("rms_norm_eps").and_then(|v| v.as_f64()).unwrap_or(1e-6) as f32;
        let stream = Stream::new()?;
        let bytes = weights::read_safetensors(dir)?;
        let st = weights::parse(&bytes)?;
        let embed = weights::upload(&st, "model.embed_tokens.weight", &stream)?;
        let final_norm = weights::upload(&st, "model.norm.weight", &stream)?;
        let lm_head = weights::upload(&st, "lm_head.weight", &stream)?;
        Ok(Self { stream, embed, final_norm, lm_head, eps })
    }

    /// Greedy decoding of `max_new_tokens` tokens; returns the last step's logits.
    pub fn generate(&mut self, tokens: &[u32], max_new_tokens: usize) -> Result<Vec<f32>> {
        let mut last = *tokens.last().ok_or_else(|| Error::Shape("empty prompt".into()))?;
        let mut logits = Vec::new();
        for _ in 0..max_new_tokens.max(1) {
            logits = self.next_logits(last)?;
            last = argmax(&logits) as u32;
        }
        Ok(logits)
    }

    fn next_logits(&mut self, token: u32) -> Result<Vec<f32>> {
        let ids = Tensor::from_u32(&[token], &self.stream)?;
        let mut hidden = Tensor::empty(&[1, self.embed.cols()], DType::BF16)?;
        kernels::embedding::embedding(&self.embed, &ids, &mut hidden, &self.stream)?;
        let mut normed = Tensor::empty(&[1, self.embed.cols()], DType::BF16)?;
        kernels::norm::rms_norm(&hidden, &self.final_norm, &mut normed, self.eps, &self.stream)?;
        let mut logits = Tensor::empty(&[1, self.lm_head.rows()], DType::BF16)?;
        CudaBackend::linear(&normed, &self.lm_head, &mut logits, &self.stream)?;
        Ok(bf16_to_f32(&logits.to_host(&self.stream)?))
    }
}
