// Arrays sharded over a mesh of the device backend's devices (core/backend/device_shards.h),
// checked on the CPU with the fake device backend of tests/core/backend/host_device_backend.h (two
// "GPUs" whose memory is host memory, programs run by the CPU backend): device_put puts one
// buffer per shard on its device, reading gathers, eager ops compute on the gathered value on
// the mesh's first device, and jit over shardings on that mesh runs on the device backend and
// leaves its outputs sharded there. Each result is checked against the same program over the
// CPU's virtual devices (GRAFT_CPU_DEVICES=2, BUILD.bazel) or without shardings.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/device_shards.h"
#include "core/device/device.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/core/backend/host_device_backend.h"
#include "transforms/jit.h"
#include "transforms/shard_map.h"

namespace graft {
namespace {

using host_device::live_blocks;
using host_device::runs;

const bool registered = host_device::register_host_device_backend();

Mesh gpu_mesh() { return Mesh({2}, {"x"}, devices("cuda")); }

// 0, 1, 2, ... as f32 of `shape`.
Array iota(const Shape& shape) {
  return reshape(arange(0.0, static_cast<double>(numel(shape)), 1.0), shape);
}

void expect_error(const std::function<void()>& f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "expected an error starting with " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

TEST(DeviceBackendShardingTest, AMeshOfGpusIsTheFirstDevicesOfThePlatform) {
  const Mesh m = gpu_mesh();
  EXPECT_EQ(m.platform(), "cuda");
  EXPECT_EQ(m.str(), "Mesh(x=2 on cuda)");
  ASSERT_EQ(m.devices().size(), 2u);
  EXPECT_EQ(m.devices()[1].str(), "cuda:1");
  EXPECT_FALSE(m == Mesh({2}, {"x"}));  // the CPU's virtual devices
  expect_error([] { Mesh({4}, {"x"}, devices("cuda")); }, "[Mesh]");
  expect_error([] { Mesh({1}, {"x"}, {devices("cuda")[1]}); }, "[Mesh]");
  EXPECT_EQ(NamedSharding::single_device(devices("cuda")[1]).str(), "SingleDevice(cuda:1)");
}

TEST(DeviceBackendShardingTest, DevicePutPutsEachBlockOnItsDevice) {
  const Array x = iota({4, 3});
  const NamedSharding s(gpu_mesh(), P("x"));
  const int before = live_blocks;
  Array y = device_put(x, s);
  EXPECT_EQ(live_blocks - before, 2);  // one block per device, no whole copy
  EXPECT_EQ(y.sharding(), s);
  EXPECT_NE(device_shards(*y.buffer()), nullptr);
  const std::vector<Shard> shards = y.addressable_shards();
  ASSERT_EQ(shards.size(), 2u);
  const std::vector<float> all = x.to_vector<float>();
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(shards[k].device.str(), "cuda:" + std::to_string(k));
    EXPECT_EQ(shards[k].index[0], (std::pair<int64_t, int64_t>{2 * k, 2 * k + 2}));
    EXPECT_EQ(shards[k].data.shape(), (Shape{2, 3}));
    EXPECT_EQ(shards[k].data.buffer()->device(), k);
    EXPECT_EQ(shards[k].data.to_vector<float>(),
              std::vector<float>(all.begin() + 6 * k, all.begin() + 6 * k + 6));
  }
  EXPECT_EQ(y.to_vector<float>(), all);              // reading gathers
  EXPECT_EQ(device_put(y, s).buffer(), y.buffer());  // placed so already
}

TEST(DeviceBackendShardingTest, InnerSplitsAndReplicasMatchTheCpuLayout) {
  const Array x = iota({2, 4});
  const Mesh gpus({1, 2}, {"a", "b"}, devices("cuda")), cpus({1, 2}, {"a", "b"});
  for (const PartitionSpec& spec : {P(none, "b"), P(), P("a", "b")}) {
    SCOPED_TRACE(spec.str());
    const std::vector<Shard> on_gpus =
        device_put(x, NamedSharding(gpus, spec)).addressable_shards();
    const std::vector<Shard> on_cpus =
        device_put(x, NamedSharding(cpus, spec)).addressable_shards();
    ASSERT_EQ(on_gpus.size(), on_cpus.size());
    for (size_t k = 0; k < on_gpus.size(); ++k) {
      EXPECT_FALSE(on_gpus[k].data.buffer()->on_host());
      EXPECT_EQ(on_gpus[k].index, on_cpus[k].index);
      EXPECT_EQ(on_gpus[k].data.to_vector<float>(), on_cpus[k].data.to_vector<float>());
    }
  }
}

TEST(DeviceBackendShardingTest, EagerOpsComputeOnTheGatheredValueOnTheFirstDevice) {
  const Array x = iota({4, 2});
  Array y = device_put(x, NamedSharding(gpu_mesh(), P("x")));
  const int before = runs;
  Array z = sum(y * 2.0 + ones({4, 2}), {0});
  EXPECT_EQ(z.buffer()->device(), 0);  // evaluates
  EXPECT_GE(runs - before, 1);
  EXPECT_EQ(z.sharding().str(), "SingleDevice(cuda:0)");
  EXPECT_EQ(z.to_vector<float>(), sum(x * 2.0 + ones({4, 2}), {0}).to_vector<float>());
  Array back = device_put(y, devices()[0]);
  EXPECT_TRUE(back.buffer()->on_host());
  EXPECT_EQ(back.to_vector<float>(), x.to_vector<float>());
}

// A tensor-parallel layer: x split by rows, w by columns; the output stays split on the GPUs.
TEST(DeviceBackendShardingTest, JitOverAMeshOfGpusLeavesItsOutputsShardedThere) {
  const Array x = iota({4, 3}) * 0.1, w = iota({3, 6}) * 0.01;
  auto layer = [](const Array& a, const Array& b) { return tanh(matmul(a, b)); };
  const Array want = layer(x, w);
  auto run_on = [&](const Mesh& mesh) {
    auto f =
        jit(layer, {.in_shardings = {NamedSharding(mesh, P()), NamedSharding(mesh, P(none, "x"))}});
    return f(device_put(x, NamedSharding(mesh, P())),
             device_put(w, NamedSharding(mesh, P(none, "x"))));
  };
  const Array on_cpus = run_on(Mesh({2}, {"x"}));
  const int before = runs;
  const Array on_gpus = run_on(gpu_mesh());
  EXPECT_GE(runs - before, 1);  // the device backend ran it
  EXPECT_EQ(on_gpus.sharding(), NamedSharding(gpu_mesh(), P(none, "x")));
  EXPECT_EQ(on_gpus.sharding().spec(), on_cpus.sharding().spec());
  ASSERT_NE(device_shards(*on_gpus.buffer()), nullptr);
  const std::vector<Shard> shards = on_gpus.addressable_shards();
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(shards[k].data.buffer()->device(), k);
    EXPECT_EQ(shards[k].data.shape(), (Shape{4, 3}));
  }
  const std::vector<float> got = on_gpus.to_vector<float>(), cpu = on_cpus.to_vector<float>(),
                           ref = want.to_vector<float>();
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], cpu[i]) << i;
    EXPECT_NEAR(got[i], ref[i], 1e-6) << i;
  }
}

