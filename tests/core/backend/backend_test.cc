// The Backend / Executable seam (core/backend/backend.h) with the CPU backend linked: a
// compiled program gives what eager evaluation gives, donation consumes arguments, memory
// figures come from the compile-time plan, host copies round-trip.
#include "core/backend/backend.h"
#include "core/backend/eager.h"

#include <cmath>
#include <atomic>
#include <cstring>
#include <thread>

#include "core/device/device.h"
#include "core/ir/program.h"
#include "core/sharding/device_put.h"
#include "core/ops.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

std::shared_ptr<const Program> traced(const FlatFn& f, const std::vector<Aval>& avals) {
  ClosedProgram c = trace_closed(f, avals);
  EXPECT_TRUE(c.consts.empty());
  return c.program;
}

TEST(BackendTest, TheCpuBackendIsRegistered) { EXPECT_EQ(default_backend().name(), "cpu"); }

// GPUs are devices only where a device backend is linked (--config=cuda) and sees one.
TEST(BackendTest, GpuDevicesComeFromTheDeviceBackend) {
  const Backend* d = device_backend();
  const int gpus = d == nullptr ? 0 : d->device_count();
  EXPECT_EQ(devices("cuda").size(), static_cast<size_t>(gpus));
  EXPECT_EQ(devices("gpu").size(), static_cast<size_t>(gpus));
  if (gpus == 0) {
    try {
      device_put(ones({2}), Device{0, 0, "cuda"});
      ADD_FAILURE() << "device_put to a missing GPU must throw";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[device_put] there is no device cuda:0", 0), 0u)
          << e.what();
    }
  }
  try {
    devices("tpu");
    ADD_FAILURE() << "an unknown platform must throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[devices] unknown platform", 0), 0u) << e.what();
  }
  Array x = arange(0.0, 3.0, 1.0);
  EXPECT_EQ(x.host_buffer().get(), x.buffer().get());  // host memory: no copy
}

TEST(BackendTest, CompiledProgramMatchesEager) {
  auto f = [](const std::vector<Array>& x) {
    return std::vector<Array>{exp(x[0]) * x[1] + 1.0, sum(x[0] * x[1])};
  };
  Array a = reshape(arange(0.0, 6.0, 1.0), {2, 3}) * 0.25;
  Array b = ones({2, 3}) * 3.0;
  auto exe = default_backend().compile(traced(f, {a.aval(), b.aval()}));
  std::vector<Array> got = exe->run({a, b}), want = f({a, b});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].to_vector<float>(), want[0].to_vector<float>());
  EXPECT_FLOAT_EQ(got[1].item<float>(), want[1].item<float>());
  EXPECT_EQ(exe->program().instrs.size(), traced(f, {a.aval(), b.aval()})->instrs.size());
  EXPECT_GT(exe->peak_bytes(), 0);
  EXPECT_LE(exe->peak_bytes(), exe->total_bytes());
}

TEST(BackendTest, DonatedArgumentIsConsumed) {
  auto f = [](const std::vector<Array>& x) { return std::vector<Array>{x[0] * 2.0 + 1.0}; };
  Array a = ones({1000}) * 1.0, kept = ones({1000}) * 1.0;
  eval(a, kept);
  auto exe = default_backend().compile(traced(f, {a.aval()}), {true});
  std::vector<Array> out = exe->run({a});
  EXPECT_EQ(out[0].to_vector<float>(), std::vector<float>(1000, 3.0f));
  EXPECT_THROW(a.to_vector<float>(), Error);
  EXPECT_THROW(a + 1.0, Error);
  // Not donated: the argument stays readable.
  auto plain = default_backend().compile(traced(f, {kept.aval()}));
  plain->run({kept});
  EXPECT_EQ(kept.to_vector<float>(), std::vector<float>(1000, 1.0f));
}

TEST(BackendTest, DonatedArgumentIsWrittenInPlace) {
  auto f = [](const std::vector<Array>& x) { return std::vector<Array>{exp(x[0]) * 2.0}; };
  Array a = ones({4096}) * 0.5;
  eval(a);
  const void* storage = a.raw_data();
  auto exe = default_backend().compile(traced(f, {a.aval()}), {true});
  std::vector<Array> out = exe->run({a});
  EXPECT_EQ(out[0].raw_data(), storage);  // the run's table held the only reference
  EXPECT_FLOAT_EQ(out[0].to_vector<float>()[7], 2.0f * std::exp(0.5f));
  // A buffer the caller still holds elsewhere is not overwritten, even when donated.
  Array b = ones({4096}) * 0.5;
  std::shared_ptr<Buffer> held = b.buffer();
  std::vector<Array> out2 = exe->run({b});
  EXPECT_NE(out2[0].raw_data(), held->data());
  EXPECT_EQ(static_cast<const float*>(held->data())[7], 0.5f);
}

// 2^48 f32 = 1 PiB: a valid shape whose allocation fails on x86-64 (see overflow_test).
constexpr int64_t kPiBFloats = int64_t{1} << 48;

