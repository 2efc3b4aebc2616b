// jit: cache hits, misses, eviction and their explanations, static arguments, compositions
// with grad / vmap / nested jit, and jit == eager on a few programs.
#include "transforms/jit.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/vmap.h"

struct Params {
  graft::Array w, b;
};
GRAFT_TREE(Params, w, b);

// Static argument types: every value hashes to 0 (one unprintable, one printable and without
// a std::hash, whose text then buckets it).
struct Collides {
  int v;
  bool operator==(const Collides& o) const { return v == o.v; }
};
template <>
struct std::hash<Collides> {
  size_t operator()(const Collides&) const { return 0; }
};
struct Scale {
  double s;
  bool operator==(const Scale& o) const { return s == o.s; }
};
std::ostream& operator<<(std::ostream& os, const Scale& x) { return os << "scale " << x.s; }

namespace graft {
namespace {

void expect_close(const Array& a, const Array& b, double tol = 1e-5) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(x[i], y[i], tol * (1 + std::abs(y[i]))) << "element " << i;
  }
}

Array randn(Shape s, uint32_t seed) {
  std::vector<float> v(numel(s));
  uint32_t st = seed * 2654435761u + 1;
  for (float& x : v) {
    st = st * 1664525u + 1013904223u;
    x = static_cast<float>((st >> 8) % 2001) / 1000.0f - 1.0f;
  }
  return array<float>(v, s);
}

TEST(JitTest, HitsMissesAndResultsEqualEager) {
  auto f = [](const Array& x, const Array& y) { return sum(exp(x) * y, {0}); };
  auto jf = jit(f);
  Array x = randn({3, 4}, 1), y = randn({3, 4}, 2);
  Array r = jf(x, y);
  EXPECT_TRUE(r.is_evaluated());
  expect_close(r, f(x, y));
  expect_close(jf(y, x), f(y, x));
  EXPECT_EQ(jf.stats().misses, 1);
  EXPECT_EQ(jf.stats().hits, 1);
  EXPECT_GT(jf.stats().compile_seconds, 0);
  jf(randn({3, 5}, 3), randn({3, 5}, 4));
  EXPECT_EQ(jf.stats().misses, 2);
  EXPECT_EQ(jf.cache_entries(), 2u);
}

TEST(JitTest, ExplainsShapeDtypeAndWeakChanges) {
  auto jf = jit([](const Array& x, const Array& y) { return sum(x) + sum(y); });
  EXPECT_EQ(jf.explain_miss(), "");
  jf(zeros({2}), zeros({4, 8}));
  EXPECT_EQ(jf.explain_miss(), "first call: nothing compiled yet");
  jf(zeros({2}), zeros({4, 9}));
  EXPECT_EQ(jf.explain_miss(),
            "leaf 1 (arg 1): shape (4, 8) -> (4, 9) (1 entries cached, closest shown)");
  jf(zeros({2}, DType::kF64), zeros({4, 9}));
  EXPECT_EQ(jf.explain_miss(),
            "leaf 0 (arg 0): dtype f32 -> f64 (2 entries cached, closest shown)");
  jf(zeros({2}), Array(1.0f));
  EXPECT_NE(jf.explain_miss().find("leaf 1 (arg 1): shape (4, 9) -> (); "
                                   "leaf 1 (arg 1): strongly typed -> weakly typed"),
            std::string::npos)
      << jf.explain_miss();
}

TEST(JitTest, ExplainsStructureChange) {
  auto jf = jit([](const std::vector<Array>& xs) { return xs[0]; });
  jf(std::vector<Array>{zeros({2}), zeros({2})});
  jf(std::vector<Array>{zeros({2}), zeros({2}), zeros({2})});
  EXPECT_EQ(jf.explain_miss(),
            "arg 0: structure [*, *] -> [*, *, *] (1 entries cached, closest shown)");
}

