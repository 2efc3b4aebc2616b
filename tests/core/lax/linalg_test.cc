// Op-level tests of the linalg family: error messages, jnp shape semantics, large GEMMs
// through oneDNN against plain loops, integer wraparound, and the oneDNN primitive cache.
#include <cmath>
#include <random>
#include <string>
#include <thread>

#include "core/backend/cpu/onednn_matmul.h"
#include "core/ops.h"
#include "core/ir/primitive.h"
#include "core/primitives/linalg.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

// Expects f() to throw graft::Error whose message is exactly / starts with `msg`.
template <typename F>
void expect_error(F f, const std::string& prefix, const std::string& contains = "") {
  try {
    f();
    ADD_FAILURE() << "no error; expected one starting with " << prefix;
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind(prefix, 0), 0u) << m;
    if (!contains.empty()) {
      EXPECT_NE(m.find(contains), std::string::npos) << m;
    }
  }
}

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// C = A @ B in double, A [m, k] and B [k, n] row-major (a_t: A is stored [k, m]).
std::vector<double> loop_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                                int64_t k, int64_t n, bool a_t = false) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      double av = a_t ? a[p * m + i] : a[i * k + p];
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += av * b[p * n + j];
    }
  }
  return c;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (std::fabs(got[i] - want[i]) > tol * (1 + std::fabs(want[i]))) {
      ADD_FAILURE() << "at " << i << ": got " << got[i] << ", want " << want[i];
      ++bad;
    }
  }
}

TEST(LinalgErrors, MatmulContractingDims) {
  Array a = zeros({4, 8}), b = zeros({9, 2});
  try {
    matmul(a, b);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[matmul] contracting dims differ: (4, 8) @ (9, 2)");
  }
  expect_error([&] { matmul(zeros({3}), zeros({4})); }, "[matmul] contracting dims differ");
  expect_error(
      [&] {
        matmul(zeros({2, 3, 4}), zeros({3, 4, 5}));
      },
      "[matmul] batch dims do not broadcast: (2, 3, 4) @ (3, 4, 5)");
  expect_error([&] { matmul(zeros({}), zeros({3})); }, "[matmul] operands must have rank >= 1");
  expect_error(
      [&] {
        matmul(zeros({2, 2}, DType::kBool), zeros({2, 2}, DType::kBool));
      },
      "[matmul] bool operands are not supported");
  expect_error([&] { matmul(Array(), zeros({2})); }, "[matmul]");
}

TEST(LinalgErrors, DotGeneralDims) {
  Array a = zeros({4, 8}), b = zeros({9, 2});
  expect_error(
      [&] {
        dot_general(a, b, {{1}, {0}, {}, {}});
      },
      "[dot_general] contracting dims differ: (4, 8) @ (9, 2)",
      "lhs dim 1 has size 8, rhs dim 0 has size 9");
  expect_error(
      [&] {
        dot_general(a, b, {{2}, {0}, {}, {}});
      },
      "[dot_general] lhs dim 2 is out of range");
  expect_error(
      [&] {
        dot_general(a, b, {{0}, {-3}, {}, {}});
      },
      "[dot_general] rhs dim -3 is out of range");
  expect_error(
      [&] {
        dot_general(a, zeros({8, 8}), {{1, 1}, {0, 1}, {}, {}});
      },
      "[dot_general] lhs dim 1 is used more than once");
  expect_error(
      [&] {
        dot_general(a, zeros({4, 8}), {{1}, {1}, {0}, {}});
      },
      "[dot_general] lhs and rhs need as many batch dims");
  expect_error(
      [&] {
        dot_general(a, zeros({8, 2}), {{1}, {}, {}, {}});
      },
      "[dot_general] lhs and rhs need as many contracting dims");
  expect_error(
      [&] {
        dot_general(zeros({2, 3, 4}), zeros({5, 4, 6}), {{2}, {1}, {0}, {0}});
      },
      "[dot_general] batch dims differ: (2, 3, 4) @ (5, 4, 6)");
  expect_error(
      [&] {
        dot_general(zeros({2, 3}), zeros({3, 4}), {{1}, {0}, {0}, {0}});
      },
      "[dot_general] rhs dim 0 is used more than once");
  expect_error(
      [&] {
        dot_general(zeros({2}), zeros({2}), {{0}, {0}, {}, {}}, DType::kI32);
      },
      "[dot_general] preferred dtype i32 is incompatible with operands of dtype f32");
  expect_error(
      [&] { dot_general(zeros({2}, DType::kI64), zeros({2}, DType::kI64), {}, DType::kI32); },
      "[dot_general] preferred dtype i32 is incompatible");
  expect_error(
      [&] {
        dot(zeros({4, 8}), zeros({9, 2}));
      },
      "[dot] contracting dims differ: (4, 8) @ (9, 2)");
}

