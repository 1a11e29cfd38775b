//! The `Backend` trait model code is generic over, and its CUDA implementation.

use crate::error::Result;
use crate::kernels::{self, AttnParams};
use crate::stream::Stream;
use crate::tensor::Tensor;

/// The operator set a transformer block needs. Implementations: `CudaBackend`
/// (here) and the host fallback `crate::cpu::CpuBackend`.
pub trait Backend {
    fn embed(table: &Tensor, ids: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()>;
    fn rms_norm(x: &Tensor, w: &Tensor, out: &mut Tensor, eps: f32, stream: &Stream) -> Result<()>;
    fn linear(x: &Tensor, w: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()>;
    fn rope(x: &mut Tensor, pos: usize, theta: f32, head_dim: usize, stream: &Stream) -> Result<()>;
    fn kv_write(k: &Tensor, v: &Tensor, k_cache: &mut Tensor, v_cache: &mut Tensor, pos: usize, p: &AttnParams, stream: &Stream) -> Result<()>;
    fn attention(q: &Tensor, k_cache: &Tensor, v_cache: &Tensor, out: &mut Tensor, kv_len: usize, p: &AttnParams, stream: &Stream) -> Result<()>;
    fn silu_mul(gate: &Tensor, up: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()>;
    fn add(acc: &mut Tensor, x: &Tensor, stream: &Stream) -> Result<()>;
}

pub struct CudaBackend;

impl Backend for CudaBackend {
    fn embed(table: &Tensor, ids: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()> {
        kernels::embedding::embedding(table, ids, out, stream)
    }

    fn rms_norm(x: &Tensor, w: &Tensor, out: &mut Tensor, eps: f32, stream: &Stream) -> Result<()> {
        kernels::norm::rms_norm(x, w, out, eps, stream)
    }

    fn linear(x: &Tensor, w: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()> {
        kernels::linear::linear(x, w, out, stream)
    }

    fn rope(x: &mut Tensor, pos: usize, theta: f32, head_dim: usize, stream: &Stream) -> Result<()> {
        kernels::rope::rope(x, pos, theta, head_dim, stream)
    }

    fn kv_write(k: &Tensor, v: &Tensor, k_cache: &mut Tensor, v_cache: &mut Tensor, pos: usize, p: &AttnParams, stream: &Stream) -> Result<()> {
        kernels::attention::kv_write(k, v, k_cache, v_cache, pos, p, stream)
    }

    fn attention(q: &Tensor, k_cache: &Tensor, v_cache: &Tensor, out: &mut Tensor, kv_len: usize, p: &AttnParams, stream: &Stream) -> Result<()> {
        kernels::attention::attention(q, k_cache, v_cache, out, kv_len, p, stream)
    }

    fn silu_mul(gate: &Tensor, up: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()> {
        kernels::activation::silu_mul(gate, up, out, stream)
    }

    fn add(acc: &mut Tensor, x: &Tensor, stream: &Stream) -> Result<()> {
        kernels::activation::add(acc, x, stream)
    }
}
