#pragma once
// Vendored excerpt of FlashAttention-2: forward parameters and entry point.

#include <cuda_runtime.h>

struct Flash_fwd_params {
    void* __restrict__ q_ptr;
    void* __restrict__ k_ptr;
    void* __restrict__ v_ptr;
    void* __restrict__ o_ptr;
    int q_row_stride;
    int k_row_stride;
    int v_row_stride;
    int o_row_stride;
    int b;
    int seqlen_q;
    int seqlen_k;
    int h;
    int h_k;
    int h_h_k_ratio;
    int d;
    float scale_softmax;
    float scale_softmax_log2;
    bool is_bf16;
    bool is_causal;
};

void run_mha_fwd(Flash_fwd_params& params, cudaStream_t stream);
