#pragma once
// Vendored excerpt of CUTLASS: architecture tags.

namespace cutlass {
namespace arch {

struct Sm80 {
    static int const kMinComputeCapability = 80;
};

struct Sm90 {
    static int const kMinComputeCapability = 90;
};

struct Sm100 {
    static int const kMinComputeCapability = 100;
};

}  // namespace arch
}  // namespace cutlass
