// Where the train step's arrays live when jit partitions it (FSDP, HSDP, tensor parallel):
// the mesh dp_replicate x dp_shard x tp and, per leaf of the params and optimizer state, its
// NamedSharding. The step itself stays the one-device step; jit's SPMD partitioner
// (core/interpreters/spmd.h) derives the collectives from these layouts alone.
//
// Per leaf (stacked layer weights are [n_layers, in, out]; see nn/llama.h):
//   tensor parallel (tp > 1), Megatron style:
//     column-parallel wq, wk, wv, w1, w3: output features split over tp, so q / k / v and the
//       SwiGLU hidden come out split by heads / hidden units with no communication;
//     row-parallel wo, w2: input features split over tp, so their matmuls give partial sums
//       that one psum over tp completes (the only collective per sub-block forward);
//     the output head [dim, vocab]: column-parallel (vocabulary split over tp) when tp divides
//       the vocabulary, as torchtitan does; the loss then all_gathers each logits chunk over
//       tp (the cross-entropy is not vocabulary-parallel here), which still leaves less on a
//       device than a replicated head (llama-tiny, tp 2: 2.01 against 2.11 MB per device);
//     the embedding table, norms: replicated over tp (an embedding lookup of a
//       vocabulary-split table is not partitioned by the gather rule: it would be
//       all_gathered for every use, so splitting it saves memory at rest only, and FSDP
//       already splits it over dp_shard);
//   FSDP (dp_shard > 1): the last dimension not split over tp that dp_shard divides (stacked
//     weights keep their scanned leading dimension whole), so a weight split both ways holds
//     1 / (dp_shard * tp) of it per device;
//   expert parallelism (expert_parallel_degree = dp_shard, MoE): the stacked expert weights
//     [n_layers, E, ...] (and their moments) split on E over dp_shard instead, chosen by shape
//     (`experts`: a leaf of another kind with such a shape would be split there too, a layout
//     as correct as any), so the MoE's dispatch moves tokens with all_to_all (nn/moe.h);
//   everything else replicated. Optimizer moments take their parameter's layout; counters are
//   replicated.
// Batches [k, B/k, T] split their rows over dp_replicate x dp_shard, replicated over tp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/device/device.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "core/tree/tree.h"
#include "examples/train/train_config.h"
#include "optim/state.h"
#include "transforms/jit.h"

