#pragma once
// Vendored excerpt of CUTLASS FMHA: device-level operator (initialize / run / operator()).

#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/fmha/kernel/fmha_kernel.h"

namespace cutlass {
namespace fmha {
namespace device {

template <typename Element, typename ElementAccumulator, typename ArchTag, int kQueriesPerBlock = 128,
          int kKeysPerBlock = 128>
class Fmha {
public:
    using Kernel = kernel::FmhaKernel<Element, ElementAccumulator, ArchTag, kQueriesPerBlock, kKeysPerBlock>;
    using Arguments = typename Kernel::Params;

    Status initialize(Arguments const& args) {
        if (args.head_dim > 128 || args.num_heads % args.num_kv_heads != 0) {
            return Status::kErrorInvalidProblem;
        }
        params_ = args;
        return Status::kSuccess;
    }

    Status run(cudaStream_t stream) {
        dim3 grid((params_.num_queries + kQueriesPerBlock - 1) / kQueriesPerBlock, params_.num_heads, 1);
        device_kernel<Kernel><<<grid, Kernel::kThreads, Kernel::kSharedStorageSize, stream>>>(params_);
        return cudaGetLastError() == cudaSuccess ? Status::kSuccess : Status::kErrorInternal;
    }

    Status operator()(cudaStream_t stream) {
        return run(stream);
    }

private:
    Arguments params_;
};

}  // namespace device
}  // namespace fmha
}  // namespace cutlass
