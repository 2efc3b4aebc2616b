// Convolution and windowed reductions (jax.lax.conv_general_dilated, lax.reduce_window and
// its sum / max / min forms) and the jnp functions on top (jnp.convolve, jnp.correlate).
// Names, defaults and semantics as JAX's; misuse throws graft::Error starting with the op.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/array.h"
#include "core/dtype/dtype.h"
#include "core/shape.h"

namespace graft {

// jax.lax.ConvDimensionNumbers: which dims of the input (lhs), kernel (rhs) and output are
// (batch, feature, spatial...), (out feature, in feature, spatial...), (batch, feature,
// spatial...), the spatial dims of all three in one common order.
struct ConvDimensionNumbers {
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;
  bool operator==(const ConvDimensionNumbers&) const = default;
};

// What conv_general_dilated's dimension_numbers may be, as in JAX: nothing (NC..., OI...,
// NC... in order), a ConvDimensionNumbers, or three strings like ("NHWC", "HWIO", "NHWC")
// (N / C, O / I and the same spatial letters in each).
struct ConvDims {
  ConvDims() = default;
  ConvDims(ConvDimensionNumbers n) : numbers(std::move(n)) {}  // NOLINT: implicit as in JAX
  ConvDims(std::string lhs, std::string rhs, std::string out)
      : strings{{std::move(lhs), std::move(rhs), std::move(out)}} {}
  std::optional<ConvDimensionNumbers> numbers;
  std::optional<std::vector<std::string>> strings;
};

// jax.lax.conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers): the resolved form
// for operands of these ranks.
ConvDimensionNumbers conv_dimension_numbers(size_t lhs_rank, size_t rhs_rank, const ConvDims& dn);

// Padding of a windowed op: "SAME", "SAME_LOWER", "VALID", or explicit (lo, hi) pairs, one
// per spatial (window) dim; negative values crop.
struct WindowPadding {
  WindowPadding(const char* name) : name(name) {}                  // NOLINT
  WindowPadding(std::string name) : name(std::move(name)) {}       // NOLINT
  WindowPadding(std::vector<std::pair<int64_t, int64_t>> p)        // NOLINT
      : pairs(std::move(p)) {}
  WindowPadding(std::initializer_list<std::pair<int64_t, int64_t>> p) : pairs(p) {}  // NOLINT
  std::string name;  // empty when explicit
  std::vector<std::pair<int64_t, int64_t>> pairs;
};

// lax.padtype_to_pads: explicit pairs for a padding on dims `in` with (dilated) windows
// `window` and `strides`; errors name `op`.
std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(std::string_view op, const Shape& in,
                                                         const Shape& window,
                                                         const Shape& strides,
                                                         const WindowPadding& padding);

// lax.conv_general_dilated. Strides and dilations have one entry per spatial dim (empty:
// all 1). feature_group_count splits the input features into groups (depthwise: as many
// groups as features); batch_group_count splits the batch (what the kernel gradient of a
// grouped convolution uses). f32 / f64 / bf16 / f16 operands (promoted to one dtype); bf16 and
// f16 accumulate in f32; preferred_element_type sets the output dtype.
Array conv_general_dilated(const Array& lhs, const Array& rhs, const Shape& window_strides,
                           const WindowPadding& padding, const Shape& lhs_dilation = {},
                           const Shape& rhs_dilation = {}, const ConvDims& dimension_numbers = {},
                           int64_t feature_group_count = 1, int64_t batch_group_count = 1,
                           std::optional<DType> preferred_element_type = std::nullopt);
// lax.conv: NC... input, OI... kernel, no dilation.
Array conv(const Array& lhs, const Array& rhs, const Shape& window_strides,
           const WindowPadding& padding);

// A reduce_window computation: a plain function pointer (add, maximum, minimum, multiply or
// one's own), since <functional> here would let std::bind shadow graft::bind.
using WindowComputation = Array (*)(const Array&, const Array&);

// lax.reduce_window over every dim of x (window_dimensions has one entry per dim of x): the
// monoid `computation` (with identity `init_value`) over each window. Strides, dilations
// empty: all 1. The generic form applies `computation` pairwise, so it is differentiable
// where the computation is; the named forms below are what pooling uses. With maximum or
// minimum, the gradient goes whole to the first extreme element of each window (in
// row-major window order), as JAX's select_and_scatter_add, not split between ties.
Array reduce_window(const Array& x, const Array& init_value,
                    WindowComputation computation,
                    const Shape& window_dimensions, const Shape& window_strides = {},
                    const WindowPadding& padding = "VALID", const Shape& base_dilation = {},
                    const Shape& window_dilation = {});
// lax.reduce_window with lax.add / lax.max / lax.min (padding counts as 0, -inf, +inf).
Array reduce_window_sum(const Array& x, const Shape& window_dimensions,
                        const Shape& window_strides = {}, const WindowPadding& padding = "VALID",
                        const Shape& base_dilation = {}, const Shape& window_dilation = {});
Array reduce_window_max(const Array& x, const Shape& window_dimensions,
                        const Shape& window_strides = {}, const WindowPadding& padding = "VALID",
                        const Shape& base_dilation = {}, const Shape& window_dilation = {});
Array reduce_window_min(const Array& x, const Shape& window_dimensions,
                        const Shape& window_strides = {}, const WindowPadding& padding = "VALID",
                        const Shape& base_dilation = {}, const Shape& window_dilation = {});

// jnp.convolve / jnp.correlate of two 1-D arrays, mode "full", "same" or "valid" (convolve's
// default is "full", correlate's "valid"), as JAX computes them (a conv_general_dilated).
Array convolve(const Array& a, const Array& v, const std::string& mode = "full");
Array correlate(const Array& a, const Array& v, const std::string& mode = "valid");

}  // namespace graft
