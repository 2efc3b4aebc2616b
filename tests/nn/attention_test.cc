// nn::causal_attention (the fused flash_attention primitive) against independent references: a plain C++
// loop, the naive attention (plain ops: its graft gradient is computed by ordinary autodiff),
// and central finite differences in f64. Plus the memory claim (what the pullback keeps) and
// the composition the Llama uses: jit(value_and_grad(scan over layers)).
#include "nn/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/remat.h"
#include "transforms/vmap.h"

// Stacked per-layer weights: [L, C, H*D], [L, C, KV*D] x2, [L, H*D, C].
struct AttnLayers {
  graft::Array wq, wk, wv, wo;
};
GRAFT_TREE(AttnLayers, wq, wk, wv, wo);

namespace graft::nn {
namespace {

using Layers = ::AttnLayers;
using testing::expect_allclose;

struct Case {
  std::string name;
  int64_t B, T, S, H, KV, D, block_q, block_k;
};

std::vector<Case> cases() {
  return {
      {"gqa", 1, 64, 64, 8, 2, 16, 16, 16},
      {"gqa_uneven_blocks", 2, 50, 50, 8, 2, 8, 16, 8},
      {"mha_t_not_multiple", 2, 37, 37, 4, 4, 8, 16, 16},
      {"mqa", 1, 40, 40, 4, 1, 8, 8, 16},
      {"decode_t_less_s", 2, 20, 45, 4, 2, 8, 8, 16},
      {"single_query", 1, 1, 33, 4, 2, 8, 64, 8},
      {"block_larger_than_seq", 1, 10, 10, 2, 1, 4, 64, 64},
      {"block_one", 1, 5, 7, 4, 2, 4, 1, 1},
      // f32 keys are packed transposed by the shape kernels' tiled copy (8 x 8 register
      // blocks): whole blocks and tails of both the head dim and the key tile.
      {"head_dim_and_keys_past_16s", 1, 45, 45, 4, 2, 40, 16, 24},
  };
}

struct Qkv {
  Array q, k, v;
};

Qkv make_qkv(const Case& c, uint32_t seed, DType dtype = DType::kF32) {
  Array key = random::key(seed);
  Array ks = random::split(key, 3);
  auto part = [&](int i, const Shape& s) {
    Array x = random::normal(take(ks, Array(i), 0), s, DType::kF32);
    return astype(x, dtype);
  };
  return {part(0, {c.B, c.T, c.H, c.D}), part(1, {c.B, c.S, c.KV, c.D}),
          part(2, {c.B, c.S, c.KV, c.D})};
}

AttentionOptions opts(const Case& c) { return {.block_q = c.block_q, .block_k = c.block_k}; }

// Attention by loops over every (b, t, h): an independent reference for both versions.
std::vector<double> loop_attention(const Case& c, const Qkv& x) {
  std::vector<float> q = x.q.to_vector<float>(), k = x.k.to_vector<float>(),
                     v = x.v.to_vector<float>();
  std::vector<double> out(q.size());
  const int64_t G = c.H / c.KV;
  const double scale = 1.0 / std::sqrt(double(c.D));
  for (int64_t b = 0; b < c.B; ++b) {
    for (int64_t t = 0; t < c.T; ++t) {
      for (int64_t h = 0; h < c.H; ++h) {
        const int64_t kvh = h / G, last = c.S - c.T + t;
        std::vector<double> w(last + 1);
        double mx = -INFINITY, den = 0;
        for (int64_t s = 0; s <= last; ++s) {
          double dot = 0;
          for (int64_t d = 0; d < c.D; ++d) {
            dot += double(q[((b * c.T + t) * c.H + h) * c.D + d]) *
                   k[((b * c.S + s) * c.KV + kvh) * c.D + d];
          }
          w[s] = dot * scale;
          mx = std::max(mx, w[s]);
        }
        for (double& e : w) den += (e = std::exp(e - mx));
        for (int64_t d = 0; d < c.D; ++d) {
          double acc = 0;
          for (int64_t s = 0; s <= last; ++s)
            acc += w[s] * v[((b * c.S + s) * c.KV + kvh) * c.D + d];
          out[((b * c.T + t) * c.H + h) * c.D + d] = acc / den;
        }
      }
    }
  }
  return out;
}

TEST(AttentionTest, ForwardMatchesNaiveAndLoops) {
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    Qkv x = make_qkv(c, seed++);
    Array tiled = causal_attention(x.q, x.k, x.v, opts(c));
    Array naive = naive_causal_attention(x.q, x.k, x.v);
    ASSERT_EQ(tiled.shape(), x.q.shape()) << c.name;
    EXPECT_EQ(tiled.dtype(), DType::kF32) << c.name;
    expect_allclose(tiled, naive, 1e-5, 1e-6, c.name + " tiled vs naive");
    Array loops = array(loop_attention(c, x), x.q.shape());
    expect_allclose(tiled, loops, 1e-5, 1e-6, c.name + " tiled vs loops");
    expect_allclose(naive, loops, 1e-5, 1e-6, c.name + " naive vs loops");
  }
}

TEST(AttentionTest, Bf16InputsReturnBf16WithinBf16RoundingOfF32) {
  Case c{"bf16", 2, 48, 48, 8, 2, 16, 16, 32};
  Qkv x = make_qkv(c, 7, DType::kBF16);
  Array tiled = causal_attention(x.q, x.k, x.v, opts(c));
  EXPECT_EQ(tiled.dtype(), DType::kBF16);
  // The same bf16 inputs in f32. Scores and softmax statistics are f32; the probabilities may
  // be rounded to bf16 before the p v product (AVX512-BF16 tiles), an absolute error of a few
  // 2^-9 on outputs of size <= 1, besides the final rounding of o.
  Qkv x32{astype(x.q, DType::kF32), astype(x.k, DType::kF32), astype(x.v, DType::kF32)};
  Array ref = naive_causal_attention(x32.q, x32.k, x32.v);
  expect_allclose(tiled, ref, 4e-3, 4e-3, "bf16 tiled vs f32 naive");
  expect_allclose(tiled, naive_causal_attention(x.q, x.k, x.v), 8e-3, 8e-3, "bf16 tiled vs naive");
}

// sum(attention(q, k, v) * w): a scalar whose gradient sees every output element.
template <typename Attn>
auto weighted_loss(Attn attn, Array w) {
  return [attn, w](const Array& q, const Array& k, const Array& v) {
    return sum(astype(attn(q, k, v), DType::kF32) * w);
  };
}

TEST(AttentionTest, GradientsMatchNaiveAutodiff) {
  uint32_t seed = 100;
  for (const Case& c : cases()) {
    Qkv x = make_qkv(c, seed++);
    Array w = random::normal(random::key(seed++), {c.B, c.T, c.H, c.D});
    AttentionOptions o = opts(c);
    auto tiled = weighted_loss([o](const Array& q, const Array& k,
                                   const Array& v) { return causal_attention(q, k, v, o); },
                               w);
    auto naive = weighted_loss([](const Array& q, const Array& k,
                                  const Array& v) { return naive_causal_attention(q, k, v); },
                               w);
    auto [gq, gk, gv] = grad(tiled, argnums<0, 1, 2>)(x.q, x.k, x.v);
    auto [rq, rk, rv] = grad(naive, argnums<0, 1, 2>)(x.q, x.k, x.v);
    expect_allclose(gq, rq, 1e-4, 1e-5, c.name + " dq");
    expect_allclose(gk, rk, 1e-4, 1e-5, c.name + " dk");
    expect_allclose(gv, rv, 1e-4, 1e-5, c.name + " dv");
  }
}

TEST(AttentionTest, Bf16GradientsHaveInputDtypesAndMatchNaive) {
  Case c{"bf16", 1, 24, 24, 4, 2, 8, 8, 8};
  Qkv x = make_qkv(c, 11, DType::kBF16);
  Array w = random::normal(random::key(12), {c.B, c.T, c.H, c.D});
  AttentionOptions o = opts(c);
  auto [gq, gk, gv] =
      grad(weighted_loss([o](const Array& q, const Array& k,
                             const Array& v) { return causal_attention(q, k, v, o); },
                         w),
           argnums<0, 1, 2>)(x.q, x.k, x.v);
  auto [rq, rk, rv] =
      grad(weighted_loss([](const Array& q, const Array& k,
                            const Array& v) { return naive_causal_attention(q, k, v); },
                         w),
           argnums<0, 1, 2>)(x.q, x.k, x.v);
  EXPECT_EQ(gq.dtype(), DType::kBF16);
  EXPECT_EQ(gk.dtype(), DType::kBF16);
  EXPECT_EQ(gv.dtype(), DType::kBF16);
  expect_allclose(gq, rq, 2e-2, 2e-2, "bf16 dq");
  expect_allclose(gk, rk, 2e-2, 2e-2, "bf16 dk");
  expect_allclose(gv, rv, 2e-2, 2e-2, "bf16 dv");
}

// Central differences in f64 along a random direction for each argument.
TEST(AttentionTest, GradientsMatchFiniteDifferencesInF64) {
  Case c{"fd", 1, 5, 7, 4, 2, 3, 2, 3};
  Qkv x = make_qkv(c, 21, DType::kF64);
  Array w = astype(random::normal(random::key(22), {c.B, c.T, c.H, c.D}), DType::kF64);
  AttentionOptions o = opts(c);
  auto loss = [o, w](const Array& q, const Array& k, const Array& v) {
    return sum(causal_attention(q, k, v, o) * w);
  };
  EXPECT_EQ(causal_attention(x.q, x.k, x.v, o).dtype(), DType::kF64);
  auto [gq, gk, gv] = grad(loss, argnums<0, 1, 2>)(x.q, x.k, x.v);
  std::vector<Array> args{x.q, x.k, x.v}, grads{gq, gk, gv};
  const double eps = 1e-5;
  for (int i = 0; i < 3; ++i) {
    Array u = astype(random::normal(random::key(30 + i), args[i].shape()), DType::kF64);
    std::vector<Array> plus = args, minus = args;
    plus[i] = args[i] + u * eps;
    minus[i] = args[i] - u * eps;
    double fd = (loss(plus[0], plus[1], plus[2]).item<double>() -
                 loss(minus[0], minus[1], minus[2]).item<double>()) /
                (2 * eps);
    double analytic = sum(grads[i] * u).item<double>();
    EXPECT_NEAR(analytic, fd, 1e-7 * (1 + std::abs(fd))) << "argument " << i;
  }
}

// Forward mode and second order (the fused primitive's derivative is differentiable again):
// jvp and the gradient of a gradient against the naive attention's ordinary autodiff, f64.
TEST(AttentionTest, JvpAndSecondOrderMatchNaive) {
  Case c{"second_order", 1, 6, 9, 4, 2, 5, 4, 2};
  Qkv x = make_qkv(c, 41, DType::kF64), t = make_qkv(c, 42, DType::kF64);
  AttentionOptions o = opts(c);
  auto fused = [o](const Array& q, const Array& k, const Array& v) {
    return causal_attention(q, k, v, o);
  };
  auto naive = [](const Array& q, const Array& k, const Array& v) {
    return naive_causal_attention(q, k, v);
  };
  auto [y, ty] = jvp(fused, std::tuple{x.q, x.k, x.v}, std::tuple{t.q, t.k, t.v});
  auto [ry, rty] = jvp(naive, std::tuple{x.q, x.k, x.v}, std::tuple{t.q, t.k, t.v});
  expect_allclose(y, ry, 1e-12, 1e-12, "primal");
  expect_allclose(ty, rty, 1e-10, 1e-10, "tangent");
  Array w = astype(random::normal(random::key(43), {c.B, c.T, c.H, c.D}), DType::kF64);
  // d/dk of <w, d/dq sum(f^2)>: reverse over reverse through the fused backward pass.
  auto second = [&](auto f) {
    auto inner = [f](const Array& q, const Array& k, const Array& v) {
      return sum(square(f(q, k, v)));
    };
    auto outer = [inner, w](const Array& q, const Array& k, const Array& v) {
      return sum(grad(inner, argnums<0>)(q, k, v) * w);
    };
    return grad(outer, argnums<1>)(x.q, x.k, x.v);
  };
  expect_allclose(second(fused), second(naive), 1e-10, 1e-10, "second order");
}

int64_t total_bytes(const std::vector<SavedResidual>& r) {
  int64_t t = 0;
  for (const auto& s : r) t += s.bytes;
  return t;
}

// The memory claim: the pullback keeps q, k, v, o (f32) and lse, nothing with a T x S extent.
TEST(AttentionTest, ResidualsHoldNoScoreMatrix) {
  Case c{"mem", 1, 256, 256, 4, 2, 16, 64, 64};
  Qkv x = make_qkv(c, 41);
  auto tiled = [](const Array& q, const Array& k, const Array& v) {
    return causal_attention(q, k, v, {.block_q = 64, .block_k = 64});
  };
  auto naive = [](const Array& q, const Array& k, const Array& v) {
    return naive_causal_attention(q, k, v);
  };
  auto res = saved_residuals(tiled, x.q, x.k, x.v);
  std::string table = print_saved_residuals(tiled, x.q, x.k, x.v);
  const int64_t qo = c.B * c.T * c.H * c.D, kv = c.B * c.S * c.KV * c.D, rows = c.B * c.T * c.H;
  const int64_t bound = 4 * (2 * qo + 2 * kv + rows);  // q, k, v, o and lse in f32
  for (const auto& r : res) {
    int64_t n = 1, big_dims = 0;
    for (int64_t d : r.aval.shape) {
      n *= d;
      big_dims += d >= c.T;
    }
    EXPECT_LT(n, c.T * c.S) << table;
    EXPECT_LT(big_dims, 2) << table;
  }
  EXPECT_EQ(res.size(), 5u) << table;
  EXPECT_LE(total_bytes(res), bound) << table;
  // The naive version keeps softmax(q k^T) ([B, KV, G, T, S]) and exceeds the bound.
  auto naive_res = saved_residuals(naive, x.q, x.k, x.v);
  EXPECT_GT(total_bytes(naive_res), bound) << print_saved_residuals(naive, x.q, x.k, x.v);
}

// The Llama's composition: attention inside scan over layers inside value_and_grad inside jit.
constexpr int64_t kB = 2, kT = 12, kC = 16, kH = 4, kKV = 2, kD = 4, kL = 2;

template <typename Attn>
auto stack_loss(Attn attn) {
  return [attn](const Layers& p, const Array& x) {
    auto layer = [attn](const Array& h, const Layers& w) {
      Array q = reshape(matmul(h, w.wq), {kB, kT, kH, kD});
      Array k = reshape(matmul(h, w.wk), {kB, kT, kKV, kD});
      Array v = reshape(matmul(h, w.wv), {kB, kT, kKV, kD});
      Array a = reshape(attn(q, k, v), {kB, kT, kH * kD});
      return std::pair{h + matmul(a, w.wo), Array(0.0f)};
    };
    auto [out, ys] = scan(layer, x, p);
    return mean(square(out));
  };
}

TEST(AttentionTest, JitValueAndGradOfScanMatchesEagerAndNaive) {
  Array ks = random::split(random::key(51), 5);
  auto w = [&](int i, const Shape& s) { return random::normal(take(ks, Array(i), 0), s) * 0.3; };
  Layers p{w(0, {kL, kC, kH * kD}), w(1, {kL, kC, kKV * kD}), w(2, {kL, kC, kKV * kD}),
           w(3, {kL, kH * kD, kC})};
  Array x = w(4, {kB, kT, kC});
  auto tiled = stack_loss([](const Array& q, const Array& k, const Array& v) {
    return causal_attention(q, k, v, {.block_q = 5, .block_k = 4});
  });
  auto naive = stack_loss([](const Array& q, const Array& k, const Array& v) {
    return naive_causal_attention(q, k, v);
  });
  auto step = jit([&](const Layers& p, const Array& x) { return value_and_grad(tiled)(p, x); });
  auto [lj, gj] = step(p, x);
  auto [le, ge] = value_and_grad(tiled)(p, x);
  auto [ln, gn] = value_and_grad(naive)(p, x);
  expect_allclose(lj, le, 1e-5, 1e-7, "loss jit vs eager");
  expect_allclose(lj, ln, 1e-5, 1e-7, "loss jit vs naive");
  auto jl = tree_leaves(gj), el = tree_leaves(ge), nl = tree_leaves(gn);
  ASSERT_EQ(jl.size(), 4u);
  for (size_t i = 0; i < jl.size(); ++i) {
    expect_allclose(jl[i], el[i], 1e-4, 1e-6, "grad jit vs eager " + std::to_string(i));
    expect_allclose(jl[i], nl[i], 1e-4, 1e-6, "grad jit vs naive " + std::to_string(i));
  }
  // A second call hits the cache and gives the same values.
  auto [lj2, gj2] = step(p, x);
  EXPECT_EQ(lj2.item<float>(), lj.item<float>());
}

TEST(AttentionTest, VmapOfAttentionAndOfItsGradientMatchesPerExample) {
  Case c{"vmap", 1, 9, 11, 4, 2, 4, 4, 4};
  const int64_t n = 3;
  Array ks = random::split(random::key(61), 3);
  Array q = random::normal(take(ks, Array(0), 0), {n, c.B, c.T, c.H, c.D});
  Array k = random::normal(take(ks, Array(1), 0), {n, c.B, c.S, c.KV, c.D});
  Array v = random::normal(take(ks, Array(2), 0), {n, c.B, c.S, c.KV, c.D});
  AttentionOptions o = opts(c);
  auto attn = [o](const Array& q, const Array& k, const Array& v) {
    return causal_attention(q, k, v, o);
  };
  auto loss = [o](const Array& q, const Array& k, const Array& v) {
    return sum(square(causal_attention(q, k, v, o)));
  };
  auto naive_loss = [](const Array& q, const Array& k, const Array& v) {
    return sum(square(naive_causal_attention(q, k, v)));
  };
  Array ys = vmap(attn)(q, k, v);
  auto [gq, gk, gv] = vmap(grad(loss, argnums<0, 1, 2>))(q, k, v);
  for (int64_t i = 0; i < n; ++i) {
    Array qi = take(q, Array(i), 0), ki = take(k, Array(i), 0), vi = take(v, Array(i), 0);
    std::string at = " example " + std::to_string(i);
    expect_allclose(take(ys, Array(i), 0), naive_causal_attention(qi, ki, vi), 1e-5, 1e-6,
                    "vmap forward" + at);
    auto [rq, rk, rv] = grad(naive_loss, argnums<0, 1, 2>)(qi, ki, vi);
    expect_allclose(take(gq, Array(i), 0), rq, 1e-4, 1e-5, "vmap dq" + at);
    expect_allclose(take(gk, Array(i), 0), rk, 1e-4, 1e-5, "vmap dk" + at);
    expect_allclose(take(gv, Array(i), 0), rv, 1e-4, 1e-5, "vmap dv" + at);
  }
}

TEST(AttentionTest, UnderCheckpointGradientsMatchNaive) {
  Case c{"remat", 1, 16, 16, 4, 2, 4, 4, 8};
  Qkv x = make_qkv(c, 71);
  AttentionOptions o = opts(c);
  auto loss = checkpoint([o](const Array& q, const Array& k, const Array& v) {
    return sum(square(causal_attention(q, k, v, o)));
  });
  auto naive_loss = [](const Array& q, const Array& k, const Array& v) {
    return sum(square(naive_causal_attention(q, k, v)));
  };
  auto [gq, gk, gv] = grad(loss, argnums<0, 1, 2>)(x.q, x.k, x.v);
  auto [rq, rk, rv] = grad(naive_loss, argnums<0, 1, 2>)(x.q, x.k, x.v);
  expect_allclose(gq, rq, 1e-4, 1e-5, "remat dq");
  expect_allclose(gk, rk, 1e-4, 1e-5, "remat dk");
  expect_allclose(gv, rv, 1e-4, 1e-5, "remat dv");
}

void expect_error(const std::function<void()>& f, const std::string& op) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
  }
}

TEST(AttentionTest, MisuseIsAClearError) {
  Array q = zeros({1, 4, 4, 8}), k = zeros({1, 4, 2, 8});
  expect_error([&] { causal_attention(q, k, zeros({1, 4, 2, 4})); }, "causal_attention");
  expect_error(
      [&] {
        causal_attention(q, zeros({1, 4, 3, 8}), zeros({1, 4, 3, 8}));
      },
      "causal_attention");
  expect_error(
      [&] {
        causal_attention(q, zeros({1, 3, 2, 8}), zeros({1, 3, 2, 8}));
      },
      "causal_attention");
  expect_error([&] { causal_attention(q, k, k, {.block_q = 0}); }, "causal_attention");
  expect_error([&] { causal_attention(reshape(q, {4, 4, 8}), k, k); }, "causal_attention");
  expect_error(
      [&] {
        naive_causal_attention(q, k, zeros({1, 4, 2, 4}));
      },
      "naive_causal_attention");
}

}  // namespace
}  // namespace graft::nn
