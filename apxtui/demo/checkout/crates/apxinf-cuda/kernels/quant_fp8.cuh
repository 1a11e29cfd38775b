#pragma once
// Copyright 2026 apxinf contributors.
// Dynamic per-tensor FP8 E4M3 quantization: amax reduction (f32), scale, cast.

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

constexpr float kFp8E4M3Max = 448.0f;

// Non-negative floats order like their bit patterns, so an int atomicMax works.
__device__ __forceinline__ void atomic_max_nonneg(float* addr, float v) {
    atomicMax(reinterpret_cast<int*>(addr), __float_as_int(v));
}

template <typename T>
__global__ void amax_kernel(const T* __restrict__ x, int n, float* __restrict__ amax) {
    float local = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        local = fmaxf(local, fabsf(static_cast<float>(x[i])));
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        local = fmaxf(local, __shfl_xor_sync(0xffffffffu, local, offset));
    }
    if (threadIdx.x % 32 == 0) {
        atomic_max_nonneg(amax, local);
    }
}

// In place: amax -> dequantization scale (amax / 448).
__global__ void finalize_scale_kernel(float* __restrict__ scale) {
    *scale = fmaxf(*scale, 1e-12f) / kFp8E4M3Max;
}

template <typename T>
__global__ void quantize_fp8_kernel(const T* __restrict__ x, __nv_fp8_e4m3* __restrict__ out, const float* __restrict__ scale, int n) {
    const float inv_scale = 1.0f / *scale;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float v = static_cast<float>(x[i]) * inv_scale;
        out[i].__x = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
    }
}
