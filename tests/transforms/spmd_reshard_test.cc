// The SPMD partitioner's resharding (core/interpreters/spmd.h, reshard) over meshes of virtual devices
// (GRAFT_CPU_DEVICES=8, BUILD.bazel): a mesh axis that moves from one dimension to another is
// one all_to_all, with no all_gather; a partial sum (a contraction over a split batch) that
// must arrive split over the summed axis is one psum_scatter (FSDP's gradient reduce-scatter).
// Each program equals the same function jitted without shardings, and its partitioned text
// has the collectives the layouts call for.
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

// psum without psum_scatter.
int psums(const std::string& text) { return count(text, "psum") - count(text, "psum_scatter"); }

// Rows split over 'x' become columns split over 'x': one all_to_all.
TEST(ReshardTest, AxisMovesWithOneAllToAll) {
  Mesh mesh({4}, {"x"});
  NamedSharding rows(mesh, P("x")), cols(mesh, P(none, "x"));
  Array a = rnd({8, 12}, 0.3);
  auto f = [&](const Array& a) { return with_sharding_constraint(exp(a), cols) * 2.0; };
  auto sharded = jit(f, {.in_shardings = {rows}});
  Array y = sharded(a);
  expect_near(y, jit(f)(a), 1e-12, "value");
  EXPECT_EQ(y.sharding(), cols);
  const std::string text = sharded.as_text(a);
  EXPECT_EQ(count(text, "all_to_all"), 1) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
  // Its gradient moves the axis back (the transpose of all_to_all is the inverse one).
  auto loss = [&](const Array& a) { return sum(square(f(a)) * a); };
  auto g = jit(grad(loss), {.in_shardings = {rows}, .out_shardings = {rows}});
  expect_near(g(a), jit(grad(loss))(a), 1e-10, "grad");
  EXPECT_EQ(count(g.as_text(a), "all_gather"), 0) << g.as_text(a);
}

// A rank-4 tensor split over its second dimension becomes split over its first, as MoE's
// dispatched tokens [E, G, C, d] go from group-major to expert-major: the out_shardings path.
TEST(ReshardTest, GroupMajorToExpertMajor) {
  Mesh mesh({8}, {"ep"});
  Array t = rnd({8, 16, 3, 2}, 0.1);
  auto f = [](const Array& t) { return tanh(t); };
  auto sharded = jit(f, {.in_shardings = {NamedSharding(mesh, P(none, "ep"))},
                         .out_shardings = {NamedSharding(mesh, P("ep"))}});
  Array y = sharded(t);
  expect_near(y, tanh(t), 1e-12, "value");
  EXPECT_EQ(y.sharding(), NamedSharding(mesh, P("ep")));
  const std::string text = sharded.as_text(t);
  EXPECT_EQ(count(text, "all_to_all"), 1) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
}

// Mixed changes on a 2 x 4 mesh: 'model' moves from columns to rows while 'data' (on rows,
// not wanted anywhere) is gathered; and a swap of the two axes. Each axis that moves is an
// all_to_all, each that goes away one all_gather.
TEST(ReshardTest, MixedMoveAndGather) {
  Mesh mesh({2, 4}, {"data", "model"});
  Array a = rnd({8, 8}, 0.7);
  auto f = [](const Array& a) { return a * 3.0 + 1.0; };
  auto move = jit(f, {.in_shardings = {NamedSharding(mesh, P("data", "model"))},
                      .out_shardings = {NamedSharding(mesh, P("model"))}});
  expect_near(move(a), a * 3.0 + 1.0, 1e-12, "move");
  std::string text = move.as_text(a);
  EXPECT_EQ(count(text, "all_to_all"), 1) << text;
  EXPECT_EQ(count(text, "all_gather"), 1) << text;
  EXPECT_NE(text.find("all_gather[axes=(data)"), std::string::npos) << text;
  auto swap = jit(f, {.in_shardings = {NamedSharding(mesh, P("data", "model"))},
                      .out_shardings = {NamedSharding(mesh, P("model", "data"))}});
  Array s = swap(a);
  expect_near(s, a * 3.0 + 1.0, 1e-12, "swap");
  EXPECT_EQ(s.sharding(), NamedSharding(mesh, P("model", "data")));
  text = swap.as_text(a);
  EXPECT_EQ(count(text, "all_to_all"), 1) << text;
  EXPECT_EQ(count(text, "all_gather"), 1) << text;
  // A finer split of the same dimension is a local slice: no collective at all.
  auto finer = jit(f, {.in_shardings = {NamedSharding(mesh, P("data"))},
                       .out_shardings = {NamedSharding(mesh, P(AxisNames{"data", "model"}))}});
  expect_near(finer(a), a * 3.0 + 1.0, 1e-12, "finer");
  text = finer.as_text(a);
  EXPECT_EQ(count(text, "all_gather") + count(text, "all_to_all"), 0) << text;
}

