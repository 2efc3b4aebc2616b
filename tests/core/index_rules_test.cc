// Direct tests of the index family's transform rules (gather, scatter_add, sort), called on
// concrete arrays. jvp and vjp are checked against Jacobians from central finite differences
// in f64; second order differentiates the rules themselves (through the jvp / vjp drivers)
// against finite differences of the rules; vmap against a loop over the batch.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitive.h"
#include "core/primitives/index.h"
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

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  }
  return true;
}

// vmap of p with in_axes (kUnbatched, or an axis; negative counts from the end) against a
// loop over the batch. Batched args stack `b` variants of in[i]: floats random, integers in
// [lo, hi) (so indices can also miss), exactly equal results expected.
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
      EXPECT_TRUE(same_values(got.to_vector<double>(), want[o].to_vector<double>()))
          << "batch " << k << " output " << o;
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

Prim gather_prim(const Array& x, const Array& idx, int axis, int bd, GatherMode mode) {
  return prim_of(apply<Gather>({x, idx}, axis, bd, mode), PrimitiveId::kGather);
}

// ---- gather ----

TEST(IndexRules, GatherAd) {
  // In-range, wrapped (negative) and missing indices; a duplicate; several layouts.
  Array x = f64({4, 5});
  Array idx = ints({0, 3, -1, 7, 3, -6}, {2, 3});
  for (GatherMode mode : {GatherMode::kFill, GatherMode::kClip}) {
    for (int axis : {0, 1}) {
      Prim p = gather_prim(x, idx, axis, 0, mode);
      check_ad(p, {x, idx});
      check_ad2(p, {x, idx});
    }
    // batch_dims: per-row indices.
    Array y = f64({3, 4, 5, 2});
    Array bidx = ints({0, 4, -2, 9, 1, 1, 2, 3, -9}, {3, 3});
    Prim q = gather_prim(y, bidx, 2, 1, mode);
    check_ad(q, {y, bidx});
    check_ad2(q, {y, bidx});
    // Scalar index, rank-1 operand; u8 indices.
    check_ad(gather_prim(f64({6}), ints({-2}, {}), 0, 0, mode), {f64({6}), ints({-2}, {})});
    Array u = astype(ints({5, 0, 200}, {3}), DType::kU8);
    check_ad(gather_prim(f64({6, 2}), u, 0, 0, mode), {f64({6, 2}), u});
  }
}

TEST(IndexRules, GatherFillTangentIsZeroWhereIndexMisses) {
  Array x = f64({3});
  Array idx = ints({5, 1, -4}, {3});
  Prim p = gather_prim(x, idx, 0, 0, GatherMode::kFill);
  Array t = array<double>({1, 2, 3});
  Arrays out = bind(p, {x, idx});
  EXPECT_EQ(p->jvp({x, idx}, {t, Array()}, out)[0].to_vector<double>(),
            (std::vector<double>{0, 2, 0}));
  // kClip: the cotangent goes to the clamped element (5 -> 2, -4 -> 0).
  Prim c = gather_prim(x, idx, 0, 0, GatherMode::kClip);
  Array ct = array<double>({1, 10, 100});
  EXPECT_EQ(c->vjp({x, idx}, bind(c, {x, idx}), {ct})[0].to_vector<double>(),
            (std::vector<double>{100, 10, 1}));
}

TEST(IndexRules, GatherEmpty) {
  Array x = f64({0, 3});
  Array idx = zeros({0}, DType::kI32);
  check_ad(gather_prim(x, idx, 0, 0, GatherMode::kFill), {x, idx});
  Array y = f64({2, 3});
  check_ad(gather_prim(y, idx, 1, 0, GatherMode::kClip), {y, idx});
  check_vmap(gather_prim(y, idx, 1, 0, GatherMode::kClip), {y, idx}, {0, 0});
}

