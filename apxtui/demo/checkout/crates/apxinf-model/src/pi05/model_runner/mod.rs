//! Drives one PI0.5 inference: eager prefill, then `num_steps` decode steps,
//! each replayed from a CUDA Graph captured once per sequence length.

use std::collections::HashMap;
use std::path::Path;

use apxinf_cuda::graph::{self, CudaGraph};
use apxinf_cuda::{DType, Error, Result, Stream, Tensor};

use super::backend::RuntimeBackend;
use super::config::Pi05Config;
use super::load::load_weights;
use super::model::{KvCache, Pi05Model};
use crate::host::bf16_to_f32;
use crate::weights;

pub struct Pi05ModelRunner {
    cfg: Pi05Config,
    model: Pi05Model<RuntimeBackend>,
    stream: Stream,
    kv_cache: KvCache,
    /// Device copy of the current decode token; the captured graphs read it.
    input_buf: Tensor,
    graphs: HashMap<usize, CudaGraph>,
}

impl Pi05ModelRunner {
    pub fn load(dir: &Path) -> Result<Self> {
        let cfg = Pi05Config::from_json(&weights::read_config(dir)?)?;
        let stream = Stream::new()?;
        let w = load_weights(dir, &cfg, &stream)?;
        let model = Pi05Model::new(cfg.clone(), w, &stream)?;
        // Allocated before any capture: stable addresses the graphs bake in.
        let kv_cache = KvCache::new(&cfg)?;
        let input_buf = Tensor::empty(&[1], DType::U32)?;
        Ok(Self { cfg, model, stream, kv_cache, input_buf, graphs: HashMap::new() })
    }

    pub fn infer(&mut self, tokens: &[u32], num_steps: usize) -> Result<Vec<f32>> {
        if tokens.is_empty() || tokens.len() + num_steps > self.cfg.max_seq_len {
            return Err(Error::Shape(format!("{} tokens + {num_steps} steps > {}", tokens.len(), self.cfg.max_seq_len)));
        }
        let prompt = Tensor::from_u32(tokens, &self.stream)?;
        let prefill = self.model.forward(&prompt, &mut self.kv_cache, &self.stream)?;

        let cond = tokens[tokens.len() - 1];
        for step in 0..num_steps {
            let pos = tokens.len() + step;
            let seq_len = pos + 1;
            match self.graphs.get(&seq_len) {
                Some(graph) => {
                    self.input_buf.copy_from_host(&cond.to_le_bytes(), &self.stream)?;
                    graph.replay(&self.stream)?;
                }
                None => {
                    self.input_buf.copy_from_host(&cond.to_le_bytes(), &self.stream)?;
                    graph::begin_capture(&self.stream)?;
                    self.model.decode_step(pos, &self.input_buf, &mut self.kv_cache, &self.stream)?;
                    let captured = graph::end_capture(&self.stream)?;
                    let exec = CudaGraph::instantiate(captured)?;
                    exec.replay(&self.stream)?;
                    self.graphs.insert(seq_len, exec);
                }
            }
        }

        let logits = match num_steps {
            0 => prefill.logits.to_host(&self.stream)?,
            _ => self.model.decode_logits().to_host(&self.stream)?,
        };
        Ok(bf16_to_f32(&logits))
    }
}