// x^T y over a batch split on 'x' is a partial sum; asked for rows split over 'x' it is one
// psum_scatter (through with_sharding_constraint and through out_shardings).
TEST(ReshardTest, PartialSumToSplitIsPsumScatter) {
  Mesh mesh({4}, {"x"});
  NamedSharding batch(mesh, P("x")), rows(mesh, P("x"));
  Array x = rnd({16, 8}, 0.2), y = rnd({16, 4}, 0.4);
  auto f = [&](const Array& x, const Array& y) {
    return with_sharding_constraint(matmul(transpose(x, std::vector<int>{1, 0}), y), rows) + 1.0;
  };
  auto sharded = jit(f, {.in_shardings = {batch, batch}});
  Array g = sharded(x, y);
  expect_near(g, jit(f)(x, y), 1e-12, "constraint");
  EXPECT_EQ(g.sharding(), rows);
  std::string text = sharded.as_text(x, y);
  EXPECT_EQ(count(text, "psum_scatter"), 1) << text;
  EXPECT_EQ(psums(text), 0) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
  auto h = [](const Array& x, const Array& y) {
    return matmul(transpose(x, std::vector<int>{1, 0}), y);
  };
  auto out = jit(
      h, {.in_shardings = {batch, batch}, .out_shardings = {NamedSharding(mesh, P(none, "x"))}});
  expect_near(out(x, y), jit(h)(x, y), 1e-12, "out_shardings");
  text = out.as_text(x, y);
  EXPECT_EQ(count(text, "psum_scatter"), 1) << text;
  EXPECT_EQ(psums(text), 0) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
  // Asked for whole, it is a psum as before.
  auto whole = jit(h, {.in_shardings = {batch, batch}});
  expect_near(whole(x, y), jit(h)(x, y), 1e-12, "whole");
  EXPECT_EQ(psums(whole.as_text(x, y)), 1) << whole.as_text(x, y);
  EXPECT_EQ(count(whole.as_text(x, y), "psum_scatter"), 0) << whole.as_text(x, y);
}

// On a 2 x 4 mesh: a sum partial over both axes scattered over both (major first), and over
// one with a psum over the other; a sum partial over 'data' landing on columns over 'data'
// with rows cut over 'model'.
TEST(ReshardTest, PartialSumOverTwoAxes) {
  Mesh mesh({2, 4}, {"data", "model"});
  const AxisNames both{"data", "model"};
  Array x = rnd({16, 8}, 0.5), y = rnd({16, 8}, 0.6);
  auto h = [](const Array& x, const Array& y) {
    return matmul(transpose(x, std::vector<int>{1, 0}), y);
  };
  const Array want = jit(h)(x, y);
  NamedSharding all(mesh, P(both));
  auto two = jit(h, {.in_shardings = {all, all}, .out_shardings = {all}});
  expect_near(two(x, y), want, 1e-12, "both axes");
  std::string text = two.as_text(x, y);
  EXPECT_EQ(count(text, "psum_scatter"), 2) << text;
  EXPECT_EQ(psums(text), 0) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
  auto one =
      jit(h, {.in_shardings = {all, all}, .out_shardings = {NamedSharding(mesh, P("data"))}});
  expect_near(one(x, y), want, 1e-12, "one axis");
  text = one.as_text(x, y);
  EXPECT_EQ(count(text, "psum_scatter"), 1) << text;
  EXPECT_EQ(psums(text), 1) << text;
  NamedSharding rows(mesh, P("data"));
  auto cut = jit(h, {.in_shardings = {rows, rows},
                     .out_shardings = {NamedSharding(mesh, P("model", "data"))}});
  expect_near(cut(x, y), want, 1e-12, "scatter and cut");
  text = cut.as_text(x, y);
  EXPECT_EQ(count(text, "psum_scatter"), 1) << text;
  EXPECT_EQ(psums(text), 0) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
}

