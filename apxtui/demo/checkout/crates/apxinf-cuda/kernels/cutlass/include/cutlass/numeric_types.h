#pragma once
// Vendored excerpt of CUTLASS: storage-only numeric types.

#include <cstdint>

namespace cutlass {

struct bfloat16_t {
    uint16_t storage;
};

struct half_t {
    uint16_t storage;
};

struct float_e4m3_t {
    uint8_t storage;
};

}  // namespace cutlass
