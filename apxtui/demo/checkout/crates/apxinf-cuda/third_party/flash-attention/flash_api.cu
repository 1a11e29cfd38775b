// Vendored excerpt of FlashAttention-2 (flash_api.cpp + flash_fwd_launch_template.h).

#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "flash.h"

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kNWarps_>
struct Flash_fwd_kernel_traits {
    static constexpr int kHeadDim = kHeadDim_;
    static constexpr int kBlockM = kBlockM_;
    static constexpr int kBlockN = kBlockN_;
    static constexpr int kNThreads = kNWarps_ * 32;
    static constexpr int kSmemSize = (kBlockM + 2 * kBlockN) * kHeadDim * 2;
};

// Upstream: one CTA per (M block, head, batch); Q tile in smem, loop over K/V tiles,
// QK^T and PV on tensor cores with an f32 online softmax (flash::compute_attn).
template <typename Kernel_traits, bool Is_causal>
__global__ void flash_fwd_kernel(const Flash_fwd_params params) {
    const int m_block = blockIdx.x;
    const int bidh = blockIdx.y;
    const int bidb = blockIdx.z;
    if (m_block * Kernel_traits::kBlockM >= params.seqlen_q || bidh >= params.h || bidb >= params.b) {
        return;
    }
}

template <typename Kernel_traits, bool Is_causal>
void run_flash_fwd(Flash_fwd_params& params, cudaStream_t stream) {
    const int num_m_block = (params.seqlen_q + Kernel_traits::kBlockM - 1) / Kernel_traits::kBlockM;
    dim3 grid(num_m_block, params.h, params.b);
    constexpr int smem_size = Kernel_traits::kSmemSize;
    if (smem_size >= 48 * 1024) {
        cudaFuncSetAttribute(flash_fwd_kernel<Kernel_traits, Is_causal>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem_size);
    }
    flash_fwd_kernel<Kernel_traits, Is_causal><<<grid, Kernel_traits::kNThreads, smem_size, stream>>>(params);
}

void run_mha_fwd(Flash_fwd_params& params, cudaStream_t stream) {
    if (params.d <= 64) {
        run_flash_fwd<Flash_fwd_kernel_traits<64, 128, 128, 4>, true>(params, stream);
    } else {
        run_flash_fwd<Flash_fwd_kernel_traits<128, 128, 64, 4>, true>(params, stream);
    }
}
