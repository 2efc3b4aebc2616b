// shard_map over 2-D meshes of virtual devices (GRAFT_CPU_DEVICES=8, BUILD.bazel): programs
// written per device equal their unsharded versions (plain ops on the whole arrays), values
// and gradients; Megatron-style tensor parallel and data parallel are the examples.
#include "transforms/shard_map.h"

#include <functional>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/mesh_test_util.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/make_graph.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using testing::expect_near;
using testing::rnd;

// A two-layer MLP, tensor parallel over 'model' (w1 split by columns, w2 by rows, the
// partial products summed with psum) and data parallel over 'data' (x split by rows).
Array mlp_block(const Array& x, const Array& w1, const Array& w2) {
  return psum(matmul(tanh(matmul(x, w1)), w2), {"model"});
}
Array mlp(const Array& x, const Array& w1, const Array& w2) {
  return matmul(tanh(matmul(x, w1)), w2);
}

TEST(ShardMapTest, TensorAndDataParallelMlpEqualsUnsharded) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array x = rnd({6, 5}, 0.1), w1 = rnd({5, 8}, 0.2), w2 = rnd({8, 3}, 0.3);
  auto sharded = shard_map(mlp_block, mesh, {P("data", none), P(none, "model"), P("model", none)},
                           {P("data", none)});
  expect_near(sharded(x, w1, w2), mlp(x, w1, w2), 1e-12, "forward");
  // Gradients with respect to all three: the shard_map's vjp is a shard_map of the body's.
  auto loss_s = [&](const Array& a, const Array& b, const Array& c) {
    return sum(square(sharded(a, b, c)));
  };
  auto loss_u = [&](const Array& a, const Array& b, const Array& c) {
    return sum(square(mlp(a, b, c)));
  };
  auto gs = grad(loss_s, argnums<0, 1, 2>)(x, w1, w2);
  auto gu = grad(loss_u, argnums<0, 1, 2>)(x, w1, w2);
  expect_near(std::get<0>(gs), std::get<0>(gu), 1e-12, "d/dx");
  expect_near(std::get<1>(gs), std::get<1>(gu), 1e-12, "d/dw1");
  expect_near(std::get<2>(gs), std::get<2>(gu), 1e-12, "d/dw2");
  // jit of it, and its printed program.
  expect_near(jit(sharded)(x, w1, w2), mlp(x, w1, w2), 1e-12, "jit");
  std::string text = make_graph(sharded)(x, w1, w2).str();
  EXPECT_NE(text.find("shard_map[name=shard_map mesh=(data=2, model=4) in_specs=(P('data', "
                      "None), P(None, 'model'), P('model', None)) out_specs=(P('data', None))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("psum[axes=(model) sizes=(4)]"), std::string::npos) << text;
  EXPECT_NE(text.find("f64[3,2]{data,model}"), std::string::npos) << text;
}

// Data parallel training's gradient: the loss is the mean over the global batch; the
// parameters are replicated (P()), so each device's cotangent for them is summed over the
// devices by the transpose of their implicit broadcast.
TEST(ShardMapTest, ReplicatedParametersGetTheGlobalGradient) {
  Mesh mesh({4, 2}, {"data", "model"});
  Array x = rnd({8, 3}, 0.5), y = rnd({8}, 0.9), w = rnd({3}, 1.3);
  auto local = [](const Array& xb, const Array& yb, const Array& wv) {
    Array err = matmul(xb, wv) - yb;
    return psum(sum(square(err)), {"data"}) / 8.0;  // mean over the global batch
  };
  auto dp = shard_map(local, mesh, {P("data", none), P("data"), P()}, {P()});
  auto loss_s = [&](const Array& wv) { return dp(x, y, wv); };
  auto loss_u = [&](const Array& wv) { return mean(square(matmul(x, wv) - y)); };
  EXPECT_NEAR(loss_s(w).item<double>(), loss_u(w).item<double>(), 1e-12);
  expect_near(grad(loss_s)(w), grad(loss_u)(w), 1e-12, "grad");
  // The same gradient computed inside, per device, returned replicated.
  auto inside = shard_map(grad(local, argnums<2>), mesh, {P("data", none), P("data"), P()}, {P()});
  expect_near(inside(x, y, w), grad(loss_u)(w), 1e-12, "grad inside shard_map");
}

TEST(ShardMapTest, CollectivesOverOneOrBothAxes) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array x = rnd({4, 8}, 0.0);  // blocks [2, 2]
  auto f = [](const Array& v) {
    Array both = psum(v, {"data", "model"});  // the sum of all 8 blocks
    // [2, 8]: the device's row band. Typed as varying over model, as in JAX (its transpose
    // is psum_scatter), so it is returned mapped over model: four copies side by side.
    Array rows = all_gather(v, "model", 1, true);
    Array coord = astype(axis_index("data") * 10 + axis_index("model"), DType::kF64);
    return std::tuple{both, rows, v * 0.0 + coord};
  };
  auto [both, rows, coord] =
      shard_map(f, mesh, {P("data", "model")}, {P(), P("data", "model"), P("data", "model")})(x);
  Array blocks = reshape(x, {2, 2, 4, 2});  // [data, i, model, j]
  expect_near(both, sum(blocks, {0, 2}), 1e-12, "psum over both axes");
  expect_near(rows, concatenate({x, x, x, x}, 1), 0, "all_gather over model");
  std::vector<double> c = coord.to_vector<double>();
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 8; ++k) EXPECT_EQ(c[r * 8 + k], 10 * (r / 2) + k / 2);
  // The same program under vmap: a batch of inputs, each on its own.
  Array batch = stack({x, x * 2.0}, 0);
  auto g = [&](const Array& v) {
    return std::get<0>(
        shard_map(f, mesh, {P("data", "model")}, {P(), P("data", "model"), P("data", "model")})(v));
  };
  Array vb = vmap(g)(batch);
  expect_near(squeeze(slice_axis(vb, 0, 1, 2), {0}), g(x * 2.0), 1e-12, "vmap of shard_map");
}