TEST(IndexRules, GatherVmap) {
  Array x = f64({4, 5, 2});
  Array idx = ints({0, 3, -1, 7, 3, 2}, {2, 3});
  for (GatherMode mode : {GatherMode::kFill, GatherMode::kClip}) {
    for (int axis : {0, 1, 2}) {
      Prim p = gather_prim(x, idx, axis, 0, mode);
      for (const auto& axes : axis_mixes(2)) check_vmap(p, {x, idx}, axes);
    }
    // With batch dims (operand and indices share the leading dims).
    Array y = f64({3, 4, 5});
    Array bidx = ints({0, 4, -2, 9, 1, 1}, {3, 2});
    for (int axis : {1, 2}) {
      Prim q = gather_prim(y, bidx, axis, 1, mode);
      for (const auto& axes : axis_mixes(2)) check_vmap(q, {y, bidx}, axes);
      for (int a : {2, 3}) {
        check_vmap(q, {y, bidx}, {a, kUnbatched});
        check_vmap(q, {y, bidx}, {a, 2});
      }
    }
    Prim r = gather_prim(y, ints({1, 0, 2}, {3}), 1, 1, mode);  // rank-1 indices, batch_dims 1
    for (const auto& axes : axis_mixes(2)) check_vmap(r, {y, ints({1, 0, 2}, {3})}, axes);
  }
}

// ---- scatter_add ----

Prim scatter_prim(const Array& x, const Array& idx, const Array& u, int axis, int bd) {
  return prim_of(apply<ScatterAdd>({x, idx, u}, axis, bd), PrimitiveId::kScatterAdd);
}

TEST(IndexRules, ScatterAddAd) {
  Array x = f64({4, 5});
  Array idx = ints({0, 3, -1, 7, 3, -6}, {2, 3});
  Prim p0 = scatter_prim(x, idx, f64({2, 3, 5}), 0, 0);
  check_ad(p0, {x, idx, f64({2, 3, 5})});
  check_ad2(p0, {x, idx, f64({2, 3, 5})});
  Prim p1 = scatter_prim(x, idx, f64({4, 2, 3}), 1, 0);
  check_ad(p1, {x, idx, f64({4, 2, 3})});
  check_ad2(p1, {x, idx, f64({4, 2, 3})});
  Array y = f64({3, 4, 2});
  Array bidx = ints({0, 4, -2, 9, 1, 1}, {3, 2});
  Prim q = scatter_prim(y, bidx, f64({3, 2, 2}), 1, 1);
  check_ad(q, {y, bidx, f64({3, 2, 2})});
  check_ad2(q, {y, bidx, f64({3, 2, 2})});
  // Only one of operand / updates differentiated.
  Arrays in{x, idx, f64({2, 3, 5})};
  Arrays outs = bind(p0, in), t{f64({4, 5}, 9), Array(), Array()};
  EXPECT_EQ(p0->jvp(in, t, outs)[0].to_vector<double>(), t[0].to_vector<double>());
}

TEST(IndexRules, ScatterAddDroppedUpdatesGetZero) {
  Array x = f64({3});
  Array idx = ints({5, 1, -4, -3}, {4});
  Prim p = scatter_prim(x, idx, f64({4}), 0, 0);
  Array ct = array<double>({1, 10, 100});
  Arrays g = p->vjp({x, idx, f64({4})}, bind(p, {x, idx, f64({4})}), {ct});
  EXPECT_EQ(g[0].to_vector<double>(), ct.to_vector<double>());
  EXPECT_FALSE(g[1].valid());
  EXPECT_EQ(g[2].to_vector<double>(), (std::vector<double>{0, 10, 0, 1}));
  // Unsigned indices, an axis longer than u8 can address: nothing is dropped.
  Array u = astype(ints({255, 3}, {2}), DType::kU8);
  Array big = f64({300});
  Prim b = scatter_prim(big, u, f64({2}), 0, 0);
  Array ct2 = f64({300}, 5);
  std::vector<double> c = ct2.to_vector<double>();
  EXPECT_EQ(b->vjp({big, u, f64({2})}, bind(b, {big, u, f64({2})}), {ct2})[2].to_vector<double>(),
            (std::vector<double>{c[255], c[3]}));
}

