// optax.inject_hyperparams: hyperparameters as f32 scalars in the state (part 0), the inner
// transformation rebuilt from them at every update.
#include "core/error.h"
#include "core/ops.h"
#include "optim/wrappers.h"

namespace graft::optim {
namespace {

constexpr const char* kWho = "optim.inject_hyperparams";

// The values at `count`: schedules evaluated, constants read from `stored` (or the constant
// itself when stored is null, i.e. at init).
Hyperparams values_at(const std::map<std::string, Schedule>& hp, const Array& count,
                      const Slots* stored) {
  Hyperparams out;
  for (const auto& [name, sched] : hp) {
    if (!sched.is_constant()) {
      out[name] = astype(sched(count), DType::kF32);
    } else if (stored != nullptr) {
      out[name] = astype(slot(*stored, name, 1)[0], DType::kF32);
    } else {
      out[name] = full({}, sched.constant_value(), DType::kF32);
    }
  }
  return out;
}

Slots hyper_slots(const Array& count, const Hyperparams& values) {
  Slots s{{"count", {count}}};
  for (const auto& [name, v] : values) s[name] = {v};
  return s;
}

}  // namespace

GradientTransformation inject_hyperparams(
    std::function<GradientTransformation(const Hyperparams&)> factory,
    std::map<std::string, Schedule> hyperparams) {
  if (factory == nullptr) fail(kWho, "no factory given");
  if (hyperparams.count("count") != 0) fail(kWho, "'count' is reserved for the step count");
  // The state layout (number of parts) of the inner transformation, from the initial values.
  int inner_parts = factory(values_at(hyperparams, zero_count(), nullptr)).num_parts();
  auto init = [factory, hyperparams](const FlatParams& p) {
    Hyperparams h = values_at(hyperparams, zero_count(), nullptr);
    std::vector<Slots> parts{hyper_slots(zero_count(), h)};
    for (Slots& s : factory(h).init_parts(p)) parts.push_back(std::move(s));
    return parts;
  };
  auto update = [factory, hyperparams](const std::vector<Array>& updates,
                                       const std::vector<Slots>& state, const FlatParams& p) {
    const Array& count = slot(state[0], "count", 1)[0];
    Hyperparams h = values_at(hyperparams, count, &state[0]);
    GradientTransformation inner = factory(h);
    std::vector<Slots> inner_state(state.begin() + 1, state.end());
    auto [out, inner_next] = inner.update_parts(updates, inner_state, p);
    std::vector<Slots> parts{hyper_slots(safe_increment(count), h)};
    for (Slots& s : inner_next) parts.push_back(std::move(s));
    return std::pair{out, parts};
  };
  return GradientTransformation("inject_hyperparams", inner_parts + 1, init, update);
}

Schedule injected(const Array& value) {
  return Schedule([value](const Array&) { return astype(value, DType::kF32); }, "injected");
}

Array get_hyperparam(const State& state, const std::string& name) {
  if (state.parts.empty()) fail(kWho, "empty state");
  auto it = state.parts[0].find(name);
  if (it == state.parts[0].end() || it->second.size() != 1 || name == "count") {
    fail(kWho, "the state has no hyperparameter '", name, "'");
  }
  return it->second[0];
}

State set_hyperparam(State state, const std::string& name, double value) {
  get_hyperparam(state, name);  // checks it exists
  state.parts[0][name] = {full({}, value, DType::kF32)};
  return state;
}

}  // namespace graft::optim
