// Two processes x 2 virtual devices joined through MPI (run by mpi_test.sh under mpirun, never
// alone): the device world, every collective over a mesh whose 'x' axis crosses the two
// processes and whose 'y' axis stays inside each, pmap across processes with its gradient, and
// data-parallel / FSDP training of llama-tiny against one device, and a sharded checkpoint
// each process writes its part of; exchanges that run in program order whatever each process
// reads, and processes that run different programs stopped with an error naming the
// difference. Each process computes the
// references itself (every process holds whole arrays; core/distributed/mpi.h), by plain loops
// over the global inputs or by the one-device program.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "checkpoint/manager.h"
#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/distributed/world.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "nn/llama.h"
#include "optim/optim.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"
#include "transforms/shard_map.h"

namespace graft {
namespace {

// Deterministic, different per element, the same on every process.
Array input(const Shape& s, double phase) {
  return reshape(sin(arange(0.0, static_cast<double>(numel(s)), 1.0, DType::kF32) * 0.37 + phase),
                 s);
}

void expect_near(const Array& got, const std::vector<float>& want, double tol, const char* what) {
  std::vector<float> g = got.to_vector<float>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], want[i], tol) << what << " at " << i;
}

TEST(MpiWorldTest, TwoProcessesOfTwoDevices) {
  ASSERT_EQ(process_count(), 2);
  ASSERT_EQ(device_count(), 4);
  const int me = process_index();
  std::vector<Device> local = local_devices();
  ASSERT_EQ(local.size(), 2u);
  EXPECT_EQ(local[0].id, 2 * me);
  EXPECT_EQ(local[1].id, 2 * me + 1);
  for (const Device& d : devices()) EXPECT_EQ(d.process_index, d.id / 2);
  // The world is fixed: joining again is a no-op, changing it is refused.
  EXPECT_TRUE(distributed::initialize().ok());
  EXPECT_EQ(detail::set_process_world(0, {4}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(distributed::barrier("test").ok());
}

// Mesh x=2 (across the processes) by y=2 (inside each); every device holds a [2, 3] block of
// a [8, 3] array split over both axes (x major).
const Mesh& mesh() {
  static const Mesh m({2, 2}, {"x", "y"});
  return m;
}

std::vector<float> rows(const std::vector<float>& v, int block) {
  return std::vector<float>(v.begin() + block * 6, v.begin() + block * 6 + 6);
}

TEST(MpiWorldTest, AllReducesOverEachAxisAndBoth) {
  Array a = input({8, 3}, 0.1);
  std::vector<float> in = a.to_vector<float>();
  auto run = [&](auto body) {
    return shard_map(body, mesh(), {P(AxisNames{"x", "y"})}, {P(AxisNames{"x", "y"})})(a);
  };
  // Device (x, y) holds block 2x + y.
  std::vector<float> sum_x(24), sum_y(24), sum_xy(24), max_x(24), min_xy(24);
  for (int b = 0; b < 4; ++b) {
    const int x = b / 2, y = b % 2;
    for (int e = 0; e < 6; ++e) {
      auto at = [&](int xx, int yy) { return in[(2 * xx + yy) * 6 + e]; };
      sum_x[b * 6 + e] = at(0, y) + at(1, y);
      sum_y[b * 6 + e] = at(x, 0) + at(x, 1);
      sum_xy[b * 6 + e] = at(0, 0) + at(0, 1) + at(1, 0) + at(1, 1);
      max_x[b * 6 + e] = std::max(at(0, y), at(1, y));
      min_xy[b * 6 + e] = std::min(std::min(at(0, 0), at(0, 1)), std::min(at(1, 0), at(1, 1)));
    }
  }
  expect_near(run([](const Array& v) { return psum(v, {"x"}); }), sum_x, 1e-6, "psum x");
  expect_near(run([](const Array& v) { return psum(v, {"y"}); }), sum_y, 1e-6, "psum y");
  expect_near(run([](const Array& v) { return psum(v, {"x", "y"}); }), sum_xy, 1e-6, "psum xy");
  expect_near(run([](const Array& v) { return pmax(v, {"x"}); }), max_x, 0, "pmax x");
  expect_near(run([](const Array& v) { return pmin(v, {"x", "y"}); }), min_xy, 0, "pmin xy");
  // axis_index: x is the process, y the device within it.
  Array idx = shard_map([](const Array& v) {
    return v * 0.0f + astype(axis_index("x") * 10 + axis_index("y"), DType::kF32);
  }, mesh(), {P(AxisNames{"x", "y"})}, {P(AxisNames{"x", "y"})})(a);
  std::vector<float> want(24);
  for (int b = 0; b < 4; ++b) std::fill(want.begin() + 6 * b, want.begin() + 6 * b + 6, 10 * (b / 2) + b % 2);
  expect_near(idx, want, 0, "axis_index");
}

TEST(MpiWorldTest, GatherScatterAllToAllAndPermuteAcrossProcesses) {
  Array a = input({8, 3}, 0.7);
  std::vector<float> in = a.to_vector<float>();
  const std::vector<PartitionSpec> split = {P(AxisNames{"x", "y"})};
  // all_gather over x: device (x, y) gets blocks (0, y) and (1, y) stacked, [4, 3] (the
  // output keeps one block per device: [16, 3]).
  Array g = shard_map([](const Array& v) { return all_gather(v, "x", 0, true); }, mesh(), split,
                      split)(a);
  std::vector<float> want;
  for (int b = 0; b < 4; ++b) {
    for (int x = 0; x < 2; ++x) {
      std::vector<float> r = rows(in, 2 * x + b % 2);
      want.insert(want.end(), r.begin(), r.end());
    }
  }
  expect_near(g, want, 0, "all_gather x");
  // psum_scatter over x of a [2, 3] block: device x keeps row x of the sum over x.
  Array s = shard_map([](const Array& v) { return psum_scatter(v, "x", 0, true); }, mesh(), split,
                      {P(AxisNames{"x", "y"})})(a);
  want.assign(12, 0);
  for (int x = 0; x < 2; ++x) {
    for (int y = 0; y < 2; ++y) {
      for (int c = 0; c < 3; ++c) {
        want[(2 * x + y) * 3 + c] = in[(2 * 0 + y) * 6 + x * 3 + c] + in[(2 * 1 + y) * 6 + x * 3 + c];
      }
    }
  }
  expect_near(s, want, 1e-6, "psum_scatter x");
  // all_to_all over x, split rows, concat rows: device x gets row x of both x-blocks.
  Array t = shard_map([](const Array& v) { return all_to_all(v, "x", 0, 0, true); }, mesh(), split,
                      split)(a);
  want.assign(24, 0);
  for (int x = 0; x < 2; ++x) {
    for (int y = 0; y < 2; ++y) {
      for (int q = 0; q < 2; ++q) {
        for (int c = 0; c < 3; ++c) {
          want[(2 * x + y) * 6 + q * 3 + c] = in[(2 * q + y) * 6 + x * 3 + c];
        }
      }
    }
  }
  expect_near(t, want, 0, "all_to_all x");
  // ppermute over x: a swap of the processes' blocks.
  Array p = shard_map([](const Array& v) { return ppermute(v, "x", {{0, 1}, {1, 0}}); }, mesh(),
                      split, split)(a);
  want.clear();
  for (int b : {2, 3, 0, 1}) {
    std::vector<float> r = rows(in, b);
    want.insert(want.end(), r.begin(), r.end());
  }
  expect_near(p, want, 0, "ppermute x");
}

// Over one axis of all 4 devices (2 on each process: the members here meet in memory, then
// one MPI call per process): psum and psum_scatter along the second dimension (each device
// keeps 2 columns of the sum of the 4 row blocks), f32 and i32, against plain loops.
TEST(MpiWorldTest, ReductionsOverAnAxisWithTwoDevicesOnEachProcess) {
  const Mesh line({4}, {"i"});
  for (DType dt : {DType::kF32, DType::kI32}) {
    Array a = astype(input({8, 8}, 0.2) * 100.0f, dt);  // device d holds rows 2d, 2d + 1
    std::vector<double> in = astype(a, DType::kF64).to_vector<double>(), sum(16, 0);
    for (int d = 0; d < 4; ++d) {
      for (int e = 0; e < 16; ++e) sum[e] += in[d * 16 + e];
    }
    Array summed = shard_map([](const Array& v) { return psum(v, {"i"}); }, line, {P("i")},
                             {P("i")})(a);
    Array scattered = shard_map([](const Array& v) { return psum_scatter(v, "i", 1, true); }, line,
                                {P("i")}, {P(none, "i")})(a);
    std::vector<double> got = astype(summed, DType::kF64).to_vector<double>();
    ASSERT_EQ(got.size(), 64u);
    for (int e = 0; e < 64; ++e) ASSERT_NEAR(got[e], sum[e % 16], 1e-4) << "psum at " << e;
    got = astype(scattered, DType::kF64).to_vector<double>();
    ASSERT_EQ(got.size(), 16u);
    for (int e = 0; e < 16; ++e) ASSERT_NEAR(got[e], sum[e], 1e-4) << "psum_scatter at " << e;
  }
}

// all_gather, all_to_all and ppermute over the same axis (pairs within a process and across
// the two), against plain loops.
TEST(MpiWorldTest, MovesOverAnAxisWithTwoDevicesOnEachProcess) {
  const Mesh line({4}, {"i"});
  Array a = input({8, 8}, 0.6);  // device d holds rows 2d, 2d + 1
  const std::vector<float> in = a.to_vector<float>();
  auto at = [&](int row, int col) { return in[row * 8 + col]; };
  // all_gather: every device gets all 8 rows; stacked by device, [32, 8].
  Array gathered = shard_map([](const Array& v) { return all_gather(v, "i", 0, true); }, line,
                             {P("i")}, {P("i")})(a);
  std::vector<float> want;
  for (int r = 0; r < 4; ++r) want.insert(want.end(), in.begin(), in.end());
  expect_near(gathered, want, 0, "all_gather");
  // all_to_all, split columns, concat rows: device r gets columns 2r, 2r + 1 of every device's
  // rows, [8, 2]; stacked by device, [32, 2].
  Array moved = shard_map([](const Array& v) { return all_to_all(v, "i", 1, 0, true); }, line,
                          {P("i")}, {P("i")})(a);
  want.assign(64, 0);
  for (int r = 0; r < 4; ++r) {
    for (int q = 0; q < 4; ++q) {
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) want[(8 * r + 2 * q + i) * 2 + j] = at(2 * q + i, 2 * r + j);
      }
    }
  }
  expect_near(moved, want, 0, "all_to_all");
  // ppermute one step along the line (1 -> 2 and 3 -> 0 cross the processes), device 0
  // receiving nothing: zeros.
  Array shifted = shard_map(
      [](const Array& v) { return ppermute(v, "i", {{0, 1}, {1, 2}, {2, 3}}); }, line, {P("i")},
      {P("i")})(a);
  want.assign(64, 0);
  for (int r = 1; r < 4; ++r) {
    for (int e = 0; e < 16; ++e) want[r * 16 + e] = in[(r - 1) * 16 + e];
  }
  expect_near(shifted, want, 0, "ppermute");
}