TEST(IndexRules, ScatterAddVmap) {
  Array x = f64({4, 5});
  Array idx = ints({0, 3, -1, 7, 3, 2}, {2, 3});
  Prim p0 = scatter_prim(x, idx, f64({2, 3, 5}), 0, 0);
  Prim p1 = scatter_prim(x, idx, f64({4, 2, 3}), 1, 0);
  for (const auto& axes : axis_mixes(3)) {
    check_vmap(p0, {x, idx, f64({2, 3, 5})}, axes);
    check_vmap(p1, {x, idx, f64({4, 2, 3})}, axes);
  }
  Array y = f64({3, 4, 2});
  Array bidx = ints({0, 4, -2, 9, 1, 1}, {3, 2});
  Prim q = scatter_prim(y, bidx, f64({3, 2, 2}), 1, 1);
  for (const auto& axes : axis_mixes(3)) check_vmap(q, {y, bidx, f64({3, 2, 2})}, axes);
  // Integer operands batch too.
  Array xi = astype(f64({4, 5}), DType::kI32);
  Prim pi = scatter_prim(xi, idx, astype(f64({2, 3, 5}), DType::kI32), 0, 0);
  check_vmap(pi, {xi, idx, astype(f64({2, 3, 5}), DType::kI32)}, {0, 1, -1});
}

// ---- sort ----

TEST(IndexRules, SortAd) {
  Array x = f64({3, 5});
  for (int axis : {0, 1}) {
    Prim p = prim_of(sort(x, axis), PrimitiveId::kSort);
    check_ad(p, {x});
    check_ad2(p, {x});
  }
  // Keys and values: both float; int keys with float values; float keys with int values.
  Array k = f64({4, 3}, 11), v = f64({4, 3}, 12);
  Prim kv = prim_of(sort_key_val(k, v, 0).first, PrimitiveId::kSort);
  check_ad(kv, {k, v});
  check_ad2(kv, {k, v});
  Array ik = astype(random_array({4, 3}, DType::kF64, 5, -3, 3), DType::kI32);
  check_ad(kv, {ik, v});
  check_ad2(kv, {ik, v});
  Array iv = astype(random_array({4, 3}, DType::kF64, 6, -9, 9), DType::kI32);
  check_ad(kv, {k, iv});
  // One output's cotangent zero: only the other flows back.
  Arrays outs = bind(kv, {k, v});
  Arrays g = kv->vjp({k, v}, outs, {Array(), f64({4, 3}, 13)});
  EXPECT_FALSE(g[0].valid());
  ASSERT_TRUE(g[1].valid());
  // Empty and single-element axes.
  Prim e = prim_of(sort(f64({0, 3}), 0), PrimitiveId::kSort);
  check_ad(e, {f64({0, 3})});
  Prim one = prim_of(sort(f64({3, 1}), 1), PrimitiveId::kSort);
  check_ad(one, {f64({3, 1})});
}

TEST(IndexRules, SortVmap) {
  Array x = f64({3, 5});
  for (int axis : {0, 1}) {
    Prim p = prim_of(sort(x, axis), PrimitiveId::kSort);
    for (int a : {0, 1, 2, -1}) check_vmap(p, {x}, {a});
  }
  Array k = f64({4, 3}, 11), v = f64({4, 3}, 12);
  for (int axis : {0, 1}) {
    Prim kv = prim_of(sort_key_val(k, v, axis).first, PrimitiveId::kSort);
    for (const auto& axes : axis_mixes(2)) check_vmap(kv, {k, v}, axes);
    Array ik = astype(random_array({4, 3}, DType::kF64, 5, -3, 3), DType::kI32);
    for (const auto& axes : axis_mixes(2)) check_vmap(kv, {ik, v}, axes, -3, 3);  // ties
  }
  Prim one = prim_of(sort(f64({4}), 0), PrimitiveId::kSort);
  check_vmap(one, {f64({4})}, {1});
}

// ---- through the drivers ----

TEST(IndexRules, DriversComposeGatherScatterSort) {
  // vmap of a function mixing the three, batched indices with an unbatched operand.
  Array table = f64({6, 3});
  Array idx = ints({0, 5, 2, 1, 1, 4, 3, 0}, {4, 2});
  auto f = [&](const Array& i) {
    Array g = take(table, i, 0);  // (2, 3)
    return sort(scatter_add(zeros({6, 3}, DType::kF64), i, g, 0), 0);
  };
  Array got = vmap(f)(idx);
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_TRUE(
        same_values(at(got, 0, k).to_vector<double>(), f(at(idx, 0, k)).to_vector<double>()))
        << "batch " << k;
  }
}

}  // namespace
}  // namespace graft
