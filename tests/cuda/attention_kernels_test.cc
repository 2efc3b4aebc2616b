// CUDA attention (core/backend/cuda/attention): graft's own kernels and cuDNN's fused
// attention against a double-precision loop reference (attention_reference.h), forward and
// backward, with GQA, MQA, T < S, D = 64, odd D and causal masking. GPU tests skip without a
// device; without one, asking cuDNN for a plan must be a graft::Error, not a crash.
// (attention_cudnn_offline_test checks cuDNN's graphs without a GPU.)
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"

#ifndef GRAFT_CUDA
TEST(AttentionKernelsTest, BuiltWithoutCuda) {
  GTEST_SKIP() << "built without CUDA (--config=cuda)";
}
#else

#include <cuda_runtime_api.h>

#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/backend/cuda/attention/cudnn_sdpa.h"
#include "core/backend/cuda/attention/flash_attention.h"
#include "core/backend/cuda/attention/stats_layout.h"
#include "core/backend/cuda/device.h"
#include "core/error.h"
#include "core/dtype/half.h"
#include "tests/cuda/attention_reference.h"

namespace graft::cuda::attention {
namespace {

using testing::AttnCase;

// Element type traits: host storage and rounding.
template <typename T>
struct Traits;
template <>
struct Traits<float> {
  static constexpr Elem elem = Elem::kF32;
  static float from(double x) { return static_cast<float>(x); }
  static double to(float x) { return x; }
  static constexpr double tol = 2e-5, grad_tol = 5e-5;
};
template <>
struct Traits<double> {
  static constexpr Elem elem = Elem::kF64;
  static double from(double x) { return x; }
  static double to(double x) { return x; }
  static constexpr double tol = 1e-12, grad_tol = 1e-11;
};
template <>
struct Traits<f16> {
  static constexpr Elem elem = Elem::kF16;
  static f16 from(double x) { return f16(static_cast<float>(x)); }
  static double to(f16 x) { return static_cast<float>(x); }
  static constexpr double tol = 4e-3, grad_tol = 2e-2;
};
template <>
struct Traits<bf16> {
  static constexpr Elem elem = Elem::kBF16;
  static bf16 from(double x) { return bf16(static_cast<float>(x)); }
  static double to(bf16 x) { return static_cast<float>(x); }
  static constexpr double tol = 2e-2, grad_tol = 6e-2;
};

void ok(cudaError_t e, const char* what) {
  ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e);
}

// Device memory for a test, freed at scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    if (bytes > 0) ok(cudaMalloc(&ptr_, bytes), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// Random values rounded to T, on the host (as doubles, exactly T's) and the device.
template <typename T>
struct Tensor {
  std::vector<double> host;
  DeviceBuffer dev;
  Tensor(int64_t n, std::mt19937& rng, double amp) : host(n), dev(n * sizeof(T)) {
    std::uniform_real_distribution<double> u(-amp, amp);
    std::vector<T> bits(n);
    for (int64_t i = 0; i < n; ++i) {
      bits[i] = Traits<T>::from(u(rng));
      host[i] = Traits<T>::to(bits[i]);
    }
    ok(cudaMemcpy(dev.get(), bits.data(), n * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  explicit Tensor(int64_t n) : host(n), dev(n * sizeof(T)) {}
};

template <typename T>
std::vector<double> download(const DeviceBuffer& b, int64_t n) {
  std::vector<T> bits(n);
  EXPECT_EQ(cudaMemcpy(bits.data(), b.get(), n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = Traits<T>::to(bits[i]);
  return out;
}

// max |got - want| / max(1e-6, max |want|).
double normalized_error(const std::vector<double>& got, const std::vector<double>& want) {
  double err = 0, scale = 1e-6;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

const std::vector<AttnCase> kCases = {
    {2, 5, 4, 9, 2, 64},    // GQA (G = 2), T < S
    {1, 7, 3, 7, 1, 13},    // MQA, odd D, T == S
    {1, 1, 2, 37, 2, 40},   // one query (decode), H == KV
    {2, 70, 4, 83, 2, 64},  // several tiles each way
    {1, 9, 2, 12, 1, 256},  // the largest head_dim in the brief
    {1, 3, 2, 200, 1, 32},  // T << S: several key tiles, most keys seen by every query
};

std::string name(const AttnCase& c) {
  return "B" + std::to_string(c.B) + " T" + std::to_string(c.T) + " H" + std::to_string(c.H) +
         " S" + std::to_string(c.S) + " KV" + std::to_string(c.KV) + " D" + std::to_string(c.D);
}

// Runs forward and backward through `cudnn` (cuDNN's plan) or graft's kernels and compares.
// lse and dlse are in the accumulation type: f32 for f16 / bf16 operands.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
void check_case(const AttnCase& c, bool cudnn) {
  using A = Acc<T>;
  SCOPED_TRACE(name(c) + (cudnn ? " cuDNN" : " own kernel"));
  std::mt19937 rng(17);
  Tensor<T> q(c.q_size(), rng, 1.5), k(c.kv_size(), rng, 1.5), v(c.kv_size(), rng, 1.0),
      d_o(c.q_size(), rng, 1.0);
  Tensor<A> dlse(c.rows(), rng, 0.5), lse(c.rows());
  Tensor<T> o(c.q_size()), dq(c.q_size()), dk(c.kv_size()), dv(c.kv_size());
  const FlashGeometry g{c.B, c.T, c.H, c.S, c.KV, c.D, c.scale()};
  const Elem e = Traits<T>::elem;
  const SdpaShape shape{
      c.B, c.T, c.H, c.S, c.KV, c.D, e == Elem::kF16 ? SdpaType::kF16 : SdpaType::kBF16};
  if (cudnn) {
    std::string why;
    const SdpaPlan* fwd = sdpa_plan(0, nullptr, shape, false, &why);
    ASSERT_NE(fwd, nullptr) << "cuDNN refused the forward pass: " << why;
    DeviceBuffer ws(sdpa_workspace_bytes(*fwd)), stats(c.rows() * sizeof(float));
    sdpa_forward(*fwd, {q.dev.get(), k.dev.get(), v.dev.get(), o.dev.get(),
                        static_cast<float*>(stats.get()), ws.get(), float(c.scale())});
    ok(stats_to_lse(Traits<A>::elem, c.B, c.T, c.H, static_cast<float*>(stats.get()), lse.dev.get(),
                    nullptr),
       "stats_to_lse");
    ok(cudaDeviceSynchronize(), "forward");
  } else {
    flash_forward(0, nullptr, e, g, q.dev.get(), k.dev.get(), v.dev.get(), o.dev.get(),
                  lse.dev.get());
    ok(cudaDeviceSynchronize(), "forward");
  }
  std::vector<double> o_ref, lse_ref;
  testing::reference_forward(c, q.host, k.host, v.host, o_ref, lse_ref);
  EXPECT_LE(normalized_error(download<T>(o.dev, c.q_size()), o_ref), Traits<T>::tol) << "o";
  EXPECT_LE(normalized_error(download<A>(lse.dev, c.rows()), lse_ref), Traits<T>::tol) << "lse";

  // The backward pass takes the reference's o (rounded to T) and lse, as a vjp would take the
  // forward's outputs.
  for (int64_t i = 0; i < c.q_size(); ++i) o.host[i] = Traits<T>::to(Traits<T>::from(o_ref[i]));
  std::vector<T> bits(c.q_size());
  for (int64_t i = 0; i < c.q_size(); ++i) bits[i] = Traits<T>::from(o_ref[i]);
  ok(cudaMemcpy(o.dev.get(), bits.data(), bits.size() * sizeof(T), cudaMemcpyHostToDevice), "o");
  std::vector<A> lbits(c.rows());
  for (int64_t i = 0; i < c.rows(); ++i) lbits[i] = Traits<A>::from(lse_ref[i]);
  ok(cudaMemcpy(lse.dev.get(), lbits.data(), lbits.size() * sizeof(A), cudaMemcpyHostToDevice),
     "lse");
  FlashGradPointers p{q.dev.get(),   k.dev.get(),   v.dev.get(),    o.dev.get(),
                      lse.dev.get(), d_o.dev.get(), dlse.dev.get(), dq.dev.get(),
                      dk.dev.get(),  dv.dev.get(),  nullptr};
  if (cudnn) {
    std::string why;
    const SdpaPlan* bwd = sdpa_plan(0, nullptr, shape, true, &why);
    ASSERT_NE(bwd, nullptr) << "cuDNN refused the backward pass: " << why;
    DeviceBuffer ws(sdpa_workspace_bytes(*bwd)), stats(c.rows() * 4), dlse32(c.rows() * 4);
    ok(lse_to_stats(Traits<A>::elem, c.B, c.T, c.H, p.lse, static_cast<float*>(stats.get()),
                    nullptr),
       "stats");
    ok(lse_to_stats(Traits<A>::elem, c.B, c.T, c.H, p.d_lse, static_cast<float*>(dlse32.get()),
                    nullptr),
       "dlse");
    sdpa_backward(
        *bwd, {p.q, p.k, p.v, p.o, p.d_o, static_cast<float*>(stats.get()),
               static_cast<float*>(dlse32.get()), p.dq, p.dk, p.dv, ws.get(), float(c.scale())});
    ok(cudaDeviceSynchronize(), "backward");
  } else {
    DeviceBuffer scratch(flash_backward_scratch(e, g));
    p.scratch = scratch.get();
    flash_backward(0, nullptr, e, g, p);
    ok(cudaDeviceSynchronize(), "backward");  // before the scratch is freed
  }
  std::vector<double> dq_ref, dk_ref, dv_ref;
  // The reference recomputes o from q, k, v; the kernels saw o rounded to T (the difference
  // is within the gradient tolerance).
  testing::reference_backward(c, q.host, k.host, v.host, d_o.host, dlse.host, dq_ref, dk_ref,
                              dv_ref);
  EXPECT_LE(normalized_error(download<T>(dq.dev, c.q_size()), dq_ref), Traits<T>::grad_tol) << "dq";
  EXPECT_LE(normalized_error(download<T>(dk.dev, c.kv_size()), dk_ref), Traits<T>::grad_tol)
      << "dk";
  EXPECT_LE(normalized_error(download<T>(dv.dev, c.kv_size()), dv_ref), Traits<T>::grad_tol)
      << "dv";
}

bool have_gpu() { return device_count() > 0; }

TEST(FlashAttentionKernel, F32) {
  GRAFT_REQUIRE_GPUS(1);
  for (const AttnCase& c : kCases) check_case<float>(c, false);
}
TEST(FlashAttentionKernel, F64) {
  GRAFT_REQUIRE_GPUS(1);
  for (const AttnCase& c : kCases) check_case<double>(c, false);
}
TEST(FlashAttentionKernel, F16) {
  GRAFT_REQUIRE_GPUS(1);
  for (const AttnCase& c : kCases) check_case<f16>(c, false);
}
TEST(FlashAttentionKernel, BF16) {
  GRAFT_REQUIRE_GPUS(1);
  for (const AttnCase& c : kCases) check_case<bf16>(c, false);
}

// cuDNN takes head_dim multiples of 8: the cases above but the odd one.
TEST(CudnnSdpa, F16) {
  GRAFT_REQUIRE_GPUS(1);
  for (const AttnCase& c : kCases) {
    if (c.D % 8 == 0) check_case<f16>(c, true);
  }
}
TEST(CudnnSdpa, BF16) {
  GRAFT_REQUIRE_GPUS(1);
  for (const AttnCase& c : kCases) {
    if (c.D % 8 == 0) check_case<bf16>(c, true);
  }
}

TEST(FlashAttentionKernel, NoQueriesGiveZeroKeyGradients) {
  GRAFT_REQUIRE_GPUS(1);
  const AttnCase c{2, 0, 2, 5, 1, 8};
  std::mt19937 rng(3);
  Tensor<float> k(c.kv_size(), rng, 1.0), dk(c.kv_size(), rng, 1.0), dv(c.kv_size(), rng, 1.0);
  FlashGradPointers p{nullptr, k.dev.get(), k.dev.get(),  nullptr,      nullptr, nullptr,
                      nullptr, nullptr,     dk.dev.get(), dv.dev.get(), nullptr};
  flash_backward(0, nullptr, Elem::kF32, {c.B, c.T, c.H, c.S, c.KV, c.D, 0.5}, p);
  ok(cudaDeviceSynchronize(), "backward");
  for (double x : download<float>(dk.dev, c.kv_size())) EXPECT_EQ(x, 0.0);
  for (double x : download<float>(dv.dev, c.kv_size())) EXPECT_EQ(x, 0.0);
}

// Without a GPU, asking for a plan is a graft::Error "[cuda] ...", not a crash.
TEST(CudnnSdpa, NoDeviceIsAnError) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: " << status();
  const SdpaShape s{1, 4, 2, 4, 2, 64, SdpaType::kF16};
  try {
    sdpa_plan(0, nullptr, s, false);
    ADD_FAILURE() << "no error without a device";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[cuda] ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace graft::cuda::attention

#endif  // GRAFT_CUDA
