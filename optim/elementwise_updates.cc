// Stateless-ish elementwise rewrites of the updates: optax.clip and optax.zero_nans.
#include "core/ops.h"
#include "optim/transformations.h"

namespace graft::optim {

GradientTransformation clip(double max_delta) {
  return make_transformation(
      "clip", [](const FlatParams&) { return Slots{}; },
      [max_delta](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        std::vector<Array> out;
        for (const Array& g : updates) {
          out.push_back(clip(g, full({}, -max_delta, g.dtype()), full({}, max_delta, g.dtype())));
        }
        return std::pair{out, state};
      });
}

GradientTransformation zero_nans() {
  return make_transformation(
      "zero_nans",
      [](const FlatParams& p) {
        return Slots{{"found_nan", std::vector<Array>(p.leaves.size(), full({}, 0, DType::kBool))}};
      },
      [](const std::vector<Array>& updates, const Slots&, const FlatParams&) {
        std::vector<Array> out, found;
        for (const Array& g : updates) {
          Array nan = isnan(g);
          found.push_back(any(nan));
          out.push_back(where(nan, zeros_like(g), g));
        }
        return std::pair{out, Slots{{"found_nan", found}}};
      });
}

}  // namespace graft::optim
