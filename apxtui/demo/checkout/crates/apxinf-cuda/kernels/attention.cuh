#pragma once
// Copyright 2026 apxinf contributors.
// Causal GQA attention over a [positions, kv_heads, HEAD_DIM] KV cache.
// One block per (query row, head); thread d owns output element d.
// Scores, softmax and the PV accumulator are f32; the output is rounded to bf16 once.

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_pipeline.h>

// Stage one K or V row into shared memory: cp.async on sm80+, plain loads before.
template <int HEAD_DIM>
__device__ __forceinline__ void stage_row(__nv_bfloat16* smem, const __nv_bfloat16* gmem) {
    const int t = threadIdx.x;
    if (t < HEAD_DIM / 2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        __pipeline_memcpy_async(reinterpret_cast<__nv_bfloat162*>(smem) + t,
                                reinterpret_cast<const __nv_bfloat162*>(gmem) + t, sizeof(__nv_bfloat162));
#else
        reinterpret_cast<__nv_bfloat162*>(smem)[t] = reinterpret_cast<const __nv_bfloat162*>(gmem)[t];
#endif
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    __pipeline_commit();
    __pipeline_wait_prior(0);
#endif
    __syncthreads();
}

template <int HEAD_DIM>
__device__ __forceinline__ float head_dot_reduce(float v, float* scratch) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (int stride = HEAD_DIM / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            scratch[threadIdx.x] += scratch[threadIdx.x + stride];
        }
        __syncthreads();
    }
    const float total = scratch[0];
    __syncthreads();
    return total;
}

// Online softmax over cache rows [begin, end); updates the running (m, l, acc).
template <int HEAD_DIM>
__device__ void attend_range(const __nv_bfloat16* __restrict__ q_row, const __nv_bfloat16* __restrict__ k_base,
                             const __nv_bfloat16* __restrict__ v_base, int kv_stride, int begin, int end, float scale,
                             float& m, float& l, float& acc) {
    __shared__ __nv_bfloat16 k_s[HEAD_DIM];
    __shared__ __nv_bfloat16 v_s[HEAD_DIM];
    __shared__ float scratch[HEAD_DIM];
    const int d = threadIdx.x;
    const float qd = __bfloat162float(q_row[d]) * scale;
    for (int j = begin; j < end; ++j) {
        stage_row<HEAD_DIM>(k_s, k_base + static_cast<size_t>(j) * kv_stride);
        stage_row<HEAD_DIM>(v_s, v_base + static_cast<size_t>(j) * kv_stride);
        const float s = head_dot_reduce<HEAD_DIM>(qd * __bfloat162float(k_s[d]), scratch);
        const float m_new = fmaxf(m, s);
        const float correction = __expf(m - m_new);
        const float p = __expf(s - m_new);
        l = l * correction + p;
        acc = acc * correction + p * __bfloat162float(v_s[d]);
        m = m_new;
    }
}

template <int HEAD_DIM>
__global__ void attention_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                                 const __nv_bfloat16* __restrict__ v_cache, __nv_bfloat16* __restrict__ out,
                                 int q_rows, int kv_len, int heads, int kv_heads, float scale) {
    const int row = blockIdx.x;
    const int head = blockIdx.y;
    const int kv_head = head / (heads / kv_heads);
    const size_t q_off = (static_cast<size_t>(row) * heads + head) * HEAD_DIM;
    float m = -INFINITY, l = 0.0f, acc = 0.0f;
    attend_range<HEAD_DIM>(q + q_off, k_cache + kv_head * HEAD_DIM, v_cache + kv_head * HEAD_DIM, kv_heads * HEAD_DIM,
                           0, kv_len - q_rows + row + 1, scale, m, l, acc);
    out[q_off + threadIdx.x] = __float2bfloat16(acc / l);
}

// Split-K: each launch handles one KV chunk and writes an unnormalised partial.
template <int HEAD_DIM>
__global__ void attention_split_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                                       const __nv_bfloat16* __restrict__ v_cache, int q_rows, int kv_len, int heads,
                                       int kv_heads, float scale, int split, int chunk, float* __restrict__ partial_o,
                                       float* __restrict__ partial_ml) {
    const int row = blockIdx.x;
    const int head = blockIdx.y;
    const int kv_head = head / (heads / kv_heads);
    const int begin = split * chunk;
    const int end = min(begin + chunk, kv_len - q_rows + row + 1);
    float m = -INFINITY, l = 0.0f, acc = 0.0f;
    attend_range<HEAD_DIM>(q + (static_cast<size_t>(row) * heads + head) * HEAD_DIM, k_cache + kv_head * HEAD_DIM,
                           v_cache + kv_head * HEAD_DIM, kv_heads * HEAD_DIM, begin, end, scale, m, l, acc);
    const size_t slot = (static_cast<size_t>(split) * q_rows + row) * heads + head;
    partial_o[slot * HEAD_DIM + threadIdx.x] = acc;
    if (threadIdx.x == 0) {
        partial_ml[2 * slot] = m;
        partial_ml[2 * slot + 1] = l;
    }
}

template <int HEAD_DIM>
__global__ void attention_combine_kernel(const float* __restrict__ partial_o, const float* __restrict__ partial_ml,
                                         __nv_bfloat16* __restrict__ out, int q_rows, int heads, int splits) {
    const size_t base = static_cast<size_t>(blockIdx.x) * heads + blockIdx.y;
    const size_t stride = static_cast<size_t>(q_rows) * heads;
    float m = -INFINITY;
    for (int s = 0; s < splits; ++s) {
        m = fmaxf(m, partial_ml[2 * (s * stride + base)]);
    }
    float l = 0.0f, acc = 0.0f;
    for (int s = 0; s < splits; ++s) {
        const size_t slot = s * stride + base;
        if (partial_ml[2 * slot + 1] > 0.0f) {
            const float w = __expf(partial_ml[2 * slot] - m);
            l += partial_ml[2 * slot + 1] * w;
            acc += partial_o[slot * HEAD_DIM + threadIdx.x] * w;
        }
    }
    out[base * HEAD_DIM + threadIdx.x] = __float2bfloat16(acc / l);
}

// Copy `rows` new K/V rows into the caches at positions pos, pos + 1, ...
template <typename T>
__global__ void kv_write_kernel(const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ k_cache,
                                T* __restrict__ v_cache, int width, int pos) {
    const size_t src = static_cast<size_t>(blockIdx.x) * width;
    const size_t dst = (static_cast<size_t>(pos) + blockIdx.x) * width;
    for (int i = threadIdx.x; i < width; i += blockDim.x) {
        k_cache[dst + i] = k[src + i];
        v_cache[dst + i] = v[src + i];
    }
}
