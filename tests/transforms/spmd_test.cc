// Sharded arrays and jit with shardings (GRAFT_CPU_DEVICES=8, BUILD.bazel): device_put and
// addressable shards; programs partitioned over 2 x 4 and 8-device meshes by annotations
// alone (data parallel, Megatron tensor parallel, FSDP weights in a scan over layers) equal
// the same jit without shardings, with the collectives the layouts call for in the printed
// program; out_shardings and with_sharding_constraint place the results; errors.
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/transforms/pass_test_util.h"
#include "tests/transforms/mesh_test_util.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"

namespace graft {
namespace {

using testing::expect_near;
using testing::rnd;

using pass_test::count;

TEST(ShardedArrayTest, DevicePutKnowsItsShards) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array x = rnd({4, 8}, 0.0);
  EXPECT_EQ(x.sharding().str(), "SingleDevice(cpu:0)");
  Array y = device_put(x, NamedSharding(mesh, P("data", "model")));
  EXPECT_EQ(y.sharding(), NamedSharding(mesh, P("data", "model")));
  EXPECT_EQ(y.sharding().str(), "NamedSharding(Mesh(data=2, model=4), P('data', 'model'))");
  EXPECT_EQ(y.devices().size(), 8u);
  std::vector<Shard> shards = y.addressable_shards();
  ASSERT_EQ(shards.size(), 8u);
  for (size_t k = 0; k < shards.size(); ++k) {
    const Shard& s = shards[k];
    EXPECT_EQ(s.device.id, static_cast<int>(k));
    // Device k = (d, m) holds rows 2d..2d+1, columns 2m..2m+1.
    const int64_t d = k / 4, m = k % 4;
    ASSERT_EQ(s.index.size(), 2u);
    EXPECT_EQ(s.index[0], std::make_pair(2 * d, 2 * d + 2));
    EXPECT_EQ(s.index[1], std::make_pair(2 * m, 2 * m + 2));
    expect_near(s.data, slice(x, {2 * d, 2 * m}, {2 * d + 2, 2 * m + 2}), 0, "shard");
  }
  // Replicated over model: devices sharing a data coordinate hold the same rows.
  Array z = device_put(x, NamedSharding(mesh, P("data")));
  std::vector<Shard> zs = z.addressable_shards();
  EXPECT_EQ(zs[1].index, zs[3].index);
  expect_near(zs[5].data, slice(x, {2, 0}, {4, 8}), 0, "replicated shard");
  Array w = device_put(x, Device{3});
  EXPECT_EQ(w.sharding().str(), "SingleDevice(cpu:3)");
  EXPECT_EQ(w.devices()[0].id, 3);
}

TEST(ShardedArrayTest, DevicePutErrors) {
  Mesh mesh({2, 4}, {"data", "model"});
  try {
    device_put(ones({5, 8}), NamedSharding(mesh, P("data")));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[device_put]", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("size 5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(NamedSharding(mesh, P("data", "data")), Error);
  EXPECT_THROW(NamedSharding(mesh, P("rows")), Error);
  EXPECT_THROW(device_put(ones({2}), Device{8}), Error);
  EXPECT_THROW(device_put(ones({4, 4}), NamedSharding(mesh, P(none, none, "data"))), Error);
}

Array mlp_loss(const Array& x, const Array& w1, const Array& w2) {
  return mean(square(matmul(tanh(matmul(x, w1)), w2)));
}

// Data parallel: the batch split over all eight devices, weights replicated. The gradients
// of replicated weights are summed over the batch: a psum in the program.
TEST(JitShardingTest, DataParallelGradientsEqualUnsharded) {
  Mesh mesh({8}, {"data"});
  Array x = rnd({16, 6}, 0.1), w1 = rnd({6, 8}, 0.2), w2 = rnd({8, 4}, 0.3);
  auto step = [](const Array& x, const Array& w1, const Array& w2) {
    return value_and_grad(mlp_loss, argnums<1, 2>)(x, w1, w2);
  };
  auto plain = jit(step);
  auto want = plain(x, w1, w2);
  NamedSharding batch(mesh, P("data")), rep(mesh, P());
  auto sharded = jit(step, {.in_shardings = {batch, rep, rep}});
  auto got = sharded(x, w1, w2);
  expect_near(std::get<0>(got), std::get<0>(want), 1e-12, "loss");
  expect_near(std::get<0>(std::get<1>(got)), std::get<0>(std::get<1>(want)), 1e-12, "dw1");
  expect_near(std::get<1>(std::get<1>(got)), std::get<1>(std::get<1>(want)), 1e-12, "dw2");
  EXPECT_EQ(std::get<0>(std::get<1>(got)).sharding(), rep);
  const std::string text = sharded.as_text(x, w1, w2);
  EXPECT_NE(text.find("shard_map"), std::string::npos) << text;
  EXPECT_GE(count(text, "psum"), 2) << text;  // the loss and both gradients
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
  // Arguments placed with device_put partition the same way without in_shardings.
  auto from_args = jit(step)(device_put(x, batch), w1, w2);
  expect_near(std::get<0>(from_args), std::get<0>(want), 1e-12, "loss from placed args");
}

// Fused attention on a 2 x 4 mesh, batch split over 'data' and heads over 'model' (4 of 4 kv
// heads): forward and gradients equal the unsharded jit, and no block is gathered (each
// device attends over its own batch rows and heads).
TEST(JitShardingTest, FlashAttentionSplitsBatchAndHeads) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array q = rnd({4, 6, 8, 3}, 0.1), k = rnd({4, 6, 4, 3}, 0.2), v = rnd({4, 6, 4, 3}, 0.3);
  auto step = [](const Array& q, const Array& k, const Array& v) {
    auto loss = [](const Array& q, const Array& k, const Array& v) {
      FlashAttentionOut r = flash_attention(q, k, v, {.block_q = 4, .block_k = 4});
      return sum(r.o * r.o) + sum(r.lse);
    };
    return value_and_grad(loss, argnums<0, 1, 2>)(q, k, v);
  };
  auto want = jit(step)(q, k, v);
  NamedSharding s(mesh, P("data", none, "model"));
  auto sharded = jit(step, {.in_shardings = {s, s, s}});
  auto got = sharded(q, k, v);
  expect_near(std::get<0>(got), std::get<0>(want), 1e-12, "loss");
  expect_near(std::get<0>(std::get<1>(got)), std::get<0>(std::get<1>(want)), 1e-12, "dq");
  expect_near(std::get<1>(std::get<1>(got)), std::get<1>(std::get<1>(want)), 1e-12, "dk");
  expect_near(std::get<2>(std::get<1>(got)), std::get<2>(std::get<1>(want)), 1e-12, "dv");
  const std::string text = sharded.as_text(q, k, v);
  EXPECT_GE(count(text, "flash_attention_grad"), 1) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
}

// Megatron tensor parallel x data parallel on a 2 x 4 mesh: w1 split by columns and w2 by
// rows over 'model'. The first matmul needs no communication, the second gives a partial
// sum over 'model'.
TEST(JitShardingTest, TensorParallelMlpEqualsUnsharded) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array x = rnd({6, 5}, 0.1), w1 = rnd({5, 8}, 0.2), w2 = rnd({8, 3}, 0.3);
  auto f = [](const Array& x, const Array& w1, const Array& w2) {
    return matmul(tanh(matmul(x, w1)), w2);
  };
  auto tp = jit(f, {.in_shardings = {NamedSharding(mesh, P("data")),
                                     NamedSharding(mesh, P(none, "model")),
                                     NamedSharding(mesh, P("model"))}});
  Array y = tp(x, w1, w2);
  expect_near(y, f(x, w1, w2), 1e-12, "forward");
  EXPECT_EQ(y.sharding(), NamedSharding(mesh, P("data")));
  const std::string text = tp.as_text(x, w1, w2);
  EXPECT_EQ(count(text, "psum"), 1) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
  EXPECT_NE(text.find("axes=(model)"), std::string::npos) << text;
  // And a training step of it.
  auto step = jit(
      [](const Array& x, const Array& w1, const Array& w2) {
        return grad(mlp_loss, argnums<1, 2>)(x, w1, w2);
      },
      {.in_shardings = {NamedSharding(mesh, P("data")), NamedSharding(mesh, P(none, "model")),
                        NamedSharding(mesh, P("model"))}});
  auto g = step(x, w1, w2);
  auto gu = grad(mlp_loss, argnums<1, 2>)(x, w1, w2);
  expect_near(std::get<0>(g), std::get<0>(gu), 1e-12, "dw1");
  expect_near(std::get<1>(g), std::get<1>(gu), 1e-12, "dw2");
  EXPECT_EQ(std::get<0>(g).sharding(), NamedSharding(mesh, P(none, "model")));
}