// pmap over all four devices; its gradient: d/dx sum(x * psum(x)) = psum(x) + psum(x) (each
// device's x appears in every device's psum).
TEST(MpiWorldTest, PmapAndItsGradientAcrossProcesses) {
  Array a = input({4, 5}, 1.3);
  auto f = [](const Array& x) { return sum(x * psum(x, {"i"})); };
  Array out = pmap(f, "i")(a);
  std::vector<float> in = a.to_vector<float>(), col(5, 0), want_out(4, 0), want_grad(20);
  for (int d = 0; d < 4; ++d) {
    for (int e = 0; e < 5; ++e) col[e] += in[d * 5 + e];
  }
  for (int d = 0; d < 4; ++d) {
    for (int e = 0; e < 5; ++e) {
      want_out[d] += in[d * 5 + e] * col[e];
      want_grad[d * 5 + e] = 2 * col[e];
    }
  }
  expect_near(out, want_out, 1e-5, "pmap");
  Array g = grad([&](const Array& x) { return sum(pmap(f, "i")(x)); })(a);
  expect_near(g, want_grad, 1e-5, "grad of pmap");
}

// psum over x and over y of a [8, 3] array whose block 2x + y (rows 2b, 2b + 1) device (x, y)
// holds, by plain loops.
std::vector<float> psum_of(const std::vector<float>& in, bool over_x) {
  std::vector<float> out(24);
  for (int b = 0; b < 4; ++b) {
    const int x = b / 2, y = b % 2;
    for (int e = 0; e < 6; ++e) {
      out[b * 6 + e] = over_x ? in[(0 + y) * 6 + e] + in[(2 + y) * 6 + e]
                              : in[(2 * x) * 6 + e] + in[(2 * x + 1) * 6 + e];
    }
  }
  return out;
}

