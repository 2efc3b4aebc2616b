// fused_elementwise kernels run on a GPU (skipped without one, or without --config=cuda)
// against the CPU: every fusible op on every fusible dtype, converts, selects, broadcast
// scalars, several outputs and a long array (the grid-stride loop) equal the CPU's fused kernel
// bit for bit for exact ops (f16 / bf16 rounding included) and within a normalized error for
// transcendental ones; integer groups equal the CPU's eager ops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/cuda/device.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/cuda/fusion_test_groups.h"
#include "tests/cuda/gpu_skip.h"
#ifdef GRAFT_CUDA
#include <cuda_runtime_api.h>

#include "core/backend/cuda/fusion/launch.h"
#include "core/backend/cuda/runtime/check.h"
#endif

namespace graft::fusion_test {
namespace {

#ifdef GRAFT_CUDA
namespace cf = cuda::fusion;

// Device memory, freed with its scope.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { cuda::check(cudaMalloc(&p, bytes ? bytes : 1), "malloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

using Bytes = std::vector<char>;

// g's kernel on device 0 over n elements of args (CPU arrays): each output's bytes.
std::vector<Bytes> run_on_gpu(const GroupSpec& g, int64_t n, const std::vector<Array>& args) {
  cuda::check(cudaSetDevice(0), "cudaSetDevice");
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (const Array& a : args) {
    bufs.push_back(std::make_unique<DeviceBuffer>(a.nbytes()));
    cuda::check(cudaMemcpy(bufs.back()->p, a.raw_data(), a.nbytes(), cudaMemcpyHostToDevice),
                "copy in");
    ins.push_back(bufs.back()->p);
  }
  std::vector<Bytes> out;
  for (int s : g.outputs) {
    const DType d =
        s < static_cast<int>(g.inputs.size()) ? g.inputs[s] : g.steps[s - g.inputs.size()].dtype;
    out.emplace_back(n * dtype_size(d));
    bufs.push_back(std::make_unique<DeviceBuffer>(out.back().size()));
    outs.push_back(bufs.back()->p);
  }
  cf::launch(cf::kernel_for(g, 0), n, ins.data(), outs.data(), 0, nullptr);
  cuda::check(cudaDeviceSynchronize(), "synchronize");
  for (size_t o = 0; o < out.size(); ++o) {
    cuda::check(cudaMemcpy(out[o].data(), outs[o], out[o].size(), cudaMemcpyDeviceToHost),
                "copy out");
  }
  return out;
}

double value(DType d, const char* p) {
  switch (d) {
    case DType::kF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return float(f16::from_bits(b));
    }
    case DType::kBF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return float(bf16::from_bits(b));
    }
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::kF64: {
      double f;
      std::memcpy(&f, p, 8);
      return f;
    }
    default:
      return 0;  // integers and bool compare bytes
  }
}

// Element by element: the same bytes (any NaN matching any NaN), or with tol > 0 a
// normalized error |got - want| / max(1, |want|) within tol.
void expect_match(DType d, const Bytes& got, const void* want, int64_t n, double tol,
                  const std::string& what) {
  const int64_t w = dtype_size(d);
  const char* cpu = static_cast<const char*>(want);
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i) {
    const char *g = got.data() + i * w, *c = cpu + i * w;
    if (std::memcmp(g, c, w) == 0) continue;
    if (is_floating(d)) {
      const double x = value(d, g), y = value(d, c);
      if (std::isnan(x) && std::isnan(y)) continue;
      if (tol > 0 && std::abs(x - y) <= tol * std::max(1.0, std::abs(y))) continue;
      ADD_FAILURE() << what << " element " << i << ": gpu " << x << " cpu " << y;
    } else {
      ADD_FAILURE() << what << " element " << i << " differs";
    }
    ++bad;
  }
}

// n values of dtype d: special ones (NaN, infinities, signed zeros, ties, huge, subnormal),
// then normal random ones scaled by 4.
Array values(DType d, int64_t n, int seed) {
  const float inf = INFINITY, nan = NAN;
  std::vector<float> v = {nan,   1.0f,   -inf,   inf,   -0.0f, 0.0f,    0.5f,   -0.5f,  2.5f, -1.5f,
                          1e30f, -1e30f, 1e-39f, -3.0f, 7.9f,  65520.f, 0.999f, -87.5f, 89.0f};
  std::vector<float> r = (random::normal(random::key(seed), {n}) * 4.0f).to_vector<float>();
  for (int64_t i = static_cast<int64_t>(v.size()); i < n; ++i) v.push_back(r[i]);
  v.resize(n);
  Array x = array<float>(v, Shape{n});
  return d == DType::kBool ? x > full({n}, 0.0) : convert(x, d);
}

