// optax.multi_transform: one transformation per label, each over its own leaves only (what
// optax.masked gives it), their state parts one after another in label order.
#include "core/error.h"
#include "optim/wrappers.h"

namespace graft::optim {
namespace {

// Labels of all leaves, from the paths and leaves, in tree order.
using LabelAll = std::function<std::vector<std::string>(const std::vector<std::string>& paths,
                                                        const std::vector<Array>& leaves)>;
using Transforms = std::map<std::string, GradientTransformation>;

// For each transformation (map order), the indices of its leaves; throws on an unknown label.
std::vector<std::vector<size_t>> groups(const Transforms& transforms,
                                        const std::vector<std::string>& labels,
                                        const std::vector<std::string>& paths) {
  std::map<std::string, size_t> at;
  for (const auto& [label, tx] : transforms) at.emplace(label, at.size());
  std::vector<std::vector<size_t>> out(transforms.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    auto it = at.find(labels[i]);
    if (it == at.end()) {
      fail("optim.multi_transform", "leaf '", i < paths.size() ? paths[i] : "?", "' has label '",
           labels[i], "' but no transformation has that label");
    }
    out[it->second].push_back(i);
  }
  return out;
}

template <class T>
std::vector<T> pick(const std::vector<T>& v, const std::vector<size_t>& idx) {
  std::vector<T> out;
  if (v.empty()) return out;  // params not given
  for (size_t i : idx) out.push_back(v[i]);
  return out;
}

FlatParams pick_params(const FlatParams& p, const std::vector<size_t>& idx) {
  return FlatParams{pick(p.leaves, idx), pick(p.paths, idx)};
}

GradientTransformation partition(Transforms transforms, LabelAll label_all) {
  int total = 0;
  for (const auto& [label, tx] : transforms) total += tx.num_parts();
  auto init = [transforms, label_all](const FlatParams& p) {
    auto idx = groups(transforms, label_all(p.paths, p.leaves), p.paths);
    std::vector<Slots> parts;
    size_t g = 0;
    for (const auto& [label, tx] : transforms) {
      for (Slots& s : tx.init_parts(pick_params(p, idx[g++]))) parts.push_back(std::move(s));
    }
    return parts;
  };
  auto update = [transforms, label_all](const std::vector<Array>& updates,
                                        const std::vector<Slots>& state, const FlatParams& p) {
    auto idx = groups(transforms, label_all(p.paths, updates), p.paths);
    std::vector<Array> out = updates;
    std::vector<Slots> parts;
    size_t g = 0, at = 0;
    for (const auto& [label, tx] : transforms) {
      std::vector<Slots> mine(state.begin() + at, state.begin() + at + tx.num_parts());
      at += tx.num_parts();
      const std::vector<size_t>& mine_idx = idx[g++];
      auto [sub, next] = tx.update_parts(pick(updates, mine_idx), mine, pick_params(p, mine_idx));
      for (size_t k = 0; k < mine_idx.size(); ++k) out[mine_idx[k]] = sub[k];
      for (Slots& s : next) parts.push_back(std::move(s));
    }
    return std::pair{out, parts};
  };
  return GradientTransformation("multi_transform", total, init, update);
}

}  // namespace

GradientTransformation multi_transform(Transforms transforms, Labeler labels) {
  if (labels == nullptr) fail("optim.multi_transform", "no labels given");
  return partition(std::move(transforms), [labels](const std::vector<std::string>& paths,
                                                   const std::vector<Array>& leaves) {
    if (paths.size() != leaves.size()) {
      fail("optim.multi_transform", "have ", leaves.size(), " leaves but ", paths.size(),
           " paths");
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < leaves.size(); ++i) out.push_back(labels(paths[i], leaves[i]));
    return out;
  });
}

GradientTransformation multi_transform(Transforms transforms, std::vector<std::string> labels) {
  return partition(std::move(transforms), [labels](const std::vector<std::string>&,
                                                   const std::vector<Array>& leaves) {
    if (labels.size() != leaves.size()) {
      fail("optim.multi_transform", "have ", labels.size(), " labels for ", leaves.size(),
           " leaves");
    }
    return labels;
  });
}

}  // namespace graft::optim