// FSDP: stacked layer weights split over 'data' on a non-scanned dimension, activations split
// over 'data' by batch. Inside the scan body each layer's weight block is all_gathered.
TEST(JitShardingTest, FsdpScanOverLayersEqualsUnsharded) {
  Mesh mesh({4}, {"data"});
  Array x = rnd({8, 4}, 0.1), ws = rnd({3, 4, 4}, 0.2) * 0.5;
  auto loss = [](const Array& x, const Array& ws) {
    auto [h, ys] = scan(
        [](const Array& h, const Array& w) { return std::pair{tanh(matmul(h, w)) + h, sum(w)}; },
        x, ws);
    return mean(square(h));
  };
  auto step = [&](const Array& x, const Array& ws) {
    return value_and_grad(loss, argnums<1>)(x, ws);
  };
  NamedSharding batch(mesh, P("data")), fsdp(mesh, P(none, "data"));
  auto sharded = jit(step, {.in_shardings = {batch, fsdp}, .out_shardings = {std::nullopt, fsdp}});
  auto got = sharded(x, ws);
  auto want = jit(step)(x, ws);
  expect_near(std::get<0>(got), std::get<0>(want), 1e-12, "loss");
  expect_near(std::get<1>(got), std::get<1>(want), 1e-12, "dws");
  EXPECT_EQ(std::get<1>(got).sharding(), fsdp);
  const std::string text = sharded.as_text(x, ws);
  EXPECT_GE(count(text, "all_gather"), 1) << text;
  EXPECT_NE(text.find("scan"), std::string::npos) << text;
  // The weight gradient in the body is the partial sum plus the cotangent of sum(w), an add
  // that finishes the sum as a psum (spmd_reshard_test has the scan without the second use,
  // reduce-scattered).
  EXPECT_GE(count(text, "psum["), 1) << text;
}

