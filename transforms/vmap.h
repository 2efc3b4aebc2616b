// vmap: vectorizing map over pytrees, like jax.vmap.
//
//   auto f_batched = graft::vmap(f);                       // every argument mapped on axis 0
//   auto g = graft::vmap(f, {0, graft::none, -1});          // per-argument in_axes
//   auto h = graft::vmap(f, {AxisSpec::leaves({0, none})}); // per-leaf axes of a pytree argument
//
// Outputs that do not depend on the batch are broadcast. With an axis_name the mapped axis is
// named for collectives, as under pmap: psum(x, {"i"}) inside sums over the batch,
// axis_index("i") is each member's position, all_gather stacks the batch, and so on
// (core/primitives/collective.h), so one function can be checked under vmap and pmap alike.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/interpreters/batching.h"
#include "core/sharding/device_put.h"
#include "core/tree/tree.h"
#include "transforms/flat_fn.h"

namespace graft {

// in_axes for one argument: an axis (negative counts from the end) for every leaf, none, or one
// entry per leaf of the argument (its flattened order: a pytree prefix written out).
class AxisSpec {
 public:
  AxisSpec(int axis) : all_(axis) {}          // NOLINT(runtime/explicit)
  AxisSpec(NoneAxis) : all_(std::nullopt) {}  // NOLINT(runtime/explicit)
  static AxisSpec leaves(std::vector<std::optional<int>> per_leaf) {
    AxisSpec s(none);
    s.per_leaf_ = std::move(per_leaf);
    return s;
  }
  // Normalized axes (-1 = not mapped) for `leaves` of one argument.
  std::vector<int> resolve(const char* op, size_t arg, const std::vector<Array>& leaves) const;

 private:
  std::optional<int> all_;
  std::optional<std::vector<std::optional<int>>> per_leaf_;
};

struct VmapOptions {
  std::optional<int64_t> axis_size;  // required when no argument is mapped
  std::string axis_name;             // names the mapped axis for collectives
};

namespace detail {

// The leaves of `all` (a tuple of arguments) with each one's mapped axis (-1: none), from
// in_axes (one AxisSpec for all arguments, or one per argument); errors name `op`.
template <typename Args>
std::pair<std::vector<Array>, std::vector<int>> mapped_leaves(const char* op,
                                                              const std::vector<AxisSpec>& in_axes,
                                                              const Args& all) {
  constexpr size_t n = std::tuple_size_v<Args>;
  if (in_axes.size() != 1 && in_axes.size() != n) {
    fail(op, "in_axes has ", in_axes.size(), " entries for ", n, " arguments");
  }
  std::vector<Array> leaves;
  std::vector<int> dims;
  size_t k = 0;
  std::apply(
      [&](const auto&... a) {
        (
            [&] {
              auto l = tree_leaves(a);
              auto d = in_axes[in_axes.size() == 1 ? 0 : k].resolve(op, k, l);
              leaves.insert(leaves.end(), l.begin(), l.end());
              dims.insert(dims.end(), d.begin(), d.end());
              ++k;
            }(),
            ...);
      },
      all);
  return {std::move(leaves), std::move(dims)};
}

// Moves each output's batch axis to out_axes (one for all, or one per output leaf).
std::vector<Array> place_outputs(const VmapResult& r, const std::vector<int>& out_axes);
}  // namespace detail

// in_axes: one AxisSpec for all arguments ({0} by default), or one per argument.
// out_axes: one axis for all outputs, or one per output leaf.
template <typename F>
auto vmap(F f, std::vector<AxisSpec> in_axes = {0}, std::vector<int> out_axes = {0},
          VmapOptions options = {}) {
  return [f, in_axes, out_axes, options](const auto&... args) {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Result = std::decay_t<decltype(f(args...))>;
    Args all(args...);
    auto [leaves, dims] = detail::mapped_leaves("vmap", in_axes, all);
    TreeDef arg_def = tree_structure(all), out_def;
    FlatFn fn = detail::flat_fn<Args, Result>(f, arg_def, &out_def);
    detail::VmapResult r =
        detail::vmap_flat(fn, leaves, dims, options.axis_size, options.axis_name);
    return tree_unflatten<Result>(out_def, detail::place_outputs(r, out_axes));
  };
}

}  // namespace graft
