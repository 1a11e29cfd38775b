#pragma once
// Vendored excerpt of CUTLASS FMHA: kernel-level operator (body elided in this excerpt).

#include "cutlass/cutlass.h"

namespace cutlass {
namespace fmha {
namespace kernel {

template <typename Element, typename ElementAccumulator, typename ArchTag, int kQueriesPerBlock, int kKeysPerBlock>
struct FmhaKernel {
    struct Params {
        const Element* q;
        const Element* k;
        const Element* v;
        Element* o;
        int num_queries;
        int num_keys;
        int num_heads;
        int num_kv_heads;
        int head_dim;
        ElementAccumulator scale;
    };

    static constexpr int kThreads = 128;
    static constexpr int kSharedStorageSize = (kQueriesPerBlock + 2 * kKeysPerBlock) * 128 * 2;

    __device__ void operator()(Params const& params, char* smem);
};

}  // namespace kernel
}  // namespace fmha
}  // namespace cutlass
