// The CUDA shape family's launchers (core/backend/cuda/kernels/shape_launch.h) against graft's
// CPU kernels: each case builds the primitive, evaluates it on host arrays (the CPU backend),
// runs the launcher on cudaMalloc'd copies of the same inputs and compares the bytes (every
// shape op but iota is a byte copy; iota is exact too). Element sizes 1, 2, 4 and 8, ranks
// 0 to 4, empty and size-1 dims, transposes that take the tiled path, out-of-range dynamic
// starts of every index dtype. GPU tests: they skip without a device or without
// --config=cuda.
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/backend/cuda/device.h"
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"

#ifdef GRAFT_CUDA
#include <cuda_runtime_api.h>

#include "core/array.h"
#include "core/backend/cuda/kernels/shape_launch.h"
#include "core/ops.h"
#include "core/primitives/shape.h"
#endif

namespace graft::cuda {
namespace {

#ifndef GRAFT_CUDA
TEST(CudaShapeKernels, NeedsCuda) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }
#else

// Device memory holding a copy of host bytes; freed on scope exit.
struct DeviceCopy {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceCopy(size_t n, const void* host = nullptr) : bytes(n) {
    if (n == 0) return;
    EXPECT_EQ(cudaMalloc(&ptr, n), cudaSuccess);
    if (host) {
      EXPECT_EQ(cudaMemcpy(ptr, host, n, cudaMemcpyHostToDevice), cudaSuccess);
    } else {
      EXPECT_EQ(cudaMemset(ptr, 0xAB, n), cudaSuccess);  // unwritten bytes show up
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

// A host array of random bytes (any bit pattern is fine: these ops copy bytes).
Array random_array(const Shape& shape, DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t bytes = static_cast<size_t>(numel(shape) * dtype_size(dtype));
  auto buf = Buffer::make(std::max<size_t>(bytes, 1));
  auto* p = static_cast<uint8_t*>(buf->data());
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(rng());
  return Array::from_buffer(buf, shape, dtype);
}

// Byte equality with the first differing element in the message.
void expect_same(const Array& cpu, const std::vector<uint8_t>& gpu, const std::string& what) {
  const size_t bytes = static_cast<size_t>(cpu.nbytes());
  ASSERT_EQ(gpu.size(), bytes) << what;
  if (bytes == 0) return;
  const auto* c = static_cast<const uint8_t*>(cpu.raw_data());
  const int64_t es = dtype_size(cpu.dtype());
  for (size_t i = 0; i < bytes; ++i) {
    if (c[i] != gpu[i]) {
      ADD_FAILURE() << what << ": element " << i / es << " of " << cpu.aval().str() << " differs";
      return;
    }
  }
}

constexpr DType kWidths[] = {DType::kU8, DType::kBF16, DType::kF32, DType::kI64};

TEST(CudaShapeKernels, Transpose) {
  GRAFT_REQUIRE_GPUS(1);
  struct Case {
    Shape in;
    std::vector<int> perm;
  };
  const std::vector<Case> cases = {
      {{}, {}},           {{1, 1}, {1, 0}},       {{0, 3}, {1, 0}},          {{5, 7}, {1, 0}},
      {{67, 45}, {1, 0}}, {{4, 33, 35}, {0, 2, 1}}, {{4, 33, 35}, {2, 0, 1}}, {{4, 33, 35}, {1, 0, 2}},
      {{2, 3, 4, 5}, {3, 1, 0, 2}}, {{3, 1, 40}, {2, 1, 0}},
  };
  uint64_t seed = 1;
  for (DType dt : kWidths) {
    for (const Case& c : cases) {
      Array x = random_array(c.in, dt, seed++);
      Array want = apply<Transpose>({x}, c.perm);
      auto dx = upload(x);
      DeviceCopy out(static_cast<size_t>(want.nbytes()));
      launch_transpose(dtype_size(dt), c.in, c.perm, dx->ptr, out.ptr, nullptr);
      expect_same(want, download(out), "transpose " + x.aval().str());
    }
  }
}

TEST(CudaShapeKernels, BroadcastInDim) {
  GRAFT_REQUIRE_GPUS(1);
  struct Case {
    Shape in, out;
    std::vector<int> dims;
  };
  const std::vector<Case> cases = {
      {{}, {3, 4}, {}},        {{1}, {5}, {0}},          {{3, 1}, {2, 3, 5}, {1, 2}},
      {{4}, {4, 6}, {0}},      {{6}, {4, 6}, {1}},       {{0}, {2, 0}, {1}},
      {{2, 1, 3}, {2, 4, 3}, {0, 1, 2}}, {{7}, {3, 7, 2}, {1}},
  };
  uint64_t seed = 100;
  for (DType dt : kWidths) {
    for (const Case& c : cases) {
      Array x = random_array(c.in, dt, seed++);
      Array want = apply<BroadcastInDim>({x}, c.out, c.dims);
      auto dx = upload(x);
      DeviceCopy out(static_cast<size_t>(want.nbytes()));
      launch_broadcast_in_dim(dtype_size(dt), c.in, c.out, c.dims, dx->ptr, out.ptr, nullptr);
      expect_same(want, download(out), "broadcast_in_dim " + x.aval().str());
    }
  }
}

TEST(CudaShapeKernels, SliceAndRev) {
  GRAFT_REQUIRE_GPUS(1);
  uint64_t seed = 200;
  for (DType dt : kWidths) {
    struct Case {
      Shape in, start, limit, strides;
    };
    const std::vector<Case> cases = {
        {{10, 12}, {1, 2}, {9, 11}, {2, 3}}, {{10, 12}, {0, 0}, {10, 12}, {1, 1}},
        {{37}, {3}, {36}, {5}},              {{4, 5}, {2, 2}, {2, 5}, {1, 1}},
        {{3, 4, 5}, {0, 1, 4}, {3, 4, 5}, {2, 1, 1}}, {{1}, {0}, {1}, {1}},
    };
    for (const Case& c : cases) {
      Array x = random_array(c.in, dt, seed++);
      Array want = apply<Slice>({x}, c.start, c.limit, c.strides);
      auto dx = upload(x);
      DeviceCopy out(static_cast<size_t>(want.nbytes()));
      launch_slice(dtype_size(dt), c.in, c.start, c.limit, c.strides, dx->ptr, out.ptr, nullptr);
      expect_same(want, download(out), "slice " + x.aval().str());
    }
    const std::vector<std::pair<Shape, std::vector<int>>> revs = {
        {{5, 6, 7}, {0, 2}}, {{5, 6, 7}, {}}, {{0, 4}, {1}}, {{1}, {0}}, {{9}, {0}}, {{}, {}}};
    for (const auto& [shape, dims] : revs) {
      Array x = random_array(shape, dt, seed++);
      Array want = apply<Rev>({x}, dims);
      auto dx = upload(x);
      DeviceCopy out(static_cast<size_t>(want.nbytes()));
      launch_rev(dtype_size(dt), shape, dims, dx->ptr, out.ptr, nullptr);
      expect_same(want, download(out), "rev " + x.aval().str());
    }
  }
}

TEST(CudaShapeKernels, Concatenate) {
  GRAFT_REQUIRE_GPUS(1);
  uint64_t seed = 300;
  for (DType dt : kWidths) {
    const std::vector<std::pair<std::vector<Shape>, int>> cases = {
        {{{2, 3}, {2, 0}, {2, 5}}, 1}, {{{1, 4}, {3, 4}}, 0}, {{{2, 3, 1}, {2, 3, 2}}, 2},
        {{{0, 2}, {0, 2}}, 0}};
    for (const auto& [shapes, axis] : cases) {
      std::vector<Array> xs;
      std::vector<std::unique_ptr<DeviceCopy>> dxs;
      std::vector<const void*> ptrs;
      for (const Shape& s : shapes) {
        xs.push_back(random_array(s, dt, seed++));
        dxs.push_back(upload(xs.back()));
        ptrs.push_back(dxs.back()->ptr);
      }
      Array want = apply<Concatenate>(xs, axis);
      DeviceCopy out(static_cast<size_t>(want.nbytes()));
      launch_concatenate(dtype_size(dt), shapes, ptrs, axis, out.ptr, nullptr);
      expect_same(want, download(out), "concatenate " + want.aval().str());
    }
  }
}

TEST(CudaShapeKernels, Pad) {
  GRAFT_REQUIRE_GPUS(1);
  const std::vector<std::pair<Shape, PadConfig>> cases = {
      {{3, 4}, {{1, 2, 1}, {-1, 3, 0}}},
      {{5, 6}, {{-2, -1, 2}, {0, 0, 0}}},
      {{4}, {{-3, -1, 0}}},  // crops everything: an empty output
      {{1, 3}, {{2, 2, 5}, {0, 1, 1}}},
      {{0, 2}, {{1, 1, 3}, {0, 0, 0}}},
      {{}, {}},
      {{6}, {{-5, 1, 1}}},
  };
  uint64_t seed = 400;
  for (DType dt : kWidths) {
    for (const auto& [shape, cfg] : cases) {
      Array x = random_array(shape, dt, seed++);
      Array value = random_array({}, dt, seed++);
      Array want = apply<Pad>({x, value}, cfg);
      auto dx = upload(x);
      auto dv = upload(value);
      DeviceCopy out(static_cast<size_t>(want.nbytes()));
      launch_pad(dtype_size(dt), shape, cfg, dx->ptr, dv->ptr, out.ptr, nullptr);
      expect_same(want, download(out), "pad " + x.aval().str());
    }
  }
}

TEST(CudaShapeKernels, Iota) {
  GRAFT_REQUIRE_GPUS(1);
  const DType dtypes[] = {DType::kU8,  DType::kU32,  DType::kI32, DType::kI64,
                          DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
  const std::vector<std::pair<Shape, int>> cases = {
      {{3, 5}, 0}, {{3, 5}, 1}, {{0, 4}, 1}, {{1}, 0}, {{2, 3000}, 1}, {{300, 2}, 0}};
  for (DType dt : dtypes) {
    for (const auto& [shape, dim] : cases) {
      Array want = apply<Iota>({}, dt, shape, dim);
      DeviceCopy out(static_cast<size_t>(want.nbytes()));
      launch_iota(dt, shape, dim, out.ptr, nullptr);
      expect_same(want, download(out), "iota " + want.aval().str());
    }
  }
}

// Start indices: (value, dtype) pairs, in range, negative (wrapped), and beyond either end.
using Starts = std::vector<std::pair<double, DType>>;

TEST(CudaShapeKernels, DynamicSliceAndUpdate) {
  GRAFT_REQUIRE_GPUS(1);
  struct Case {
    Shape operand, sizes;
    Starts starts;
  };
  const std::vector<Case> cases = {
      {{6, 7}, {2, 3}, {{1, DType::kI32}, {2, DType::kI64}}},
      {{6, 7}, {2, 3}, {{-1, DType::kI32}, {100, DType::kI64}}},   // wraps; clamps high
      {{6, 7}, {2, 3}, {{-100, DType::kI64}, {-3, DType::kI32}}},  // clamps low; wraps
      {{6, 7}, {6, 0}, {{3, DType::kU8}, {5, DType::kU32}}},
      {{9}, {4}, {{200, DType::kU8}}},
      {{9}, {9}, {{4, DType::kU32}}},
      {{}, {}, {}},
      {{3, 4, 5}, {1, 4, 2}, {{2, DType::kI32}, {1, DType::kI32}, {-2, DType::kI64}}},
      {{5, 1}, {1, 1}, {{7, DType::kI32}, {0, DType::kI32}}},
  };
  uint64_t seed = 500;
  for (DType dt : kWidths) {
    for (const Case& c : cases) {
      Array x = random_array(c.operand, dt, seed++);
      Array upd = random_array(c.sizes, dt, seed++);
      std::vector<Array> starts;
      std::vector<std::unique_ptr<DeviceCopy>> dstarts;
      std::vector<StartIndex> sidx;
      for (const auto& [v, idt] : c.starts) {
        starts.push_back(scalar(v, idt));
        dstarts.push_back(upload(starts.back()));
        sidx.push_back({dstarts.back()->ptr, idt});
      }
      auto dx = upload(x);
      auto du = upload(upd);
      std::vector<Array> in = {x};
      in.insert(in.end(), starts.begin(), starts.end());
      Array want = apply<DynamicSlice>(in, c.sizes);
      DeviceCopy out(static_cast<size_t>(want.nbytes()));
      launch_dynamic_slice(dtype_size(dt), c.operand, c.sizes, dx->ptr, sidx, out.ptr, nullptr);
      expect_same(want, download(out), "dynamic_slice " + x.aval().str());

      std::vector<Array> uin = {x, upd};
      uin.insert(uin.end(), starts.begin(), starts.end());
      Array want_u = bind1(std::make_shared<const DynamicUpdateSlice>(), uin);
      DeviceCopy out_u(static_cast<size_t>(want_u.nbytes()));
      launch_dynamic_update_slice(dtype_size(dt), c.operand, c.sizes, dx->ptr, du->ptr, sidx,
                                  out_u.ptr, nullptr);
      expect_same(want_u, download(out_u), "dynamic_update_slice " + x.aval().str());
    }
  }
}

#endif  // GRAFT_CUDA

}  // namespace
}  // namespace graft::cuda
