// The jitted pieces of a run, for any Model (see model.h):
//   train step: (params, opt_state, inputs [k, B/k, T], targets [k, B/k, T]) ->
//               (params', opt_state', metrics{loss, grad_norm, param_norm (of params'),
//                model aux...})
//     value_and_grad over k micro-batches (gradients averaged: accumulation), then the
//     optimizer (clipping included) and apply_updates. params and opt_state are donated, so
//     the update writes in place. With data_parallel = d > 1 the loss is a shard_map over the
//     mesh {data: d}: each device computes the loss of its B/(k d) rows, the loss and the
//     metrics are averaged with pmean, and the replicated parameters get the global gradient
//     (the transpose of their broadcast to the devices sums over them). With a `mesh`
//     (FSDP / HSDP / tensor parallel: the arguments placed by place_params, place_state and
//     place_batch, placement.h) jit partitions the step from the arguments' shardings, and
//     the updated parameters and state are pinned to the same layouts (so they come out
//     placed as they went in and the next call hits jit's cache). `experts` (expert
//     parallelism): the shapes of the leaves split on E (placement.h).
//   eval step: (params, inputs [B, T], targets [B, T]) -> loss.
#pragma once

#include <optional>
#include <tuple>
#include <utility>

#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "core/tree/tree.h"
#include "examples/llama/model.h"
#include "examples/llama/placement.h"
#include "optim/optim.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/shard_map.h"

namespace graft::llama_train {

template <class Model>
auto make_train_step(const Model& model, const optim::GradientTransformation& opt,
                     int64_t data_parallel = 1, std::optional<Mesh> mesh = std::nullopt,
                     std::vector<Shape> experts = {}) {
  using Params = typename Model::Params;
  auto step = [model, opt, data_parallel, mesh, experts](const Params& params,
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
    if (mesh) {
      new_state = map_state(new_state, new_params, *mesh, pin, experts);
      new_params = map_params(new_params, *mesh, pin, experts);
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
