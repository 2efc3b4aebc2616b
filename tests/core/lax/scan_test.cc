// associative_scan, the cumulative reductions and top_k (core/lax/scan.h, core/ops.h)
// against vectors recorded from JAX 0.10.2 (tools/make_lax_index_vectors.py writes
// tests/core/testdata/lax_index_vectors.txt): values, dtypes and gradients
// (d sum(w * f(x)) / dx); then vmap against a loop, jit against eager, and the errors.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

struct Vec {
  std::string dtype;
  Shape shape;
  std::vector<double> values;
};

const std::map<std::string, Vec>& vectors() {
  static const auto* all = [] {
    auto* out = new std::map<std::string, Vec>;
    const std::string path = "tests/core/testdata/lax_index_vectors.txt";
    std::ifstream in(path);
    if (!in && std::getenv("TEST_SRCDIR")) {
      in.open(std::string(std::getenv("TEST_SRCDIR")) + "/graft/" + path);
    }
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      std::string name, shape, tok;
      Vec v;
      ls >> name >> v.dtype >> shape;
      if (shape != "scalar") {
        std::istringstream ss(shape);
        for (std::string d; std::getline(ss, d, ',');) v.shape.push_back(std::stoll(d));
      }
      while (ls >> tok) v.values.push_back(std::strtod(tok.c_str(), nullptr));  // nan, inf too
      (*out)[name] = std::move(v);
    }
    return out;
  }();
  return *all;
}

const Vec& vec(const std::string& name) {
  auto it = vectors().find(name);
  if (it == vectors().end()) {
    ADD_FAILURE() << "no vector " << name;
    static const Vec empty;
    return empty;
  }
  return it->second;
}

DType dtype_of(const std::string& s) {
  if (s == "float32") return DType::kF32;
  if (s == "int32") return DType::kI32;
  if (s == "uint32") return DType::kU32;
  if (s == "uint8") return DType::kU8;
  if (s == "bool") return DType::kBool;
  ADD_FAILURE() << "dtype " << s;
  return DType::kF32;
}

// The recorded vector `name` as an array of its dtype.
Array raw(const std::string& name) {
  const Vec& v = vec(name);
  std::vector<double> d = v.values;
  return astype(array(d, v.shape), dtype_of(v.dtype));
}

// Input k of case c.
Array in(const std::string& c, int k = 0) { return raw(c + ".in" + std::to_string(k)); }

// got matches the recorded vector `name`: dtype, shape, and values (NaN where NaN, 2e-5
// absolute + relative for floats; exact for integers). The sign of a zero is not compared:
// JAX's gradients hold -0 where graft's hold +0, and a scan's interleaving adds +0 (top_k's
// -0 / +0 order is checked through its indices).
void expect_vec(const Array& got, const std::string& name) {
  SCOPED_TRACE(name);
  const Vec& want = vec(name);
  ASSERT_EQ(got.dtype(), dtype_of(want.dtype));
  ASSERT_EQ(got.shape(), want.shape);
  std::vector<double> g = got.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want.values[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g[i])) << "at " << i;
    } else if (std::isinf(w) || !is_floating(got.dtype())) {
      EXPECT_EQ(g[i], w) << "at " << i;
    } else {
      EXPECT_NEAR(g[i], w, 2e-5 * (1 + std::abs(w))) << "at " << i;
    }
  }
}

// The recorded output k of case c.
void expect_out(const Array& got, const std::string& c, int k = 0) {
  expect_vec(got, c + ".out" + std::to_string(k));
}

using Fn = std::function<Array(const Array&)>;

// d sum(w * f(x)) / dx for the case's x (.in0) and w (.in1).
void expect_grad(const Fn& f, const std::string& c) {
  Array w = in(c, 1);
  auto g = grad([&](const Array& x) { return sum(w * f(x)); })(in(c, 0));
  expect_out(g, c);
}

Array add_fn(const Array& a, const Array& b) { return a + b; }

using Pair = std::tuple<Array, Array>;
Pair linear_recurrence(const Pair& a, const Pair& b) {
  return {std::get<0>(a) * std::get<0>(b),
          std::get<1>(a) * std::get<0>(b) + std::get<1>(b)};
}

TEST(AssociativeScan, MatchesJax) {
  expect_out(associative_scan(add_fn, in("assoc_add")), "assoc_add");
  expect_out(associative_scan(add_fn, in("assoc_add_rev_axis1"), true, 1), "assoc_add_rev_axis1");
  Pair out = associative_scan(linear_recurrence, Pair{in("assoc_pytree"), in("assoc_pytree", 1)});
  expect_out(std::get<0>(out), "assoc_pytree", 0);
  expect_out(std::get<1>(out), "assoc_pytree", 1);
  expect_grad(
      [](const Array& a) {
        return std::get<1>(associative_scan(linear_recurrence, Pair{a, a * 0.5f}));
      },
      "assoc_pytree_grad");
}

