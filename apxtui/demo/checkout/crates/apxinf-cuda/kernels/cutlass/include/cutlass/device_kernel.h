#pragma once
// Vendored excerpt of CUTLASS: the generic __global__ entry every device-level operator launches.

#include "cutlass/cutlass.h"

namespace cutlass {

template <typename Operator>
__global__ void device_kernel(typename Operator::Params const params) {
    extern __shared__ char smem[];
    Operator op;
    op(params, smem);
}

}  // namespace cutlass
