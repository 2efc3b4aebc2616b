// jax.numpy index tricks and selections: partition / argpartition, ravel_multi_index
// / unravel_index, ix_, mask_indices, choose, compress / extract, insert, trim_zeros and
// fill_diagonal, and take with jnp.take's modes. Compositions of core/ops.h ops (top_k,
// take_along_axis, nonzero, at().set) written after JAX 0.10.2's lax_numpy.py and sorting.py;
// misuse throws graft::Error starting with the op. Included at the end of core/ops.h.
//
// Value-dependent checks and shapes are handled as JAX does: mode "raise" (choose,
// ravel_multi_index) reads the indices, and compress / extract / mask_indices without size=
// read the condition, so under jit those are graft::Error naming the op (pass a mode or
// size=). trim_zeros is eager only, as in JAX: it reads filt (an error when traced).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

// The kth smallest element along axis in place kth, the smaller ones before it (ascending)
// and the larger after it (descending), as JAX's top_k-based version orders them.
// Differentiable (through top_k).
Array partition(const Array& a, int64_t kth, int64_t axis = -1);
// The indices (i32) that would partition a.
Array argpartition(const Array& a, int64_t kth, int64_t axis = -1);

// The flat index of each tuple of coordinates into an array of shape dims. mode: "raise"
// (out-of-range coordinates are an error; reads them), "wrap", "clip" or "ignore"; order "C"
// or "F". dtype: an integer type (default: the indices' type, i32 for weak ones).
Array ravel_multi_index(const std::vector<Array>& multi_index, const Shape& dims,
                        const std::string& mode = "raise", const std::string& order = "C",
                        std::optional<DType> dtype = std::nullopt);
// The coordinates of each flat index into shape (C order); out-of-range indices are clamped
// to the first / last element and negative ones >= -1 count from the end, as in JAX.
std::vector<Array> unravel_index(const Array& indices, const Shape& shape);

// An open mesh: the i-th of the 1-D args reshaped to 1 x .. x n_i x .. x 1.
std::vector<Array> ix_(const std::vector<Array>& args);

// nonzero(mask_func(ones((n, n)), k)): e.g. the indices of the upper triangle with
// mask_func = triu; mask_func(Array, int64_t) -> Array. Without size the count is read (the
// mask is a constant). (A template: <functional> in core/ops.h would let std::bind shadow
// graft's bind by argument-dependent lookup.)
namespace detail {
std::pair<Array, Array> mask_indices_of(int64_t n, const Array& mask, std::optional<int64_t> size);
}  // namespace detail
template <typename MaskFunc>
std::pair<Array, Array> mask_indices(int64_t n, MaskFunc&& mask_func, int64_t k = 0,
                                     std::optional<int64_t> size = std::nullopt) {
  return detail::mask_indices_of(n, n < 0 ? Array() : mask_func(ones({n, n}), k), size);
}

// out[i] = choices[a[i]][i], a and the choices broadcast together, choices' dtypes promoted.
// mode: "raise" (an index outside [0, n) is an error; reads a), "wrap" or "clip".
Array choose(const Array& a, const std::vector<Array>& choices, const std::string& mode = "raise");

// The slices of a along axis (flattened a if none) where the 1-D condition is true. With
// size: exactly size slices, padded with fill_value (traceable); without, the count is read.
Array compress(const Array& condition, const Array& a, std::optional<int64_t> axis = std::nullopt,
               std::optional<int64_t> size = std::nullopt, double fill_value = 0);
// compress(ravel(condition), ravel(arr)).
Array extract(const Array& condition, const Array& arr, std::optional<int64_t> size = std::nullopt,
              double fill_value = 0);

// values inserted before the given indices along axis (flattened arr if none). obj: a scalar
// or 1-D integer array (negative indices count from the end; out of range ones clamp), or a
// Range (Python slice). values take arr's dtype and broadcast as in numpy.insert.
Array insert(const Array& arr, const Array& obj, const Array& values,
             std::optional<int64_t> axis = std::nullopt);
Array insert(const Array& arr, const Range& obj, const Array& values,
             std::optional<int64_t> axis = std::nullopt);

// filt without its leading ('f' in trim) and / or trailing ('b') all-zero slices along each
// of the axes (all if none). Eager, as in JAX: reads filt; graft::Error when traced.
Array trim_zeros(const Array& filt, const std::string& trim = "fb",
                 std::optional<Axes> axis = std::nullopt);

// a with its main diagonal (a[i, i, ...]) set to val: a scalar, or val's elements cycled.
// Rank >= 2, all dims equal beyond 2-D. wrap=true is not implemented (as in JAX).
Array fill_diagonal(const Array& a, const Array& val, bool wrap = false);

// jnp.take's modes: kFill (out-of-range -> fill_value, by default NaN for inexact, the
// dtype's min for signed ints, max for unsigned, true for bool; negative indices wrap once),
// kClip (clamped) and kWrap (indices mod the axis size). JAX 0.10.2's jnp.take has no other
// ("raise" is not implemented there; promise_in_bounds is only x.at[i].get's).
enum class TakeMode { kFill, kClip, kWrap };
// axis nullopt: x is raveled first (jnp.take's default).
Array take(const Array& x, const Array& indices, std::optional<int64_t> axis, TakeMode mode,
           std::optional<double> fill_value = std::nullopt);

}  // namespace graft