void expect_error(const std::function<void()>& f, const std::string& starts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << starts;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(starts, 0), 0u) << e.what();
  }
}

TEST(ShardMapTest, MisuseIsAClearError) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array x = rnd({4, 8}, 0.0);
  auto id = [](const Array& v) { return v; };
  expect_error([&] { shard_map(id, mesh, {P("batch")}, {P("batch")})(x); },
               "[shard_map] 'batch' is not an axis of the mesh Mesh(data=2, model=4)");
  expect_error(
      [&] {
        shard_map(id, mesh, {P("data", "model")}, {P("data", "model")})(rnd({4, 6}, 0));
      },
      "[shard_map] argument 0 of shape (4, 6): dimension 1 of size 6 does not split "
      "into 4 blocks");
  expect_error([&] { shard_map(id, mesh, {P("data", "model")}, {P("data", none)})(x); },
               "[shard_map] output 0 varies over {model} but its out spec P('data', None) does "
               "not map it");
  expect_error([&] { shard_map(id, mesh, {P("data", "data")}, {P()})(x); },
               "[shard_map] the spec P('data', 'data') names axis 'data' twice");
  expect_error(
      [&] {
        shard_map(id, Mesh({4, 4}, {"a", "b"}), {P()}, {P()})(x);
      },
      "[Mesh] Mesh(a=4, b=4) needs 16 devices, there are 8");
  expect_error([] { Mesh({2, 2}, {"a", "a"}); }, "[Mesh] axis name 'a' is given twice");
  expect_error([] { Mesh({2, 0}, {"a", "b"}); }, "[Mesh] axis 'b' has size 0");
}

}  // namespace
}  // namespace graft

namespace graft {
namespace {

// A parameter read inside a scan body (a scan const, like the stacked layers of a model)
// gets the global gradient once, not once per device.
TEST(ShardMapTest, ScanConstsGetTheGlobalGradient) {
  Mesh mesh({4}, {"data"});
  Array x = rnd({8, 3}, 0.2), w = rnd({3, 3}, 0.4);
  auto body = [](const Array& xb, const Array& wv) {
    auto [h, ys] = scan(
        [&](const Array& carry, const Array&) {
          return std::pair{tanh(matmul(carry, wv)), sum(carry)};
        },
        xb, zeros({2}, DType::kF64));
    return sum(h) + sum(ys);
  };
  auto dp =
      shard_map([&](const Array& xb, const Array& wv) { return pmean(body(xb, wv), {"data"}); },
                mesh, {P("data", none), P()}, {P()});
  auto loss_s = [&](const Array& wv) { return dp(x, wv); };
  auto loss_u = [&](const Array& wv) {
    Array total = zeros({}, DType::kF64);
    for (int d = 0; d < 4; ++d) total = total + body(slice_axis(x, 0, 2 * d, 2 * d + 2), wv);
    return total / 4.0;
  };
  EXPECT_NEAR(loss_s(w).item<double>(), loss_u(w).item<double>(), 1e-12);
  expect_near(grad(loss_s)(w), grad(loss_u)(w), 1e-12, "grad");
}

}  // namespace
}  // namespace graft

namespace graft {
namespace {

// Loop carries that start the same on every device but take varying values in the body are
// typed varying from the start, and a cond on a varying predicate gives varying results; the
// replicated parameter's gradient then counts each device once (against the unsharded sum).
TEST(ShardMapTest, LoopsAndCondsAreTypedAsTheyRun) {
  Mesh mesh({4}, {"data"});
  Array x = rnd({8, 3}, 0.3), w = rnd({3}, 0.8);
  auto body = [](const Array& xb, const Array& wv) {
    // fori_loop: a carry of zeros (the same everywhere) that accumulates the device's rows.
    Array acc = fori_loop(
        0, 3, [&](const Array&, const Array& c) { return c + sin(xb * wv); },
        zeros({2, 3}, DType::kF64));
    // cond on a predicate that differs between devices.
    Array picked = cond(
        sum(xb) > 0.0, [&](const Array& a) { return a * wv; },
        [&](const Array& a) { return a - wv; }, acc);
    return sum(square(picked));
  };
  auto dp =
      shard_map([&](const Array& xb, const Array& wv) { return psum(body(xb, wv), {"data"}); },
                mesh, {P("data", none), P()}, {P()});
  auto loss_s = [&](const Array& wv) { return dp(x, wv); };
  auto loss_u = [&](const Array& wv) {
    Array total = zeros({}, DType::kF64);
    for (int d = 0; d < 4; ++d) total = total + body(slice_axis(x, 0, 2 * d, 2 * d + 2), wv);
    return total;
  };
  EXPECT_NEAR(loss_s(w).item<double>(), loss_u(w).item<double>(), 1e-12);
  expect_near(grad(loss_s)(w), grad(loss_u)(w), 1e-12, "grad");
}

}  // namespace
}  // namespace graft