namespace graft::llama_train {

// Over the CPU's virtual devices, or over the first GPUs (platform "cuda": training.device).
inline Mesh parallel_mesh(int64_t replicate, int64_t shard, int64_t tp,
                          const std::string& platform = "cpu") {
  std::vector<int64_t> shape = {replicate, shard, tp};
  std::vector<std::string> names = {"dp_replicate", "dp_shard", "tp"};
  if (platform == "cpu") return Mesh(std::move(shape), std::move(names));
  return Mesh(std::move(shape), std::move(names), devices(platform));
}
// The FSDP / HSDP mesh (no tensor parallelism).
inline Mesh fsdp_mesh(int64_t replicate, int64_t shard) {
  return parallel_mesh(replicate, shard, 1);
}

// The mesh a run's [parallelism] degrees ask for, when jit partitions its step (FSDP, HSDP,
// tensor parallel), with a line on `out` saying how; nullopt for one device or, on the CPU,
// for data parallelism alone (a shard_map over {data}, train_step.h). On GPUs (platform
// "cuda") the mesh is over the first GPUs, and data parallelism alone is jit-partitioned too
// (a mesh dp x 1 x 1: batches split, params replicated). InvalidArgumentError naming the keys
// when their product exceeds the devices (the GPUs on "cuda").
absl::StatusOr<std::optional<Mesh>> mesh_for(const train::ParallelismConfig& par,
                                             int64_t micro_batch, std::ostream& out,
                                             const std::string& platform = "cpu");

// The layout of a leaf of `shape` whose dimension `tp_dim` is split over tp (-1: none).
inline NamedSharding leaf_sharding(const Shape& shape, const Mesh& mesh, int tp_dim = -1) {
  const int64_t tp = mesh.axis_size("tp"), n = mesh.axis_size("dp_shard");
  const int rank = static_cast<int>(shape.size());
  std::vector<DimSplit> dims(shape.size(), none);
  const bool split_tp = tp > 1 && tp_dim >= 0 && tp_dim < rank && shape[tp_dim] % tp == 0;
  if (split_tp) dims[tp_dim] = "tp";
  if (n > 1) {
    for (int d = rank - 1; d >= (rank >= 3 ? 1 : 0) && rank >= 2; --d) {
      if (!(split_tp && d == tp_dim) && shape[d] % n == 0) {
        dims[d] = "dp_shard";
        break;
      }
    }
  }
  return NamedSharding(mesh, PartitionSpec(dims));
}

// FSDP placement of any pytree (no tensor-parallel splits).
inline NamedSharding fsdp_sharding(const Shape& shape, const Mesh& mesh) {
  return leaf_sharding(shape, mesh, -1);
}
template <class Tree>
Tree place_fsdp(const Tree& tree, const Mesh& mesh) {
  return tree_map([&](const Array& a) { return device_put(a, fsdp_sharding(a.shape(), mesh)); },
                  tree);
}

// Per leaf of a Llama parameter tree (its dotted paths, tree_leaf_paths), the dimension that
// tensor parallelism splits (-1: none); see the table above.
std::vector<int> tp_dims(const std::vector<std::string>& paths, const std::vector<Array>& leaves);

// A leaf's layout: an expert leaf's (its shape among `experts`), else leaf_sharding's.
inline NamedSharding param_sharding(const Shape& shape, const Mesh& mesh, int tp_dim,
                                    const std::vector<Shape>& experts) {
  if (std::find(experts.begin(), experts.end(), shape) != experts.end()) {
    return NamedSharding(mesh, P(none, "dp_shard"));
  }
  return leaf_sharding(shape, mesh, tp_dim);
}

// `fn(leaf, sharding)` applied to every leaf of the params / of the optimizer state (whose
// moments follow `params`' leaves), in the layouts above.
template <class Params, class Fn>
Params map_params(const Params& params, const Mesh& mesh, Fn fn,
                  const std::vector<Shape>& experts = {}) {
  auto [leaves, def] = tree_flatten(params);
  const std::vector<int> dims = tp_dims(tree_leaf_paths(def), leaves);
  for (size_t i = 0; i < leaves.size(); ++i) {
    leaves[i] = fn(leaves[i], param_sharding(leaves[i].shape(), mesh, dims[i], experts));
  }
  return tree_unflatten<Params>(def, leaves);
}

template <class Params, class Fn>
optim::State map_state(const optim::State& state, const Params& params, const Mesh& mesh, Fn fn,
                       const std::vector<Shape>& experts = {}) {
  auto [leaves, def] = tree_flatten(params);
  const std::vector<int> dims = tp_dims(tree_leaf_paths(def), leaves);
  optim::State out = state;
  for (optim::Slots& part : out.parts) {
    for (auto& [slot, arrays] : part) {
      const bool per_param = arrays.size() == leaves.size();
      for (size_t i = 0; i < arrays.size(); ++i) {
        const bool follows = per_param && arrays[i].shape() == leaves[i].shape();
        arrays[i] = fn(arrays[i], param_sharding(arrays[i].shape(), mesh, follows ? dims[i] : -1,
                                                 experts));
      }
    }
  }
  return out;
}

inline Array put(const Array& a, const NamedSharding& s) { return device_put(a, s); }
inline Array pin(const Array& a, const NamedSharding& s) { return with_sharding_constraint(a, s); }

template <class Params>
Params place_params(const Params& params, const Mesh& mesh,
                    const std::vector<Shape>& experts = {}) {
  return map_params(params, mesh, put, experts);
}
template <class Params>
optim::State place_state(const optim::State& state, const Params& params, const Mesh& mesh,
                         const std::vector<Shape>& experts = {}) {
  return map_state(state, params, mesh, put, experts);
}

inline Array place_batch(const Array& xs, const Mesh& mesh) {
  return device_put(xs, NamedSharding(mesh, P(none, AxisNames{"dp_replicate", "dp_shard"})));
}

// Bytes one device holds of a placed pytree (its block of every leaf; the whole leaf when it
// has no mesh sharding).
template <class Tree>
double bytes_per_device(const Tree& tree) {
  double total = 0;
  for (const Array& a : tree_leaves(tree)) {
    const NamedSharding s = a.sharding();
    const Shape block = s.is_single_device() ? a.shape() : s.shard_shape(a.shape());
    total += static_cast<double>(numel(block)) * static_cast<double>(dtype_size(a.dtype()));
  }
  return total;
}

// What one device holds while the step runs, from jit's memory_analysis of it: a partitioned
// step's per_device_peak_bytes (its blocks of the arguments plus the per-device program's
// planned peak), else the one-device plan's peak plus the arguments (which that plan leaves
// out). Both plans count an update written over its argument's buffer (donated params and
// state) as a value of their own, so both figures count those bytes twice alike: an upper
// bound, comparable between meshes.
template <class... Args>
double step_bytes_per_device(const MemoryAnalysis& m, const Args&... args) {
  if (m.per_device_peak_bytes > 0) return static_cast<double>(m.per_device_peak_bytes);
  // Data parallelism alone: the step's own values (replicated, whole on every device) plus
  // the largest per-device shard_map body (its rows' activations).
  double total = static_cast<double>(m.peak_bytes + m.mapped_body_peak_bytes);
  ((total += bytes_per_device(args)), ...);
  return total;
}

// Per leaf path ("layers.wq"), its sharding's spec ("P(None, 'dp_shard', 'tp')"; "" for a
// leaf on one device).
template <class Tree>
std::map<std::string, std::string> layouts(const Tree& tree) {
  auto [leaves, def] = tree_flatten(tree);
  const std::vector<std::string> paths = tree_leaf_paths(def);
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const NamedSharding s = leaves[i].sharding();
    out[paths[i]] = s.is_single_device() ? "" : s.spec().str();
  }
  return out;
}

}  // namespace graft::llama_train
