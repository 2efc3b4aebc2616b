// The CUDA index family's launchers (core/backend/cuda/kernels/index_launch.h) against graft's
// CPU kernels: gather (every dtype and index dtype, fill and clip, wrapped and out-of-range
// indices, batch dims, empty axes and rows), scatter_add (duplicates; integer-valued floats so
// the atomics' order cannot change the sum and the bytes must match; wrapping integers; and
// random floats within a tolerance) and sort (NaN of both signs, +-0, infinities, ties,
// several keys, every key dtype, the segmented and the single-row paths, inner axes).
// GPU tests: they skip without a device or without --config=cuda.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "core/backend/cuda/device.h"
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"

#ifdef GRAFT_CUDA
#include <cuda_runtime_api.h>

#include "core/array.h"
#include "core/backend/cuda/kernels/index_launch.h"
#include "core/ops.h"
#include "core/primitives/index.h"
#endif

namespace graft::cuda {
namespace {

#ifndef GRAFT_CUDA
TEST(CudaIndexKernels, NeedsCuda) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }
#else

struct DeviceCopy {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceCopy(size_t n, const void* host = nullptr) : bytes(n) {
    if (n == 0) return;
    EXPECT_EQ(cudaMalloc(&ptr, n), cudaSuccess);
    if (host) {
      EXPECT_EQ(cudaMemcpy(ptr, host, n, cudaMemcpyHostToDevice), cudaSuccess);
    } else {
      EXPECT_EQ(cudaMemset(ptr, 0xAB, n), cudaSuccess);
    }
  }
  ~DeviceCopy() {
    if (ptr) cudaFree(ptr);
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
};

std::unique_ptr<DeviceCopy> upload(const Array& a) {
  return std::make_unique<DeviceCopy>(static_cast<size_t>(a.nbytes()), a.raw_data());
}

std::vector<uint8_t> download(const DeviceCopy& d) {
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> host(d.bytes);
  if (d.bytes) {
    EXPECT_EQ(cudaMemcpy(host.data(), d.ptr, d.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  return host;
}

void expect_same(const Array& cpu, const std::vector<uint8_t>& gpu, const std::string& what) {
  const size_t bytes = static_cast<size_t>(cpu.nbytes());
  ASSERT_EQ(gpu.size(), bytes) << what;
  const auto* c = static_cast<const uint8_t*>(bytes ? cpu.raw_data() : nullptr);
  const int64_t es = dtype_size(cpu.dtype());
  for (size_t i = 0; i < bytes; ++i) {
    if (c[i] != gpu[i]) {
      ADD_FAILURE() << what << ": element " << i / es << " of " << cpu.aval().str() << " differs";
      return;
    }
  }
}

// A host array whose elements are gen(i) converted to the dtype as graft converts (f16/bf16
// through float); bool elements are 0 or 1.
template <typename Gen>
Array make_array(const Shape& shape, DType dtype, Gen&& gen) {
  const int64_t n = numel(shape);
  auto buf = Buffer::make(static_cast<size_t>(std::max<int64_t>(n * dtype_size(dtype), 1)));
  dispatch_dtype(dtype, [&]<typename T>() {
    T* p = static_cast<T*>(buf->data());
    for (int64_t i = 0; i < n; ++i) {
      const double v = gen(i);
      if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
        p[i] = T(static_cast<float>(v));
      } else if constexpr (std::is_same_v<T, bool>) {
        p[i] = v != 0;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(static_cast<int64_t>(v));  // unsigned: wraps, no UB
      } else {
        p[i] = static_cast<T>(v);
      }
    }
  });
  return Array::from_buffer(buf, shape, dtype);
}

constexpr DType kAll[] = {DType::kBool, DType::kU8,   DType::kU32, DType::kI32, DType::kI64,
                          DType::kF16,  DType::kBF16, DType::kF32, DType::kF64};
constexpr DType kIndexTypes[] = {DType::kI32, DType::kI64, DType::kU8, DType::kU32};

// Indices of `idt` over an axis of n: in range, wrapped negatives (signed only) and beyond
// either end.
Array make_indices(const Shape& shape, DType idt, int64_t n, std::mt19937_64& rng) {
  const bool is_signed = idt == DType::kI32 || idt == DType::kI64;
  const int64_t lo = is_signed ? -n - 3 : 0, hi = n + 3;
  return make_array(shape, idt, [&](int64_t) {
    return static_cast<double>(lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo)));
  });
}

struct Layout {
  Shape operand, indices;
  int axis, batch_dims;
};
const std::vector<Layout> kLayouts = {
    {{5, 4}, {7}, 0, 0},                // rows of 4
    {{2, 3, 5, 4}, {2, 2, 3}, 2, 1},    // batch and leading dims
    {{3, 6}, {4}, 1, 0},                // S = 1
    {{4, 8}, {6}, 0, 0},                // rows of 8 (wide words)
    {{6, 16}, {2, 3}, 0, 0},            // rows of 16
    {{3, 0}, {5}, 0, 0},                // S = 0
    {{0, 3}, {4}, 0, 0},                // N = 0: everything out of range
    {{5, 2}, {0}, 0, 0},                // no indices
    {{1}, {3}, 0, 0},                   // size 1
};

TEST(CudaIndexKernels, Gather) {
  GRAFT_REQUIRE_GPUS(1);
  std::mt19937_64 rng(7);
  for (const Layout& lay : kLayouts) {
    for (DType dt : kAll) {
      for (DType idt : kIndexTypes) {
        for (GatherMode mode : {GatherMode::kFill, GatherMode::kClip}) {
          Array x = make_array(lay.operand, dt, [&](int64_t i) { return double(i % 97) - 40; });
          const int64_t n = lay.operand[lay.axis];
          Array idx = make_indices(lay.indices, idt, n, rng);
          Array want = apply<Gather>({x, idx}, lay.axis, lay.batch_dims, mode);
          auto dx = upload(x);
          auto di = upload(idx);
          DeviceCopy out(static_cast<size_t>(want.nbytes()));
          const IndexLayout l = index_layout(lay.operand, lay.indices, lay.axis, lay.batch_dims);
          launch_gather(dt, idt, l, mode == GatherMode::kClip, dx->ptr, di->ptr, out.ptr, nullptr);
          expect_same(want, download(out),
                      "gather " + x.aval().str() + " at " + idx.aval().str() +
                          (mode == GatherMode::kClip ? " clip" : " fill"));
        }
      }
    }
  }
}

// scatter_add of operand/updates made by gen, on the GPU; the output bytes.
std::vector<uint8_t> gpu_scatter(const Layout& lay, const Array& x, const Array& idx,
                                 const Array& upd) {
  const IndexLayout l = index_layout(lay.operand, lay.indices, lay.axis, lay.batch_dims);
  auto dx = upload(x);
  auto di = upload(idx);
  auto du = upload(upd);
  DeviceCopy out(static_cast<size_t>(x.nbytes()));
  DeviceCopy scratch(scatter_add_scratch_bytes(x.dtype(), l));
  launch_scatter_add(x.dtype(), idx.dtype(), l, dx->ptr, di->ptr, du->ptr, out.ptr, scratch.ptr,
                     nullptr);
  return download(out);
}

TEST(CudaIndexKernels, ScatterAddExactSums) {
  GRAFT_REQUIRE_GPUS(1);
  std::mt19937_64 rng(11);
  for (const Layout& lay : kLayouts) {
    for (DType dt : kAll) {
      if (dt == DType::kBool) continue;
      for (DType idt : kIndexTypes) {
        // Floats: small integers, so every order of the atomic adds gives the same exact sum.
        // Integers: any value; adds wrap.
        const bool fp = is_floating(dt);
        auto gen = [&](int64_t) {
          return fp ? double(int64_t(rng() % 9) - 4)
                    : double(int64_t(rng() % 2000001) - 1000000) * (dt == DType::kI64 ? 1e6 : 1);
        };
        Array x = make_array(lay.operand, dt, gen);
        const int64_t n = lay.operand[lay.axis];
        Array idx = make_indices(lay.indices, idt, n, rng);
        Shape upd_shape = apply<Gather>({x, idx}, lay.axis, lay.batch_dims, GatherMode::kFill).shape();
        Array upd = make_array(upd_shape, dt, gen);
        Array want = apply<ScatterAdd>({x, idx, upd}, lay.axis, lay.batch_dims);
        expect_same(want, gpu_scatter(lay, x, idx, upd),
                    "scatter_add " + x.aval().str() + " at " + idx.aval().str());
      }
    }
  }
}

TEST(CudaIndexKernels, ScatterAddRandomFloatsWithinTolerance) {
  GRAFT_REQUIRE_GPUS(1);
  // f32 sums of many duplicates: atomics add in any order, so compare against the CPU's
  // in-order sum with a tolerance scaled by the sum of magnitudes.
  std::mt19937_64 rng(13);
  std::normal_distribution<double> normal;
  const Layout lay{{8, 33}, {500}, 0, 0};
  Array x = make_array(lay.operand, DType::kF32, [&](int64_t) { return normal(rng); });
  Array idx = make_array(lay.indices, DType::kI32, [&](int64_t) { return double(rng() % 8); });
  Array upd = make_array({500, 33}, DType::kF32, [&](int64_t) { return normal(rng); });
  Array want = apply<ScatterAdd>({x, idx, upd}, lay.axis, lay.batch_dims);
  const std::vector<uint8_t> got = gpu_scatter(lay, x, idx, upd);
  std::vector<float> w = want.to_vector<float>(), g(w.size());
  std::memcpy(g.data(), got.data(), got.size());
  for (size_t e = 0; e < w.size(); ++e) EXPECT_NEAR(g[e], w[e], 1e-3f) << "element " << e;
}

// Sort inputs: floats from a pool with NaNs of both signs, +-0, infinities and many ties.
double special_value(std::mt19937_64& rng) {
  static const double pool[] = {std::numeric_limits<double>::quiet_NaN(),
                                -std::numeric_limits<double>::quiet_NaN(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e-3, 3.0, 3.0, -7.0};
  return pool[rng() % (sizeof(pool) / sizeof(pool[0]))];
}

void check_sort(const Shape& shape, int axis, const std::vector<Array>& ops, int num_keys) {
  std::vector<Array> want = graft::bind(std::make_shared<const Sort>(axis, num_keys, true), ops);
  std::vector<std::unique_ptr<DeviceCopy>> ins, outs;
  std::vector<SortOperand> sops;
  std::vector<DType> keys;
  for (size_t o = 0; o < ops.size(); ++o) {
    ins.push_back(upload(ops[o]));
    outs.push_back(std::make_unique<DeviceCopy>(static_cast<size_t>(ops[o].nbytes())));
    sops.push_back({ops[o].dtype(), ins.back()->ptr, outs.back()->ptr});
    if (static_cast<int>(o) < num_keys) keys.push_back(ops[o].dtype());
  }
  const size_t bytes = sort_scratch_bytes(shape, axis, keys);
  DeviceCopy scratch(bytes);
  launch_sort(shape, axis, num_keys, sops, scratch.ptr, bytes, nullptr);
  for (size_t o = 0; o < ops.size(); ++o) {
    expect_same(want[o], download(*outs[o]),
                "sort operand " + std::to_string(o) + " of " + ops[0].aval().str() + " axis " +
                    std::to_string(axis) + " keys " + std::to_string(num_keys));
  }
}

TEST(CudaIndexKernels, SortFloatsWithNaNsZerosAndTies) {
  GRAFT_REQUIRE_GPUS(1);
  std::mt19937_64 rng(17);
  const std::vector<std::pair<Shape, int>> cases = {
      {{4, 37}, 1},  {{37, 3}, 0}, {{2, 30, 3}, 1}, {{1000}, 0}, {{3, 3000}, 1},
      {{100000}, 0}, {{5, 1}, 1},  {{0, 4}, 1},     {{0}, 0},    {{1}, 0},
  };
  for (DType dt : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (const auto& [shape, axis] : cases) {
      Array key = make_array(shape, dt, [&](int64_t) { return special_value(rng); });
      Array pos = make_array(shape, DType::kI32, [&](int64_t i) { return double(i); });
      check_sort(shape, axis, {key, pos}, 1);
    }
  }
}

TEST(CudaIndexKernels, SortEveryKeyDtype) {
  GRAFT_REQUIRE_GPUS(1);
  std::mt19937_64 rng(19);
  for (DType dt : kAll) {
    for (const auto& [shape, axis] : std::vector<std::pair<Shape, int>>{{{2, 50}, 1}, {{300}, 0}}) {
      Array key = make_array(shape, dt, [&](int64_t) {
        return is_floating(dt) ? special_value(rng)
                               : double(int64_t(rng() % 7)) - (is_unsigned(dt) ? 0 : 3);
      });
      Array pos = make_array(shape, DType::kU8, [&](int64_t i) { return double(i % 256); });
      check_sort(shape, axis, {key, pos}, 1);
    }
  }
}

TEST(CudaIndexKernels, SortSeveralKeys) {
  GRAFT_REQUIRE_GPUS(1);
  std::mt19937_64 rng(23);
  for (const auto& [shape, axis] :
       std::vector<std::pair<Shape, int>>{{{3, 200}, 1}, {{200, 2}, 0}, {{5000}, 0}}) {
    Array k0 = make_array(shape, DType::kI32, [&](int64_t) { return double(rng() % 4); });
    Array k1 = make_array(shape, DType::kF64, [&](int64_t) { return special_value(rng); });
    Array k2 = make_array(shape, DType::kBF16, [&](int64_t) { return special_value(rng); });
    Array v = make_array(shape, DType::kI64, [&](int64_t i) { return double(i); });
    check_sort(shape, axis, {k0, k1, k2, v}, 3);
    check_sort(shape, axis, {k1, k0, v}, 2);
    check_sort(shape, axis, {k0, k1, v}, 3);  // the value operand as the last key
  }
}

#endif  // GRAFT_CUDA

}  // namespace
}  // namespace graft::cuda