TEST(JitTest, LruEviction) {
  auto jf = jit([](const Array& x) { return x * 2.0; }, {.cache_size = 2});
  jf(zeros({1}));
  jf(zeros({2}));
  jf(zeros({1}));  // hit; {1} is now the most recent
  jf(zeros({3}));  // evicts {2}
  EXPECT_EQ(jf.stats().evictions, 1);
  EXPECT_EQ(jf.cache_entries(), 2u);
  jf(zeros({1}));
  EXPECT_EQ(jf.stats().hits, 2);
  jf(zeros({2}));
  EXPECT_EQ(jf.stats().misses, 4);
  EXPECT_EQ(jf.stats().evictions, 2);
}

TEST(JitTest, CopiesShareTheCache) {
  auto jf = jit([](const Array& x) { return -x; });
  auto copy = jf;
  jf(zeros({2}));
  copy(zeros({2}));
  EXPECT_EQ(jf.stats().hits, 1);
}

TEST(JitTest, StaticArguments) {
  auto f = [](const Array& x, int n, const std::string& op) {
    Array r = x;
    for (int i = 0; i < n; ++i) r = op == "double" ? r * 2.0 : r + 1.0;
    return r;
  };
  auto jf = jit(f, {.static_argnums = {1, -1}});
  Array x = array<float>({1, 2});
  EXPECT_EQ(jf(x, 3, std::string("double")).to_vector<float>(), (std::vector<float>{8, 16}));
  EXPECT_EQ(jf(x, 3, std::string("inc")).to_vector<float>(), (std::vector<float>{4, 5}));
  EXPECT_EQ(jf.explain_miss(), "static arg 2: double -> inc (1 entries cached, closest shown)");
  EXPECT_EQ(jf(x, 2, std::string("inc")).to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(jf.explain_miss(), "static arg 1: 3 -> 2 (2 entries cached, closest shown)");
  jf(x, 3, std::string("double"));
  EXPECT_EQ(jf.stats().hits, 1);
}

TEST(JitTest, StaticArgumentsAreComparedByValueNotByHash) {
  ASSERT_EQ(std::hash<Collides>{}(Collides{2}), std::hash<Collides>{}(Collides{3}));
  auto jf = jit([](const Array& x, const Collides& c) { return x * static_cast<double>(c.v); },
                {.static_argnums = {1}});
  Array x = array<float>({1, 2});
  EXPECT_EQ(jf(x, Collides{2}).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(jf(x, Collides{3}).to_vector<float>(), (std::vector<float>{3, 6}))
      << "an equal hash must not reuse the other value's program";
  EXPECT_EQ(jf.stats().misses, 2);
  EXPECT_EQ(jf.cache_entries(), 2u);
  EXPECT_EQ(jf.explain_miss(),
            "static arg 1: a value with hash 0 -> a value with hash 0 (1 entries cached, closest "
            "shown)");
  EXPECT_EQ(jf(x, Collides{2}).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(jf(x, Collides{3}).to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_EQ(jf.stats().hits, 2);
  // Printable without std::hash: bucketed by its text, compared by operator==.
  auto js = jit([](const Array& y, Scale k) { return y * k.s; }, {.static_argnums = {1}});
  EXPECT_EQ(js(x, Scale{0.5}).to_vector<float>(), (std::vector<float>{0.5, 1}));
  EXPECT_EQ(js(x, Scale{4}).to_vector<float>(), (std::vector<float>{4, 8}));
  EXPECT_EQ(js.explain_miss(),
            "static arg 1: scale 0.5 -> scale 4 (1 entries cached, closest shown)");
  js(x, Scale{0.5});
  EXPECT_EQ(js.stats().hits, 1);
}

TEST(JitTest, StaticArgumentErrors) {
  auto f = [](const Array& x, int n) { return x * n; };
  try {
    jit(f)(zeros({2}), 3);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[jit] argument 1 is not a pytree of Arrays", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(jit(f, {.static_argnums = {0, 1}})(zeros({2}), 3), Error);
  EXPECT_THROW(jit(f, {.static_argnums = {1, 5}})(zeros({2}), 3), Error);
}

TEST(JitTest, DataDependentReadSaysWhatToDo) {
  auto jf = jit([](const Array& x) { return x.item<float>() > 0 ? x : -x; });
  try {
    jf(array<float>({1}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("[read] cannot read the value of a traced array", 0), 0u) << m;
    EXPECT_NE(m.find("cond"), std::string::npos);
    EXPECT_NE(m.find("while_loop"), std::string::npos);
    EXPECT_NE(m.find("static_argnums"), std::string::npos);
  }
}

TEST(JitTest, PytreesInAndOut) {
  auto f = [](const Params& p, const std::map<std::string, Array>& batch) {
    Array y = matmul(batch.at("x"), p.w) + p.b;
    return std::make_pair(sum(y * y), Params{p.w * 2.0, p.b});
  };
  auto jf = jit(f);
  Params p{randn({3, 2}, 5), randn({2}, 6)};
  std::map<std::string, Array> batch{{"x", randn({4, 3}, 7)}};
  auto [l, q] = jf(p, batch);
  auto [le, qe] = f(p, batch);
  expect_close(l, le);
  expect_close(q.w, qe.w);
  expect_close(q.b, qe.b);
  EXPECT_TRUE(q.b.same(p.b));  // an input returned as is stays the same array
}

TEST(JitTest, ClosedOverConstantsAreBakedIn) {
  Array w = randn({2, 2}, 8);
  auto f = [&](const Array& x) { return matmul(x, w + 1.0); };
  auto jf = jit(f);
  Array x = randn({3, 2}, 9);
  expect_close(jf(x), f(x));
}

TEST(JitTest, GradOfJit) {
  auto f = [](const Array& x) { return sum(tanh(x) * x); };
  Array x = randn({5}, 10);
  auto jf = jit(f);
  expect_close(grad(jf)(x), grad(f)(x));
  expect_close(grad(grad(jf))(Array(0.5f)), grad(grad(f))(Array(0.5f)));
  EXPECT_EQ(jf.stats().misses, 0);  // called on tracers: inline
}

TEST(JitTest, JitOfGrad) {
  auto f = [](const Array& x, const Array& y) { return sum(sin(x) * y); };
  auto jg = jit(grad(f, argnums<0, 1>));
  Array x = randn({4}, 11), y = randn({4}, 12);
  auto [gx, gy] = jg(x, y);
  auto [ex, ey] = grad(f, argnums<0, 1>)(x, y);
  expect_close(gx, ex);
  expect_close(gy, ey);
  jg(y, x);
  EXPECT_EQ(jg.stats().hits, 1);
}

TEST(JitTest, VmapOfJitAndJitOfVmap) {
  auto g = [](const Array& x) { return sum(exp(x)); };
  Array xs = randn({3, 4}, 13);
  auto jg = jit(g);
  expect_close(vmap(jg)(xs), vmap(g)(xs));
  auto jv = jit(vmap(g));
  expect_close(jv(xs), vmap(g)(xs));
  EXPECT_EQ(jv.stats().misses, 1);
}

TEST(JitTest, NestedJit) {
  auto inner = jit([](const Array& x) { return x * 3.0; });
  auto outer = jit([&](const Array& x) { return inner(x) + inner(x * 2.0); });
  Array x = randn({4}, 14);
  expect_close(outer(x), x * 3.0 + x * 6.0);
  EXPECT_EQ(inner.stats().misses, 0);  // traced inline inside outer
  EXPECT_EQ(outer.stats().misses, 1);
}

TEST(JitTest, ClosingOverAnOuterTracerRunsInline) {
  // The jitted function closes over grad's tracer: nothing can be cached for it.
  auto f = [](const Array& x) {
    auto jf = jit([&](const Array& c) { return x * c; });
    return sum(jf(ones({3})));
  };
  expect_close(grad(f)(randn({3}, 15)), ones({3}));
}

TEST(JitTest, EnvironmentVariableTurnsOnLogging) {
  setenv("GRAFT_JIT_EXPLAIN", "1", 1);
  auto jf = jit([](const Array& x) { return x; });
  unsetenv("GRAFT_JIT_EXPLAIN");
  testing::internal::CaptureStderr();
  jf(zeros({2}));
  jf(zeros({3}));
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("[jit] cache miss: leaf 0 (arg 0): shape (2,) -> (3,)"), std::string::npos)
      << log;
}

}  // namespace
}  // namespace graft