// FSDP holds 1/8 of the weights and optimizer-like state per device; the per-device peak of
// the partitioned program shows it (the gathered weight of the layer in use and the summed
// gradient are whole while they live).
TEST(JitShardingTest, FsdpLowersThePerDevicePeak) {
  Mesh mesh({8}, {"data"});
  Array x = rnd({16, 256}, 0.1), w1 = rnd({256, 256}, 0.2), w2 = rnd({256, 256}, 0.3);
  Array m1 = rnd({256, 256}, 0.4), m2 = rnd({256, 256}, 0.5);
  auto step = [](const Array& x, const Array& w1, const Array& w2, const Array& m1,
                 const Array& m2) {
    auto [g1, g2] = grad(mlp_loss, argnums<1, 2>)(x, w1, w2);
    Array n1 = m1 * 0.9 + g1, n2 = m2 * 0.9 + g2;  // momentum-like state, as big as the weights
    return std::tuple{w1 - n1 * 0.1, w2 - n2 * 0.1, n1, n2};
  };
  NamedSharding batch(mesh, P("data")), rep(mesh, P()), split(mesh, P(none, "data"));
  auto dp = jit(step, {.in_shardings = {batch, rep, rep, rep, rep}});
  auto fsdp = jit(step, {.in_shardings = {batch, split, split, split, split},
                         .out_shardings = {split}});
  const int64_t a = dp.memory_analysis(x, w1, w2, m1, m2).per_device_peak_bytes;
  const int64_t b = fsdp.memory_analysis(x, w1, w2, m1, m2).per_device_peak_bytes;
  RecordProperty("dp_per_device_peak_bytes", std::to_string(a));
  RecordProperty("fsdp_per_device_peak_bytes", std::to_string(b));
  EXPECT_GT(a, 4 * 256 * 256 * 8);  // four replicated f64 [256, 256] arguments at least
  EXPECT_LT(b, a * 3 / 4) << a << " " << b;
  EXPECT_EQ(jit(step).memory_analysis(x, w1, w2, m1, m2).per_device_peak_bytes, 0);
  auto got = fsdp(x, w1, w2, m1, m2);
  auto want = step(x, w1, w2, m1, m2);
  expect_near(std::get<0>(got), std::get<0>(want), 1e-12, "w1");
  expect_near(std::get<3>(got), std::get<3>(want), 1e-12, "m2");
  EXPECT_EQ(std::get<3>(got).sharding(), split);
  // The gradients, partial sums over the batch's axis, arrive at the split state reduce-
  // scattered (core/interpreters/spmd.h): one psum_scatter each, not a psum and a slice.
  const std::string text = fsdp.as_text(x, w1, w2, m1, m2);
  EXPECT_EQ(count(text, "psum_scatter"), 2) << text;
}

