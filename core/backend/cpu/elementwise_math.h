// XLA-compatible conversions (core/convert.h), as the convert kernel uses them.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/convert.h"
#include "core/half.h"

namespace graft::cpu {

using graft::convert_value;

}  // namespace graft::cpu
