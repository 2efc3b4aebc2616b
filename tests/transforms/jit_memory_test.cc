// jit's donate_argnums, in-place elementwise execution and the buffer plan (peak / total
// bytes).
#include <cmath>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

Array sgd(const Array& p, const Array& g) { return p - 0.5f * g; }

TEST(JitDonation, DonatedParameterBufferIsReusedAndThenUnusable) {
  auto step = jit(sgd, {.donate_argnums = {0}});
  Array p = array<float>({1, 2, 3, 4});
  Array g = array<float>({2, 2, 2, 2});
  const void* p_data = p.buffer()->data();
  Array q = step(p, g);
  EXPECT_EQ(q.buffer()->data(), p_data);
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{0, 1, 2, 3}));
  try {
    (void)p.to_vector<float>();
    FAIL() << "reading a donated array must throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[jit] array was donated to a jitted function", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(p + 1.0f, Error);             // passing it to an op
  EXPECT_THROW(step(p, g), Error);           // or to the jitted function again
  EXPECT_EQ(g.to_vector<float>()[0], 2.0f);  // not donated: intact
  // Training loop: each step donates the previous parameters (a cache hit every time).
  for (int i = 0; i < 3; ++i) {
    const void* before = q.buffer()->data();
    q = step(q, g);
    EXPECT_EQ(q.buffer()->data(), before);
  }
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{-3, -2, -1, 0}));
}

TEST(JitDonation, WithoutDonationNoReuse) {
  auto step = jit(sgd);
  Array p = array<float>({1, 2, 3, 4});
  Array g = array<float>({2, 2, 2, 2});
  const void* p_data = p.buffer()->data();
  Array q = step(p, g);
  EXPECT_NE(q.buffer()->data(), p_data);
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{0, 1, 2, 3}));
}

TEST(JitDonation, HeldBufferIsNotOverwritten) {
  // The caller still holds p's buffer: the kernel must not write into it.
  auto step = jit(sgd, {.donate_argnums = {0}});
  Array p = array<float>({1, 2});
  std::shared_ptr<Buffer> held = p.buffer();
  Array q = step(p, array<float>({2, 2}));
  EXPECT_NE(q.buffer()->data(), held->data());
  EXPECT_EQ(held->as<float>()[0], 1.0f);
}

TEST(JitDonation, IdentityOfDonatedArgumentStaysUsable) {
  auto f = jit([](const Array& x) { return x; }, {.donate_argnums = {0}});
  Array x = array<float>({5, 6});
  Array y = f(x);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{5, 6}));
  EXPECT_THROW(x.to_vector<float>(), Error);
}

TEST(JitDonation, OutOfRangeDonateArgnums) {
  auto f = jit([](const Array& x) { return x + 1.0f; }, {.donate_argnums = {3}});
  EXPECT_THROW(f(array<float>({1})), Error);
}

TEST(JitMemory, ChainReusesBuffers) {
  // add -> mul -> sub on i32[1000] (integer chains are not fused, so the planner sees three
  // instructions): each step can write into its dying input.
  auto f = jit([](const Array& x) { return (x + 1) * 3 - 2; });
  Array x = ones({1000}, DType::kI32);
  MemoryAnalysis m = f.memory_analysis(x);
  EXPECT_EQ(m.total_bytes, 3 * 4000);
  EXPECT_EQ(m.peak_bytes, 4000);
  EXPECT_EQ(f(x).to_vector<int>()[0], 4);
  EXPECT_EQ(x.to_vector<int>()[0], 1);  // the argument is not donated
}

TEST(JitMemory, DiamondKeepsBothBranchesLive) {
  // a = x + 1, b = a * 2, c = a * 3, out = b - c (i32: not fused): when c is computed a has
  // no later use, so c takes it over; b is live at the same time.
  auto f = jit([](const Array& x) {
    Array a = x + 1;
    return a * 2 - a * 3;
  });
  MemoryAnalysis m = f.memory_analysis(ones({256}, DType::kI32));
  EXPECT_EQ(m.total_bytes, 4 * 1024);
  EXPECT_EQ(m.peak_bytes, 2 * 1024);
}

TEST(JitMemory, DifferentDtypeIsNotReused) {
  // i32 (not fused): the bool comparison cannot take the i32 product's buffer, and the i32
  // result cannot take the bool one, so the comparison and the result are live together.
  auto f = jit([](const Array& x) { return where(x * 2 > 1, x, 0); });
  MemoryAnalysis m = f.memory_analysis(ones({100}, DType::kI32));
  EXPECT_GT(m.total_bytes, m.peak_bytes);
  EXPECT_GE(m.peak_bytes, 400 + 100);
}

TEST(JitMemory, PlanOfProgramWithDonatedArgument) {
  auto f = jit(sgd, {.donate_argnums = {0}});
  // p - 0.5 * g is one fused instruction whose output takes p's buffer (counted from then on).
  MemoryAnalysis m = f.memory_analysis(array<float>({1, 2, 3, 4}), array<float>({1, 1, 1, 1}));
  EXPECT_EQ(m.total_bytes, 16);
  EXPECT_EQ(m.peak_bytes, 16);
}

}  // namespace
}  // namespace graft
