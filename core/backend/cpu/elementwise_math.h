// XLA-compatible conversions (core/dtype/convert.h), as the convert kernel uses them.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dtype/convert.h"
#include "core/dtype/half.h"

namespace graft::cpu {

using graft::convert_value;

}  // namespace graft::cpu