TEST(AssociativeScan, EveryLengthMatchesASequentialScan) {
  // Lengths 0..17 (odd and even recursion steps) against a plain loop of maximum.
  for (int n = 0; n < 18; ++n) {
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7) % 5) - 0.5f * i;
    auto fmax = [](const Array& a, const Array& b) { return maximum(a, b); };
    for (bool rev : {false, true}) {
      std::vector<float> want(n);
      for (int j = 0; j < n; ++j) {
        int i = rev ? n - 1 - j : j;
        int prev = rev ? i + 1 : i - 1;
        want[i] = j == 0 ? x[i] : std::max(want[prev], x[i]);
      }
      EXPECT_EQ(associative_scan(fmax, array(x), rev).to_vector<float>(), want) << n << rev;
    }
  }
}

struct Cum {
  const char* name;
  Array (*f)(const Array&, std::optional<int64_t>, bool);
};

TEST(CumulativeReductions, ValuesAndGradientsMatchJax) {
  const Cum cums[] = {{"cumsum", &cumsum},
                      {"cumprod", &cumprod},
                      {"cummax", &cummax},
                      {"cummin", &cummin},
                      {"cumlogsumexp", &cumlogsumexp}};
  for (const Cum& c : cums) {
    for (int axis : {0, 1}) {
      for (bool rev : {false, true}) {
        std::string tag = std::string(c.name) + "_axis" + std::to_string(axis) + (rev ? "_rev" : "");
        Fn f = [&](const Array& x) { return c.f(x, axis, rev); };
        expect_out(f(in(tag)), tag);
        expect_grad(f, tag + "_grad");
      }
    }
  }
}

TEST(CumulativeReductions, JnpNamesMatchJax) {
  expect_out(cumprod(in("jnp_cumprod_flat")), "jnp_cumprod_flat");
  expect_grad([](const Array& x) { return reshape(cumprod(x), {4, 6}); }, "jnp_cumprod_flat_grad");
  expect_out(cumprod(in("jnp_cumprod_bool")), "jnp_cumprod_bool");
  expect_out(cumprod(in("jnp_cumprod_i32"), 1), "jnp_cumprod_i32");
  expect_out(nancumsum(in("jnp_nancumsum"), 1), "jnp_nancumsum");
  expect_out(nancumsum(in("jnp_nancumsum_flat")), "jnp_nancumsum_flat");
  expect_out(nancumprod(in("jnp_nancumprod"), 0), "jnp_nancumprod");
  expect_grad([](const Array& x) { return nancumprod(x, 1); }, "jnp_nancumprod_grad");
  expect_out(cumulative_sum(in("jnp_cumulative_sum"), 1), "jnp_cumulative_sum");
  expect_out(cumulative_sum(in("jnp_cumulative_sum_init"), 0, true), "jnp_cumulative_sum_init");
  expect_out(cumulative_sum(in("jnp_cumulative_sum_u8")), "jnp_cumulative_sum_u8");
  expect_out(cumulative_sum(in("jnp_cumulative_sum_bool")), "jnp_cumulative_sum_bool");
  expect_out(cumulative_prod(in("jnp_cumulative_prod_init"), 1, true), "jnp_cumulative_prod_init");
  expect_out(cumulative_prod(in("jnp_cumulative_prod_1d")), "jnp_cumulative_prod_1d");
}

TEST(TopK, MatchesJax) {
  for (int k : {0, 3, 8}) {
    std::string c = "top_k_" + std::to_string(k);
    auto [v, i] = top_k(in(c), k);
    expect_out(v, c, 0);
    expect_out(i, c, 1);
  }
  for (const char* c : {"top_k_i32", "top_k_3d"}) {
    auto [v, i] = top_k(in(c), std::string(c) == "top_k_i32" ? 4 : 2);
    expect_out(v, c, 0);
    expect_out(i, c, 1);
  }
  expect_grad([](const Array& x) { return top_k(x, 3).first; }, "top_k_grad");
}

// ---- x.at[...] (core/lax/index_update.h): the subscripts of the generator's at_cases.

std::vector<std::pair<std::string, std::vector<Index>>> at_subscripts() {
  Array i0 = raw("at.idx0"), i1 = raw("at.idx1"), i2 = raw("at.idx2"), i3 = raw("at.idx3");
  const auto all = std::nullopt;
  return {
      {"int", {1}},
      {"neg_int_slice", {-1, Range{all, all, 2}}},
      {"slice_neg_step", {Range{all, all, -1}, Range{3, 0, -2}}},
      {"array", {i0}},
      {"array_axis1", {Range{}, i0}},
      {"arrays_adjacent", {Range{}, i1, i2}},
      {"arrays_apart", {i1, Range{}, i2}},
      {"int_and_array_apart", {1, Range{}, i2}},
      {"newaxis_ellipsis", {newaxis, ellipsis, 2}},
      {"oob", {Range{}, i3}},
  };
}

