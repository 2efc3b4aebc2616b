// Converting dense elements between real dtypes (fp8 included) with convert_element_type's semantics
// (core/dtype/convert.h): the convert kernel and the matmul kernels' operand conversions share it.
#pragma once

#include <cstdint>

#include "core/dtype/dtype.h"

namespace graft::cpu {

// out[i] = convert_value(in[i]) for i < n, over the thread pool. in and out must not overlap.
void convert_elements(const void* in, DType from, void* out, DType to, int64_t n);

}  // namespace graft::cpu
