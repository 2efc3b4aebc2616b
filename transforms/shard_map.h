// shard_map: per-device code over a mesh, like jax.shard_map.
//
//   graft::Mesh mesh({2, 2}, {"data", "model"});
//   auto f = graft::shard_map(
//       [](const Array& x, const Array& w) {      // x: [B/2, D] block, w: [D, H/2] block
//         return graft::matmul(x, w);             // [B/2, H/2]
//       },
//       mesh, {graft::P("data", graft::none), graft::P(graft::none, "model")},
//       {graft::P("data", "model")});
//   Array y = f(x, w);                            // [B, H], equals matmul(x, w)
//
// Each argument is cut into blocks by its PartitionSpec (core/sharding/device_put.h) and device
// (d, m) of the mesh runs the function on its blocks, all devices at once, each on its own
// stream; outputs are put back together by out_specs. Inside, the mesh's axis names are bound
// for the collectives (psum(x, {"model"}) sums over the devices that share a data
// coordinate). in_specs: one for all arguments or one per argument (each applies to every
// leaf of it); out_specs: one for all outputs or one per output leaf. An output must not vary
// over an axis its spec does not name ("[shard_map] output 0 varies over {model} ...": psum
// it, or name the axis). grad, vmap and jit compose with it; the rules are those of the
// shard_map primitive (core/primitives/shard_map.h). One inside another is refused.
//
// Over a mesh of GPUs (Mesh(..., devices("cuda"))), called on values (not inside jit): host
// operands go to the mesh's first GPU, the CUDA backend runs member k on GPU k, and each output
// comes back sharded over the GPUs by its out spec, one block per GPU
// (core/backend/device_shards.h).
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "core/primitives/shard_map.h"
#include "core/tree/tree.h"
#include "transforms/flat_fn.h"
#include "core/sharding/device_put.h"

namespace graft {

namespace detail {
// A shard_map over a mesh of GPUs, called on values: its operands on the host moved to the
// mesh's first GPU (where the CUDA backend's kernel runs it), and its outputs placed over the
// GPUs by their out specs (one for all, or one per output). Traced values pass unchanged.
std::vector<Array> operands_to_mesh(const Mesh& mesh, const std::vector<Array>& xs);
std::vector<Array> outputs_to_mesh(const Mesh& mesh, const std::vector<Array>& outs,
                                   const std::vector<PartitionSpec>& out_specs);
}  // namespace detail

template <typename F>
auto shard_map(F f, Mesh mesh, std::vector<PartitionSpec> in_specs,
               std::vector<PartitionSpec> out_specs) {
  return [f, mesh, in_specs, out_specs](const auto&... args) {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Result = std::decay_t<decltype(f(args...))>;
    constexpr size_t n = sizeof...(args);
    if (in_specs.size() != 1 && in_specs.size() != n) {
      fail("shard_map", "in_specs has ", in_specs.size(), " entries for ", n, " arguments");
    }
    mesh.devices();  // enough of them
    Args all(args...);
    std::vector<Array> leaves;
    std::vector<DimAxes> specs;
    size_t k = 0;
    std::apply(
        [&](const auto&... a) {
          (
              [&] {
                auto l = tree_leaves(a);
                DimAxes d =
                    detail::dim_axes("shard_map", mesh, in_specs[in_specs.size() == 1 ? 0 : k]);
                leaves.insert(leaves.end(), l.begin(), l.end());
                specs.insert(specs.end(), l.size(), d);
                ++k;
              }(),
              ...);
        },
        all);
    TreeDef arg_def = tree_structure(all), out_def;
    FlatFn fn = detail::flat_fn<Args, Result>(f, arg_def, &out_def);
    detail::OutSpecsFn outs = [&](const std::vector<Aval>& avals) {
      if (out_specs.size() != 1 && out_specs.size() != avals.size()) {
        fail("shard_map", "out_specs has ", out_specs.size(), " entries for ", avals.size(),
             " outputs");
      }
      std::vector<DimAxes> r;
      for (size_t o = 0; o < avals.size(); ++o) {
        r.push_back(detail::dim_axes("shard_map", mesh, out_specs[out_specs.size() == 1 ? 0 : o]));
      }
      return r;
    };
    const bool on_gpus = mesh.platform() != "cpu";
    if (on_gpus) leaves = detail::operands_to_mesh(mesh, leaves);
    std::vector<Array> results = detail::shard_map_flat(
        "shard_map", "shard_map", detail::mesh_axes(mesh), fn, leaves, specs, outs);
    if (on_gpus) results = detail::outputs_to_mesh(mesh, results, out_specs);
    return tree_unflatten<Result>(out_def, results);
  };
}

}  // namespace graft
