// Direct tests of dot_general's transform rules, called on concrete arrays: jvp and vjp
// against finite-difference Jacobians in f64, second order by differentiating the rules
// through the drivers, vmap against a loop over the batch (with in_axes mixes), and the
// dtype bookkeeping of preferred_element_type.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitive.h"
#include "core/primitives/linalg.h"
#include "gtest/gtest.h"
#include "transforms/autodiff_core.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using Prim = std::shared_ptr<const Primitive>;
using Arrays = std::vector<Array>;

constexpr int kUnbatched = 1000;  // an in_axes entry meaning "not batched"

Prim prim_of(const Array& y, PrimitiveId id) {
  EXPECT_NE(y.primitive(), nullptr);
  EXPECT_EQ(y.primitive()->id(), id) << y.primitive()->name();
  return y.node()->primitive;
}

// Values in [lo, hi) of the given dtype (integers: floor of a uniform draw).
Array random_array(const Shape& s, DType dtype, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(numel(s));
  for (double& x : v) x = is_integral(dtype) ? std::floor(u(gen)) : u(gen);
  return astype(array<double>(v, s), dtype);
}
Array f64(const Shape& s, uint32_t seed = 3) { return random_array(s, DType::kF64, seed); }
Array ints(std::vector<int32_t> v, Shape s) { return array<int32_t>(v, s); }

// All values of the arrays, concatenated (an empty Array counts as `like`'s zeros).
std::vector<double> flat(const Arrays& xs, const Arrays& like = {}) {
  std::vector<double> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> v =
        xs[i].valid() ? xs[i].to_vector<double>() : std::vector<double>(like.at(i).size(), 0.0);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

double inner(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what, double tol = 1e-7) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_NEAR(got[k], want[k], tol * (1 + std::abs(want[k]))) << what << " at " << k;
  }
}

// (f(x + h d) - f(x - h d)) / 2h for the float entries `pos` of x moved along d; outputs that
// are NaN at x (a gather's fill value: a constant) get 0.
std::vector<double> fd(const std::function<Arrays(const Arrays&)>& f, const Arrays& x,
                       const std::vector<size_t>& pos, const Arrays& d) {
  const double h = 1e-6;
  auto at = [&](double s) {
    Arrays y = x;
    for (size_t k = 0; k < pos.size(); ++k) y[pos[k]] = x[pos[k]] + h * s * d[k];
    return flat(f(y));
  };
  std::vector<double> base = flat(f(x)), plus = at(1), minus = at(-1);
  for (size_t k = 0; k < plus.size(); ++k) {
    plus[k] = std::isnan(base[k]) ? 0 : (plus[k] - minus[k]) / (2 * h);
  }
  return plus;
}

std::vector<size_t> float_positions(const Arrays& in) {
  std::vector<size_t> pos;
  for (size_t i = 0; i < in.size(); ++i) {
    if (is_floating(in[i].dtype())) pos.push_back(i);
  }
  return pos;
}

// Random cotangents for the floating outputs (empty for the others).
Arrays random_cts(const Arrays& outs, uint32_t seed) {
  Arrays cts(outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    if (is_floating(outs[o].dtype())) cts[o] = f64(outs[o].shape(), seed + 50 + o);
  }
  return cts;
}

// First order: jvp(t) == J t and vjp(ct) == J^T ct, with J by finite differences column by
// column; non-float inputs get no cotangent; all-zero tangents give zero tangents.
void check_ad(const Prim& p, const Arrays& in, uint32_t seed = 1) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params());
  auto f = [&](const Arrays& x) { return bind(p, x); };
  Arrays outs = f(in);
  Arrays cts = random_cts(outs, seed);
  std::vector<double> ct = flat(cts, outs);
  Arrays got_vjp = p->vjp(in, outs, cts);
  ASSERT_EQ(got_vjp.size(), in.size());
  Arrays t(in.size());
  std::vector<double> want_jvp(ct.size(), 0.0);
  for (size_t i = 0; i < in.size(); ++i) {
    if (!is_floating(in[i].dtype())) {
      EXPECT_FALSE(got_vjp[i].valid()) << "input " << i << " is an index: no cotangent";
      continue;
    }
    t[i] = f64(in[i].shape(), seed + 10 + i);
    std::vector<double> ti = t[i].to_vector<double>(), want_vjp(in[i].size());
    for (int64_t j = 0; j < in[i].size(); ++j) {
      std::vector<double> e(in[i].size(), 0.0);
      e[j] = 1;
      std::vector<double> col = fd(f, in, {i}, {array<double>(e, in[i].shape())});
      for (size_t k = 0; k < col.size(); ++k) want_jvp[k] += col[k] * ti[j];
      want_vjp[j] = inner(col, ct);
    }
    ASSERT_TRUE(got_vjp[i].valid()) << "input " << i;
    EXPECT_EQ(got_vjp[i].shape(), in[i].shape());
    EXPECT_EQ(got_vjp[i].dtype(), in[i].dtype());
    expect_near(got_vjp[i].to_vector<double>(), want_vjp, "vjp of input " + std::to_string(i));
  }
  Arrays got = p->jvp(in, t, outs);
  ASSERT_EQ(got.size(), outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    if (!got[o].valid()) continue;
    EXPECT_EQ(got[o].shape(), outs[o].shape());
    EXPECT_EQ(got[o].dtype(), outs[o].dtype());
  }
  expect_near(flat(got, outs), want_jvp, "jvp");
  for (const Array& g : p->jvp(in, Arrays(in.size()), outs)) EXPECT_FALSE(g.valid());
  for (const Array& g : p->vjp(in, outs, Arrays(outs.size()))) EXPECT_FALSE(g.valid());
}