double tolerance(DType d, bool exact_ops) {
  if (exact_ops) return 0;
  return d == DType::kBF16 ? 1.6e-2 : d == DType::kF16 ? 2e-3 : d == DType::kF64 ? 1e-13 : 1e-5;
}

// g on the GPU against the CPU's fused kernel (graft::bind on CPU arrays).
void expect_gpu_equals_cpu(const Group& g, double tol, const std::string& what, int seed = 1) {
  std::vector<Array> args;
  for (const Aval& a : g->in_avals()) {
    const int64_t n = numel(a.shape);
    args.push_back(a.shape.empty() ? convert(full({}, 0.75), a.dtype)
                                   : reshape(values(a.dtype, n, seed++), a.shape));
  }
  const int64_t n = numel(g->shape());
  std::vector<Array> cpu = graft::bind(g, args);
  std::vector<Bytes> gpu = run_on_gpu(cf::spec_of(*g), n, args);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t o = 0; o < cpu.size(); ++o) {
    const DType d = cpu[o].dtype();
    expect_match(d, gpu[o], cpu[o].raw_data(), n, d == DType::kBool ? 0 : tol,
                 str_cat(what, " output ", o, " (", dtype_name(d), ")"));
  }
}

TEST(FusionGpu, OpsEqualTheCpuFusedKernel) {
  GRAFT_REQUIRE_GPUS(1);
  std::vector<P> exact_ops, math_ops;
  for (P op : fusible_ops()) (exact(op) ? exact_ops : math_ops).push_back(op);
  for (DType d : kFusible) {
    expect_gpu_equals_cpu(ops_group(d, exact_ops), 0, str_cat("exact ops ", dtype_name(d)));
    if (d == DType::kBool) continue;
    expect_gpu_equals_cpu(ops_group(d, math_ops), tolerance(d, false),
                          str_cat("math ops ", dtype_name(d)));
  }
}

TEST(FusionGpu, ConvertsSelectsScalarsAndLongArraysEqualTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kFusible)
    expect_gpu_equals_cpu(converts_group(d), 0, str_cat("from ", dtype_name(d)));
  // exp in the mixed group: its f32 output may differ by an ulp, and what derives from it.
  expect_gpu_equals_cpu(mixed_group(), tolerance(DType::kBF16, false), "mixed");
  expect_gpu_equals_cpu(jit_group(DType::kBF16), tolerance(DType::kBF16, false), "jit bf16");
  // More elements than the grid has threads: the loop strides.
  expect_gpu_equals_cpu(ops_group(DType::kF32, {P::kAdd, P::kMax}, 3000001), 0, "strided");
}

TEST(FusionGpu, IntegerGroupsEqualTheCpuEagerOps) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kIntegers) {
    const GroupSpec g = integer_spec(d);
    // Integer values with zeros, -1 and extremes: from f32 values, saturating.
    std::vector<Array> args = {convert(values(DType::kF32, kN, 3) * 1e9f, d),
                               convert(values(DType::kF32, kN, 4) * 0.5f, d),
                               values(DType::kF32, kN, 5) * 1e9f};
    std::vector<Bytes> gpu = run_on_gpu(g, kN, args);
    std::vector<Array> slots = args;
    for (const GroupSpec::Step& s : g.steps) {
      std::vector<Array> a;
      for (int x : s.args) a.push_back(slots[x]);
      slots.push_back(s.op == P::kConvertElementType ? convert(a[0], s.dtype) : apply_op(s.op, a));
    }
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      const Array& want = slots[g.outputs[o]];
      const GroupSpec::Step& s = g.steps[g.outputs[o] - 3];
      expect_match(want.dtype(), gpu[o], want.raw_data(), kN, 0,
                   str_cat(dtype_name(d), " ", name(s.op), " -> ", dtype_name(s.dtype)));
    }
  }
}
#else
TEST(FusionGpu, SkippedWithoutCuda) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }
#endif

}  // namespace
}  // namespace graft::fusion_test
