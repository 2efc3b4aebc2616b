// NumPy-style indexing and JAX's indexed updates (x.at[idx].set(v) and friends), with jnp's
// put, put_along_axis and place. core/lax/lax.h includes this header; the definitions are in
// core/lax/index_update.cc.
//
// An index is a list of Index entries, as in a NumPy subscript: integers (negative ones count
// from the end), Range{start, stop, step} (Python slicing, any step but 0), integer arrays
// (advanced indexing: they broadcast together, and their dims go first when they are not
// adjacent, as in NumPy), newaxis and ellipsis. JAX's x.at[1, ::2, idx].add(v) is
//
//   at(x, {1, Range{std::nullopt, std::nullopt, 2}, idx}).add(v)
//
// Out-of-range indices (integers too) follow JAX's defaults: get() clamps them (negative ones
// wrap once first), get(GatherMode::kFill) gives the fill value (NaN for floats), and the
// updates drop them. Updates are
// converted to x's dtype and broadcast to the indexed shape. Where several updates hit one
// element, set() keeps the last one (as XLA's CPU scatter does), add / mul / min / max combine
// them all. All of it is composed of gather and the scatter primitives (scatter_add, scatter,
// scatter_mul / min / max) and elementwise ops, so grad, vmap and jit go through it. Errors name the op: "[at] ...", "[put] ...".
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "core/array.h"

namespace graft {

enum class GatherMode;

struct Range {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
struct NewAxis {};
struct Ellipsis {};
inline constexpr NewAxis newaxis{};
inline constexpr Ellipsis ellipsis{};

// One entry of a subscript.
class Index {
 public:
  Index(int v) : v_(static_cast<int64_t>(v)) {}  // NOLINT(runtime/explicit)
  Index(int64_t v) : v_(v) {}                     // NOLINT
  Index(Range s) : v_(s) {}                       // NOLINT
  Index(Array a) : v_(std::move(a)) {}            // NOLINT
  Index(NewAxis n) : v_(n) {}                     // NOLINT
  Index(Ellipsis e) : v_(e) {}                    // NOLINT
  const std::variant<int64_t, Range, Array, NewAxis, Ellipsis>& value() const { return v_; }

 private:
  std::variant<int64_t, Range, Array, NewAxis, Ellipsis> v_;
};

// What at(x, idx) returns: JAX's _IndexUpdateRef.
class IndexUpdateRef {
 public:
  IndexUpdateRef(Array x, std::vector<Index> idx) : x_(std::move(x)), idx_(std::move(idx)) {}
  Array get(GatherMode mode) const;
  Array get() const;  // clamped, as JAX's default .get()
  Array set(const Array& v) const;
  Array add(const Array& v) const;
  Array multiply(const Array& v) const;
  Array mul(const Array& v) const { return multiply(v); }
  Array divide(const Array& v) const;  // x * (1 / v) at the indices
  Array power(const Array& v) const;   // x ** v at the indices
  Array min(const Array& v) const;
  Array max(const Array& v) const;

 private:
  Array x_;
  std::vector<Index> idx_;
};

IndexUpdateRef at(const Array& x, std::vector<Index> idx);

// jnp.put(a, ind, v, mode, inplace=False): a with its flattened positions ind set to v (v
// flattened and cycled to ind's size; where indices repeat, the last value wins). Indices
// out of range are, as in JAX: mode none, clipped into [-size, size) and negative ones wrap
// (jnp.unravel_index's rule); kClip, clamped into [0, size); put_wrap, taken modulo size.
Array put(const Array& a, const Array& ind, const Array& v,
          std::optional<GatherMode> mode = std::nullopt);
Array put_wrap(const Array& a, const Array& ind, const Array& v);
// jnp.put_along_axis(arr, indices, values, axis, inplace=False): the update twin of
// take_along_axis (values broadcast to indices; no axis: the flattened arr).
Array put_along_axis(const Array& arr, const Array& indices, const Array& values,
                     std::optional<int64_t> axis);
// jnp.place(arr, mask, vals, inplace=False): the elements where mask (arr.size elements) is
// true get vals' elements in order, cycled.
Array place(const Array& arr, const Array& mask, const Array& vals);

}  // namespace graft