// Second order: the rules are differentiable. G(x, ct) = vjp(x; ct) and H(x, t) = jvp(x; t)
// are differentiated by the drivers (which apply the rules to the rules' graphs) w.r.t. the
// float primals and ct / t, and compared with finite differences of G and H; the drivers'
// pullbacks are checked against their jvps (<pullback(c), s> == <c, jvp(s)>).
void check_ad2(const Prim& p, const Arrays& in, uint32_t seed = 1) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params() + " (second order)");
  std::vector<size_t> pos = float_positions(in);
  Arrays outs = bind(p, in);
  std::vector<size_t> out_pos = float_positions(outs);
  // Float primals first, then the cotangents of float outputs (G) or the tangents (H).
  auto primals_of = [&](const Arrays& xs) {
    Arrays a = in;
    for (size_t k = 0; k < pos.size(); ++k) a[pos[k]] = xs[k];
    return a;
  };
  auto zero_filled = [](Arrays r, const Arrays& like) {
    for (size_t k = 0; k < r.size(); ++k) {
      if (!r[k].valid()) r[k] = zeros(like[k].shape(), DType::kF64);
    }
    return r;
  };
  FlatFn g = [&](const Arrays& xs) {
    Arrays a = primals_of(xs), cts(outs.size()), picked;
    for (size_t k = 0; k < out_pos.size(); ++k) cts[out_pos[k]] = xs[pos.size() + k];
    Arrays r = p->vjp(a, bind(p, a), cts);
    for (size_t i : pos) picked.push_back(r[i]);
    return zero_filled(picked, Arrays(xs.begin(), xs.begin() + pos.size()));
  };
  FlatFn h = [&](const Arrays& xs) {
    Arrays a = primals_of(xs), t(in.size());
    for (size_t k = 0; k < pos.size(); ++k) t[pos[k]] = xs[pos.size() + k];
    return zero_filled(p->jvp(a, t, bind(p, a)), outs);
  };
  for (int which = 0; which < 2; ++which) {
    SCOPED_TRACE(which == 0 ? "derivative of the vjp rule" : "derivative of the jvp rule");
    Arrays xs, s;
    for (size_t i : pos) xs.push_back(in[i]);
    if (which == 0) {
      for (size_t o : out_pos) xs.push_back(f64(outs[o].shape(), seed + 40 + o));
    } else {
      for (size_t i : pos) xs.push_back(f64(in[i].shape(), seed + 20 + i));
    }
    for (size_t k = 0; k < xs.size(); ++k) s.push_back(f64(xs[k].shape(), seed + 60 + k));
    std::vector<size_t> all(xs.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = k;
    const FlatFn& fn = which == 0 ? g : h;
    auto [vals, tans] = detail::jvp_flat(fn, xs, s);
    std::vector<double> want = fd(fn, xs, all, s);
    expect_near(flat(tans), want, "jvp", 1e-6);
    detail::VjpResult v = detail::vjp_flat(fn, xs);
    Arrays c;
    for (size_t o = 0; o < v.outputs.size(); ++o) c.push_back(f64(v.outputs[o].shape(), 77 + o));
    Arrays back = v.pullback(c);
    EXPECT_NEAR(inner(flat(back), flat(s)), inner(flat(c), want), 1e-6) << "vjp";
  }
}

Array at(const Array& x, int a, int64_t k) { return squeeze(slice_axis(x, a, k, k + 1), {a}); }

