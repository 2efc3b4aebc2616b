// Global-norm clipping (optax.clip_by_global_norm) and the norm itself.
#include "core/ops.h"
#include "optim/transformations.h"

namespace graft::optim {

Array global_norm_flat(const std::vector<Array>& leaves) {
  if (leaves.empty()) return zeros({}, DType::kF32);
  Array total;
  for (const Array& x : leaves) {
    Array s = sum(x * x);
    total = total.valid() ? total + s : s;
  }
  return sqrt(total);
}

GradientTransformation clip_by_global_norm(double max_norm) {
  return make_transformation(
      "clip_by_global_norm", [](const FlatParams&) { return Slots{}; },
      [max_norm](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        Array norm = global_norm_flat(updates);
        Array trigger = norm < max_norm;
        std::vector<Array> out;
        for (const Array& t : updates) {
          out.push_back(where(trigger, t, (t / astype(norm, t.dtype())) * max_norm));
        }
        return std::pair{out, state};
      });
}

}  // namespace graft::optim
