// Specs for flash_attention (o and lse) and flash_attention_grad (dq, dk, dv), reached
// through the public ops. References are plain loops in double over every (b, t, h): scores,
// a max-shifted softmax over the keys query t sees, the weighted sum; the backward loops are
// the textbook chain rule of that (dp = do . v, ds = p (dp - sum(p dp)) + p dlse, ...),
// independent of the kernels' tiling. Shapes cover GQA, MQA, T < S, tiles that do not divide
// T or S, head_dim not a multiple of the vector width, and 1-element tiles.
#include <cmath>

#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

struct Geo {
  int64_t B, T, H, D, S, KV;
  int64_t bq, bk;
  int64_t G() const { return H / KV; }
  double scale() const { return 1.0 / std::sqrt(double(D)); }
};

struct Loops {
  std::vector<double> o, lse, dq, dk, dv;
};

// Forward and backward by loops, with cotangents d_o (of o) and d_lse (of lse).
Loops loops(const Geo& g, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, const std::vector<double>& d_o,
            const std::vector<double>& d_lse) {
  Loops out{std::vector<double>(q.size()), std::vector<double>(g.B * g.T * g.H),
            std::vector<double>(q.size()), std::vector<double>(k.size()),
            std::vector<double>(k.size())};
  const int64_t G = g.G();
  for (int64_t b = 0; b < g.B; ++b) {
    for (int64_t t = 0; t < g.T; ++t) {
      for (int64_t h = 0; h < g.H; ++h) {
        const int64_t j = h / G, n = g.S - g.T + t + 1;  // keys seen
        auto qa = [&](int64_t d) { return q[((b * g.T + t) * g.H + h) * g.D + d]; };
        auto ka = [&](int64_t s, int64_t d) { return ((b * g.S + s) * g.KV + j) * g.D + d; };
        std::vector<double> sc(n), p(n);
        double mx = -INFINITY;
        for (int64_t s = 0; s < n; ++s) {
          double acc = 0;
          for (int64_t d = 0; d < g.D; ++d) acc += qa(d) * k[ka(s, d)];
          sc[s] = acc * g.scale();
          mx = std::max(mx, sc[s]);
        }
        double z = 0;
        for (int64_t s = 0; s < n; ++s) z += std::exp(sc[s] - mx);
        const int64_t row = (b * g.T + t) * g.H + h;
        out.lse[row] = mx + std::log(z);
        for (int64_t s = 0; s < n; ++s) p[s] = std::exp(sc[s] - mx) / z;
        for (int64_t d = 0; d < g.D; ++d) {
          double acc = 0;
          for (int64_t s = 0; s < n; ++s) acc += p[s] * v[ka(s, d)];
          out.o[row * g.D + d] = acc;
        }
        // Backward: dp_s = do . v_s; ds_s = p_s (dp_s - sum_u p_u dp_u) + p_s dlse.
        std::vector<double> dp(n);
        double pdp = 0;
        for (int64_t s = 0; s < n; ++s) {
          for (int64_t d = 0; d < g.D; ++d) dp[s] += d_o[row * g.D + d] * v[ka(s, d)];
          pdp += p[s] * dp[s];
        }
        for (int64_t s = 0; s < n; ++s) {
          const double ds = p[s] * (dp[s] - pdp) + p[s] * d_lse[row];
          for (int64_t d = 0; d < g.D; ++d) {
            out.dq[row * g.D + d] += ds * k[ka(s, d)] * g.scale();
            out.dk[ka(s, d)] += ds * qa(d) * g.scale();
            out.dv[ka(s, d)] += p[s] * d_o[row * g.D + d];
          }
        }
      }
    }
  }
  return out;
}

struct Inputs {
  Array q, k, v, d_o, d_lse;
};

Inputs inputs(const Geo& g, DType dt, uint32_t seed) {
  return {random_array({g.B, g.T, g.H, g.D}, dt, seed, -1, 1),
          random_array({g.B, g.S, g.KV, g.D}, dt, seed + 1, -1, 1),
          random_array({g.B, g.S, g.KV, g.D}, dt, seed + 2, -1, 1),
          random_array({g.B, g.T, g.H, g.D}, dt, seed + 3, -1, 1),
          random_array({g.B, g.T, g.H}, dt, seed + 4, -1, 1)};
}

Loops reference(const Geo& g, const Inputs& x) {
  return loops(g, values_of(x.q), values_of(x.k), values_of(x.v), values_of(x.d_o),
               values_of(x.d_lse));
}

FlashAttentionOptions opts(const Geo& g) { return {0, g.bq, g.bk}; }

void tol(Case& c, DType dt) {
  c.rtol = dt == DType::kF64 ? 1e-11 : 2e-5;
  c.atol = dt == DType::kF64 ? 1e-11 : 2e-5;
}

std::vector<std::pair<std::string, Geo>> geos() {
  return {
      {"gqa", {2, 9, 4, 5, 9, 2, 4, 3}},
      {"mqa_t_less_s", {1, 5, 3, 4, 11, 1, 2, 4}},
      {"mha_one_tiles", {1, 4, 2, 3, 4, 2, 1, 1}},
      {"big_tiles_d16", {1, 6, 2, 16, 6, 1, 64, 64}},
  };
}

// Half-precision cases: block_q * G even (on an AVX512-BF16 CPU, bf16 runs the bf16 tile
// products) and odd (bf16 runs the f32 tiles), head_dim 16 and 5.
std::vector<std::pair<std::string, Geo>> half_geos() {
  return {{"gqa_even_rows", {2, 9, 4, 16, 11, 2, 4, 3}},
          {"mqa_odd_rows", {1, 5, 3, 5, 11, 1, 3, 4}}};
}

}  // namespace

