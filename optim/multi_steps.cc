#include "optim/multi_steps.h"

#include "core/error.h"
#include "core/ops.h"

namespace graft::optim {
namespace {

GradientTransformation::InitFn multi_init(GradientTransformation inner) {
  return [inner](const FlatParams& p) {
    std::vector<Array> acc;
    for (const Array& x : p.leaves) acc.push_back(zeros(x.shape(), DType::kF32));
    std::vector<Slots> parts{Slots{
        {"mini_step", {zero_count()}}, {"gradient_step", {zero_count()}}, {"acc_grads", acc}}};
    for (Slots& s : inner.init_parts(p)) parts.push_back(std::move(s));
    return parts;
  };
}

GradientTransformation::UpdateFn multi_update(GradientTransformation inner, int k) {
  return [inner, k](const std::vector<Array>& updates, const std::vector<Slots>& state,
                    const FlatParams& p) {
    size_t n = updates.size();
    const Array& mini = slot(state[0], "mini_step", 1)[0];
    const Array& gstep = slot(state[0], "gradient_step", 1)[0];
    const std::vector<Array>& acc = slot(state[0], "acc_grads", n);
    // Running mean: acc + (g - acc) / (mini + 1), in the accumulator dtype (f32).
    Array n_acc = mini + full({}, 1, DType::kI32);
    std::vector<Array> acc_new, acc_cast;
    for (size_t i = 0; i < n; ++i) {
      acc_new.push_back(astype(acc[i] + (updates[i] - acc[i]) / n_acc, DType::kF32));
      acc_cast.push_back(astype(acc_new[i], updates[i].dtype()));
    }
    std::vector<Slots> inner_state(state.begin() + 1, state.end());
    auto [final_updates, inner_next] = inner.update_parts(acc_cast, inner_state, p);

    Array emit = mini == full({}, k - 1, DType::kI32);
    std::vector<Slots> out_state(1);
    out_state[0]["mini_step"] = {remainder(safe_increment(mini), full({}, k, DType::kI32))};
    out_state[0]["gradient_step"] = {where(emit, safe_increment(gstep), gstep)};
    std::vector<Array>& acc_out = out_state[0]["acc_grads"];
    for (const Array& a : acc_new) acc_out.push_back(where(emit, zeros_like(a), a));
    for (Slots& s : where_parts(emit, inner_next, inner_state, "optim.MultiSteps")) {
      out_state.push_back(std::move(s));
    }
    std::vector<Array> out;
    for (const Array& u : final_updates) out.push_back(where(emit, u, zeros_like(u)));
    return std::pair{out, out_state};
  };
}

int checked_k(int every_k) {
  if (every_k < 1) fail("optim.MultiSteps", "every_k must be >= 1, got ", every_k);
  return every_k;
}

}  // namespace

MultiSteps::MultiSteps(GradientTransformation inner, int every_k)
    : GradientTransformation("MultiSteps(" + inner.name() + ")", inner.num_parts() + 1,
                             multi_init(inner), multi_update(inner, checked_k(every_k))) {}

Array MultiSteps::has_updated(const State& state) {
  if (state.parts.empty()) fail("optim.MultiSteps", "empty state");
  const Slots& s = state.parts[0];
  const Array& mini = slot(s, "mini_step", 1)[0];
  const Array& gstep = slot(s, "gradient_step", 1)[0];
  return logical_and(mini == full({}, 0, DType::kI32), gstep > full({}, 0, DType::kI32));
}

}  // namespace graft::optim
