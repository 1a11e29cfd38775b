// Copyright 2026 apxinf contributors.
// C ABI and launch policy for the token embedding gather.

#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "../kernels/embedding.cuh"

extern "C" int apxinf_embedding_bf16(const void* table, const void* ids, void* out, int rows, int cols,
                                     cudaStream_t stream) {
    embedding_kernel<__nv_bfloat16><<<rows, 128, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(table), static_cast<const uint32_t*>(ids), static_cast<__nv_bfloat16*>(out), cols);
    return static_cast<int>(cudaGetLastError());
}