// Process 0 reads a value that process 1 does not (the usual "log on process 0"): the
// shard_maps behind it have run on both processes already, in program order, when they were
// called; reading never starts exchanges of its own.
TEST(MpiWorldTest, ExchangesRunInProgramOrderWhateverEachProcessReads) {
  const std::vector<PartitionSpec> split = {P(AxisNames{"x", "y"})};
  auto over_x = shard_map([](const Array& v) { return psum(v, {"x"}); }, mesh(), split, split);
  auto over_y = shard_map([](const Array& v) { return psum(v, {"y"}); }, mesh(), split, split);
  Array a = input({8, 3}, 0.4);
  const std::vector<float> in = a.to_vector<float>();
  Array first = over_x(a);
  Array second = over_y(first * 2.0f);
  Array third = over_x(a + 1.0f);
  const std::vector<float> want_first = psum_of(in, true);
  std::vector<float> doubled = want_first, shifted = in;
  for (float& v : doubled) v *= 2;
  for (float& v : shifted) v += 1;
  const std::vector<float> want_second = psum_of(doubled, false);
  const std::vector<float> want_third = psum_of(shifted, true);
  if (process_index() == 0) expect_near(second, want_second, 1e-5, "second, read on process 0");
  expect_near(third, want_third, 1e-5, "third");
  expect_near(first, want_first, 1e-5, "first");
  expect_near(second, want_second, 1e-5, "second");
}