TEST(LinalgErrors, PrimitiveChecksToo) {
  // Bound directly (as transforms do), the primitive runs the same checks under its name.
  auto bind_dg = [](const Array& a, const Array& b, DotDims d) {
    return bind1(std::make_shared<const DotGeneral>(std::move(d), std::nullopt), {a, b});
  };
  expect_error(
      [&] {
        bind_dg(zeros({4, 8}), zeros({9, 2}), {{1}, {0}, {}, {}});
      },
      "[dot_general] contracting dims differ: (4, 8) @ (9, 2)");
  expect_error(
      [&] {
        bind_dg(zeros({2}), zeros({2}, DType::kF64), {{0}, {0}, {}, {}});
      },
      "[dot_general] operands must have equal dtypes");
  expect_error(
      [&] {
        bind_dg(zeros({2}), zeros({2}), {{-1}, {0}, {}, {}});
      },
      "[dot_general] lhs dim -1 is out of range");
}

TEST(LinalgShapes, JnpSemantics) {
  EXPECT_EQ(matmul(zeros({2, 1, 3, 4}), zeros({5, 4, 2})).shape(), (Shape{2, 5, 3, 2}));
  EXPECT_EQ(matmul(zeros({4}), zeros({4})).shape(), Shape{});
  EXPECT_EQ(matmul(zeros({4}), zeros({2, 4, 3})).shape(), (Shape{2, 3}));
  EXPECT_EQ(matmul(zeros({2, 3, 4}), zeros({4})).shape(), (Shape{2, 3}));
  EXPECT_EQ(dot(zeros({2, 3, 4}), zeros({5, 4, 6})).shape(), (Shape{2, 3, 5, 6}));
  EXPECT_EQ(dot(zeros({3}), zeros({3, 2})).shape(), (Shape{2}));
  EXPECT_EQ(outer(zeros({2, 3}), zeros({4})).shape(), (Shape{6, 4}));
  EXPECT_EQ(dot_general(zeros({3, 2, 5}), zeros({2, 5, 7}), {{2}, {1}, {1}, {0}}).shape(),
            (Shape{2, 3, 7}));
  // Promotion: i32 @ f32 -> f32; bf16 @ weak scalar keeps bf16 (dot of a scalar multiplies).
  EXPECT_EQ(matmul(zeros({2, 2}, DType::kI32), zeros({2, 2})).dtype(), DType::kF32);
  EXPECT_EQ(dot(zeros({2}, DType::kBF16), Array(2.0)).dtype(), DType::kBF16);
  EXPECT_EQ(dot_general(zeros({2}, DType::kBF16), zeros({2}, DType::kBF16), {{0}, {0}, {}, {}},
                        DType::kF32)
                .dtype(),
            DType::kF32);
}

