// jax.numpy shape helpers: splitting, unstacking, broadcasting several arrays,
// rollaxis, append / delete / resize, repeat by an array of counts, select, array_equal /
// array_equiv. Written after JAX 0.10.2's lax_numpy.py over core/ops.h ops. Included at the end of
// core/ops.h.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

// Into `sections` parts along axis; unlike split the parts may differ: the first
// len % sections parts get one element more.
std::vector<Array> array_split(const Array& x, int64_t sections, int64_t axis = 0);
// split along axis 1 (axis 0 for 1-D) / axis 0 (rank >= 2) / axis 2 (rank >= 3).
std::vector<Array> hsplit(const Array& x, int64_t sections);
std::vector<Array> vsplit(const Array& x, int64_t sections);
std::vector<Array> dsplit(const Array& x, int64_t sections);
// The slices along axis, that dim removed.
std::vector<Array> unstack(const Array& x, int64_t axis = 0);

// Every array broadcast to their common shape.
std::vector<Array> broadcast_arrays(const std::vector<Array>& xs);
Shape broadcast_shapes(const std::vector<Shape>& shapes);
// numpy.rollaxis: axis moved to sit before position `start`.
Array rollaxis(const Array& a, int64_t axis, int64_t start = 0);

// values appended to arr along axis (no axis: both flattened), dtypes promoted.
Array append(const Array& arr, const Array& values, std::optional<int64_t> axis = std::nullopt);
// jnp.delete (delete is a C++ keyword): arr without the listed indices along axis (no axis:
// of the flattened array); negative indices count from the end.
Array delete_(const Array& arr, const std::vector<int64_t>& indices,
            std::optional<int64_t> axis = std::nullopt);
// a's elements repeated (row-major) to fill new_shape.
Array resize(const Array& a, const Shape& new_shape);

// The choice of the first true condition for each element, else `default_value`.
Array select(const std::vector<Array>& condlist, const std::vector<Array>& choicelist,
             const Array& default_value = Array(0));

// A bool scalar: same shape and all elements equal (NaNs equal with equal_nan).
Array array_equal(const Array& a1, const Array& a2, bool equal_nan = false);
// A bool scalar: the two broadcast and all elements are equal.
Array array_equiv(const Array& a1, const Array& a2);

// jnp.repeat with one repeat count per element along axis (a scalar or [1] array broadcasts).
// total_repeat_length is the static output length: extra positions repeat the last element,
// excess repeats are cut. Without it the repeats must be concrete (not under jit / vmap).
Array repeat(const Array& x, const Array& repeats, std::optional<int64_t> axis,
             std::optional<int64_t> total_repeat_length = std::nullopt);

}  // namespace graft
