// Copyright 2026 apxinf contributors.
// C ABI for streams, allocation and host/device copies.

#include <cstddef>
#include <cuda_runtime.h>

extern "C" int apxinf_stream_create(cudaStream_t* stream) {
    return static_cast<int>(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
}

extern "C" int apxinf_stream_sync(cudaStream_t stream) {
    return static_cast<int>(cudaStreamSynchronize(stream));
}

extern "C" int apxinf_malloc(void** ptr, size_t bytes) {
    return static_cast<int>(cudaMalloc(ptr, bytes));
}

extern "C" int apxinf_free(void* ptr) {
    return static_cast<int>(cudaFree(ptr));
}

extern "C" int apxinf_memcpy_h2d(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
    return static_cast<int>(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
}

// Device -> host into pageable memory: waits for the stream before returning.
extern "C" int apxinf_memcpy_d2h(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
    const cudaError_t status = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
    if (status != cudaSuccess) {
        return static_cast<int>(status);
    }
    return static_cast<int>(cudaStreamSynchronize(stream));
}
