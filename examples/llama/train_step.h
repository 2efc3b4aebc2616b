// The jitted pieces of a run, for any Model (see model.h):
//   train step: (params, opt_state, inputs [k, B/k, T], targets [k, B/k, T]) ->
//               (params', opt_state', metrics{loss, grad_norm, param_norm (of params'),
//                model aux...})
//     value_and_grad over k micro-batches (gradients averaged: accumulation), then the
//     optimizer (clipping included) and apply_updates. params and opt_state are donated, so
//     the update writes in place. With data_parallel = d > 1 the loss is a shard_map over the
//     mesh {data: d}: each device computes the loss of its B/(k d) rows, the loss and the
//     metrics are averaged with pmean, and the replicated parameters get the global gradient
//     (the transpose of their broadcast to the devices sums over them). With an `fsdp` mesh
//     (the arguments placed by place_fsdp / place_batch below) jit partitions the step from
//     the arguments' shardings and the updated parameters and state keep theirs. `experts`
//     (expert parallelism): the shapes of the leaves split on E (param_sharding below).
//   eval step: (params, inputs [B, T], targets [B, T]) -> loss.
#pragma once

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/ops.h"
#include "core/sharding.h"
#include "core/tree.h"
#include "examples/llama/model.h"
#include "optim/optim.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/shard_map.h"

namespace graft::llama_train {

// FSDP placement (data_parallel_shard_degree; HSDP with a replicate degree too): the mesh
// dp_replicate x dp_shard; a leaf of rank >= 2 is split over dp_shard on its last dimension
// that divides evenly (stacked layer weights keep their scanned leading dimension whole when
// another one divides), other leaves are replicated; batches [k, B/k, T] are split over both
// axes on their rows. The train step is then the one-device step: jit partitions it from
// these shardings (core/ir/spmd.h), gathering each weight where it is used.
inline Mesh fsdp_mesh(int64_t replicate, int64_t shard) {
  return Mesh({replicate, shard}, {"dp_replicate", "dp_shard"});
}

inline NamedSharding fsdp_sharding(const Shape& shape, const Mesh& mesh) {
  const int64_t n = mesh.axis_size("dp_shard");
  const int rank = static_cast<int>(shape.size());
  std::vector<DimSplit> dims(shape.size(), none);
  for (int d = rank - 1; d >= (rank >= 3 ? 1 : 0) && rank >= 2; --d) {
    if (shape[d] % n == 0) {
      dims[d] = "dp_shard";
      break;
    }
  }
  return NamedSharding(mesh, PartitionSpec(dims));
}

// Expert parallelism (parallelism.expert_parallel_degree = data_parallel_shard_degree): the
// stacked expert weights [n_layers, E, ...] (and their optimizer state, of the same shapes)
// are split on E over dp_shard instead; `experts` lists their shapes. A leaf of another kind
// that happened to have such a shape would be split on its second dimension too: a layout
// as correct as any, chosen by shape so the optimizer state follows its parameter.
inline NamedSharding param_sharding(const Shape& shape, const Mesh& mesh,
                                    const std::vector<Shape>& experts) {
  if (std::find(experts.begin(), experts.end(), shape) != experts.end()) {
    return NamedSharding(mesh, P(none, "dp_shard"));
  }
  return fsdp_sharding(shape, mesh);
}

template <class Tree>
Tree place_fsdp(const Tree& tree, const Mesh& mesh, const std::vector<Shape>& experts = {}) {
  return tree_map(
      [&](const Array& a) { return device_put(a, param_sharding(a.shape(), mesh, experts)); },
      tree);
}

// The same layouts pinned inside a traced step (with_sharding_constraint), so the updated
// parameters and state come out placed as they went in (and the next call hits the cache).
template <class Tree>
Tree constrain_fsdp(const Tree& tree, const Mesh& mesh, const std::vector<Shape>& experts = {}) {
  return tree_map(
      [&](const Array& a) {
        return with_sharding_constraint(a, param_sharding(a.shape(), mesh, experts));
      },
      tree);
}

inline Array place_batch(const Array& xs, const Mesh& mesh) {
  return device_put(xs, NamedSharding(mesh, P(none, AxisNames{"dp_replicate", "dp_shard"})));
}

template <class Model>
auto make_train_step(const Model& model, const optim::GradientTransformation& opt,
                     int64_t data_parallel = 1, std::optional<Mesh> fsdp = std::nullopt,
                     std::vector<Shape> experts = {}) {
  using Params = typename Model::Params;
  auto step = [model, opt, data_parallel, fsdp, experts](const Params& params,
                                                         const optim::State& state,
                                                         const Array& xs, const Array& ys) {
    auto local = [&model](const Params& p, const Array& x, const Array& y) {
      return model.loss(p, x, y);
    };
    auto loss_fn = [&](const Params& p, const Array& x, const Array& y) {
      if (data_parallel == 1) return local(p, x, y);
      auto averaged = [&local](const Params& q, const Array& xb, const Array& yb) {
        auto [l, aux] = local(q, xb, yb);
        for (auto& [name, v] : aux) v = pmean(v, {"data"});
        return std::pair{pmean(l, {"data"}), aux};
      };
      return shard_map(averaged, Mesh({data_parallel}, {"data"}), {P(), P("data"), P("data")},
                       {P()})(p, x, y);
    };
    const int64_t k = xs.shape()[0];
    Params grads;
    Array loss;
    Metrics metrics;
    for (int64_t i = 0; i < k; ++i) {
      Array x = squeeze(slice_axis(xs, 0, i, i + 1), {0});
      Array y = squeeze(slice_axis(ys, 0, i, i + 1), {0});
      auto [value_aux, g] = value_and_grad(loss_fn, has_aux)(params, x, y);
      auto& [l, aux] = value_aux;
      if (i == 0) {
        grads = g;
        loss = l;
        metrics = aux;
      } else {
        grads = tree_map([](const Array& a, const Array& b) { return a + b; }, grads, g);
        loss = loss + l;
        for (auto& [name, v] : metrics) v = v + aux.at(name);
      }
    }
    if (k > 1) {
      const double inv = 1.0 / static_cast<double>(k);
      grads = tree_map([inv](const Array& a) { return a * inv; }, grads);
      loss = loss * inv;
      for (auto& [name, v] : metrics) v = v * inv;
    }
    metrics["loss"] = loss;
    metrics["grad_norm"] = optim::global_norm(grads);
    auto [updates, new_state] = opt.update(grads, state, params);
    Params new_params = optim::apply_updates(params, updates);
    if (fsdp) {
      new_params = constrain_fsdp(new_params, *fsdp, experts);
      new_state = constrain_fsdp(new_state, *fsdp, experts);
    }
    // Finite loss and gradient can still give a non-finite update (eps = 0 dividing 0 by 0,
    // an overflow): the trainer checks this before it saves the new params.
    metrics["param_norm"] = optim::global_norm(new_params);
    return std::make_tuple(std::move(new_params), new_state, metrics);
  };
  return jit(step, {.donate_argnums = {0, 1}});
}

template <class Model>
auto make_eval_step(const Model& model) {
  using Params = typename Model::Params;
  return jit([model](const Params& params, const Array& x, const Array& y) {
    return model.cross_entropy(params, x, y);
  });
}

}  // namespace graft::llama_train
