// Masks: optax.masked, and decoupled weight decay (optax.add_decayed_weights) which uses it.
#include "core/error.h"
#include "core/ops.h"
#include "optim/transformations.h"

namespace graft::optim {

Mask ndim_at_least(int n) {
  return [n](const std::string&, const Array& leaf) { return leaf.ndim() >= n; };
}

namespace {

// Indices of the leaves the mask selects; `leaves` and `paths` are parallel.
std::vector<size_t> selected(const Mask& mask, const std::vector<Array>& leaves,
                             const std::vector<std::string>& paths) {
  if (paths.size() != leaves.size()) {
    fail("optim.masked", "have ", leaves.size(), " leaves but ", paths.size(), " paths");
  }
  std::vector<size_t> idx;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (mask(paths[i], leaves[i])) idx.push_back(i);
  }
  return idx;
}

template <class T>
std::vector<T> pick(const std::vector<T>& v, const std::vector<size_t>& idx) {
  std::vector<T> out;
  for (size_t i : idx) out.push_back(v[i]);
  return out;
}

FlatParams pick_params(const FlatParams& p, const std::vector<size_t>& idx) {
  FlatParams out;
  if (!p.leaves.empty()) out.leaves = pick(p.leaves, idx);
  out.paths = pick(p.paths, idx);
  return out;
}

}  // namespace

GradientTransformation masked(GradientTransformation inner, Mask mask) {
  if (mask == nullptr) return inner;
  auto init = [inner, mask](const FlatParams& p) {
    return inner.init_parts(pick_params(p, selected(mask, p.leaves, p.paths)));
  };
  auto update = [inner, mask](const std::vector<Array>& updates, const std::vector<Slots>& state,
                              const FlatParams& p) {
    std::vector<size_t> idx = selected(mask, updates, p.paths);
    auto [sub, parts] = inner.update_parts(pick(updates, idx), state, pick_params(p, idx));
    std::vector<Array> out = updates;
    for (size_t k = 0; k < idx.size(); ++k) out[idx[k]] = sub[k];
    return std::pair{out, parts};
  };
  return GradientTransformation("masked(" + inner.name() + ")", inner.num_parts(), init, update);
}

GradientTransformation add_decayed_weights(Schedule weight_decay, Mask mask) {
  bool scheduled = !weight_decay.is_constant();
  GradientTransformation decay = make_transformation(
      "add_decayed_weights",
      [scheduled](const FlatParams&) {
        return scheduled ? Slots{{"count", {zero_count()}}} : Slots{};
      },
      [weight_decay, scheduled](const std::vector<Array>& updates, const Slots& state,
                                const FlatParams& p) {
        if (p.leaves.size() != updates.size()) {
          fail("optim.update", "add_decayed_weights needs params: call update(grads, state, ",
               "params)");
        }
        Slots next = state;
        Array s;
        if (scheduled) {
          const Array& count = slot(state, "count", 1)[0];
          s = weight_decay(count);
          next["count"] = {safe_increment(count)};
        } else if (weight_decay.constant_value() == 0.0) {
          return std::pair{updates, next};
        } else {
          s = Array(weight_decay.constant_value());
        }
        std::vector<Array> out;
        for (size_t i = 0; i < updates.size(); ++i) {
          out.push_back(updates[i] + astype(s, updates[i].dtype()) * p.leaves[i]);
        }
        return std::pair{out, next};
      });
  return masked(decay, mask);
}

}  // namespace graft::optim
