// lax.map: f applied to every slice of xs along its leading axis, the results stacked.
//
//   Array norms = graft::map([](const Array& row) { return sqrt(sum(row * row)); }, matrix);
//
// As in JAX it is a scan with no carry (so f is traced once and grad, vmap and jit apply);
// with batch_size, f is vmapped over chunks of batch_size slices inside the scan and the
// remainder (n mod batch_size slices) goes through one more vmapped call. xs and f's result
// are pytrees (core/tree/tree.h).
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/tree/tree.h"
#include "transforms/control_flow.h"
#include "transforms/vmap.h"

namespace graft {

template <typename F, typename Xs>
auto map(F f, const Xs& xs, std::optional<int64_t> batch_size = std::nullopt) {
  using Y = std::decay_t<decltype(f(xs))>;
  auto each = [f](const std::tuple<>&, const Xs& x) { return std::pair{std::tuple<>{}, Y(f(x))}; };
  if (!batch_size) return scan(each, std::tuple<>{}, xs).second;
  if (*batch_size <= 0) fail("map", "batch_size must be positive, got ", *batch_size);
  std::vector<Array> leaves = tree_leaves(xs);
  if (leaves.empty() || leaves[0].ndim() == 0) {
    fail("map", "xs needs arrays with a leading axis to map over");
  }
  const int64_t n = leaves[0].shape()[0];
  const int64_t chunks = n / *batch_size, rest = n % *batch_size, whole = chunks * *batch_size;
  auto vf = vmap(f);
  std::optional<Y> mapped, tail;
  if (chunks > 0) {
    // (chunks, batch_size, ...) slices; the scan runs the vmapped f on each chunk.
    Xs split = tree_map(
        [&](const Array& a) {
          Shape s = a.shape();
          s[0] = *batch_size;
          s.insert(s.begin(), chunks);
          return reshape(slice_axis(a, 0, 0, whole), s);
        },
        xs);
    auto per_chunk = [vf](const std::tuple<>&, const Xs& x) {
      return std::pair{std::tuple<>{}, Y(vf(x))};
    };
    mapped = tree_map(
        [](const Array& y) {
          Shape s(y.shape().begin() + 1, y.shape().end());
          s[0] *= y.shape()[0];
          return reshape(y, s);
        },
        scan(per_chunk, std::tuple<>{}, split).second);
  }
  if (rest > 0) {
    tail = vf(tree_map([&](const Array& a) { return slice_axis(a, 0, whole, n); }, xs));
  }
  if (!mapped) return *tail;
  if (!tail) return *mapped;
  return tree_map(
      [](const Array& a, const Array& b) {
        return concatenate({a, b}, 0);
      },
      *mapped, *tail);
}

}  // namespace graft
