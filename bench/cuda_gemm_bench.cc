// GEMM on the GPU: graft's matmul() (core/backend/cuda/runtime/blaslt_matmul.h) against
// cuBLASLt called directly with the same settings in the same run, and against the best of
// the heuristic's top few algorithms, each timed with CUDA events. Shapes: bf16 8192^3 (f32
// accumulation, bf16 output), f32 4096^3 (true f32) and f32 4096^3 with TF32.
//
//   bazel run -c opt --config=cuda //bench:cuda_gemm_bench
//
// Prints "no GPU: <reason>" and exits 0 without a device; a build without CUDA prints
// "built without CUDA".
#include <cstdio>

#ifndef GRAFT_CUDA
int main() {
  std::printf("built without CUDA (build with --config=cuda)\n");
  return 0;
}
#else
#include <algorithm>
#include <exception>
#include <random>
#include <vector>

#include <cublasLt.h>

#include "core/backend/cuda/device.h"
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/blaslt_matmul.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/dtype/half.h"

namespace {

using namespace graft::cuda;

constexpr int kIters = 20, kRepeats = 3, kTopAlgos = 8;

// Mean ms per call of `f` (kIters calls between two events), best of kRepeats; one warm-up.
template <typename F>
double time_ms(cudaStream_t s, F&& f) {
  f();
  Event start(0, true), stop(0, true);
  double best = 1e30;
  for (int r = 0; r < kRepeats; ++r) {
    start.record(s);
    for (int i = 0; i < kIters; ++i) f();
    stop.record(s);
    stop.synchronize();
    best = std::min(best, static_cast<double>(stop.elapsed_ms(start)) / kIters);
  }
  return best;
}

// A device matrix of n random values in [-1, 1] of `type` (f32 or bf16).
std::shared_ptr<graft::Buffer> random_device(cudaDataType_t type, size_t n, cudaStream_t s) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const size_t es = cuda_type_size(type);
  std::vector<char> host(n * es);
  for (size_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    if (type == CUDA_R_16BF) {
      reinterpret_cast<graft::bf16*>(host.data())[i] = graft::bf16(v);
    } else {
      reinterpret_cast<float*>(host.data())[i] = v;
    }
  }
  auto buf = allocate_buffer(0, host.size(), "bench operand");
  copy_to_device_sync(0, buf->data(), host.data(), host.size(), s);
  return buf;
}

// The same row-major GEMM c [m, n] = a [m, k] @ b [k, n] as graft's path, set up by hand:
// column-major c^T = b^T a^T, no transposes, one heuristic query for the top algorithms.
struct Direct {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;

  Direct(int64_t m, int64_t n, int64_t k, cudaDataType_t in, cudaDataType_t out, bool tf32) {
    check(cublasLtCreate(&handle), "cublasLtCreate");
    check(cublasLtMatmulDescCreate(&op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                   CUDA_R_32F),
          "cublasLtMatmulDescCreate");
    check(cublasLtMatrixLayoutCreate(&la, in, n, k, n), "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&lb, in, k, m, k), "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&lc, out, n, m, n), "cublasLtMatrixLayoutCreate");
    check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const uint64_t ws = kMatmulWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                               sizeof(ws)),
          "cublasLtMatmulPreferenceSetAttribute");
    algos.resize(kTopAlgos);
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(handle, op, la, lb, lc, lc, pref, kTopAlgos, algos.data(),
                                         &found),
          "cublasLtMatmulAlgoGetHeuristic");
    algos.resize(found);
  }
  ~Direct() {
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(handle);
  }
  void run(int algo, const void* a, const void* b, void* c, void* ws, cudaStream_t s) const {
    const float alpha = 1.0f, beta = 0.0f;
    check(cublasLtMatmul(handle, op, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &algos[algo].algo,
                         ws, kMatmulWorkspaceBytes, s),
          "cublasLtMatmul");
  }
};

void bench(const char* name, int64_t size, cudaDataType_t in, cudaDataType_t out, bool tf32) {
  const int64_t m = size, n = size, k = size;
  cudaStream_t s = compute_stream(0);
  auto a = random_device(in, m * k, s), b = random_device(in, k * n, s);
  auto c = allocate_buffer(0, m * n * cuda_type_size(out), "bench output");
  const double flop = 2.0 * m * n * k;
  auto tflops = [&](double ms) { return flop / (ms * 1e-3) / 1e12; };

  MatmulDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.a_type = d.b_type = in;
  d.c_type = out;
  d.allow_tf32 = tf32;
  const double graft_ms =
      time_ms(s, [&] { matmul(d, a->data(), b->data(), c->data(), nullptr, 0, s); });

  Direct direct(m, n, k, in, out, tf32);
  if (direct.algos.empty()) {
    std::printf("%-22s graft %7.1f TFLOP/s; cuBLASLt heuristic found no algorithm\n", name,
                tflops(graft_ms));
    return;
  }
  void* ws = allocate_raw(0, kMatmulWorkspaceBytes);
  const double top1_ms =
      time_ms(s, [&] { direct.run(0, a->data(), b->data(), c->data(), ws, s); });
  double best_ms = top1_ms;
  int best = 0;
  for (int i = 1; i < static_cast<int>(direct.algos.size()); ++i) {
    const double t = time_ms(s, [&] { direct.run(i, a->data(), b->data(), c->data(), ws, s); });
    if (t < best_ms) best_ms = t, best = i;
  }
  free_raw(0, ws, kMatmulWorkspaceBytes);
  std::printf(
      "%-22s graft %7.1f TFLOP/s | cuBLASLt top-1 %7.1f (graft/direct %.3f) | best of %d "
      "(#%d) %7.1f (graft/best %.3f)\n",
      name, tflops(graft_ms), tflops(top1_ms), top1_ms / graft_ms,
      static_cast<int>(direct.algos.size()), best, tflops(best_ms), best_ms / graft_ms);
}

}  // namespace

int main() {
  if (device_count() == 0) {  // a failure only where a GPU is expected (probe.h)
    std::printf("no GPU: %s\n", status().c_str());
    return gpu_expected() ? 1 : 0;
  }
  try {
    std::printf("cuda_gemm_bench on %s (%d iterations, best of %d)\n", status().c_str(), kIters,
                kRepeats);
    bench("bf16 8192^3 -> bf16", 8192, CUDA_R_16BF, CUDA_R_16BF, false);
    bench("f32 4096^3", 4096, CUDA_R_32F, CUDA_R_32F, false);
    bench("f32 4096^3 tf32", 4096, CUDA_R_32F, CUDA_R_32F, true);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
#endif  // GRAFT_CUDA