Array at_op(const IndexUpdateRef& r, const std::string& op, const Array& v) {
  if (op == "set") return r.set(v);
  if (op == "add") return r.add(v);
  if (op == "mul") return r.mul(v);
  if (op == "min") return r.min(v);
  if (op == "max") return r.max(v);
  if (op == "divide") return r.divide(v);
  return r.power(v);
}

TEST(IndexUpdate, GetAndEveryUpdateMatchJax) {
  Array x = raw("at.x");
  for (const auto& [name, sub] : at_subscripts()) {
    const std::string c = "at_" + name;
    SCOPED_TRACE(c);
    Array v = raw(c + ".v");
    expect_vec(at(x, sub).get(), c + ".get");
    expect_vec(at(x, sub).get(GatherMode::kClip), c + ".get_clip");
    expect_vec(at(x, sub).get(GatherMode::kFill), c + ".get_fill");
    for (const char* op : {"set", "add", "mul", "min", "max", "divide", "power"}) {
      std::string o = op;
      Array vv = o == "divide" || o == "power" ? abs(v) + 1.0f : v;
      expect_vec(at_op(at(x, sub), o, vv), c + "." + o);
    }
    for (const char* op : {"set", "add", "mul", "min", "max"}) {
      const std::string gx = c + ".grad_x_" + op;
      if (!vectors().count(gx)) continue;  // JAX has no scatter_mul gradient with duplicates
      Array w = reshape(linspace(-1, 1, 60), {3, 4, 5});
      auto g = grad(
          [&](const Array& xx, const Array& vv) { return sum(w * at_op(at(xx, sub), op, vv)); },
          argnums<0, 1>)(x, v);
      expect_vec(std::get<0>(g), gx);
      expect_vec(std::get<1>(g), c + ".grad_v_" + op);
    }
  }
}

TEST(IndexUpdate, PutPutAlongAxisAndPlaceMatchJax) {
  Array a = raw("put.a"), ind = raw("put.ind"), v = raw("put.v");
  expect_vec(put(a, ind, v), "put.drop");
  expect_vec(put(a, ind, v, GatherMode::kClip), "put.clip");
  expect_vec(put_wrap(a, ind, v), "put.wrap");
  expect_vec(put_along_axis(a, raw("put_along_axis.ind"), Array(-5.0f), 1), "put_along_axis.axis1");
  expect_vec(put_along_axis(a, raw("put_along_axis.ind0"), raw("put_along_axis.v0"), 0),
             "put_along_axis.axis0");
  expect_vec(place(a, raw("place.mask"), array<float>({7, 8})), "place.out");
}

TEST(IndexUpdate, VmapMatchesALoopAndJitMatchesEager) {
  Array idx = array<int32_t>({2, 0, 2, -1});
  const std::vector<std::pair<std::string, std::function<Array(const Array&)>>> fns = {
      {"set", [&](const Array& x) { return at(x, {Range{}, idx}).set(slice_axis(x, 1, 0, 4)); }},
      {"max", [&](const Array& x) { return at(x, {idx}).max(2.0f); }},
      {"mul", [&](const Array& x) {
         return at(x, {1, Range{1, std::nullopt}}).mul(reshape(slice(x, {0, 1}, {1, 6}), {5}));
       }},
      {"get", [&](const Array& x) { return at(x, {newaxis, idx}).get(); }},
      {"grad_set", [&](const Array& x) {
         return grad([&](const Array& y) { return sum(square(at(y, {idx}).set(3.0f * y))); })(x);
       }},
  };
  Array xs = reshape(arange(48.0f) * 0.25f - 3.0f, {2, 4, 6});
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    // x is [4, 6]; the updates and indices stay unbatched (captured) or follow x.
    Array x0 = squeeze(slice_axis(xs, 0, 0, 1), {0}), x1 = squeeze(slice_axis(xs, 0, 1, 2), {0});
    std::vector<double> want = stack({f(x0), f(x1)}).to_vector<double>();
    std::vector<double> got = vmap(f)(xs).to_vector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
    std::vector<double> jitted = jit(f)(x0).to_vector<double>();
    std::vector<double> eager = f(x0).to_vector<double>();
    for (size_t i = 0; i < jitted.size(); ++i) EXPECT_NEAR(jitted[i], eager[i], 1e-5) << i;
  }
}

