// Accumulating updates over steps: optax.ema and optax.apply_every.
#include "core/error.h"
#include "core/ops.h"
#include "optim/transformations.h"

namespace graft::optim {

GradientTransformation ema(double decay, bool debias) {
  return make_transformation(
      "ema",
      [](const FlatParams& p) { return Slots{{"count", {zero_count()}}, {"ema", zeros_for(p)}}; },
      [decay, debias](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        size_t n = updates.size();
        const Array& count = slot(state, "count", 1)[0];
        const std::vector<Array>& old = slot(state, "ema", n);
        Array count_inc = safe_increment(count);
        // 1 - decay^t in f32 before dividing, as optax.tree.bias_correction.
        Array correction = 1.0 - power(Array(decay), astype(count_inc, DType::kF32));
        std::vector<Array> out, next;
        for (size_t i = 0; i < n; ++i) {
          Array e = (1.0 - decay) * updates[i] + decay * old[i];
          out.push_back(debias ? e / astype(correction, e.dtype()) : e);
          next.push_back(astype(e, old[i].dtype()));
        }
        return std::pair{out, Slots{{"count", {count_inc}}, {"ema", next}}};
      });
}

GradientTransformation apply_every(int k) {
  if (k < 1) fail("optim.apply_every", "k must be >= 1, got ", k);
  return make_transformation(
      "apply_every",
      [](const FlatParams& p) {
        return Slots{{"count", {zero_count()}}, {"grad_acc", zeros_for(p)}};
      },
      [k](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        size_t n = updates.size();
        const Array& count = slot(state, "count", 1)[0];
        const std::vector<Array>& acc = slot(state, "grad_acc", n);
        Array kk = full({}, k, DType::kI32);
        Array c = remainder(count, kk);
        Array keep = c != full({}, 0, DType::kI32);
        Array emit = c == full({}, k - 1, DType::kI32);
        std::vector<Array> out, next;
        for (size_t i = 0; i < n; ++i) {
          Array a = where(keep, acc[i], zeros_like(acc[i])) + updates[i];
          next.push_back(astype(a, acc[i].dtype()));
          out.push_back(where(emit, a, zeros_like(a)));
        }
        return std::pair{out, Slots{{"count", {remainder(safe_increment(count), kk)}},
                                    {"grad_acc", next}}};
      });
}

}  // namespace graft::optim
