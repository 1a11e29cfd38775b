//! Private raw bindings to the C ABI defined in `adapters/*.cu`.
//!
//! Every function returns a status (`cudaError_t` / `cublasStatus_t` as int);
//! the safe wrappers in `crate::kernels` turn it into a `Result` via `check`.

#![allow(non_camel_case_types, dead_code)]

use std::ffi::c_void;

pub(crate) type cudaStream_t = *mut c_void;

extern "C" {
    // memory.cu
    pub(crate) fn apxinf_stream_create(stream: *mut cudaStream_t) -> i32;
    pub(crate) fn apxinf_stream_sync(stream: cudaStream_t) -> i32;
    pub(crate) fn apxinf_malloc(ptr: *mut *mut c_void, bytes: usize) -> i32;
    pub(crate) fn apxinf_free(ptr: *mut c_void) -> i32;
    pub(crate) fn apxinf_memcpy_h2d(dst: *mut c_void, src: *const c_void, bytes: usize, stream: cudaStream_t) -> i32;
    pub(crate) fn apxinf_memcpy_d2h(dst: *mut c_void, src: *const c_void, bytes: usize, stream: cudaStream_t) -> i32;

    // norm.cu
    pub(crate) fn apxinf_rms_norm_bf16(x: *const c_void, w: *const c_void, out: *mut c_void, rows: i32, cols: i32, eps: f32, stream: cudaStream_t) -> i32;
    pub(crate) fn apxinf_rms_norm_f16(x: *const c_void, w: *const c_void, out: *mut c_void, rows: i32, cols: i32, eps: f32, stream: cudaStream_t) -> i32;
    pub(crate) fn apxinf_rms_norm_f32(x: *const c_void, w: *const c_void, out: *mut c_void, rows: i32, cols: i32, eps: f32, stream: cudaStream_t) -> i32;

    // gemm.cu (cuBLASLt)
    #[link_name = "apxinf_cublaslt_gemm_bf16"]
    pub(crate) fn apxinf_gemm_bf16(x: *const c_void, w: *const c_void, out: *mut c_void, m: i32, n: i32, k: i32, stream: cudaStream_t) -> i32;
    #[cfg(feature = "fp8")]
    pub(crate) fn apxinf_cublaslt_gemm_fp8(
        x: *const c_void, w: *const c_void, x_scale: *const c_void, w_scale: *const c_void, out: *mut c_void,
        m: i32, n: i32, k: i32, stream: cudaStream_t,
    ) -> i32;

    // rope.cu
    pub(crate) fn apxinf_rope_bf16(x: *mut c_void, rows: i32, heads: i32, head_dim: i32, pos: i32, theta: f32, stream: cudaStream_t) -> i32;

    // attention.cu (custom kernels)
    pub(crate) fn apxinf_kv_write_bf16(
        k: *const c_void, v: *const c_void, k_cache: *mut c_void, v_cache: *mut c_void, rows: i32,
        kv_heads: i32, head_dim: i32, pos: i32, stream: cudaStream_t,
    ) -> i32;
    pub(crate) fn apxinf_attention_fwd(
        q: *const c_void, k_cache: *const c_void, v_cache: *const c_void, out: *mut c_void, q_rows: i32,
        kv_len: i32, heads: i32, kv_heads: i32, head_dim: i32, scale: f32, stream: cudaStream_t,
    ) -> i32;
    pub(crate) fn apxinf_attention_fwd_splitk(
        q: *const c_void, k_cache: *const c_void, v_cache: *const c_void, out: *mut c_void, q_rows: i32,
        kv_len: i32, heads: i32, kv_heads: i32, head_dim: i32, scale: f32, stream: cudaStream_t,
    ) -> i32;

    // flash_attn.cu (vendored FlashAttention-2, sm80..sm89)
    #[cfg(apxinf_fa2_sm80)]
    pub(crate) fn apxinf_flash_attn_fwd(
        q: *const c_void, k_cache: *const c_void, v_cache: *const c_void, out: *mut c_void, q_rows: i32,
        kv_len: i32, heads: i32, kv_heads: i32, head_dim: i32, scale: f32, stream: cudaStream_t,
    ) -> i32;

    // cutlass_fmha.cu (vendored CUTLASS, sm100+)
    #[cfg(apxinf_cutlass_fmha)]
    pub(crate) fn apxinf_cutlass_fmha_fwd(
        q: *const c_void, k_cache: *const c_void, v_cache: *const c_void, out: *mut c_void, q_rows: i32,
        kv_len: i32, heads: i32, kv_heads: i32, head_dim: i32, scale: f32, stream: cudaStream_t,
    ) -> i32;

    // quant.cu
    #[cfg(feature = "fp8")]
    pub(crate) fn apxinf_quantize_fp8_e4m3(x: *const c_void, out: *mut c_void, scale: *mut c_void, n: i32, stream: cudaStream_t) -> i32;

    // activation.cu
    pub(crate) fn apxinf_silu_mul_bf16(gate: *const c_void, up: *const c_void, out: *mut c_void, n: i32, stream: cudaStream_t) -> i32;
    pub(crate) fn apxinf_add_bf16(acc: *mut c_void, x: *const c_void, n: i32, stream: cudaStream_t) -> i32;

    // embedding.cu
    pub(crate) fn apxinf_embedding_bf16(table: *const c_void, ids: *const c_void, out: *mut c_void, rows: i32, cols: i32, stream: cudaStream_t) -> i32;

    // graph.cu
    pub(crate) fn apxinf_graph_begin(stream: cudaStream_t) -> i32;
    pub(crate) fn apxinf_graph_end(stream: cudaStream_t, graph: *mut *mut c_void) -> i32;
    pub(crate) fn apxinf_graph_instantiate(exec: *mut *mut c_void, graph: *mut c_void) -> i32;
    pub(crate) fn apxinf_graph_launch(exec: *mut c_void, stream: cudaStream_t) -> i32;
    pub(crate) fn apxinf_graph_destroy(exec: *mut c_void) -> i32;
}
