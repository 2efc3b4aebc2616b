// optax.apply_if_finite: the inner update runs on every call and `where` keeps or drops it, so
// one traced step serves finite and non-finite gradients alike.
#include "core/error.h"
#include "core/ops.h"
#include "optim/wrappers.h"

namespace graft::optim {

GradientTransformation apply_if_finite(GradientTransformation inner, int max_consecutive_errors) {
  auto init = [inner](const FlatParams& p) {
    std::vector<Slots> parts{Slots{{"notfinite_count", {zero_count()}},
                                   {"last_finite", {full({}, 1, DType::kBool)}},
                                   {"total_notfinite", {zero_count()}}}};
    for (Slots& s : inner.init_parts(p)) parts.push_back(std::move(s));
    return parts;
  };
  auto update = [inner, max_consecutive_errors](const std::vector<Array>& updates,
                                                const std::vector<Slots>& state,
                                                const FlatParams& p) {
    const Array& notfinite = slot(state[0], "notfinite_count", 1)[0];
    const Array& total = slot(state[0], "total_notfinite", 1)[0];
    Array finite = full({}, 1, DType::kBool);
    for (const Array& g : updates) finite = logical_and(finite, all(isfinite(g)));
    Array count = where(finite, zero_count(), safe_increment(notfinite));
    Array apply =
        logical_or(finite, count > full({}, max_consecutive_errors, DType::kI32));

    std::vector<Slots> inner_state(state.begin() + 1, state.end());
    auto [inner_updates, inner_next] = inner.update_parts(updates, inner_state, p);
    std::vector<Slots> parts{Slots{{"notfinite_count", {count}},
                                   {"last_finite", {finite}},
                                   {"total_notfinite", {where(finite, total, safe_increment(total))}}}};
    for (Slots& s : where_parts(apply, inner_next, inner_state, "optim.apply_if_finite")) {
      parts.push_back(std::move(s));
    }
    std::vector<Array> out;
    for (const Array& u : inner_updates) out.push_back(where(apply, u, zeros_like(u)));
    return std::pair{out, parts};
  };
  return GradientTransformation("apply_if_finite(" + inner.name() + ")", inner.num_parts() + 1,
                                init, update);
}

}  // namespace graft::optim