// Processes that run different programs (another shape, another collective, an FSDP step over
// other shapes) get an error naming the difference, on both processes, before anything is
// exchanged; the world stays usable.
TEST(MpiWorldTest, ProcessesThatDisagreeGetAnErrorNamingTheDifference) {
  const int me = process_index();
  const std::vector<PartitionSpec> split = {P(AxisNames{"x", "y"})};
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const DistributedError& e) {
      return std::string("DistributedError: ") + e.what();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  auto summed = shard_map([](const Array& v) { return psum(v, {"x"}); }, mesh(), split, split);
  std::string m = message([&] { summed(input({8, me == 0 ? 3 : 6}, 0.1)); });
  EXPECT_EQ(m,
            "[shard_map] processes disagree on input 0: process 0 has f32[8,3], process 1 has "
            "f32[8,6]")
      << "process " << me;

  auto reduced = shard_map([me](const Array& v) { return me == 0 ? psum(v, {"x"}) : pmax(v, {"x"}); },
                           mesh(), split, split);
  m = message([&] { reduced(input({8, 3}, 0.1)); });
  EXPECT_EQ(m.rfind("[shard_map] processes disagree on the body (line ", 0), 0u) << m;
  EXPECT_NE(m.find("process 0 has"), std::string::npos) << m;
  EXPECT_NE(m.find("psum"), std::string::npos) << m;
  EXPECT_NE(m.find("pmax"), std::string::npos) << m;

  const Mesh m4({4}, {"data"});
  auto step = jit([](const Array& w) { return sum(w * w); });
  Array w = device_put(input({8, me == 0 ? 4 : 8}, 0.5), NamedSharding(m4, P(none, "data")));
  m = message([&] { step(w).item<float>(); });
  EXPECT_NE(m.find("processes disagree on input 0: process 0 has f32[8,4], process 1 has "
                   "f32[8,8]"),
            std::string::npos)
      << m;

  // Nothing was exchanged: the next shard_map runs as usual.
  Array a = input({8, 3}, 0.3);
  expect_near(summed(a), psum_of(a.to_vector<float>(), true), 1e-5, "after the errors");
}

