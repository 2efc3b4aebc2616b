#include "tests/core/primitives/rule_checks.h"

#include <cmath>
#include <random>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "core/interpreters/ad.h"
#include "transforms/vmap.h"

namespace graft::testing_rules {

Prim prim_of(const Array& y, PrimitiveId id) {
  EXPECT_NE(y.primitive(), nullptr);
  if (y.primitive() == nullptr) return nullptr;
  EXPECT_EQ(y.primitive()->id(), id) << y.primitive()->name();
  return y.node()->primitive;
}

Array random_array(const Shape& s, DType dtype, uint32_t seed, double lo, double hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(numel(s));
  for (double& x : v) {
    x = u(gen);
    if (is_integral(dtype)) x = std::floor(x);
    if (dtype == DType::kBool) x = x > 0.5 * (lo + hi);
  }
  return astype(array<double>(v, s), dtype);
}

Array f64(const Shape& s, uint32_t seed, double lo, double hi) {
  return random_array(s, DType::kF64, seed, lo, hi);
}

Array ints(std::vector<int32_t> v, Shape s) { return array<int32_t>(v, s); }

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

std::vector<double> flat(const Arrays& xs, const Arrays& like) {
  std::vector<double> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> v =
        xs[i].valid() ? vals(xs[i]) : std::vector<double>(like.at(i).size(), 0.0);
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
                 const std::string& what, double tol, bool nan_equal) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    if (nan_equal && std::isnan(want[k])) {
      EXPECT_TRUE(std::isnan(got[k])) << what << " at " << k;
      continue;
    }
    EXPECT_NEAR(got[k], want[k], tol * (1 + std::abs(want[k]))) << what << " at " << k;
  }
}

std::vector<double> fd(const std::function<Arrays(const Arrays&)>& f, const Arrays& x,
                       const std::vector<size_t>& pos, const Arrays& d, bool zero_nan) {
  const double h = 1e-6;
  auto at = [&](double s) {
    Arrays y = x;
    for (size_t k = 0; k < pos.size(); ++k) y[pos[k]] = x[pos[k]] + h * s * d[k];
    return flat(f(y));
  };
  std::vector<double> plus = at(1), minus = at(-1);
  std::vector<double> base = zero_nan ? flat(f(x)) : std::vector<double>(plus.size(), 0.0);
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

namespace {

// Random f64 cotangents for the floating outputs (empty for the others).
Arrays cotangents(const Arrays& outs, uint32_t seed) {
  Arrays cts(outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    if (is_floating(outs[o].dtype())) cts[o] = f64(outs[o].shape(), seed + o);
  }
  return cts;
}

}  // namespace

void check_ad(const Prim& p, const Arrays& in, const AdCheck& o) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params());
  auto f = [&](const Arrays& x) { return graft::bind(p, x); };
  Arrays outs = f(in);
  Arrays cts = cotangents(outs, o.seed + o.cotangent_offset);
  std::vector<double> ct = flat(cts, outs);
  Arrays got_vjp = p->vjp(in, outs, cts);
  ASSERT_EQ(got_vjp.size(), in.size());
  Arrays t(in.size());
  std::vector<double> want_jvp(ct.size(), 0.0);
  for (size_t i = 0; i < in.size(); ++i) {
    if (!is_floating(in[i].dtype())) {
      EXPECT_FALSE(got_vjp[i].valid()) << "input " << i << " is not floating: no cotangent";
      continue;
    }
    t[i] = f64(in[i].shape(), o.seed + o.tangent_offset + static_cast<uint32_t>(i));
    std::vector<double> ti = vals(t[i]), want_vjp(in[i].size());
    if (o.diagonal) {
      std::vector<double> diag = fd(f, in, {i}, {ones(in[i].shape(), DType::kF64)}, o.fd_zero_nan);
      want_vjp.resize(diag.size());
      for (size_t k = 0; k < diag.size(); ++k) {
        want_jvp[k] += diag[k] * ti[k];
        want_vjp[k] = diag[k] * ct[k];
      }
    } else {
      for (int64_t j = 0; j < in[i].size(); ++j) {
        std::vector<double> e(in[i].size(), 0.0);
        e[j] = 1;
        std::vector<double> col = fd(f, in, {i}, {array<double>(e, in[i].shape())}, o.fd_zero_nan);
        for (size_t k = 0; k < col.size(); ++k) want_jvp[k] += col[k] * ti[j];
        want_vjp[j] = inner(col, ct);
      }
    }
    ASSERT_TRUE(got_vjp[i].valid()) << "input " << i;
    EXPECT_EQ(got_vjp[i].aval(), in[i].aval());
    expect_near(vals(got_vjp[i]), want_vjp, "vjp of input " + std::to_string(i), 1e-7, o.nan_equal);
  }
  Arrays got = p->jvp(in, t, outs);
  ASSERT_EQ(got.size(), outs.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    if (o.check_each_input) {
      ASSERT_TRUE(got[k].valid()) << "output " << k;
    }
    if (!got[k].valid()) continue;
    EXPECT_EQ(got[k].shape(), outs[k].shape());
    EXPECT_EQ(got[k].dtype(), outs[k].dtype());
  }
  expect_near(flat(got, outs), want_jvp, "jvp", 1e-7, o.nan_equal);
  for (const Array& g : p->jvp(in, Arrays(in.size()), outs)) EXPECT_FALSE(g.valid());
  if (o.check_zero_cotangents) {
    for (const Array& g : p->vjp(in, outs, Arrays(outs.size()))) EXPECT_FALSE(g.valid());
  }
  if (!o.check_each_input) return;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!t[i].valid()) continue;
    Arrays ti(in.size());
    ti[i] = t[i];
    Arrays g = p->jvp(in, ti, outs);
    for (const Array& x : g) ASSERT_TRUE(x.valid());
    EXPECT_NEAR(inner(flat(g), ct), inner(vals(got_vjp[i]), vals(t[i])), 1e-9) << "input " << i;
  }
}

