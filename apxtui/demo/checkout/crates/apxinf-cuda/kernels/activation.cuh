#pragma once
// Copyright 2026 apxinf contributors.
// Element-wise kernels: storage T, math in f32.

#include <cuda_runtime.h>
#include <cuda_bf16.h>

template <typename T>
__global__ void silu_mul_kernel(const T* __restrict__ gate, const T* __restrict__ up, T* __restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float g = static_cast<float>(gate[i]);
        out[i] = static_cast<T>(g / (1.0f + __expf(-g)) * static_cast<float>(up[i]));
    }
}

template <typename T>
__global__ void add_kernel(T* __restrict__ acc, const T* __restrict__ x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        acc[i] = static_cast<T>(static_cast<float>(acc[i]) + static_cast<float>(x[i]));
    }
}

// Vectorised variants of add_kernel: the launcher picks one by the element count (if / else if / else).
template <typename T>
__global__ void add_packed4_kernel(T* __restrict__ acc, const T* __restrict__ x, int n4) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        for (int j = 0; j < 4; ++j) {
            acc[4 * i + j] = static_cast<T>(static_cast<float>(acc[4 * i + j]) + static_cast<float>(x[4 * i + j]));
        }
    }
}

template <typename T>
__global__ void add_packed2_kernel(T* __restrict__ acc, const T* __restrict__ x, int n2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        acc[2 * i] = static_cast<T>(static_cast<float>(acc[2 * i]) + static_cast<float>(x[2 * i]));
        acc[2 * i + 1] = static_cast<T>(static_cast<float>(acc[2 * i + 1]) + static_cast<float>(x[2 * i + 1]));
    }
}
