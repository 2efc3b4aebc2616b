// Adafactor (Shazeer & Stern 2018) as optax.adafactor builds it: factored second moments
// (optax.scale_by_factored_rms), update clipping by block RMS, optional lr, scaling by the
// parameter's RMS, optional weight decay, then -1.
#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/ops.h"
#include "optim/optimizers.h"

namespace graft::optim {
namespace {

// (d1, d0): the second largest and the largest dims (ties by index, like a stable argsort),
// or none when the leaf is not factored.
std::optional<std::pair<int, int>> factored_dims(const Shape& shape, bool factored,
                                                 int64_t min_dim_size) {
  if (!factored || shape.size() < 2) return std::nullopt;
  std::vector<int> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return shape[a] < shape[b]; });
  int d1 = order[order.size() - 2], d0 = order.back();
  if (shape[d1] < min_dim_size) return std::nullopt;
  return std::pair{d1, d0};
}

Shape without_axis(const Shape& s, int axis) {
  Shape out = s;
  out.erase(out.begin() + axis);
  return out;
}

Array rms(const Array& x) { return sqrt(mean(x * x)); }

}  // namespace

GradientTransformation scale_by_factored_rms(const FactoredRmsOptions& o) {
  return make_transformation(
      "scale_by_factored_rms",
      [o](const FlatParams& p) {
        Slots s{{"count", {zero_count()}}, {"v_row", {}}, {"v_col", {}}, {"v", {}}};
        for (const Array& x : p.leaves) {
          auto dims = factored_dims(x.shape(), o.factored, o.min_dim_size_to_factor);
          Array one = zeros({1}, x.dtype());
          s["v_row"].push_back(dims ? zeros(without_axis(x.shape(), dims->second), x.dtype())
                                    : one);
          s["v_col"].push_back(dims ? zeros(without_axis(x.shape(), dims->first), x.dtype()) : one);
          s["v"].push_back(dims ? one : zeros_like(x));
        }
        return s;
      },
      [o](const std::vector<Array>& grads, const Slots& state, const FlatParams& p) {
        size_t n = grads.size();
        if (p.leaves.size() != n) fail("optim.update", "scale_by_factored_rms needs params");
        const Array& count = slot(state, "count", 1)[0];
        const auto &v_row = slot(state, "v_row", n), &v_col = slot(state, "v_col", n),
                   &v = slot(state, "v", n);
        // decay_t = 1 - (count - offset + 1)^-decay_rate, in f32.
        Array t = astype(count - o.decay_offset + 1, DType::kF32);
        Array decay = 1.0 - power(t, Array(-o.decay_rate));
        Slots next{{"count", {safe_increment(count)}}, {"v_row", {}}, {"v_col", {}}, {"v", {}}};
        std::vector<Array> out;
        for (size_t i = 0; i < n; ++i) {
          const Array& g = grads[i];
          DType dt = p.leaves[i].dtype();
          Array one = zeros({1}, dt);
          Array g2 = g * g + o.eps;
          auto dims = factored_dims(p.leaves[i].shape(), o.factored, o.min_dim_size_to_factor);
          if (dims) {
            auto [d1, d0] = *dims;
            Array row = astype(decay * v_row[i] + (1.0 - decay) * mean(g2, {d0}), dt);
            Array col = astype(decay * v_col[i] + (1.0 - decay) * mean(g2, {d1}), dt);
            int reduced_d1 = d1 > d0 ? d1 - 1 : d1;
            Array row_factor = rsqrt(row / mean(row, {reduced_d1}, true));
            Array col_factor = rsqrt(col);
            out.push_back(g * expand_dims(row_factor, {d0}) * expand_dims(col_factor, {d1}));
            next["v_row"].push_back(row);
            next["v_col"].push_back(col);
            next["v"].push_back(one);
          } else {
            Array nv = astype(decay * v[i] + (1.0 - decay) * g2, dt);
            out.push_back(g * rsqrt(nv));
            next["v_row"].push_back(one);
            next["v_col"].push_back(one);
            next["v"].push_back(nv);
          }
        }
        return std::pair{out, next};
      });
}

GradientTransformation clip_by_block_rms(double threshold) {
  return make_transformation(
      "clip_by_block_rms", [](const FlatParams&) { return Slots{}; },
      [threshold](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        std::vector<Array> out;
        for (const Array& u : updates) out.push_back(u / maximum(Array(1.0), rms(u) / threshold));
        return std::pair{out, state};
      });
}

GradientTransformation scale_by_param_block_rms(double min_scale) {
  return make_transformation(
      "scale_by_param_block_rms", [](const FlatParams&) { return Slots{}; },
      [min_scale](const std::vector<Array>& updates, const Slots& state, const FlatParams& p) {
        if (p.leaves.size() != updates.size()) {
          fail("optim.update", "scale_by_param_block_rms needs params");
        }
        std::vector<Array> out;
        for (size_t i = 0; i < updates.size(); ++i) {
          Array r = rms(p.leaves[i]);
          out.push_back(updates[i] * where(r <= min_scale, Array(min_scale), r));
        }
        return std::pair{out, state};
      });
}

GradientTransformation adafactor(const AdafactorOptions& o) {
  std::vector<GradientTransformation> tx = {scale_by_factored_rms(
      {o.factored, o.decay_rate, o.decay_offset, o.min_dim_size_to_factor, o.eps})};
  if (o.clipping_threshold) tx.push_back(clip_by_block_rms(*o.clipping_threshold));
  if (o.learning_rate) tx.push_back(scale_by_learning_rate(*o.learning_rate, false));
  if (o.multiply_by_parameter_scale) tx.push_back(scale_by_param_block_rms());
  if (o.weight_decay_rate) {
    tx.push_back(add_decayed_weights(*o.weight_decay_rate, o.weight_decay_mask));
  }
  tx.push_back(scale(-1.0));
  return chain(tx);
}

}  // namespace graft::optim
