#pragma once
// Vendored excerpt of CUTLASS: core status codes and qualifiers.

#include <cuda_runtime.h>

#define CUTLASS_HOST_DEVICE __forceinline__ __host__ __device__
#define CUTLASS_DEVICE __forceinline__ __device__

namespace cutlass {

enum class Status {
    kSuccess,
    kErrorMisalignedOperand,
    kErrorInvalidProblem,
    kErrorNotSupported,
    kErrorInternal,
};

}  // namespace cutlass
