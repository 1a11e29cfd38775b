//! Causal grouped-query attention over a KV cache.
//!
//! The implementation is chosen at build time from the GPU architecture
//! (`build.rs` sets the cfg): FlashAttention-2 on sm80..sm89, CUTLASS FMHA on
//! sm100+, the project's own kernel otherwise.

use crate::error::{check, Result};
use crate::ffi;
use crate::stream::Stream;
use crate::tensor::Tensor;

#[derive(Clone, Copy, Debug)]
pub struct AttnParams {
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub scale: f32,
}

/// Write this step's K and V rows into the caches at `pos..pos + rows`.
pub fn kv_write(k: &Tensor, v: &Tensor, k_cache: &mut Tensor, v_cache: &mut Tensor, pos: usize, p: &AttnParams, stream: &Stream) -> Result<()> {
    let rows = k.rows() as i32;
    check(unsafe {
        ffi::apxinf_kv_write_bf16(
            k.ptr(), v.ptr(), k_cache.ptr_mut(), v_cache.ptr_mut(), rows, p.kv_heads as i32,
            p.head_dim as i32, pos as i32, stream.handle(),
        )
    })
}

#[cfg(apxinf_fa2_sm80)]
pub fn attention(q: &Tensor, k_cache: &Tensor, v_cache: &Tensor, out: &mut Tensor, kv_len: usize, p: &AttnParams, stream: &Stream) -> Result<()> {
    check(unsafe {
        ffi::apxinf_flash_attn_fwd(
            q.ptr(), k_cache.ptr(), v_cache.ptr(), out.ptr_mut(), q.rows() as i32, kv_len as i32,
            p.heads as i32, p.kv_heads as i32, p.head_dim as i32, p.scale, stream.handle(),
        )
    })
}

#[cfg(apxinf_cutlass_fmha)]
pub fn attention(q: &Tensor, k_cache: &Tensor, v_cache: &Tensor, out: &mut Tensor, kv_len: usize, p: &AttnParams, stream: &Stream) -> Result<()> {
    check(unsafe {
        ffi::apxinf_cutlass_fmha_fwd(
            q.ptr(), k_cache.ptr(), v_cache.ptr(), out.ptr_mut(), q.rows() as i32, kv_len as i32,
            p.heads as i32, p.kv_heads as i32, p.head_dim as i32, p.scale, stream.handle(),
        )
    })
}

#[cfg(all(not(apxinf_fa2_sm80), not(apxinf_cutlass_fmha)))]
pub fn attention(q: &Tensor, k_cache: &Tensor, v_cache: &Tensor, out: &mut Tensor, kv_len: usize, p: &AttnParams, stream: &Stream) -> Result<()> {
    let (q_rows, kv_len) = (q.rows() as i32, kv_len as i32);
    let (heads, kv_heads, head_dim) = (p.heads as i32, p.kv_heads as i32, p.head_dim as i32);
    if std::env::var("APXINF_ATTN_SPLITK").map(|v| v == "1").unwrap_or(false) {
        // Split the KV range into partial softmaxes, then combine (long contexts).
        check(unsafe {
            ffi::apxinf_attention_fwd_splitk(
                q.ptr(), k_cache.ptr(), v_cache.ptr(), out.ptr_mut(), q_rows, kv_len, heads, kv_heads,
                head_dim, p.scale, stream.handle(),
            )
        })
    } else {
        check(unsafe {
            ffi::apxinf_attention_fwd(
                q.ptr(), k_cache.ptr(), v_cache.ptr(), out.ptr_mut(), q_rows, kv_len, heads, kv_heads,
                head_dim, p.scale, stream.handle(),
            )
        })
    }
}
