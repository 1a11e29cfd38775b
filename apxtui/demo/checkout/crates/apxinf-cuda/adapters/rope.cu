// Copyright 2026 apxinf contributors.
// C ABI and launch policy for RoPE. `pos` is a by-value kernel argument: a CUDA
// Graph captured with it replays that position.

#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "../kernels/rope.cuh"

extern "C" int apxinf_rope_bf16(void* x, int rows, int heads, int head_dim, int pos, float theta, cudaStream_t stream) {
    dim3 grid(rows, heads);
    rope_kernel<__nv_bfloat16><<<grid, head_dim / 2, 0, stream>>>(static_cast<__nv_bfloat16*>(x), heads, head_dim, pos,
                                                                  theta);
    return static_cast<int>(cudaGetLastError());
}
