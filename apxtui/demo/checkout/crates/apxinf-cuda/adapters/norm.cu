// Copyright 2026 apxinf contributors.
// C ABI and launch policy for RMSNorm: one 256-thread block per row.

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../kernels/rms_norm.cuh"

extern "C" int apxinf_rms_norm_bf16(const void* x, const void* w, void* out, int rows, int cols, float eps,
                                    cudaStream_t stream) {
    rms_norm_kernel<__nv_bfloat16, float><<<rows, 256, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(w), static_cast<__nv_bfloat16*>(out),
        cols, eps);
    return static_cast<int>(cudaGetLastError());
}

extern "C" int apxinf_rms_norm_f16(const void* x, const void* w, void* out, int rows, int cols, float eps,
                                   cudaStream_t stream) {
    rms_norm_kernel<__half, float><<<rows, 256, 0, stream>>>(
        static_cast<const __half*>(x), static_cast<const __half*>(w), static_cast<__half*>(out), cols, eps);
    return static_cast<int>(cudaGetLastError());
}

extern "C" int apxinf_rms_norm_f32(const void* x, const void* w, void* out, int rows, int cols, float eps,
                                   cudaStream_t stream) {
    rms_norm_kernel<float, float><<<rows, 256, 0, stream>>>(
        static_cast<const float*>(x), static_cast<const float*>(w), static_cast<float*>(out), cols, eps);
    return static_cast<int>(cudaGetLastError());
}