// Two threads of each process call two different shard_maps at once, so the processes may run
// them in different orders. Each call then gives its right value or the error naming the
// disagreement, on both processes; never another call's values, never a hang.
TEST(MpiWorldTest, ShardMapsFromTwoThreadsAreRightOrANamedError) {
  const std::vector<PartitionSpec> split = {P(AxisNames{"x", "y"})};
  auto over_x = shard_map([](const Array& v) { return psum(v, {"x"}); }, mesh(), split, split);
  auto over_y = shard_map([](const Array& v) { return psum(v, {"y"}); }, mesh(), split, split);
  for (int round = 0; round < 5; ++round) {
    Array a = input({8, 3}, 0.1 * round);
    const std::vector<float> in = a.to_vector<float>();
    std::string errors[2];
    Array got[2];
    std::thread second([&] {
      try {
        got[1] = over_y(a);
      } catch (const Error& e) {
        errors[1] = e.what();
      }
    });
    try {
      got[0] = over_x(a);
    } catch (const Error& e) {
      errors[0] = e.what();
    }
    second.join();
    for (int k = 0; k < 2; ++k) {
      if (!errors[k].empty()) {
        EXPECT_NE(errors[k].find("processes disagree on"), std::string::npos) << errors[k];
        continue;
      }
      expect_near(got[k], psum_of(in, k == 0), 1e-5, k == 0 ? "psum x" : "psum y");
    }
  }
}

struct TinyRun {
  nn::LlamaConfig c = [] {
    nn::LlamaConfig t = nn::LlamaConfig::tiny();
    t.loss_chunk_tokens = 32;
    return t;
  }();
  nn::LlamaParams init = nn::llama_init(c, random::key(0));
  Array x, y;
  optim::GradientTransformation opt = optim::adamw({.learning_rate = 3e-3});
  TinyRun() {
    Array seq = random::randint(random::key(1), {8, 33}, 0, c.vocab_size);
    Array pattern = take_along_axis(seq, remainder(iota(DType::kI32, {8, 33}, 1), Array(6)), 1);
    x = slice(pattern, {0, 0}, {8, 32});
    y = slice(pattern, {0, 1}, {8, 33});
  }
  // Runs `one` (the one-device step) and `other` for 5 steps from the same init (`other`'s
  // params, state and batch placed by `place`); the losses agree to 1e-5 relative each step,
  // and at the end, read whole on this process, each parameter leaf to 2e-6 on average and
  // 1e-3 at most. Not 1e-4 everywhere: f32 sums in another order change a gradient by rounding,
  // and AdamW divides by sqrt(v), so an element whose gradient is rounding-sized moves by up to
  // lr (3e-3) a step in either run (measured: about 1e-6 typical, one element in 10^4 near
  // 2e-4); a wrong reduction moves whole leaves.
  struct Placement {
    std::function<Array(const Array&)> params = [](const Array& a) { return a; };
    std::function<Array(const Array&)> batch = [](const Array& a) { return a; };
  };
  template <class One, class Other>
  void expect_same_run(One& one, Other& other, const Placement& place) const {
    nn::LlamaParams p1 = init, p2 = tree_map(place.params, init);
    optim::State s1 = opt.init(init), s2 = tree_map(place.params, opt.init(init));
    const Array x2 = place.batch(x), y2 = place.batch(y);
    for (int i = 0; i < 5; ++i) {
      auto [n1, t1, l1] = one(p1, s1, x, y);
      auto [n2, t2, l2] = other(p2, s2, x2, y2);
      p1 = n1, s1 = t1, p2 = n2, s2 = t2;
      const double a = l1.template item<double>(), b = l2.template item<double>();
      ASSERT_NEAR(b, a, 1e-5 * std::fabs(a)) << "step " << i << " on process " << process_index();
    }
    std::vector<Array> w1 = tree_leaves(p1), w2 = tree_leaves(p2);
    for (size_t k = 0; k < w1.size(); ++k) {
      std::vector<float> a = w1[k].to_vector<float>(), b = w2[k].to_vector<float>();
      double worst = 0, total = 0;
      for (size_t e = 0; e < a.size(); ++e) {
        const double d = std::fabs(static_cast<double>(b[e]) - a[e]);
        worst = std::max(worst, d);
        total += d;
      }
      EXPECT_LE(worst, 1e-3) << "leaf " << k;
      EXPECT_LE(total / a.size(), 2e-6) << "leaf " << k;
    }
  }
  template <class Loss>
  auto step(Loss loss_fn) const {
    return jit([opt = opt, loss_fn](const nn::LlamaParams& p, const optim::State& s,
                                    const Array& xs, const Array& ys) {
      auto [loss, g] = value_and_grad([&](const nn::LlamaParams& q) { return loss_fn(q, xs, ys); })(p);
      auto [updates, s2] = opt.update(g, s, p);
      return std::tuple{optim::apply_updates(p, updates), s2, loss};
    });
  }
};

