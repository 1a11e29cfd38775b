// Copyright 2026 apxinf contributors.
// C ABI and launch policy for the project's own attention kernels: template
// selection on head_dim, and a 4-way split-K variant for long KV ranges.

#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "../kernels/attention.cuh"

namespace {
constexpr int kSplits = 4;
constexpr int kMaxRows = 16;
constexpr int kMaxHeads = 32;
constexpr int kMaxHeadDim = 128;

// Stable-address split-K workspace (graph-capture safe: no allocation per call).
__device__ float g_partial_o[kSplits * kMaxRows * kMaxHeads * kMaxHeadDim];
__device__ float g_partial_ml[kSplits * kMaxRows * kMaxHeads * 2];

template <int HEAD_DIM>
int launch_attention(const void* q, const void* k_cache, const void* v_cache, void* out, int q_rows, int kv_len,
                     int heads, int kv_heads, float scale, cudaStream_t stream) {
    dim3 grid(q_rows, heads);
    attention_kernel<HEAD_DIM><<<grid, HEAD_DIM, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(q), static_cast<const __nv_bfloat16*>(k_cache),
        static_cast<const __nv_bfloat16*>(v_cache), static_cast<__nv_bfloat16*>(out), q_rows, kv_len, heads, kv_heads,
        scale);
    return static_cast<int>(cudaGetLastError());
}

template <int HEAD_DIM>
int launch_attention_splitk(const void* q, const void* k_cache, const void* v_cache, void* out, int q_rows, int kv_len,
                            int heads, int kv_heads, float scale, cudaStream_t stream) {
    if (q_rows > kMaxRows || heads > kMaxHeads) {
        return static_cast<int>(cudaErrorInvalidValue);
    }
    float* partial_o = nullptr;
    float* partial_ml = nullptr;
    cudaGetSymbolAddress(reinterpret_cast<void**>(&partial_o), g_partial_o);
    cudaGetSymbolAddress(reinterpret_cast<void**>(&partial_ml), g_partial_ml);
    const int chunk = (kv_len + kSplits - 1) / kSplits;
    dim3 grid(q_rows, heads);
    for (int i = 0; i < 4; ++i) {
        attention_split_kernel<HEAD_DIM><<<grid, HEAD_DIM, 0, stream>>>(
            static_cast<const __nv_bfloat16*>(q), static_cast<const __nv_bfloat16*>(k_cache),
            static_cast<const __nv_bfloat16*>(v_cache), q_rows, kv_len, heads, kv_heads, scale, i, chunk, partial_o,
            partial_ml);
    }
    attention_combine_kernel<HEAD_DIM><<<grid, HEAD_DIM, 0, stream>>>(partial_o, partial_ml,
                                                                      static_cast<__nv_bfloat16*>(out), q_rows, heads,
                                                                      kSplits);
    return static_cast<int>(cudaGetLastError());
}
}  // namespace

extern "C" int apxinf_attention_fwd(const void* q, const void* k_cache, const void* v_cache, void* out, int q_rows,
                                    int kv_len, int heads, int kv_heads, int head_dim, float scale,
                                    cudaStream_t stream) {
    switch (head_dim) {
        case 16:
            return launch_attention<16>(q, k_cache, v_cache, out, q_rows, kv_len, heads, kv_heads, scale, stream);
        case 64:
            return launch_attention<64>(q, k_cache, v_cache, out, q_rows, kv_len, heads, kv_heads, scale, stream);
        case 128:
            return launch_attention<128>(q, k_cache, v_cache, out, q_rows, kv_len, heads, kv_heads, scale, stream);
        default:
            return static_cast<int>(cudaErrorInvalidValue);
    }
}

extern "C" int apxinf_attention_fwd_splitk(const void* q, const void* k_cache, const void* v_cache, void* out,
                                           int q_rows, int kv_len, int heads, int kv_heads, int head_dim, float scale,
                                           cudaStream_t stream) {
    switch (head_dim) {
        case 16:
            return launch_attention_splitk<16>(q, k_cache, v_cache, out, q_rows, kv_len, heads, kv_heads, scale, stream);
        case 64:
            return launch_attention_splitk<64>(q, k_cache, v_cache, out, q_rows, kv_len, heads, kv_heads, scale, stream);
        case 128:
            return launch_attention_splitk<128>(q, k_cache, v_cache, out, q_rows, kv_len, heads, kv_heads, scale, stream);
        default:
            return static_cast<int>(cudaErrorInvalidValue);
    }
}

extern "C" int apxinf_kv_write_bf16(const void* k, const void* v, void* k_cache, void* v_cache, int rows, int kv_heads,
                                    int head_dim, int pos, cudaStream_t stream) {
    kv_write_kernel<__nv_bfloat16><<<rows, 128, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(k), static_cast<const __nv_bfloat16*>(v), static_cast<__nv_bfloat16*>(k_cache),
        static_cast<__nv_bfloat16*>(v_cache), kv_heads * head_dim, pos);
    return static_cast<int>(cudaGetLastError());
}
