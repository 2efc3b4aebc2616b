// jnp.pad's modes beyond constant: edge, wrap, reflect / symmetric (reflect_type
// even or odd), linear_ramp, maximum / minimum / mean / median (with stat_length) and empty.
// Written after JAX 0.10.2's lax_numpy._pad_* over core/ops.h ops (slices, flips,
// concatenations, reductions), so grad / vmap / jit work through them. Included at the end of
// core/ops.h; the constant mode is pad(x, widths, value) in core/ops.h.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

enum class PadMode {
  kConstant, kEdge, kWrap, kReflect, kSymmetric, kLinearRamp,
  kMaximum, kMinimum, kMean, kMedian, kEmpty,
};

struct PadOptions {
  PadOptions(PadMode m = PadMode::kConstant) : mode(m) {}  // NOLINT(runtime/explicit)
  PadMode mode;
  // kConstant: (before, after) values per dim (or one pair for all), as x's dtype.
  std::vector<std::pair<double, double>> constant_values = {{0.0, 0.0}};
  bool reflect_odd = false;     // kReflect / kSymmetric: reflect_type="odd"
  // kMaximum .. kMedian: (before, after) lengths per dim (or one pair for all); none: whole axis.
  std::optional<std::vector<std::pair<int64_t, int64_t>>> stat_length;
  // kLinearRamp: (before, after) end values per dim (or one pair for all); default 0.
  std::vector<std::pair<double, double>> end_values = {{0.0, 0.0}};
};

// jnp.pad(x, pad_width, mode, ...): widths are (before, after) per dim, or one pair for all
// dims; negative widths are errors (as in JAX). A scalar x comes back unchanged.
Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& widths,
          const PadOptions& options);

}  // namespace graft
