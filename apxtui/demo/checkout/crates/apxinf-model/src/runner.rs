//! Family-neutral entry point the Python binding holds.

use apxinf_cuda::Result;

use crate::auto::LoadedModel;

pub struct ModelRunner {
    model: LoadedModel,
}

impl ModelRunner {
    pub fn new(model: LoadedModel) -> Self {
        Self { model }
    }

    pub fn family(&self) -> &'static str {
        match &self.model {
            LoadedModel::Text(_) => "text",
            LoadedModel::Vla(_) => "pi05",
        }
    }

    /// Run `tokens` through the model; `num_steps` decode steps (VLA) or new tokens (text).
    pub fn infer(&mut self, tokens: &[u32], num_steps: usize) -> Result<Vec<f32>> {
        match &mut self.model {
            LoadedModel::Text(m) => m.generate(tokens, num_steps),
            LoadedModel::Vla(r) => r.infer(tokens, num_steps),
        }
    }
}