// An optimizer-like update of split state: the scalar hyperparameters, broadcast to the
// weights' shape, are made at the block's shape on each device instead of being cut out of a
// whole-array broadcast (a block-sized buffer per use, alive until its consumer runs), so the
// per-device program slices nothing and holds its argument blocks and their updates only.
TEST(JitShardingTest, ScalarBroadcastsAreMadeAtTheBlockShape) {
  Mesh mesh({4}, {"data"});
  NamedSharding split(mesh, P(none, "data"));
  Array w = rnd({64, 64}, 0.1), m = rnd({64, 64}, 0.2);
  auto f = [](const Array& w, const Array& m) {
    Array n = m * 0.9 + w * w;
    return std::tuple{w - n * 0.1, n};
  };
  auto step = jit(f, {.in_shardings = {split, split}, .out_shardings = {split}});
  const std::string text = step.as_text(w, m);
  EXPECT_EQ(count(text, "dynamic_slice"), 0) << text;
  EXPECT_EQ(count(text, "f64[64,64]"), 4) << text;  // the program's arguments and results only
  const int64_t block = 64 * 16 * 8;  // f64 [64, 16]
  // Two argument blocks and the two updated blocks (the plan counts a value that takes over
  // an argument's buffer as its own).
  EXPECT_EQ(step.memory_analysis(w, m).per_device_peak_bytes, 4 * block);
  auto got = step(w, m);
  auto want = f(w, m);
  expect_near(std::get<0>(got), std::get<0>(want), 1e-12, "w");
  expect_near(std::get<1>(got), std::get<1>(want), 1e-12, "m");
  EXPECT_EQ(std::get<1>(got).sharding(), split);
}

TEST(JitShardingTest, OutShardingsAndCacheKey) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array x = rnd({8, 8}, 0.3);
  auto f = jit([](const Array& a) { return exp(a) * 2.0; },
               {.out_shardings = {NamedSharding(mesh, P(none, "model"))}});
  Array y = f(device_put(x, NamedSharding(mesh, P("data"))));
  expect_near(y, exp(x) * 2.0, 1e-12, "value");
  EXPECT_EQ(y.sharding(), NamedSharding(mesh, P(none, "model")));
  // A different input sharding is a different program.
  f(device_put(x, NamedSharding(mesh, P("model"))));
  EXPECT_EQ(f.stats().misses, 2);
  EXPECT_NE(f.explain_miss().find("sharding"), std::string::npos) << f.explain_miss();
  f(device_put(x, NamedSharding(mesh, P("model"))));
  EXPECT_EQ(f.stats().hits, 1);
}

// A constraint inside is enough to partition, and pins the layout of the value it marks.
TEST(JitShardingTest, WithShardingConstraint) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array x = rnd({8, 4}, 0.2);
  NamedSharding rows(mesh, P("data")), cols(mesh, P(none, "model"));
  auto f = jit([&](const Array& a) {
    Array h = with_sharding_constraint(exp(a), rows);
    return with_sharding_constraint(h * 3.0, cols);
  });
  Array y = f(x);
  expect_near(y, exp(x) * 3.0, 1e-12, "value");
  EXPECT_EQ(y.sharding(), cols);
  const std::string text = f.as_text(x);
  EXPECT_NE(text.find("shard_map"), std::string::npos) << text;
  EXPECT_NE(text.find("all_gather"), std::string::npos) << text;  // rows -> columns
  // Gradients through it are constrained alike.
  auto g = jit(grad([&](const Array& a) { return sum(square(with_sharding_constraint(a, rows))); }));
  expect_near(g(x), x * 2.0, 1e-12, "grad");
  EXPECT_EQ(g(x).sharding(), rows);
  // Eagerly it is the identity.
  expect_near(with_sharding_constraint(x, rows), x, 0, "eager");
  EXPECT_THROW(with_sharding_constraint(ones({3, 4}), rows), Error);
}

TEST(JitShardingTest, Errors) {
  Mesh a({2}, {"data"}), b({4}, {"model"});
  auto f = jit([](const Array& x, const Array& y) { return x + y; },
               {.in_shardings = {NamedSharding(a, P("data")), NamedSharding(b, P("model"))}});
  try {
    f(ones({4}), ones({4}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two meshes"), std::string::npos) << e.what();
  }
  auto g = jit([](const Array& x) { return x; }, {.in_shardings = {NamedSharding(a, P("data"))}});
  EXPECT_THROW(g(ones({3})), Error);  // 3 rows do not split in two
  auto h = jit([](const Array& x) { return x; }, {.in_shardings = {std::nullopt, std::nullopt}});
  EXPECT_THROW(h(ones({3})), Error);  // two entries for one argument
}

}  // namespace
}  // namespace graft