// vmap of p with in_axes (kUnbatched, or an axis; negative counts from the end) against a
// loop over the batch. Batched args stack `b` variants of in[i]: floats random, integers in
// [lo, hi).
void check_vmap(const Prim& p, const Arrays& in, const std::vector<int>& in_axes, double lo = -3,
                double hi = 8, uint32_t seed = 7, int64_t b = 3) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params());
  Arrays args(in.size());
  std::vector<int> dims(in.size(), -1);
  std::vector<Arrays> variants(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    SCOPED_TRACE("in_axes[" + std::to_string(i) + "]=" + std::to_string(in_axes[i]));
    if (in_axes[i] == kUnbatched) {
      args[i] = in[i];
      continue;
    }
    int r = in[i].ndim() + 1;
    dims[i] = in_axes[i] < 0 ? in_axes[i] + r : in_axes[i];
    bool integer = is_integral(in[i].dtype());
    double l = integer ? (is_unsigned(in[i].dtype()) ? 0 : lo) : -1, u = integer ? hi : 1;
    for (int64_t k = 0; k < b; ++k) {
      uint32_t s = seed + static_cast<uint32_t>(10 * i + k);
      variants[i].push_back(random_array(in[i].shape(), in[i].dtype(), s, l, u));
    }
    args[i] = stack(variants[i], dims[i]);
  }
  Batched out = p->vmap(args, dims);
  Arrays want0 = bind(p, in);
  ASSERT_EQ(out.outputs.size(), want0.size());
  ASSERT_EQ(out.dims.size(), want0.size());
  for (int64_t k = 0; k < b; ++k) {
    Arrays slice_in = in;
    for (size_t i = 0; i < in.size(); ++i) {
      if (dims[i] >= 0) slice_in[i] = variants[i][k];
    }
    Arrays want = bind(p, slice_in);
    for (size_t o = 0; o < want.size(); ++o) {
      ASSERT_GE(out.dims[o], 0);
      Array got = at(out.outputs[o], out.dims[o], k);
      EXPECT_EQ(got.shape(), want[o].shape()) << "batch " << k << " output " << o;
      EXPECT_EQ(got.dtype(), want[o].dtype());
      // Contractions may sum in another order when batched: equal up to rounding.
      expect_near(got.to_vector<double>(), want[o].to_vector<double>(),
                  "batch " + std::to_string(k), 1e-13);
    }
  }
}

// Every in_axes combination of {unbatched, 0, 1, -1} per argument (at least one batched).
std::vector<std::vector<int>> axis_mixes(size_t n) {
  const int choices[] = {kUnbatched, 0, 1, -1};
  std::vector<std::vector<int>> out;
  size_t total = 1;
  for (size_t i = 0; i < n; ++i) total *= 4;
  for (size_t c = 1; c < total; ++c) {
    std::vector<int> axes;
    for (size_t i = 0, r = c; i < n; ++i, r /= 4) axes.push_back(choices[r % 4]);
    out.push_back(axes);
  }
  return out;
}

Prim dot_prim(const Array& a, const Array& b, const DotDims& d,
              std::optional<DType> preferred = std::nullopt) {
  return prim_of(dot_general(a, b, d, preferred), PrimitiveId::kDotGeneral);
}

struct DotCase {
  Shape lhs, rhs;
  DotDims dims;
};

// Matmul, batched matmul, several contracting dims in crossed order, batch dims not leading,
// outer product, full contraction to a scalar, empty contraction.
std::vector<DotCase> dot_cases() {
  return {
      {{3, 4}, {4, 2}, {{1}, {0}, {}, {}}},
      {{2, 3, 4}, {2, 4, 5}, {{2}, {1}, {0}, {0}}},
      {{2, 3, 4, 2}, {4, 5, 2}, {{2, 3}, {0, 2}, {}, {}}},
      {{3, 2, 4}, {4, 3, 2}, {{0, 2}, {1, 0}, {}, {}}},
      {{3, 2, 4}, {4, 5, 2}, {{2}, {0}, {1}, {2}}},
      {{4, 3, 2, 5}, {2, 3, 5, 2}, {{3, 1}, {2, 1}, {2}, {0}}},
      {{3}, {4}, {{}, {}, {}, {}}},
      {{3, 4}, {3, 4}, {{0, 1}, {0, 1}, {}, {}}},
      {{2, 0}, {0, 3}, {{1}, {0}, {}, {}}},
  };
}

TEST(LinalgRules, DotGeneralAd) {
  uint32_t seed = 1;
  for (const DotCase& c : dot_cases()) {
    Array a = f64(c.lhs, seed++), b = f64(c.rhs, seed++);
    Prim p = dot_prim(a, b, c.dims);
    check_ad(p, {a, b});
    check_ad2(p, {a, b});
    // x @ x: the same array as both operands.
    if (c.lhs == c.rhs) check_ad(p, {a, a});
  }
}