// Data parallel over the 4 devices of both processes (shard_map, pmean of the loss) follows
// the one-device run for 5 AdamW steps, to 1e-5 relative (f32 sums in another order).
TEST(MpiWorldTest, DataParallelTrainStepAcrossProcessesFollowsOneDevice) {
  TinyRun r;
  const nn::LlamaConfig c = r.c;
  auto single = r.step([c](const nn::LlamaParams& p, const Array& xs, const Array& ys) {
    return nn::llama_loss(p, xs, ys, c);
  });
  auto dp_loss = shard_map([c](const nn::LlamaParams& p, const Array& xs, const Array& ys) {
    return pmean(nn::llama_loss(p, xs, ys, c), {"data"});
  }, Mesh({4}, {"data"}), {P(), P("data"), P("data")}, {P()});
  auto parallel = r.step(dp_loss);
  r.expect_same_run(single, parallel, {});
}

// FSDP by annotations alone over both processes: leaves split on their last dimension, the
// batch on its rows; the step is the one-device step partitioned by jit. The split outputs
// are whole on both processes afterwards.
TEST(MpiWorldTest, FsdpByShardingsAcrossProcessesFollowsOneDevice) {
  TinyRun r;
  const nn::LlamaConfig c = r.c;
  auto step = r.step([c](const nn::LlamaParams& p, const Array& xs, const Array& ys) {
    return nn::llama_loss(p, xs, ys, c);
  });
  const Mesh m({4}, {"data"});
  TinyRun::Placement fsdp;
  fsdp.params = [&](const Array& a) {
    if (a.ndim() < 2 || a.shape().back() % 4 != 0) return device_put(a, NamedSharding(m, P()));
    std::vector<DimSplit> dims(a.ndim(), none);
    dims.back() = "data";
    return device_put(a, NamedSharding(m, PartitionSpec(dims)));
  };
  fsdp.batch = [&](const Array& a) { return device_put(a, NamedSharding(m, P("data"))); };
  r.expect_same_run(step, step, fsdp);
}

// A sharded checkpoint saved by both processes: each writes the blocks of its own devices
// into its own file, process 0 commits; both restore the step, under the saving mesh and on
// one device, to the saved values; every process learns the commit.
TEST(MpiWorldTest, EachProcessWritesItsOwnShards) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/graft_mpi_ckpt";
  if (process_index() == 0) std::filesystem::remove_all(dir);
  ASSERT_TRUE(distributed::barrier("test: folder cleared").ok());
  using Tree = std::map<std::string, Array>;
  Mesh m({4}, {"data"});
  const Tree values = {{"w", input({8, 6}, 0.3)}, {"b", input({6}, 0.9)}};
  const Tree placed = {{"w", device_put(values.at("w"), NamedSharding(m, P("data")))},
                       {"b", device_put(values.at("b"), NamedSharding(m, P()))}};
  {
    auto mgr = checkpoint::CheckpointManager::open(dir, {});
    ASSERT_TRUE(mgr.ok()) << mgr.status();
    ASSERT_TRUE((*mgr)->save(3, {{"p", checkpoint::Item::tree(placed)}}).ok());
    ASSERT_TRUE((*mgr)->wait_until_finished().ok());
    EXPECT_EQ((*mgr)->latest_step(), std::optional<int64_t>(3)) << "process " << process_index();
  }
  // Process p's file holds the rows of its devices 2p and 2p + 1.
  for (int p = 0; p < 2; ++p) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/3/p.process-" + std::to_string(p) +
                                        ".safetensors"))
        << "process " << p << "'s shard file";
  }
  ASSERT_TRUE(distributed::barrier("test: both looked").ok());
  auto mgr = checkpoint::CheckpointManager::open(dir, {});
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  for (const Tree& target : {placed, values}) {
    auto got = (*mgr)->restore(3, {{"p", checkpoint::Item::tree(target)}});
    ASSERT_TRUE(got.ok()) << got.status();
    Tree r = got->at("p").as<Tree>();
    EXPECT_EQ(r.at("w").sharding(), target.at("w").sharding());
    expect_near(r.at("w"), values.at("w").to_vector<float>(), 0, "w");
    expect_near(r.at("b"), values.at("b").to_vector<float>(), 0, "b");
  }
}

}  // namespace
}  // namespace graft
