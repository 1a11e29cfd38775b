#pragma once
// Copyright 2026 apxinf contributors.
// Token embedding gather: one block per token.

#include <cstdint>
#include <cuda_runtime.h>

template <typename T>
__global__ void embedding_kernel(const T* __restrict__ table, const uint32_t* __restrict__ ids, T* __restrict__ out, int cols) {
    const T* src = table + static_cast<size_t>(ids[blockIdx.x]) * cols;
    T* dst = out + static_cast<size_t>(blockIdx.x) * cols;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        dst[i] = src[i];
    }
}