TEST(LinalgValues, DotOfScalarMultiplies) {
  Array r = dot(array<float>({1, 2, 3}), Array(2.0));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(LinalgValues, OuterOfBoolIsLogicalAnd) {
  Array r = outer(array<bool>({true, false}), array<bool>({true, true, false}));
  EXPECT_EQ(r.dtype(), DType::kBool);
  EXPECT_EQ(r.to_vector<int>(), (std::vector<int>{1, 1, 0, 0, 0, 0}));
}

TEST(LinalgValues, IntegerMatmulWraps) {
  // 65536 * 65536 = 2^32 wraps to 0 in i32; + 3*5 = 15.
  Array a = array<int32_t>({65536, 3}, Shape{1, 2});
  Array b = array<int32_t>({65536, 5}, Shape{2, 1});
  EXPECT_EQ(matmul(a, b).item<int32_t>(), 15);
  // i32 accumulating into i64 (preferred) does not wrap.
  EXPECT_EQ(dot_general(a, b, {{1}, {0}, {}, {}}, DType::kI64).item<int64_t>(),
            int64_t{1} << 32 | 15);
}

TEST(LinalgValues, LargeF32AgainstLoop) {
  const int64_t m = 300, k = 200, n = 250;
  auto av = random_floats(m * k, 1), bv = random_floats(k * n, 2);
  Array c = matmul(array<float>(av, Shape{m, k}), array<float>(bv, Shape{k, n}));
  expect_close(c.to_vector<double>(), loop_matmul(av, bv, m, k, n), 1e-5);
  // Contracting the lhs's first dim (A stored transposed): oneDNN with strides, no copy.
  Array ct =
      dot_general(array<float>(av, Shape{k, m}), array<float>(bv, Shape{k, n}), {{0}, {0}, {}, {}});
  expect_close(ct.to_vector<double>(), loop_matmul(av, bv, m, k, n, true), 1e-5);
}

TEST(LinalgValues, LargeBF16AgainstLoop) {
  const int64_t m = 300, k = 200, n = 250;
  auto av = random_floats(m * k, 3), bv = random_floats(k * n, 4);
  Array a = astype(array<float>(av, Shape{m, k}), DType::kBF16);
  Array b = astype(array<float>(bv, Shape{k, n}), DType::kBF16);
  // The loop runs over the bf16-rounded inputs.
  std::vector<float> ar = a.to_vector<float>(), br = b.to_vector<float>();
  auto want = loop_matmul(ar, br, m, k, n);
  Array c32 = dot_general(a, b, {{1}, {0}, {}, {}}, DType::kF32);
  EXPECT_EQ(c32.dtype(), DType::kF32);
  expect_close(c32.to_vector<double>(), want, 1e-4);  // f32 accumulation, f32 out
  Array c16 = matmul(a, b);
  EXPECT_EQ(c16.dtype(), DType::kBF16);
  expect_close(c16.to_vector<double>(), want, 1e-2);  // one bf16 rounding of the result
}

TEST(LinalgValues, LargeF64AndI32AgainstLoop) {
  const int64_t m = 70, k = 90, n = 60;
  auto av = random_floats(m * k, 5), bv = random_floats(k * n, 6);
  std::vector<double> ad(av.begin(), av.end()), bd(bv.begin(), bv.end());
  Array c = matmul(array<double>(ad, Shape{m, k}), array<double>(bd, Shape{k, n}));
  expect_close(c.to_vector<double>(), loop_matmul(av, bv, m, k, n), 1e-12);
  std::vector<int32_t> ai(m * k), bi(k * n);
  for (size_t i = 0; i < ai.size(); ++i) ai[i] = static_cast<int32_t>(av[i] * 100);
  for (size_t i = 0; i < bi.size(); ++i) bi[i] = static_cast<int32_t>(bv[i] * 100);
  std::vector<float> af(ai.begin(), ai.end()), bf(bi.begin(), bi.end());
  Array ci = matmul(array<int32_t>(ai, Shape{m, k}), array<int32_t>(bi, Shape{k, n}));
  EXPECT_EQ(ci.dtype(), DType::kI32);
  expect_close(ci.to_vector<double>(), loop_matmul(af, bf, m, k, n), 0);
}

TEST(LinalgValues, EigenFallbackWithoutOneDNN) {
  const int64_t m = 33, k = 65, n = 17;
  auto av = random_floats(m * k, 11), bv = random_floats(k * n, 12);
  Array at = array<float>(av, Shape{k, m}), b = array<float>(bv, Shape{k, n});
  Array a16 = astype(at, DType::kBF16), b16 = astype(b, DType::kBF16);
  std::vector<float> a16v = a16.to_vector<float>(), b16v = b16.to_vector<float>();
  const DotDims dims{{0}, {0}, {}, {}};  // A stored transposed: strided for oneDNN
  cpu::set_onednn_enabled(false);
  auto s0 = cpu::onednn_cache_stats();
  Array c = dot_general(at, b, dims);
  Array c16 = dot_general(a16, b16, dims, DType::kF32);
  eval(c, c16);
  auto s1 = cpu::onednn_cache_stats();
  cpu::set_onednn_enabled(true);
  EXPECT_EQ(s1.hits + s1.misses, s0.hits + s0.misses);  // oneDNN was not asked
  expect_close(c.to_vector<double>(), loop_matmul(av, bv, m, k, n, true), 1e-5);
  expect_close(c16.to_vector<double>(), loop_matmul(a16v, b16v, m, k, n, true), 1e-5);
}

TEST(LinalgCache, RepeatedCallsReuseThePrimitive) {
  // A shape no other test uses, so the first call must create a primitive.
  const int64_t m = 37, k = 41, n = 43;
  auto av = random_floats(m * k, 7), bv = random_floats(k * n, 8);
  Array a = array<float>(av, Shape{m, k}), b = array<float>(bv, Shape{k, n});
  eval(a, b);
  auto s0 = cpu::onednn_cache_stats();
  std::vector<float> first = matmul(a, b).to_vector<float>();
  auto s1 = cpu::onednn_cache_stats();
  EXPECT_EQ(s1.misses, s0.misses + 1);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(matmul(a, b).to_vector<float>(), first);
  auto s2 = cpu::onednn_cache_stats();
  EXPECT_EQ(s2.misses, s1.misses);
  EXPECT_EQ(s2.hits, s1.hits + 5);
  EXPECT_LE(s2.size, s2.capacity);
  expect_close(std::vector<double>(first.begin(), first.end()), loop_matmul(av, bv, m, k, n), 1e-5);
}

TEST(LinalgCache, ConcurrentCallsAgree) {
  const int64_t m = 64, k = 48, n = 80;
  auto av = random_floats(m * k, 9), bv = random_floats(k * n, 10);
  Array a = array<float>(av, Shape{m, k}), b = array<float>(bv, Shape{k, n});
  eval(a, b);
  std::vector<float> want = matmul(a, b).to_vector<float>();
  std::vector<std::vector<float>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) got[t] = matmul(a, b).to_vector<float>();
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

TEST(LinalgPrimitive, ParamsAndCost) {
  Array c = dot_general(zeros({2, 3, 4}), zeros({2, 4, 5}), {{2}, {1}, {0}, {0}}, DType::kF64);
  ASSERT_NE(c.primitive(), nullptr);
  EXPECT_EQ(c.primitive()->params(),
            "dimension_numbers=(((2), (1)), ((0), (0))) preferred_element_type=f64");
  std::vector<Aval> in{c.inputs()[0].aval(), c.inputs()[1].aval()};
  EXPECT_EQ(c.primitive()->cost(in, {c.aval()}).flops, 2.0 * 2 * 3 * 4 * 5);
}

}  // namespace
}  // namespace graft
