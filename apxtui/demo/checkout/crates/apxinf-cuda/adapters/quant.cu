// Copyright 2026 apxinf contributors.
// C ABI for dynamic FP8 quantization: memset + three launches (amax, scale, cast).

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "../kernels/quant_fp8.cuh"

extern "C" int apxinf_quantize_fp8_e4m3(const void* x, void* out, void* scale, int n, cudaStream_t stream) {
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads < 1024 ? (n + threads - 1) / threads : 1024;
    float* scale_f = static_cast<float*>(scale);
    cudaMemsetAsync(scale_f, 0, sizeof(float), stream);
    amax_kernel<__nv_bfloat16><<<blocks, threads, 0, stream>>>(static_cast<const __nv_bfloat16*>(x), n, scale_f);
    finalize_scale_kernel<<<1, 1, 0, stream>>>(scale_f);
    quantize_fp8_kernel<__nv_bfloat16><<<blocks, threads, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x), static_cast<__nv_fp8_e4m3*>(out), scale_f, n);
    return static_cast<int>(cudaGetLastError());
}
