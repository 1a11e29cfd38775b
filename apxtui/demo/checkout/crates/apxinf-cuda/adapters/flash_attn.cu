// Copyright 2026 apxinf contributors.
// C ABI adapter for the vendored FlashAttention-2 forward (sm80..sm89 builds only).

#include <cstring>
#include <cuda_runtime.h>

#include "../third_party/flash-attention/flash.h"

extern "C" int apxinf_flash_attn_fwd(const void* q, const void* k_cache, const void* v_cache, void* out, int q_rows,
                                     int kv_len, int heads, int kv_heads, int head_dim, float scale,
                                     cudaStream_t stream) {
    Flash_fwd_params params;
    std::memset(&params, 0, sizeof(params));
    params.q_ptr = const_cast<void*>(q);
    params.k_ptr = const_cast<void*>(k_cache);
    params.v_ptr = const_cast<void*>(v_cache);
    params.o_ptr = out;
    params.b = 1;
    params.seqlen_q = q_rows;
    params.seqlen_k = kv_len;
    params.h = heads;
    params.h_k = kv_heads;
    params.h_h_k_ratio = heads / kv_heads;
    params.d = head_dim;
    params.q_row_stride = heads * head_dim;
    params.k_row_stride = kv_heads * head_dim;
    params.v_row_stride = kv_heads * head_dim;
    params.o_row_stride = heads * head_dim;
    params.scale_softmax = scale;
    params.scale_softmax_log2 = scale * 1.4426950408889634f;
    params.is_bf16 = true;
    params.is_causal = true;
    run_mha_fwd(params, stream);
    return static_cast<int>(cudaGetLastError());
}
