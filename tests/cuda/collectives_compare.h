// The programs of the collectives' GPU tests, shared by collectives_gpu_test (a mesh of 2 GPUs
// of one process) and mpi_gpu_test (one GPU on each of 2 processes): each runs with its
// operands on cuda:0 and is compared with the same program on the CPU's virtual devices (or
// with the unsharded result). The callers skip without the GPUs.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "core/device/device.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"
#include "transforms/shard_map.h"

namespace graft::cuda_testing {

inline Array rnd(const Shape& s, double phase) {
  return reshape(sin(arange(0.0, static_cast<double>(numel(s)), 1.0, DType::kF32) * 0.7 + phase),
                 s);
}

inline Array on_gpu(const Array& x) { return device_put(x, devices("cuda")[0]); }

inline void expect_close(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-5) << what << " at " << i;
}

// f(x) on the GPUs (x device_put on cuda:0) and on the CPU's virtual devices.
template <typename F>
void expect_gpu_matches_cpu(F f, const Array& x, const std::string& what) {
  Array gpu = f(on_gpu(x));
  EXPECT_FALSE(gpu.buffer()->on_host()) << what << ": the result should stay on the GPU";
  expect_close(gpu, f(x), what);
}

// psum, pmax and axis_index over the 2 members.
inline void check_psum_pmax_axis_index() {
  Mesh mesh({2}, {"i"});
  auto f = shard_map(
      [](const Array& x) {
        return std::tuple{psum(x, {"i"}), pmax(x, {"i"}), x * astype(axis_index("i"), DType::kF32)};
      },
      mesh, {P("i", none)}, {P(), P(), P("i", none)});
  Array x = rnd({4, 3}, 0.1);
  auto [s, m, idx] = f(on_gpu(x));
  auto [s_cpu, m_cpu, idx_cpu] = f(x);
  expect_close(s, s_cpu, "psum");
  expect_close(m, m_cpu, "pmax");
  expect_close(idx, idx_cpu, "axis_index");
}

// all_gather along dimension 1 (through the scratch transpose: outer > 1) and 0.
inline void check_all_gather() {
  Mesh mesh({2}, {"i"});
  // Gathering along dimension 1 goes through the scratch transpose (outer > 1).
  auto f = shard_map([](const Array& x) { return all_gather(x, "i", 1, /*tiled=*/true); }, mesh,
                     {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(f, rnd({4, 3}, 0.2), "all_gather(axis 1, tiled)");
  auto g = shard_map([](const Array& x) { return all_gather(x, "i"); }, mesh, {P("i", none)},
                     {P("i", none, none)});
  expect_gpu_matches_cpu(g, rnd({4, 3}, 0.3), "all_gather(axis 0)");
}

// psum_scatter and all_to_all along dimension 1.
inline void check_psum_scatter_and_all_to_all() {
  Mesh mesh({2}, {"i"});
  auto scatter = shard_map([](const Array& x) { return psum_scatter(x, "i", 1, /*tiled=*/true); },
                           mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(scatter, rnd({4, 6}, 0.4), "psum_scatter(dim 1, tiled)");
  auto a2a = shard_map([](const Array& x) { return all_to_all(x, "i", 1, 0, /*tiled=*/true); },
                       mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(a2a, rnd({4, 6}, 0.5), "all_to_all(split 1, concat 0, tiled)");
}

// ppermute: a swap, and one way (member 0 gets zeros).
inline void check_ppermute() {
  Mesh mesh({2}, {"i"});
  auto swap = shard_map(
      [](const Array& x) {
        return ppermute(x, "i", {{0, 1}, {1, 0}});
      },
      mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(swap, rnd({4, 3}, 0.6), "ppermute swap");
  auto one_way = shard_map(
      [](const Array& x) {
        return ppermute(x, "i", {{0, 1}});
      },
      mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(one_way, rnd({4, 3}, 0.7), "ppermute 0 -> 1 (member 0 gets zeros)");
}

// Megatron-style tensor parallel under jit: w1 split by columns, w2 by rows, partial
// products summed; against the unsharded product.
inline void check_tensor_parallel_mlp() {
  Mesh mesh({2}, {"model"});
  auto block =
      shard_map([](const Array& x, const Array& w1,
                   const Array& w2) { return psum(matmul(tanh(matmul(x, w1)), w2), {"model"}); },
                mesh, {P(), P(none, "model"), P("model", none)}, {P()});
  auto f = jit([&](const Array& x, const Array& w1, const Array& w2) { return block(x, w1, w2); });
  Array x = rnd({8, 16}, 0.1), w1 = rnd({16, 32}, 0.2) * 0.3, w2 = rnd({32, 4}, 0.3) * 0.3;
  Array got = f(on_gpu(x), on_gpu(w1), on_gpu(w2));
  EXPECT_FALSE(got.buffer()->on_host());
  expect_close(got, matmul(tanh(matmul(x, w1)), w2), "tensor-parallel MLP vs unsharded");
}

// pmap of x / psum(x).
inline void check_pmap_psum() {
  auto f = pmap([](const Array& x) { return x / psum(x, {"i"}); }, "i");
  expect_gpu_matches_cpu(f, rnd({2, 5}, 0.8) + 2.0, "pmap x / psum(x)");
}

}  // namespace graft::cuda_testing
