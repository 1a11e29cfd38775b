//! One pre-norm decoder block: attention and gated MLP, each with a residual add.

use std::marker::PhantomData;

use apxinf_cuda::kernels::AttnParams;
#[cfg(feature = "fp8")]
use apxinf_cuda::kernels::{linear::linear_fp8, quant::quantize_fp8};
#[cfg(feature = "fp8")]
use apxinf_cuda::DType;
use apxinf_cuda::{Result, Stream, Tensor};

use super::{KvCache, Scratch};
use crate::pi05::backend::Backend;
use crate::pi05::config::Pi05Config;
use crate::pi05::load::LayerWeights;

pub struct Block<B: Backend> {
    index: usize,
    eps: f32,
    rope_theta: f32,
    attn: AttnParams,
    input_norm: Tensor,
    post_norm: Tensor,
    q_proj: Tensor,
    k_proj: Tensor,
    v_proj: Tensor,
    o_proj: Tensor,
    gate_proj: Tensor,
    up_proj: Tensor,
    #[cfg(not(feature = "fp8"))]
    down_proj: Tensor,
    #[cfg(feature = "fp8")]
    down_proj_fp8: Tensor,
    #[cfg(feature = "fp8")]
    down_scale: Tensor,
    _backend: PhantomData<B>,
}

impl<B: Backend> Block<B> {
    pub fn new(index: usize, cfg: &Pi05Config, w: LayerWeights, stream: &Stream) -> Result<Self> {
        // Once per load: the BF16 checkpoint weight is quantized on device and kept as FP8.
        #[cfg(feature = "fp8")]
        let (down_proj_fp8, down_scale) = {
            let mut q = Tensor::empty(w.down.shape(), DType::F8E4M3)?;
            let mut scale = Tensor::empty(&[1], DType::F32)?;
            quantize_fp8(&w.down, &mut q, &mut scale, stream)?;
            (q, scale)
        };
        #[cfg(not(feature = "fp8"))]
        let _ = stream;
        let attn = AttnParams {
            heads: cfg.num_attention_heads,
            kv_heads: cfg.num_key_value_heads,
            head_dim: cfg.head_dim,
            scale: 1.0 / (cfg.head_dim as f32).sqrt(),
        };
        Ok(Self {
            index,
            eps: cfg.rms_norm_eps,
            rope_theta: cfg.rope_theta,
            attn,
            input_norm: w.input_norm,
            post_norm: w.post_norm,
            q_proj: w.q,
            k_proj: w.k,
            v_proj: w.v,
            o_proj: w.o,
            gate_proj: w.gate,
            up_proj: w.up,
            #[cfg(not(feature = "fp8"))]
            down_proj: w.down,
            #[cfg(feature = "fp8")]
            down_proj_fp8,
            #[cfg(feature = "fp8")]
            down_scale,
            _backend: PhantomData,
        })
    }

    /// `s.hidden` (rows tokens at positions `pos..pos + rows`) is updated in place.
    pub fn forward(&self, pos: usize, kv: &mut KvCache, s: &mut Scratch, stream: &Stream) -> Result<()> {
        // Attention.
        B::rms_norm(&s.hidden, &self.input_norm, &mut s.normed, self.eps, stream)?;
        B::linear(&s.normed, &self.q_proj, &mut s.q, stream)?;
        B::linear(&s.normed, &self.k_proj, &mut s.k, stream)?;
        B::linear(&s.normed, &self.v_proj, &mut s.v, stream)?;
        B::rope(&mut s.q, pos, self.rope_theta, self.attn.head_dim, stream)?;
        B::rope(&mut s.k, pos, self.rope_theta, self.attn.head_dim, stream)?;
        let k_cache = &mut kv.k[self.index];
        let v_cache = &mut kv.v[self.index];
        B::kv_write(&s.k, &s.v, k_cache, v_cache, pos, &self.attn, stream)?;
        let kv_len = pos + s.q.rows();
        B::attention(&s.q, k_cache, v_cache, &mut s.ctx, kv_len, &self.attn, stream)?;
        B::linear(&s.ctx, &self.o_proj, &mut s.proj, stream)?;
        B::add(&mut s.hidden, &s.proj, stream)?;

        // Gated MLP.
        B::rms_norm(&s.hidden, &self.post_norm, &mut s.normed, self.eps, stream)?;
        B::linear(&s.normed, &self.gate_proj, &mut s.gate, stream)?;
        B::linear(&s.normed, &self.up_proj, &mut s.up, stream)?;
        B::silu_mul(&s.gate, &s.up, &mut s.act, stream)?;
        #[cfg(feature = "fp8")]
        {
            quantize_fp8(&s.act, &mut s.act_fp8, &mut s.act_scale, stream)?;
            linear_fp8(&s.act_fp8, &self.down_proj_fp8, &s.act_scale, &self.down_scale, &mut s.proj, stream)?;
        }
        #[cfg(not(feature = "fp8"))]
        {
            B::linear(&s.act, &self.down_proj, &mut s.proj, stream)?;
        }
        B::add(&mut s.hidden, &s.proj, stream)?;
        Ok(())
    }
}
