#pragma once
// Copyright 2026 apxinf contributors.
// RMSNorm kernel: one block per row, AccT accumulation, warp-shuffle reduction.
// Launch policy lives in adapters/norm.cu.

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float warp_reduce_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    return v;
}

template <typename T, typename AccT>
__global__ void rms_norm_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ out, int cols, float eps) {
    const T* x_row = x + static_cast<size_t>(blockIdx.x) * cols;
    T* out_row = out + static_cast<size_t>(blockIdx.x) * cols;

    AccT sum = 0;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        const AccT v = static_cast<AccT>(x_row[i]);
        sum += v * v;
    }
    sum = warp_reduce_sum(sum);

    __shared__ AccT warp_sums[32];
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0) {
        warp_sums[warp] = sum;
    }
    __syncthreads();
    if (warp == 0) {
        AccT v = lane < (blockDim.x + 31) / 32 ? warp_sums[lane] : AccT(0);
        v = warp_reduce_sum(v);
        if (lane == 0) {
            warp_sums[0] = v;
        }
    }
    __syncthreads();

    const AccT inv_rms = rsqrtf(warp_sums[0] / cols + eps);
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        out_row[i] = static_cast<T>(static_cast<AccT>(x_row[i]) * inv_rms * static_cast<AccT>(w[i]));
    }
}
