// A plain double-precision loop reference of graft's flash_attention and its gradient
// (core/primitives/attention.h, attention_rules.cc): causal aligned to the end, GQA, lse the
// log-sum-exp of the scaled scores, delta = rowsum(do * o) - dlse. For the CUDA tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace graft::cuda::testing {

struct AttnCase {
  int64_t B, T, H, S, KV, D;
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(D, 1))); }
  int64_t q_size() const { return B * T * H * D; }
  int64_t kv_size() const { return B * S * KV * D; }
  int64_t rows() const { return B * T * H; }
};

// p[b, t, h, s] for the visible keys (0 elsewhere), and lse.
inline void reference_probabilities(const AttnCase& c, const std::vector<double>& q,
                                    const std::vector<double>& k, std::vector<double>& p,
                                    std::vector<double>& lse) {
  const int64_t G = c.H / c.KV;
  p.assign(c.rows() * c.S, 0.0);
  lse.assign(c.rows(), 0.0);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t h = 0; h < c.H; ++h) {
        const int64_t row = (b * c.T + t) * c.H + h, seen = c.S - c.T + t + 1;
        double* pr = p.data() + row * c.S;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t s = 0; s < seen; ++s) {
          double dot = 0;
          for (int64_t d = 0; d < c.D; ++d) {
            dot += q[row * c.D + d] * k[((b * c.S + s) * c.KV + h / G) * c.D + d];
          }
          pr[s] = dot * c.scale();
          mx = std::max(mx, pr[s]);
        }
        double sum = 0;
        for (int64_t s = 0; s < seen; ++s) sum += std::exp(pr[s] - mx);
        lse[row] = mx + std::log(sum);
        for (int64_t s = 0; s < seen; ++s) pr[s] = std::exp(pr[s] - lse[row]);
      }
}

inline void reference_forward(const AttnCase& c, const std::vector<double>& q,
                              const std::vector<double>& k, const std::vector<double>& v,
                              std::vector<double>& o, std::vector<double>& lse) {
  std::vector<double> p;
  reference_probabilities(c, q, k, p, lse);
  const int64_t G = c.H / c.KV;
  o.assign(c.q_size(), 0.0);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t h = 0; h < c.H; ++h) {
        const int64_t row = (b * c.T + t) * c.H + h;
        for (int64_t s = 0; s < c.S; ++s) {
          const double w = p[row * c.S + s];
          if (w == 0) continue;
          for (int64_t d = 0; d < c.D; ++d) {
            o[row * c.D + d] += w * v[((b * c.S + s) * c.KV + h / G) * c.D + d];
          }
        }
      }
}

// dq, dk, dv of sum(o * do) + sum(lse * dlse), with o from (q, k, v).
inline void reference_backward(const AttnCase& c, const std::vector<double>& q,
                               const std::vector<double>& k, const std::vector<double>& v,
                               const std::vector<double>& d_o, const std::vector<double>& dlse,
                               std::vector<double>& dq, std::vector<double>& dk,
                               std::vector<double>& dv) {
  std::vector<double> p, lse, o;
  reference_probabilities(c, q, k, p, lse);
  reference_forward(c, q, k, v, o, lse);
  const int64_t G = c.H / c.KV;
  dq.assign(c.q_size(), 0.0);
  dk.assign(c.kv_size(), 0.0);
  dv.assign(c.kv_size(), 0.0);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t h = 0; h < c.H; ++h) {
        const int64_t row = (b * c.T + t) * c.H + h;
        double delta = -dlse[row];
        for (int64_t d = 0; d < c.D; ++d) delta += d_o[row * c.D + d] * o[row * c.D + d];
        for (int64_t s = 0; s < c.S; ++s) {
          const double w = p[row * c.S + s];
          if (w == 0) continue;
          const int64_t kv = ((b * c.S + s) * c.KV + h / G) * c.D;
          double dp = 0;
          for (int64_t d = 0; d < c.D; ++d) dp += d_o[row * c.D + d] * v[kv + d];
          const double ds = w * (dp - delta) * c.scale();
          for (int64_t d = 0; d < c.D; ++d) {
            dv[kv + d] += w * d_o[row * c.D + d];
            dk[kv + d] += ds * q[row * c.D + d];
            dq[row * c.D + d] += ds * k[kv + d];
          }
        }
      }
}

}  // namespace graft::cuda::testing