// An FSDP step without a scan: gradients of weights split over 'data' leave the backward
// pass as psum_scatters, not psums.
TEST(ReshardTest, FsdpGradientsAreReduceScattered) {
  Mesh mesh({4}, {"data"});
  Array x = rnd({16, 8}, 0.1), w1 = rnd({8, 8}, 0.2), w2 = rnd({8, 4}, 0.3);
  auto loss = [](const Array& x, const Array& w1, const Array& w2) {
    return mean(square(matmul(tanh(matmul(x, w1)), w2)));
  };
  auto step = [&](const Array& x, const Array& w1, const Array& w2) {
    auto [g1, g2] = grad(loss, argnums<1, 2>)(x, w1, w2);
    return std::pair{w1 - g1 * 0.1, w2 - g2 * 0.1};
  };
  NamedSharding batch(mesh, P("data")), split(mesh, P("data"));
  auto fsdp = jit(step, {.in_shardings = {batch, split, split}, .out_shardings = {split}});
  auto got = fsdp(x, w1, w2);
  auto want = jit(step)(x, w1, w2);
  expect_near(got.first, want.first, 1e-12, "w1");
  expect_near(got.second, want.second, 1e-12, "w2");
  const std::string text = fsdp.as_text(x, w1, w2);
  EXPECT_EQ(count(text, "psum_scatter"), 2) << text;
  // Two micro-batches: the gradients add up as partial sums, reduce-scattered once each.
  auto two = [&](const Array& xa, const Array& xb, const Array& w1, const Array& w2) {
    auto [a1, a2] = grad(loss, argnums<1, 2>)(xa, w1, w2);
    auto [b1, b2] = grad(loss, argnums<1, 2>)(xb, w1, w2);
    return std::pair{w1 - (a1 + b1) * 0.05, w2 - (a2 + b2) * 0.05};
  };
  Array xb = rnd({16, 8}, 0.9);
  auto accum = jit(two, {.in_shardings = {batch, batch, split, split}, .out_shardings = {split}});
  auto got2 = accum(x, xb, w1, w2);
  auto want2 = jit(two)(x, xb, w1, w2);
  expect_near(got2.first, want2.first, 1e-12, "w1 accumulated");
  expect_near(got2.second, want2.second, 1e-12, "w2 accumulated");
  const std::string text2 = accum.as_text(x, xb, w1, w2);
  EXPECT_EQ(count(text2, "psum_scatter"), 2) << text2;
}

// FSDP over stacked layers: the weight gradients are ys of the transposed scan, partial over
// the batch's axis inside its body; they leave the body reduce-scattered into the layout of
// the weights they belong to.
TEST(ReshardTest, FsdpScanGradientsAreReduceScatteredInTheBody) {
  Mesh mesh({4}, {"data"});
  Array x = rnd({8, 4}, 0.1), ws = rnd({3, 4, 4}, 0.2) * 0.5;
  auto loss = [](const Array& x, const Array& ws) {
    auto [h, ys] = scan(
        [](const Array& h, const Array& w) {
          return std::pair{tanh(matmul(h, w)) + h, std::tuple<>{}};
        },
        x, ws);
    return mean(square(h));
  };
  auto step = [&](const Array& x, const Array& ws) { return grad(loss, argnums<1>)(x, ws); };
  NamedSharding batch(mesh, P("data")), fsdp(mesh, P(none, "data"));
  auto sharded = jit(step, {.in_shardings = {batch, fsdp}, .out_shardings = {fsdp}});
  Array got = sharded(x, ws);
  expect_near(got, jit(step)(x, ws), 1e-12, "dws");
  EXPECT_EQ(got.sharding(), fsdp);
  const std::string text = sharded.as_text(x, ws);
  EXPECT_EQ(count(text, "psum_scatter"), 1) << text;
  EXPECT_EQ(psums(text), 0) << text;
}

}  // namespace
}  // namespace graft
