#include "nn/rope.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"

namespace graft::nn {

std::ostream& operator<<(std::ostream& os, const RopeScaling& s) {
  return os << "llama3(factor=" << s.factor << ", low=" << s.low_freq_factor
            << ", high=" << s.high_freq_factor
            << ", original_max=" << s.original_max_position_embeddings << ")";
}

std::vector<double> rope_inv_freq(int64_t head_dim, double theta,
                                  const std::optional<RopeScaling>& scaling) {
  if (head_dim <= 0 || head_dim % 2 != 0) fail("rope", "head_dim must be even, got ", head_dim);
  if (!(theta > 0)) fail("rope", "theta must be positive, got ", theta);
  std::vector<double> f(head_dim / 2);
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    f[i] = 1.0 / std::pow(theta, double(2 * i) / double(head_dim));
  }
  if (!scaling) return f;
  const RopeScaling& s = *scaling;
  if (!(s.factor > 0) || !(s.high_freq_factor > s.low_freq_factor) || !(s.low_freq_factor > 0) ||
      s.original_max_position_embeddings <= 0) {
    fail("rope", "invalid llama3 scaling ", s);
  }
  const double old_len = double(s.original_max_position_embeddings);
  const double low_freq_wavelen = old_len / s.low_freq_factor;
  const double high_freq_wavelen = old_len / s.high_freq_factor;
  for (double& freq : f) {
    double wavelen = 2 * M_PI / freq;
    if (wavelen < high_freq_wavelen) continue;  // high frequencies: unchanged
    if (wavelen > low_freq_wavelen) {
      freq /= s.factor;
    } else {
      double smooth =
          (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      freq = (1 - smooth) * freq / s.factor + smooth * freq;
    }
  }
  return f;
}

RopeTables rope_tables(int64_t positions, int64_t head_dim, double theta,
                       const std::optional<RopeScaling>& scaling) {
  if (positions < 0) fail("rope", "positions must be >= 0, got ", positions);
  std::vector<double> f = rope_inv_freq(head_dim, theta, scaling);
  const int64_t half = head_dim / 2;
  std::vector<float> c(positions * head_dim), s(positions * head_dim);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t i = 0; i < head_dim; ++i) {
      double a = double(p) * f[i % half];
      c[p * head_dim + i] = float(std::cos(a));
      s[p * head_dim + i] = float(std::sin(a));
    }
  }
  return {array(c, Shape{positions, head_dim}), array(s, Shape{positions, head_dim})};
}

Array apply_rope(const Array& x, const RopeTables& tables, int64_t offset) {
  if (x.ndim() != 4) fail("apply_rope", "x must be [B, T, H, D], got ", shape_str(x.shape()));
  const int64_t T = x.shape()[1], D = x.shape()[3];
  if (tables.cos.ndim() != 2 || tables.cos.shape()[1] != D) {
    fail("apply_rope", "tables ", shape_str(tables.cos.shape()), " do not match head_dim ", D);
  }
  if (offset < 0 || offset + T > tables.cos.shape()[0]) {
    fail("apply_rope", "positions ", offset, " .. ", offset + T - 1, " outside the tables (",
         tables.cos.shape()[0], " positions)");
  }
  // [T, D] -> [1, T, H, D]: repeated over the heads here (T H D floats, folded into a constant
  // under jit), so that the broadcast over the batch is one contiguous run of dims, which a
  // fused group reads in place instead of a [B, T, H, D] copy of the table.
  const int64_t H = x.shape()[2];
  auto window = [&](const Array& t) {
    Array rows = slice(t, {offset, 0}, {offset + T, D});
    return reshape(broadcast_in_dim(rows, {T, H, D}, {0, 2}), {1, T, H, D});
  };
  // rotate_half(x) * sin = swap_halves(x) * signed_sin, signed_sin = concat(-sin[:, :D/2],
  // sin[:, D/2:]): the swap is one rev over a [B, T, H, 2, D/2] view of x, in x's dtype (its
  // transpose is itself), where concat(-x2, x1) took two slices, a neg and a concat forward and
  // two pads, a neg and an add backward. The same bits: (-a) * s == a * (-s).
  const Shape& s = x.shape();
  const int64_t half = D / 2;
  Array sign = concatenate({full({half}, -1.0f), ones({half}, DType::kF32)}, 0);
  Array signed_sin = tables.sin * sign;
  Array swapped = reshape(flip(reshape(x, {s[0], s[1], s[2], 2, half}), {3}), s);
  auto f32 = [](const Array& a) { return a.dtype() == DType::kF32 ? a : astype(a, DType::kF32); };
  Array y = f32(x) * window(tables.cos) + f32(swapped) * window(signed_sin);
  return astype(y, x.dtype());
}

}  // namespace graft::nn