TEST(BackendTest, DonatedArgumentSurvivesARunThatFails) {
  // The failing allocation comes before anything writes into x: x keeps its value.
  auto f = [](const std::vector<Array>& x) {
    Array huge = broadcast_to(sum(x[0]), {kPiBFloats});
    return std::vector<Array>{x[0] * 2.0 + sum(huge)};
  };
  Array a = ones({1000}) * 1.5;
  eval(a);
  auto exe = default_backend().compile(traced(f, {a.aval()}), {true});
  EXPECT_THROW(exe->run({a}), AllocError);
  EXPECT_EQ(a.to_vector<float>(), std::vector<float>(1000, 1.5f));
  EXPECT_EQ((a + 1.0).to_vector<float>(), std::vector<float>(1000, 2.5f));
  // Through jit's donate_argnums as a training step would use it.
  auto step = jit([](const Array& p) { return p * 2.0 + sum(broadcast_to(sum(p), {kPiBFloats})); },
                  {.donate_argnums = {0}});
  EXPECT_THROW(step(a), AllocError);
  EXPECT_EQ(a.to_vector<float>(), std::vector<float>(1000, 1.5f));
}

TEST(BackendTest, DonatedArgumentWrittenBeforeAFailureStaysConsumed) {
  // exp(x) * 2 is computed into x's buffer; the failure comes after: x's old value is gone,
  // and reading x says so rather than giving the overwritten bytes.
  auto f = [](const std::vector<Array>& x) {
    Array y = exp(x[0]) * 2.0;
    return std::vector<Array>{y + sum(broadcast_to(sum(y), {kPiBFloats}))};
  };
  Array a = ones({4096}) * 0.5;
  eval(a);
  auto exe = default_backend().compile(traced(f, {a.aval()}), {true});
  EXPECT_THROW(exe->run({a}), AllocError);
  EXPECT_THROW(a.to_vector<float>(), Error);
}

TEST(BackendTest, DonatingOneOutputOfAMultiOutputNodeKeepsItsSiblings) {
  // An eager scan is one node with two outputs (carry, ys): donating the carry must not
  // take the ys with it. The carry is then only read (it keeps its value).
  auto body = [](const Array& c, const Array& x) { return std::pair{c + x, c * x}; };
  auto [carry, ys] = scan(body, ones({3}) * 1.0, ones({4, 3}) * 2.0);
  eval(carry, ys);
  auto step = jit([](const Array& c) { return c * 10.0; }, {.donate_argnums = {0}});
  EXPECT_EQ(step(carry).to_vector<float>(), std::vector<float>(3, 90.0f));
  EXPECT_EQ(ys.to_vector<float>()[0], 2.0f);
  EXPECT_EQ(carry.to_vector<float>(), std::vector<float>(3, 9.0f));
}

TEST(BackendTest, EagerOpsCompileOncePerParametersAndShapes) {
  Array x = ones({3, 5}) * 1.0;
  eval(x);
  // Shapes no other test in this process uses, so the counts are this test's own.
  Array y = reshape(x, {5, 3}) + 1.0;
  eval(y);
  const size_t after_first = eager_cache_size();
  for (int i = 0; i < 5; ++i) eval(reshape(x, {5, 3}) + 1.0);
  EXPECT_EQ(eager_cache_size(), after_first);
  eval(reshape(x, {15}));  // another parameter of the same primitive
  EXPECT_EQ(eager_cache_size(), after_first + 1);
  // The cached executables compute, with the right parameters each.
  EXPECT_EQ(reshape(x, {15}).shape(), (Shape{15}));
  EXPECT_EQ((reshape(x, {5, 3}) + 1.0).to_vector<float>(), std::vector<float>(15, 2.0f));
}

TEST(BackendTest, EagerOpsPastTheCacheBoundStillCompute) {
  // More distinct (primitive, avals) pairs than the cache keeps: the ones past the bound
  // compile per call, and every result is still right.
  for (int64_t k = 1; k <= 4200; ++k) {
    Array x = full({k}, 2.0);
    std::vector<float> got = (x * 3.0).to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(k));
    ASSERT_EQ(got.back(), 6.0f) << k;
  }
  EXPECT_LE(eager_cache_size(), 4096u);
}

TEST(BackendTest, EagerOpsFromManyThreadsShareTheCache) {
  Array x = full({7}, 1.0);
  eval(x + 1.0);
  const size_t before = eager_cache_size();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if ((x + 1.0).to_vector<float>() != std::vector<float>(7, 2.0f)) ++wrong;
        if ((x * static_cast<double>(t)).to_vector<float>()[0] != static_cast<float>(t)) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  // x + 1 was cached before; x * t adds one entry for the multiply (and the scalar's fill),
  // not one per thread or per call.
  EXPECT_LE(eager_cache_size(), before + 4);
}

TEST(BackendTest, HostCopiesRoundTrip) {
  const Backend& b = default_backend();
  float src[4] = {1, -2, 3.5f, 0}, dst[4] = {};
  std::shared_ptr<Buffer> buf = b.copy_from_host(src, sizeof(src));
  b.copy_to_host(*buf, dst, sizeof(dst));
  EXPECT_EQ(std::memcmp(src, dst, sizeof(src)), 0);
  EXPECT_NE(b.allocate(64), nullptr);
}

}  // namespace
}  // namespace graft
