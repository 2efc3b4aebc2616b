// graft under concurrency (DESIGN.md, Threads): many threads build and evaluate their own
// graphs over shared, evaluated arrays, and share unevaluated ones, at the same time. Each
// result must equal, bit for bit, the one computed by a single thread. CI runs this binary
// under ThreadSanitizer too (--config=tsan); oneDNN's own code, which TSan cannot see, is
// covered by the equality checks (a shared oneDNN scratchpad gave 2.7e31 for 4078.8 here).
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "core/backend/cpu/onednn_matmul.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/util/tsan_suppressions.h"
#include "tests/core/primitives/specs/spec.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft {
namespace {

constexpr int kThreads = 8;

// Runs body(t) on kThreads threads released together; returns each thread's error text
// (empty: none), so failures are reported on the test's own thread.
std::vector<std::string> run_threads(const std::function<void(int, std::string*)>& body) {
  std::vector<std::string> errors(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        body(t, &errors[t]);
      } catch (const std::exception& e) {
        errors[t] += std::string("exception: ") + e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  return errors;
}

void expect_no_errors(const std::vector<std::string>& errors) {
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

// Bitwise equality of two value lists (NaN equals NaN, -0 differs from +0).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// The reproduction: one matmul shape (so one cached oneDNN primitive) executed by
// eight threads at once over shared evaluated inputs, for shapes whose primitives use
// scratch memory (packed or transposed operands, long k). Reference: a plain loop in double.
TEST(Concurrency, SameMatmulShapeOnManyThreads) {
  ASSERT_TRUE(cpu::onednn_enabled());
  struct Shape3 {
    int64_t m, k, n;
    bool transpose_b;
  };
  for (Shape3 sh : {Shape3{80, 64, 48, false}, Shape3{80, 64, 1, false}, Shape3{80, 1024, 96, true},
                    Shape3{256, 512, 256, false}, Shape3{17, 2048, 33, true}}) {
    SCOPED_TRACE(std::to_string(sh.m) + "x" + std::to_string(sh.k) + "x" + std::to_string(sh.n));
    Array a = sh.transpose_b ? transpose(spec::random_array({sh.n, sh.k}, DType::kF32, 7))
                             : spec::random_array({sh.k, sh.n}, DType::kF32, 7);
    eval(a);
    double sum_a = 0;  // sum(ones(m, k) * c @ a) = m * c * sum(a)
    for (double v : spec::values_of(a)) sum_a += v;
    auto errors = run_threads([&](int t, std::string* err) {
      for (int round = 0; round < 10; ++round) {
        double c = 0.5 + t + 0.25 * round;
        double got = sum(matmul(ones({sh.m, sh.k}) * c, a)).item<double>();
        double want = sh.m * c * sum_a;
        if (!(std::fabs(got - want) <= 1e-3 * std::fabs(want) + 1e-2)) {
          *err += "round " + std::to_string(round) + ": got " + std::to_string(got) +
                  ", want " + std::to_string(want) + "\n";
        }
      }
    });
    expect_no_errors(errors);
  }
}

// Every case of every primitive's spec, evaluated by eight threads at once (each starting at
// a different case, so different ops overlap), equals the single-threaded result bit for bit.
TEST(Concurrency, OpSpecTableOnManyThreads) {
  struct Item {
    std::string name;
    const spec::Case* c;
    std::vector<double> want;
  };
  std::vector<spec::Spec> specs;
  for (const auto& [id, fn] : spec::registry()) specs.push_back(fn());
  std::vector<Item> items;
  for (const spec::Spec& s : specs) {
    for (const spec::Case& c : s.cases) {
      eval(c.inputs);  // shared inputs are evaluated before the threads start
      items.push_back({std::string(kPrimitiveNames[static_cast<int>(s.prim)]) + "/" + c.name,
                       &c, spec::values_of(c.fn(c.inputs))});
    }
  }
  ASSERT_GT(items.size(), 100u);
  auto errors = run_threads([&](int t, std::string* err) {
    const size_t n = items.size();
    for (size_t k = 0; k < n; ++k) {
      const Item& it = items[(k + t * n / kThreads) % n];
      std::vector<double> got = spec::values_of(it.c->fn(it.c->inputs));
      if (!same_bits(got, it.want)) *err += it.name + " differs\n";
    }
  });
  expect_no_errors(errors);
}

// An unevaluated graph shared by all threads, read by all of them at once: computed once
// (each node's kernel runs under its lock), every thread sees the same values.
TEST(Concurrency, SharedUnevaluatedGraph) {
  for (int round = 0; round < 10; ++round) {
    Array x = spec::random_array({256, 64}, DType::kF32, 3 + round);
    Array w = spec::random_array({64, 64}, DType::kF32, 11);
    Array y = x;
    for (int i = 0; i < 8; ++i) y = tanh(matmul(y, w)) + y * 0.5;
    Array total = sum(y);
    std::vector<std::vector<double>> got(kThreads);
    std::vector<double> sums(kThreads);
    auto errors = run_threads([&](int t, std::string*) {
      if (t % 2 == 0) {
        got[t] = spec::values_of(y);
      } else {
        sums[t] = total.item<double>();  // a consumer of the shared node, evaluated at once
        got[t] = spec::values_of(y);
      }
    });
    expect_no_errors(errors);
    ASSERT_TRUE(y.is_evaluated());
    for (int t = 1; t < kThreads; ++t) EXPECT_TRUE(same_bits(got[t], got[0])) << "thread " << t;
    for (int t = 3; t < kThreads; t += 2) EXPECT_EQ(sums[t], sums[1]);
  }
}

// One jitted function (one cache, one compiled program) called from every thread with its
// own arguments, and grad traced on every thread at once: each equals the eager result.
TEST(Concurrency, SharedJitAndGrad) {
  Array w = spec::random_array({32, 16}, DType::kF32, 5);
  auto loss = [w](const Array& x) { return sum(square(tanh(matmul(x, w)))); };
  auto f = jit([&](const Array& x) { return loss(x); });
  auto g = grad(loss);
  std::vector<Array> xs;
  std::vector<std::vector<double>> want_f, want_g;
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(spec::random_array({8, 32}, DType::kF32, 100 + t));
    want_f.push_back(spec::values_of(f(xs[t])));  // compiled on this thread first
    want_g.push_back(spec::values_of(g(xs[t])));
  }
  auto errors = run_threads([&](int t, std::string* err) {
    for (int round = 0; round < 10; ++round) {
      if (!same_bits(spec::values_of(f(xs[t])), want_f[t])) *err += "jit differs\n";
      if (!same_bits(spec::values_of(g(xs[t])), want_g[t])) *err += "grad differs\n";
    }
  });
  expect_no_errors(errors);
}

}  // namespace
}  // namespace graft