GRAFT_SPEC(FlashAttention) {
  Spec s{PrimitiveId::kFlashAttention};
  uint32_t seed = 100;
  for (const auto& [name, g] : geos()) {
    for (DType dt : {DType::kF64, DType::kF32}) {
      Inputs x = inputs(g, dt, seed += 10);
      Loops r = reference(g, x);
      const std::string suffix = std::string("_") + dtype_name(dt);
      const FlashAttentionOptions o = opts(g);
      Case co{
          name + "_o" + suffix,
          {x.q, x.k, x.v},
          [o](const std::vector<Array>& in) { return flash_attention(in[0], in[1], in[2], o).o; },
          {{g.B, g.T, g.H, g.D}, dt, r.o}};
      Case cl{
          name + "_lse" + suffix,
          {x.q, x.k, x.v},
          [o](const std::vector<Array>& in) { return flash_attention(in[0], in[1], in[2], o).lse; },
          {{g.B, g.T, g.H}, dt, r.lse}};
      tol(co, dt);
      tol(cl, dt);
      s.cases.push_back(std::move(co));
      s.cases.push_back(std::move(cl));
    }
  }
  // Half-precision q, k, v: o in their dtype, lse in f32 (computed in f32; bf16 probability
  // tiles may be rounded to bf16 before the p v product, hence the looser o tolerance).
  for (const auto& [name, g] : half_geos()) {
    for (DType dt : {DType::kBF16, DType::kF16}) {
      Inputs x = inputs(g, dt, seed += 10);
      Loops r = reference(g, x);
      const std::string suffix = std::string("_") + dtype_name(dt);
      const FlashAttentionOptions o = opts(g);
      std::vector<double> o_want = r.o;
      for (double& v : o_want) v = round_to(v, dt);
      Case co{
          name + "_o" + suffix,
          {x.q, x.k, x.v},
          [o](const std::vector<Array>& in) { return flash_attention(in[0], in[1], in[2], o).o; },
          {{g.B, g.T, g.H, g.D}, dt, o_want}};
      Case cl{
          name + "_lse" + suffix,
          {x.q, x.k, x.v},
          [o](const std::vector<Array>& in) { return flash_attention(in[0], in[1], in[2], o).lse; },
          {{g.B, g.T, g.H}, DType::kF32, r.lse}};
      co.rtol = co.atol = dt == DType::kBF16 ? 1.6e-2 : 2e-3;
      tol(cl, DType::kF32);
      s.cases.push_back(std::move(co));
      s.cases.push_back(std::move(cl));
    }
  }
  return s;
}

GRAFT_SPEC(FlashAttentionGrad) {
  Spec s{PrimitiveId::kFlashAttentionGrad};
  uint32_t seed = 500;
  for (const auto& [name, g] : geos()) {
    for (DType dt : {DType::kF64, DType::kF32}) {
      Inputs x = inputs(g, dt, seed += 10);
      Loops r = reference(g, x);
      // o and lse as flash_attention computes them (the grad primitive takes them as inputs).
      FlashAttentionOut f = flash_attention(x.q, x.k, x.v, opts(g));
      const std::string suffix = std::string("_") + dtype_name(dt);
      const FlashAttentionOptions o = opts(g);
      const char* what[] = {"_dq", "_dk", "_dv"};
      const std::vector<double>* want[] = {&r.dq, &r.dk, &r.dv};
      const Shape shapes[] = {x.q.shape(), x.k.shape(), x.k.shape()};
      for (int i = 0; i < 3; ++i) {
        Case c{name + what[i] + suffix,
               {x.q, x.k, x.v, f.o, f.lse, x.d_o, x.d_lse},
               [o, i](const std::vector<Array>& in) {
                 return flash_attention_grad(in[0], in[1], in[2], in[3], in[4], in[5], in[6], o)[i];
               },
               {shapes[i], dt, *want[i]}};
        tol(c, dt);
        s.cases.push_back(std::move(c));
      }
    }
  }
  // Half-precision q, k, v, o, do with f32 lse and dlse: dq, dk, dv in the operands' dtype.
  for (const auto& [name, g] : half_geos()) {
    for (DType dt : {DType::kBF16, DType::kF16}) {
      Inputs x = inputs(g, dt, seed += 10);
      x.d_lse = astype(x.d_lse, DType::kF32);
      Loops r = reference(g, x);
      FlashAttentionOut f = flash_attention(x.q, x.k, x.v, opts(g));
      const std::string suffix = std::string("_") + dtype_name(dt);
      const FlashAttentionOptions o = opts(g);
      const char* what[] = {"_dq", "_dk", "_dv"};
      const std::vector<double>* want[] = {&r.dq, &r.dk, &r.dv};
      const Shape shapes[] = {x.q.shape(), x.k.shape(), x.k.shape()};
      for (int i = 0; i < 3; ++i) {
        std::vector<double> rounded = *want[i];
        for (double& v : rounded) v = round_to(v, dt);
        Case c{name + what[i] + suffix,
               {x.q, x.k, x.v, f.o, f.lse, x.d_o, x.d_lse},
               [o, i](const std::vector<Array>& in) {
                 return flash_attention_grad(in[0], in[1], in[2], in[3], in[4], in[5], in[6], o)[i];
               },
               {shapes[i], dt, rounded}};
        // o enters rounded to dt (delta = rowsum(do o) moves by its rounding), and bf16 tiles
        // of p and ds may be rounded to bf16 before their products.
        c.rtol = c.atol = dt == DType::kBF16 ? 3e-2 : 4e-3;
        s.cases.push_back(std::move(c));
      }
    }
  }
  return s;
}

}  // namespace graft::spec
