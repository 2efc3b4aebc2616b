// pmap: parallel map over devices, like jax.pmap.
//
//   auto f = graft::pmap([](Array x) { return x / graft::psum(x, {"i"}); }, "i");
//   Array y = f(x);  // x: [n, ...], member k (x[k]) on virtual device k, all at once
//
// A shard_map (transforms/shard_map.h) over the one-axis mesh {axis_name: n} whose body
// drops the mapped dimension: the function is traced once with the axis bound and run as one
// program per member, each on its own device's stream (GRAFT_CPU_DEVICES=N virtual devices,
// core/device/device.h); the collectives inside (psum, all_gather, ppermute, ... in core/ops.h)
// exchange data between the members. in_axes: one AxisSpec for all arguments or one per
// argument, `none` passes an argument whole to every member; out_axes: one for all outputs or
// one per output leaf, `none` returns an output that is the same on every member (a psum's
// result) unstacked. grad, vmap and jit compose with it either way round; a pmap inside a
// pmap (or shard_map) is refused.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/primitives/shard_map.h"
#include "core/tree/tree.h"
#include "transforms/flat_fn.h"
#include "transforms/vmap.h"

namespace graft {

// An out_axes entry: an axis (negative counts from the end of the output) or none.
class OutAxis {
 public:
  OutAxis(int axis) : axis_(axis) {}               // NOLINT(runtime/explicit)
  OutAxis(NoneAxis) : axis_(detail::kNoneAxis) {}  // NOLINT(runtime/explicit)
  int value() const { return axis_; }

 private:
  int axis_;
};

struct PmapOptions {
  std::optional<int64_t> axis_size;  // required when no argument is mapped
};

template <typename F>
auto pmap(F f, std::string axis_name, std::vector<AxisSpec> in_axes = {0},
          std::vector<OutAxis> out_axes = {0}, PmapOptions options = {}) {
  return [f, axis_name, in_axes, out_axes, options](const auto&... args) {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Result = std::decay_t<decltype(f(args...))>;
    Args all(args...);
    auto [leaves, dims] = detail::mapped_leaves("pmap", in_axes, all);
    TreeDef arg_def = tree_structure(all), out_def;
    FlatFn fn = detail::flat_fn<Args, Result>(f, arg_def, &out_def);
    std::vector<int> outs;
    for (const OutAxis& o : out_axes) outs.push_back(o.value());
    return tree_unflatten<Result>(
        out_def, detail::pmap_flat("pmap", axis_name, fn, leaves, dims, outs, options.axis_size));
  };
}

}  // namespace graft
