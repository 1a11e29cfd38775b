#pragma once
// Copyright 2026 apxinf contributors.
// Rotary position embedding (rotate-half layout), in place, f32 math.

#include <cuda_runtime.h>
#include <cuda_bf16.h>

// grid (rows, heads), block head_dim / 2. `pos` is the absolute position of row 0.
template <typename T>
__global__ void rope_kernel(T* __restrict__ x, int heads, int head_dim, int pos, float theta) {
    const int half = head_dim / 2;
    const int i = threadIdx.x;
    if (i >= half) {
        return;
    }
    T* v = x + (static_cast<size_t>(blockIdx.x) * heads + blockIdx.y) * head_dim;
    const float freq = powf(theta, -2.0f * static_cast<float>(i) / static_cast<float>(head_dim));
    const float angle = static_cast<float>(pos + static_cast<int>(blockIdx.x)) * freq;
    float s, c;
    sincosf(angle, &s, &c);
    const float a = static_cast<float>(v[i]);
    const float b = static_cast<float>(v[i + half]);
    v[i] = static_cast<T>(a * c - b * s);
    v[i + half] = static_cast<T>(a * s + b * c);
}