void check_ad2(const Prim& p, const Arrays& in, uint32_t seed) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params() + " (second order)");
  std::vector<size_t> pos = float_positions(in);
  Arrays outs = graft::bind(p, in);
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
    Arrays r = p->vjp(a, graft::bind(p, a), cts);
    for (size_t i : pos) picked.push_back(r[i]);
    return zero_filled(picked, Arrays(xs.begin(), xs.begin() + pos.size()));
  };
  FlatFn h = [&](const Arrays& xs) {
    Arrays a = primals_of(xs), t(in.size());
    for (size_t k = 0; k < pos.size(); ++k) t[pos[k]] = xs[pos.size() + k];
    return zero_filled(p->jvp(a, t, graft::bind(p, a)), outs);
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

void check_vmap(const Prim& p, const Arrays& in, const std::vector<int>& in_axes,
                const VmapCheck& o) {
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
    DType dt = in[i].dtype();
    bool integer = is_integral(dt);
    double lo = integer ? (is_unsigned(dt) ? 0 : o.int_lo) : o.float_lo;
    double hi = integer ? o.int_hi : o.float_hi;
    for (int64_t k = 0; k < o.b; ++k) {
      uint32_t s = o.seed + static_cast<uint32_t>(10 * i + k);
      variants[i].push_back(random_array(in[i].shape(), dt, s, lo, hi));
    }
    args[i] = stack(variants[i], dims[i]);
  }
  Batched out = p->vmap(args, dims);
  Arrays want0 = graft::bind(p, in);
  ASSERT_EQ(out.outputs.size(), want0.size());
  ASSERT_EQ(out.dims.size(), want0.size());
  if (o.expect_same_primitive) {
    for (const Array& y : out.outputs) {
      ASSERT_NE(y.primitive(), nullptr);
      EXPECT_EQ(y.primitive()->id(), p->id()) << "the same primitive, batched";
    }
  }
  for (int64_t k = 0; k < o.b; ++k) {
    Arrays slice_in = in;
    for (size_t i = 0; i < in.size(); ++i) {
      if (dims[i] >= 0) slice_in[i] = variants[i][k];
    }
    Arrays want = graft::bind(p, slice_in);
    for (size_t j = 0; j < want.size(); ++j) {
      ASSERT_GE(out.dims[j], 0);
      Array got = at(out.outputs[j], out.dims[j], k);
      std::string what = "batch " + std::to_string(k) + " output " + std::to_string(j);
      EXPECT_EQ(got.aval(), want[j].aval()) << what;
      std::vector<double> g = vals(got), w = vals(want[j]);
      if (o.float_tol > 0 && is_floating(want[j].dtype())) {
        expect_near(g, w, what, o.float_tol, o.nan_equal);
      } else if (o.nan_equal) {
        EXPECT_TRUE(same_values(g, w)) << what;
      } else {
        EXPECT_EQ(g, w) << what;
      }
    }
  }
}

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

}  // namespace graft::testing_rules
