// Parallel-prefix scans: jax.lax.associative_scan over pytrees, the cumulative
// reductions lax.cumprod / cummax / cummin / cumlogsumexp (cumsum is the reduce-family
// primitive, core/ops.h), and jnp's cumprod, cumulative_sum, cumulative_prod, nancumsum,
// nancumprod. core/lax/lax.h includes this header; the definitions are in core/lax/scan.cc.
//
// Everything here is a composite of public ops (strided slices, lax.pad with interior
// padding, concatenate), so grad, vmap and jit go through it. The cumulative reductions are
// associative_scan over their combine function, which is how JAX differentiates them (its
// _cumulative_jvp_rule), so gradients are JAX's (cummax / cummin split a tie's gradient
// evenly between the tied elements, as lax.max does). Forward values may differ from JAX's
// reduce_window lowering by float rounding only.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/array.h"
#include "core/tree/tree.h"

namespace graft {

namespace detail {
// A combine function over flat leaves (an interface rather than std::function: <functional>
// in core/ops.h would let an unqualified bind(...) find std::bind).
struct ScanCombine {
  virtual ~ScanCombine() = default;
  virtual std::vector<Array> operator()(const std::vector<Array>& a,
                                        const std::vector<Array>& b) const = 0;
};
// associative_scan over flat leaves (all with the same size along `axis`); `fn` combines two
// lists of leaves elementwise.
std::vector<Array> associative_scan_flat(const ScanCombine& fn, const std::vector<Array>& elems,
                                         bool reverse, int64_t axis);
}  // namespace detail

// jax.lax.associative_scan: the inclusive scan of `elems` (a pytree of arrays that all have
// the same size along `axis`) with the associative binary `fn(a, b)`, which takes and
// returns pytrees of elems' structure and combines them elementwise (it is called on slices
// of elems, so it must broadcast like an elementwise op). JAX's odd/even (Blelloch-style)
// recursion: O(n) combines, depth O(log n). reverse scans from the end. Errors:
// "[associative_scan] ...".
//
//   Array prefix_max = associative_scan([](const Array& a, const Array& b) {
//     return maximum(a, b); }, x);
template <typename Fn, typename T>
T associative_scan(Fn&& fn, const T& elems, bool reverse = false, int64_t axis = 0) {
  struct Combine : detail::ScanCombine {
    Fn& fn;
    TreeDef def;
    Combine(Fn& f, TreeDef d) : fn(f), def(std::move(d)) {}
    std::vector<Array> operator()(const std::vector<Array>& a,
                                  const std::vector<Array>& b) const override {
      auto out = tree_flatten(T(fn(tree_unflatten<T>(def, a), tree_unflatten<T>(def, b))));
      check_same_structure("associative_scan", def, out.second);
      return out.first;
    }
  };
  auto flat = tree_flatten(elems);
  const Combine combine(fn, flat.second);
  return tree_unflatten<T>(flat.second,
                           detail::associative_scan_flat(combine, flat.first, reverse, axis));
}

// Cumulative reductions along `axis` (like cumsum: the flattened array when no axis), from
// the end when `reverse`. jnp's dtype rules: cumprod promotes bool to i32; cummax / cummin
// take numeric dtypes (bool is an error, as lax's); cumlogsumexp takes floating ones.
Array cumprod(const Array& x, std::optional<int64_t> axis = std::nullopt, bool reverse = false);
Array cummax(const Array& x, std::optional<int64_t> axis = std::nullopt, bool reverse = false);
Array cummin(const Array& x, std::optional<int64_t> axis = std::nullopt, bool reverse = false);
Array cumlogsumexp(const Array& x, std::optional<int64_t> axis = std::nullopt,
                   bool reverse = false);

// jnp.nancumsum / nancumprod: cumsum / cumprod with NaNs taken as 0 / 1.
Array nancumsum(const Array& x, std::optional<int64_t> axis = std::nullopt);
Array nancumprod(const Array& x, std::optional<int64_t> axis = std::nullopt);

// The array-API forms jnp.cumulative_sum / cumulative_prod: `axis` may be omitted only for a
// 1-D x (a scalar is an error); bool and narrow integers accumulate in the default int / uint
// (u8 -> u32); include_initial prepends the identity (0 / 1) along the axis.
Array cumulative_sum(const Array& x, std::optional<int64_t> axis = std::nullopt,
                     bool include_initial = false);
Array cumulative_prod(const Array& x, std::optional<int64_t> axis = std::nullopt,
                      bool include_initial = false);

}  // namespace graft
