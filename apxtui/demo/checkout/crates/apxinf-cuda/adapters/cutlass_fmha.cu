// Copyright 2026 apxinf contributors.
// C ABI adapter for the vendored CUTLASS fused multi-head attention (sm100+ builds only).

#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cutlass/numeric_types.h"
#include "cutlass/arch/arch.h"
#include "cutlass/fmha/device/fmha.h"

using Fmha = cutlass::fmha::device::Fmha<cutlass::bfloat16_t, float, cutlass::arch::Sm100, 128, 128>;

extern "C" int apxinf_cutlass_fmha_fwd(const void* q, const void* k_cache, const void* v_cache, void* out, int q_rows,
                                       int kv_len, int heads, int kv_heads, int head_dim, float scale,
                                       cudaStream_t stream) {
    Fmha::Arguments args{
        static_cast<const cutlass::bfloat16_t*>(q),
        static_cast<const cutlass::bfloat16_t*>(k_cache),
        static_cast<const cutlass::bfloat16_t*>(v_cache),
        static_cast<cutlass::bfloat16_t*>(out),
        q_rows,
        kv_len,
        heads,
        kv_heads,
        head_dim,
        scale,
    };
    Fmha op;
    cutlass::Status status = op.initialize(args);
    if (status != cutlass::Status::kSuccess) {
        return -1;
    }
    status = op.run(stream);
    return status == cutlass::Status::kSuccess ? 0 : -2;
}