// vmap over a leading batch against a loop, and jit against eager, for each composite.
TEST(LaxScanTransforms, VmapMatchesALoopAndJitMatchesEager) {
  const std::vector<std::pair<std::string, Fn>> fns = {
      {"cumprod", [](const Array& x) { return cumprod(x, 1, true); }},
      {"cummax", [](const Array& x) { return cummax(x, 0); }},
      {"cumlogsumexp", [](const Array& x) { return cumlogsumexp(x, 1); }},
      {"cumulative_prod", [](const Array& x) { return cumulative_prod(x, 1, true); }},
      {"top_k", [](const Array& x) { return top_k(x, 3).first; }},
      {"top_k_indices", [](const Array& x) { return top_k(x, 4).second; }},
      {"scan_grad", [](const Array& x) {
         return grad([](const Array& y) { return sum(cummin(y, 1) * cumprod(y, 0)); })(x);
       }},
  };
  Array xs = stack({in("cumprod_axis0"), in("cumprod_axis0") * 0.5f - 1.0f,
                    flip(in("cumprod_axis0"), {1})});
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    std::vector<Array> loop;
    for (int b = 0; b < 3; ++b) loop.push_back(f(squeeze(slice_axis(xs, 0, b, b + 1), {0})));
    std::vector<double> want = stack(loop).to_vector<double>();
    std::vector<double> got = vmap(f)(xs).to_vector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
    Array x0 = squeeze(slice_axis(xs, 0, 0, 1), {0});
    std::vector<double> jitted = jit(f)(x0).to_vector<double>();
    std::vector<double> eager = f(x0).to_vector<double>();
    ASSERT_EQ(jitted.size(), eager.size());
    for (size_t i = 0; i < jitted.size(); ++i) EXPECT_NEAR(jitted[i], eager[i], 1e-5) << i;
  }
}

template <typename F>
void expect_error(F f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one starting with " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

TEST(LaxScanErrors, NameTheOp) {
  auto add2 = [](const Array& a, const Array& b) { return a + b; };
  auto first = [](const std::vector<Array>& a, const std::vector<Array>&) { return a; };
  expect_error([&] { associative_scan(first, std::vector<Array>{}); },
               "[associative_scan] needs at least one array");
  expect_error([&] { associative_scan(add2, scalar(1, DType::kF32)); },
               "[associative_scan] cannot scan a scalar");
  expect_error([&] { associative_scan(add2, zeros({3}), false, 1); }, "[associative_scan]");
  expect_error(
      [&] {
        associative_scan(first, std::vector<Array>{zeros({3}), zeros({4})});
      },
      "[associative_scan] arrays must have the same size along axis 0");
  expect_error([&] { associative_scan([](const Array& a, const Array&) { return sum(a); },
                                      zeros({4})); },
               "[associative_scan] fn must combine elementwise");
  expect_error([] { cummax(array<bool>({true, false})); }, "[cummax] needs a numeric dtype");
  expect_error([] { cummin(zeros({2}), 3); }, "[cummin]");
  expect_error([] { cumlogsumexp(arange(3)); }, "[cumlogsumexp] needs a floating dtype");
  expect_error([] { cumulative_sum(zeros({2, 2})); }, "[cumulative_sum] axis is only optional");
  expect_error([] { cumulative_prod(scalar(2, DType::kF32)); }, "[cumulative_prod]");
  expect_error([] { top_k(zeros({2, 3}), 4); }, "[top_k] k must be in [0, 3]");
  expect_error([] { top_k(scalar(1, DType::kF32), 1); }, "[top_k] needs an array of rank >= 1");
  expect_error([] { top_k(array<bool>({true}), 1); }, "[top_k] needs a numeric dtype");
  expect_error([] { at(zeros({2, 3}), {0, 0, 0}).get(); }, "[at] too many indices");
  expect_error([] { at(zeros({2, 3}), {ellipsis, ellipsis}).get(); }, "[at] an index can only");
  expect_error([] { at(zeros({2, 3}), {Range{0, 2, 0}}).set(1.0f); }, "[at] slice step");
  expect_error([] { at(zeros({3}), {zeros({2})}).get(); }, "[at] array indices must be integers");
  expect_error([] { at(zeros({3}), {arange(2)}).set(zeros({3})); }, "[at] updates f32[3]");
  expect_error([] { at(array<bool>({true}), {0}).add(true); }, "[at] add needs a numeric");
  expect_error([] { put(zeros({3}), zeros({2}), ones({2})); }, "[put] indices must be integers");
  expect_error([] { put_along_axis(zeros({3, 2}), arange(2), ones({2}), 0); },
               "[put_along_axis] arr and indices must have the same ndim");
  expect_error([] { place(zeros({3}), array<bool>({true}), ones({1})); },
               "[place] arr and mask must have the same size");
  expect_error([] { place(zeros({1}), array<bool>({true}), zeros({0})); }, "[place] cannot");
}

}  // namespace
}  // namespace graft
