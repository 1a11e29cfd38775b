// Copyright 2026 apxinf contributors.
// C ABI and launch policy for element-wise operators.

#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "../kernels/activation.cuh"

namespace {
constexpr int kThreads = 256;

inline int blocks_for(int n) {
    return (n + kThreads - 1) / kThreads;
}
}  // namespace

extern "C" int apxinf_silu_mul_bf16(const void* gate, const void* up, void* out, int n, cudaStream_t stream) {
    silu_mul_kernel<__nv_bfloat16><<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(gate), static_cast<const __nv_bfloat16*>(up), static_cast<__nv_bfloat16*>(out), n);
    return static_cast<int>(cudaGetLastError());
}

// One of three launches, chosen by the element count: mutually exclusive, never summed.
extern "C" int apxinf_add_bf16(void* acc, const void* x, int n, cudaStream_t stream) {
    auto* a = static_cast<__nv_bfloat16*>(acc);
    const auto* b = static_cast<const __nv_bfloat16*>(x);
    if (n % 4 == 0) {
        add_packed4_kernel<__nv_bfloat16><<<blocks_for(n / 4), kThreads, 0, stream>>>(a, b, n / 4);
    } else if (n % 2 == 0) {
        add_packed2_kernel<__nv_bfloat16><<<blocks_for(n / 2), kThreads, 0, stream>>>(a, b, n / 2);
    } else {
        add_kernel<__nv_bfloat16><<<blocks_for(n), kThreads, 0, stream>>>(a, b, n);
    }
    return static_cast<int>(cudaGetLastError());
}