// Host arguments with in_shardings over the GPUs: the program runs on the device backend, and
// a partial sum (a contraction over the split dimension) comes out replicated on both GPUs.
TEST(DeviceBackendShardingTest, HostArgumentsGoWhereTheirInShardingsSay) {
  const Array a = iota({2, 4}), b = iota({4, 3});
  const Mesh mesh = gpu_mesh();
  auto f = jit([](const Array& p, const Array& q) { return matmul(p, q); },
               {.in_shardings = {NamedSharding(mesh, P(none, "x")), NamedSharding(mesh, P("x"))},
                .out_shardings = {NamedSharding(mesh, P())}});
  const int before = runs;
  const Array y = f(a, b);
  EXPECT_GE(runs - before, 1);
  EXPECT_EQ(y.sharding(), NamedSharding(mesh, P()));
  const std::vector<Shard> shards = y.addressable_shards();
  ASSERT_EQ(shards.size(), 2u);
  const std::vector<float> want = matmul(a, b).to_vector<float>();
  for (const Shard& s : shards) {
    EXPECT_FALSE(s.data.buffer()->on_host());
    EXPECT_EQ(s.data.to_vector<float>(), want);
  }
}

// shard_map over the GPUs, called on host values: run by the device backend, the output left
// sharded over the GPUs by its out spec.
TEST(DeviceBackendShardingTest, ShardMapOverGpusLeavesItsOutputsSharded) {
  const Array x = iota({4, 3});
  auto body = [](const Array& b) { return b * 2.0 + psum(sum(b), {"x"}); };
  auto on = [&](const Mesh& m) { return shard_map(body, m, {P("x")}, {P("x")})(x); };
  const Array cpu = on(Mesh({2}, {"x"}));
  const int before = runs;
  const Array gpu = on(gpu_mesh());
  EXPECT_GE(runs - before, 1);
  EXPECT_EQ(gpu.sharding(), NamedSharding(gpu_mesh(), P("x")));
  const std::vector<Shard> shards = gpu.addressable_shards();
  ASSERT_EQ(shards.size(), 2u);
  for (int k = 0; k < 2; ++k) EXPECT_EQ(shards[k].data.buffer()->device(), k);
  EXPECT_EQ(gpu.to_vector<float>(), cpu.to_vector<float>());
  EXPECT_FLOAT_EQ(gpu.to_vector<float>()[0], 66.0f);  // 0 * 2 + (0 + 1 + ... + 11)
}

TEST(DeviceBackendShardingTest, ShardsAreReleasedWithTheArray) {
  const int before = live_blocks;
  {
    Array y = device_put(iota({8, 2}), NamedSharding(gpu_mesh(), P("x")));
    EXPECT_EQ(live_blocks - before, 2);
    EXPECT_EQ((y * 1.0).to_vector<float>()[15], 15.0f);
  }
  EXPECT_EQ(live_blocks, before);
}

TEST(DeviceBackendShardingTest, AShardingThatDoesNotFitIsAnError) {
  expect_error([] { device_put(iota({3, 2}), NamedSharding(gpu_mesh(), P("x"))); }, "[device_put]");
}

}  // namespace
}  // namespace graft
