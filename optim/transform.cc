#include "optim/transform.h"

#include <climits>

#include "core/error.h"
#include "core/ops.h"

namespace graft::optim {

GradientTransformation::GradientTransformation(std::string name, int num_parts, InitFn init,
                                               UpdateFn update)
    : name_(std::move(name)),
      num_parts_(num_parts),
      init_(std::move(init)),
      update_(std::move(update)) {}

std::vector<Slots> GradientTransformation::init_parts(const FlatParams& params) const {
  std::vector<Slots> parts = init_(params);
  if (static_cast<int>(parts.size()) != num_parts_) {
    fail("optim.init", name_, " made ", parts.size(), " state parts, expected ", num_parts_);
  }
  return parts;
}

std::pair<std::vector<Array>, std::vector<Slots>> GradientTransformation::update_parts(
    const std::vector<Array>& updates, const std::vector<Slots>& state,
    const FlatParams& params) const {
  if (static_cast<int>(state.size()) != num_parts_) {
    fail("optim.update", name_, " expects a state of ", num_parts_, " parts, got ", state.size(),
         " (was it made by init of the same optimizer?)");
  }
  auto out = update_(updates, state, params);
  if (out.first.size() != updates.size() || static_cast<int>(out.second.size()) != num_parts_) {
    fail("optim.update", name_, " returned ", out.first.size(), " updates and ", out.second.size(),
         " state parts for ", updates.size(), " leaves and ", num_parts_, " parts");
  }
  return out;
}

State GradientTransformation::init_flat(const FlatParams& params) const {
  return State{init_parts(params)};
}

std::pair<std::vector<Array>, State> GradientTransformation::update_flat(
    const std::vector<Array>& updates, const State& state, const FlatParams& params) const {
  if (!params.leaves.empty() && params.leaves.size() != updates.size()) {
    fail("optim.update", "grads have ", updates.size(), " leaves, params ", params.leaves.size());
  }
  for (size_t i = 0; i < updates.size(); ++i) {
    if (!updates[i].valid()) fail("optim.update", "grad leaf ", i, " is an empty Array handle");
    if (!params.leaves.empty() && params.leaves[i].shape() != updates[i].shape()) {
      fail("optim.update", "grad leaf '", params.paths[i], "' has shape ",
           shape_str(updates[i].shape()), ", param ", shape_str(params.leaves[i].shape()));
    }
  }
  auto [u, parts] = update_parts(updates, state.parts, params);
  return {std::move(u), State{std::move(parts)}};
}

GradientTransformation make_transformation(std::string name, SimpleInit init, SimpleUpdate update) {
  return GradientTransformation(
      name, 1, [init](const FlatParams& p) { return std::vector<Slots>{init(p)}; },
      [update](const std::vector<Array>& u, const std::vector<Slots>& s, const FlatParams& p) {
        auto [nu, ns] = update(u, s[0], p);
        return std::pair{std::move(nu), std::vector<Slots>{std::move(ns)}};
      });
}

GradientTransformation chain(std::vector<GradientTransformation> ts) {
  int total = 0;
  std::string name = "chain(";
  for (size_t i = 0; i < ts.size(); ++i) {
    total += ts[i].num_parts();
    name += (i ? ", " : "") + ts[i].name();
  }
  name += ")";
  auto init = [ts](const FlatParams& p) {
    std::vector<Slots> parts;
    for (const auto& t : ts) {
      for (Slots& s : t.init_parts(p)) parts.push_back(std::move(s));
    }
    return parts;
  };
  auto update = [ts](const std::vector<Array>& updates, const std::vector<Slots>& state,
                     const FlatParams& p) {
    std::vector<Array> u = updates;
    std::vector<Slots> parts;
    size_t at = 0;
    for (const auto& t : ts) {
      std::vector<Slots> mine(state.begin() + at, state.begin() + at + t.num_parts());
      at += t.num_parts();
      auto [nu, ns] = t.update_parts(u, mine, p);
      u = std::move(nu);
      for (Slots& s : ns) parts.push_back(std::move(s));
    }
    return std::pair{std::move(u), std::move(parts)};
  };
  return GradientTransformation(name, total, init, update);
}

GradientTransformation identity() {
  return make_transformation(
      "identity", [](const FlatParams&) { return Slots{}; },
      [](const std::vector<Array>& u, const Slots& s, const FlatParams&) {
        return std::pair{u, s};
      });
}

std::vector<Array> apply_updates_flat(const std::vector<Array>& params,
                                      const std::vector<Array>& updates) {
  if (params.size() != updates.size()) {
    fail("optim.apply_updates", "params have ", params.size(), " leaves, updates ", updates.size());
  }
  std::vector<Array> out(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    out[i] = astype(params[i] + updates[i], params[i].dtype());
  }
  return out;
}

const std::vector<Array>& slot(const Slots& state, const std::string& name, size_t n) {
  auto it = state.find(name);
  if (it == state.end()) fail("optim.update", "state has no slot '", name, "'");
  if (it->second.size() != n) {
    fail("optim.update", "state slot '", name, "' has ", it->second.size(), " arrays, grads have ",
         n, " leaves");
  }
  return it->second;
}

Array zero_count() { return zeros({}, DType::kI32); }

std::vector<Array> zeros_for(const FlatParams& params) {
  std::vector<Array> z;
  for (const Array& x : params.leaves) z.push_back(zeros_like(x));
  return z;
}

std::vector<Slots> where_parts(const Array& cond, const std::vector<Slots>& on_true,
                               const std::vector<Slots>& on_false, const std::string& who) {
  if (on_true.size() != on_false.size()) {
    fail(who, "the inner state changed from ", on_false.size(), " to ", on_true.size(), " parts");
  }
  std::vector<Slots> out(on_false.size());
  for (size_t part = 0; part < on_false.size(); ++part) {
    for (const auto& [name, olds] : on_false[part]) {
      auto it = on_true[part].find(name);
      if (it == on_true[part].end() || it->second.size() != olds.size()) {
        fail(who, "the inner transformation changed the layout of its state slot '", name, "'");
      }
      std::vector<Array>& dst = out[part][name];
      for (size_t i = 0; i < olds.size(); ++i) {
        dst.push_back(astype(where(cond, it->second[i], olds[i]), olds[i].dtype()));
      }
    }
  }
  return out;
}

Array safe_increment(const Array& count) {
  Array max_value = full({}, static_cast<double>(INT32_MAX), DType::kI32);
  return where(count < max_value, count + full({}, 1, DType::kI32), max_value);
}

}  // namespace graft::optim