TEST(LinalgRules, DotGeneralVmap) {
  uint32_t seed = 1;
  for (const DotCase& c : dot_cases()) {
    Array a = f64(c.lhs, seed++), b = f64(c.rhs, seed++);
    Prim p = dot_prim(a, b, c.dims);
    for (const auto& axes : axis_mixes(2)) check_vmap(p, {a, b}, axes);
    for (int al = 0; al <= a.ndim(); ++al) {
      check_vmap(p, {a, b}, {al, kUnbatched});
      for (int ar = 0; ar <= b.ndim(); ++ar) check_vmap(p, {a, b}, {al, ar});
    }
    for (int ar = 0; ar <= b.ndim(); ++ar) check_vmap(p, {a, b}, {kUnbatched, ar});
  }
  // Integer operands, and a preferred dtype.
  Array ia = astype(random_array({3, 4}, DType::kF64, 4, -5, 5), DType::kI32);
  Array ib = astype(random_array({4, 2}, DType::kF64, 5, -5, 5), DType::kI32);
  Prim ip = dot_prim(ia, ib, {{1}, {0}, {}, {}}, DType::kI64);
  for (const auto& axes : axis_mixes(2)) check_vmap(ip, {ia, ib}, axes);
}

TEST(LinalgRules, DotGeneralNoBatchLoop) {
  // The batching rule is one dot_general, not a loop: a batch of matmuls in one node.
  Array a = f64({5, 3, 4}), b = f64({4, 2});
  Prim p = dot_prim(f64({3, 4}), b, {{1}, {0}, {}, {}});
  Batched r = p->vmap({a, b}, {0, -1});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].primitive()->id(), PrimitiveId::kDotGeneral);
  EXPECT_EQ(r.dims[0], 0);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{5, 3, 2}));
}

TEST(LinalgRules, DotGeneralPreferredDtype) {
  // bf16 operands with an f32 result: cotangents come back in bf16, tangents in f32, and the
  // values match the f64 computation to bf16 precision.
  Array a = f64({3, 4}, 1), b = f64({4, 2}, 2);
  Array a16 = astype(a, DType::kBF16), b16 = astype(b, DType::kBF16);
  DotDims d{{1}, {0}, {}, {}};
  Prim p = dot_prim(a16, b16, d, DType::kF32);
  Arrays outs = bind(p, {a16, b16});
  ASSERT_EQ(outs[0].dtype(), DType::kF32);
  Array ct = f64({3, 2}, 3);
  Arrays g = p->vjp({a16, b16}, outs, {astype(ct, DType::kF32)});
  ASSERT_EQ(g[0].dtype(), DType::kBF16);
  ASSERT_EQ(g[1].dtype(), DType::kBF16);
  // ct @ b^T and a^T @ ct in f64 from the bf16-rounded operands.
  std::vector<double> av = a16.to_vector<double>(), bv = b16.to_vector<double>();
  std::vector<double> cv = astype(ct, DType::kF32).to_vector<double>();
  std::vector<double> ga = g[0].to_vector<double>(), gb = g[1].to_vector<double>();
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 4; ++k) {
      double want = 0;
      for (int j = 0; j < 2; ++j) want += cv[i * 2 + j] * bv[k * 2 + j];
      EXPECT_NEAR(ga[i * 4 + k], want, 1e-2 * (1 + std::abs(want)));
    }
  }
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 2; ++j) {
      double want = 0;
      for (int i = 0; i < 3; ++i) want += av[i * 4 + k] * cv[i * 2 + j];
      EXPECT_NEAR(gb[k * 2 + j], want, 1e-2 * (1 + std::abs(want)));
    }
  }
  Arrays t = p->jvp({a16, b16}, {astype(f64({3, 4}, 4), DType::kBF16), Array()}, outs);
  EXPECT_EQ(t[0].dtype(), DType::kF32);
  // f64 operands with an f32 result: the cotangents are f64.
  Prim q = dot_prim(a, b, d, DType::kF32);
  Arrays gq = q->vjp({a, b}, bind(q, {a, b}), {astype(ct, DType::kF32)});
  EXPECT_EQ(gq[0].dtype(), DType::kF64);
  EXPECT_EQ(gq[1].dtype(), DType::kF64);
}

TEST(LinalgRules, IntegerOperandsHaveNoDerivative) {
  Array ia = astype(random_array({3, 4}, DType::kF64, 4, -5, 5), DType::kI32);
  Array ib = astype(random_array({4, 2}, DType::kF64, 5, -5, 5), DType::kI32);
  for (std::optional<DType> pref : {std::optional<DType>(), std::optional<DType>(DType::kF32)}) {
    Prim p = dot_prim(ia, ib, {{1}, {0}, {}, {}}, pref);
    Arrays outs = bind(p, {ia, ib});
    Arrays g = p->vjp({ia, ib}, outs, {ones(outs[0].shape(), outs[0].dtype())});
    EXPECT_FALSE(g[0].valid());
    EXPECT_FALSE(g[1].valid());
    EXPECT_FALSE(p->jvp({ia, ib}, {Array(), Array()}, outs)[0].valid());
  }
}

}  // namespace
}  // namespace graft
