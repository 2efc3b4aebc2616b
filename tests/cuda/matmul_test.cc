// cuBLASLt matmul (core/backend/cuda/runtime/blaslt_matmul.h) against a double-precision CPU
// loop on the same (already rounded) inputs: transposes, batches and batch strides, padded
// leading dims, f32 / bf16 / f16 / f64, TF32, epilogues, alpha / beta. GPU tests skip without
// a device; the description checks run everywhere in a --config=cuda build.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/backend/cuda/device.h"
#include "tests/cuda/gpu_skip.h"

#ifdef GRAFT_CUDA
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/blaslt_matmul.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/error.h"
#include "core/dtype/half.h"
#endif

namespace graft::cuda {
namespace {

#ifndef GRAFT_CUDA
TEST(CudaMatmul, Skipped) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }
#else

// Host values stored in a cudaDataType (f32, f64, bf16, f16), read back as double.
struct HostMatrix {
  cudaDataType_t type;
  std::vector<char> bytes;
  size_t size() const { return bytes.size() / cuda_type_size(type); }
  double get(size_t i) const {
    switch (type) {
      case CUDA_R_32F:
        return reinterpret_cast<const float*>(bytes.data())[i];
      case CUDA_R_64F:
        return reinterpret_cast<const double*>(bytes.data())[i];
      case CUDA_R_16BF:
        return static_cast<float>(reinterpret_cast<const bf16*>(bytes.data())[i]);
      default:
        return static_cast<float>(reinterpret_cast<const f16*>(bytes.data())[i]);
    }
  }
  void set(size_t i, double v) {
    switch (type) {
      case CUDA_R_32F:
        reinterpret_cast<float*>(bytes.data())[i] = static_cast<float>(v);
        break;
      case CUDA_R_64F:
        reinterpret_cast<double*>(bytes.data())[i] = v;
        break;
      case CUDA_R_16BF:
        reinterpret_cast<bf16*>(bytes.data())[i] = bf16(static_cast<float>(v));
        break;
      default:
        reinterpret_cast<f16*>(bytes.data())[i] = f16(static_cast<float>(v));
    }
  }
};

HostMatrix random_matrix(cudaDataType_t type, size_t n, std::mt19937& rng) {
  HostMatrix m{type, std::vector<char>(n * cuda_type_size(type))};
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (size_t i = 0; i < n; ++i) m.set(i, dist(rng));
  return m;
}

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// Elements a buffer must hold for the description's batches, rows and leading dims.
size_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld) {
  return static_cast<size_t>((batch - 1) * stride + (rows - 1) * ld + ld);
}

// Resolved leading dims / strides (the test writes them all out).
struct Case {
  MatmulDesc d;
  double tolerance;
};

// Runs the case on the device and compares with the double loop; c starts as random values
// (beta reads them).
void run_case(const Case& tc, uint32_t seed = 1) {
  const MatmulDesc& d = tc.d;
  std::mt19937 rng(seed);
  const int64_t rows_a = d.trans_a ? d.k : d.m, rows_b = d.trans_b ? d.n : d.k;
  HostMatrix a = random_matrix(d.a_type, extent(d.batch, d.stride_a, rows_a, d.lda), rng);
  HostMatrix b = random_matrix(d.b_type, extent(d.batch, d.stride_b, rows_b, d.ldb), rng);
  HostMatrix c = random_matrix(d.c_type, extent(d.batch, d.stride_c, d.m, d.ldc), rng);
  const bool bias_on = d.epilogue == Epilogue::kBias || d.epilogue == Epilogue::kBiasRelu ||
                       d.epilogue == Epilogue::kBiasGelu;
  HostMatrix bias = random_matrix(d.bias_type.value_or(d.c_type), d.n, rng);

  auto da = allocate_buffer(0, a.bytes.size()), db = allocate_buffer(0, b.bytes.size());
  auto dc = allocate_buffer(0, c.bytes.size()), dbias = allocate_buffer(0, bias.bytes.size());
  cudaStream_t s = compute_stream(0);
  copy_to_device(0, da->data(), a.bytes.data(), a.bytes.size(), s);
  copy_to_device(0, db->data(), b.bytes.data(), b.bytes.size(), s);
  copy_to_device(0, dc->data(), c.bytes.data(), c.bytes.size(), s);
  copy_to_device(0, dbias->data(), bias.bytes.data(), bias.bytes.size(), s);
  matmul(d, da->data(), db->data(), dc->data(), bias_on ? dbias->data() : nullptr, 0, s);
  HostMatrix got{d.c_type, std::vector<char>(c.bytes.size())};
  copy_to_host_sync(0, got.bytes.data(), dc->data(), got.bytes.size(), s);

  double max_err = 0, max_ref = 0;
  for (int64_t bi = 0; bi < d.batch; ++bi) {
    for (int64_t i = 0; i < d.m; ++i) {
      for (int64_t j = 0; j < d.n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < d.k; ++p) {
          const size_t ai = bi * d.stride_a + (d.trans_a ? p * d.lda + i : i * d.lda + p);
          const size_t bj = bi * d.stride_b + (d.trans_b ? j * d.ldb + p : p * d.ldb + j);
          acc += a.get(ai) * b.get(bj);
        }
        const size_t ci = bi * d.stride_c + i * d.ldc + j;
        double ref = d.alpha * acc + d.beta * c.get(ci);
        if (bias_on) ref += bias.get(j);
        if (d.epilogue == Epilogue::kRelu || d.epilogue == Epilogue::kBiasRelu) {
          ref = std::max(ref, 0.0);
        }
        if (d.epilogue == Epilogue::kGelu || d.epilogue == Epilogue::kBiasGelu) {
          ref = gelu_tanh(ref);
        }
        max_err = std::max(max_err, std::abs(got.get(ci) - ref));
        max_ref = std::max(max_ref, std::abs(ref));
      }
    }
  }
  // Normalized by the largest reference value: rounding of the output and of the f32
  // accumulation scale with it.
  EXPECT_LE(max_err / std::max(max_ref, 1e-30), tc.tolerance) << describe(d);
}

// A dense description with every leading dim and stride written out.
MatmulDesc dense(int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                 cudaDataType_t in, cudaDataType_t out) {
  MatmulDesc d;
  d.batch = batch;
  d.m = m;
  d.n = n;
  d.k = k;
  d.trans_a = ta;
  d.trans_b = tb;
  d.lda = ta ? m : k;
  d.ldb = tb ? k : n;
  d.ldc = n;
  d.stride_a = m * k;
  d.stride_b = k * n;
  d.stride_c = m * n;
  d.a_type = d.b_type = in;
  d.c_type = out;
  return d;
}

double tolerance(cudaDataType_t out) {
  switch (out) {
    case CUDA_R_64F:
      return 1e-12;
    case CUDA_R_32F:
      return 1e-5;
    case CUDA_R_16F:
      return 2e-3;
    default:
      return 1e-2;  // bf16 output
  }
}

TEST(CudaMatmul, DescriptionChecksNeedNoGpu) {
  MatmulDesc d = dense(1, 4, 5, 0, false, false, CUDA_R_32F, CUDA_R_32F);
  try {
    matmul(d, nullptr, nullptr, nullptr, nullptr, 0, nullptr);
    ADD_FAILURE() << "k = 0 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[cuda] matmul", 0), 0u) << e.what();
  }
  d = dense(1, 4, 5, 3, false, false, CUDA_R_32F, CUDA_R_32F);
  d.lda = 2;  // rows of a have 3 elements
  EXPECT_THROW(matmul(d, nullptr, nullptr, nullptr, nullptr, 0, nullptr), Error);
  d = dense(1, 4, 5, 3, false, false, CUDA_R_8F_E4M3, CUDA_R_16BF);
  EXPECT_THROW(matmul(d, nullptr, nullptr, nullptr, nullptr, 0, nullptr), Error);  // not TN
  d = dense(2, 4, 5, 3, true, false, CUDA_R_16BF, CUDA_R_32F);
  d.epilogue = Epilogue::kBiasGelu;
  EXPECT_EQ(describe(d), "batch 2, [3, 4]^T @ [3, 5], bf16 x bf16 -> f32, bias(f32), gelu");
  EXPECT_EQ(cuda_data_type(DType::kBF16), CUDA_R_16BF);
  EXPECT_THROW(cuda_data_type(DType::kI32), Error);
}

TEST(CudaMatmul, TransposesF32) {
  GRAFT_REQUIRE_GPUS(1);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      run_case({dense(1, 37, 29, 53, ta, tb, CUDA_R_32F, CUDA_R_32F), 1e-5});
    }
  }
}

TEST(CudaMatmul, Batches) {
  GRAFT_REQUIRE_GPUS(1);
  run_case({dense(3, 16, 24, 40, false, true, CUDA_R_32F, CUDA_R_32F), 1e-5});
  MatmulDesc d = dense(4, 8, 12, 20, true, false, CUDA_R_32F, CUDA_R_32F);
  d.stride_b = 0;  // one b for every batch
  run_case({d, 1e-5});
}

TEST(CudaMatmul, PaddedLeadingDims) {
  GRAFT_REQUIRE_GPUS(1);
  MatmulDesc d = dense(2, 10, 14, 18, false, false, CUDA_R_32F, CUDA_R_32F);
  d.lda = 24;
  d.ldb = 16;
  d.ldc = 20;
  d.stride_a = 10 * 24 + 8;
  d.stride_b = 18 * 16;
  d.stride_c = 10 * 20 + 4;
  run_case({d, 1e-5});
  d.trans_a = true;  // a stored [18, 10] with lda 24
  d.stride_a = 18 * 24;
  run_case({d, 1e-5});
}

TEST(CudaMatmul, HalfTypes) {
  GRAFT_REQUIRE_GPUS(1);
  for (auto [in, out] : {std::pair{CUDA_R_16BF, CUDA_R_16BF}, std::pair{CUDA_R_16BF, CUDA_R_32F},
                         std::pair{CUDA_R_16F, CUDA_R_16F}, std::pair{CUDA_R_16F, CUDA_R_32F}}) {
    for (bool tb : {false, true}) {
      run_case({dense(2, 64, 48, 96, false, tb, in, out), tolerance(out)});
      run_case({dense(1, 33, 17, 65, true, tb, in, out), tolerance(out)});
    }
  }
}

TEST(CudaMatmul, F64AndTf32) {
  GRAFT_REQUIRE_GPUS(1);
  run_case({dense(2, 21, 13, 34, true, true, CUDA_R_64F, CUDA_R_64F), 1e-12});
  MatmulDesc d = dense(1, 128, 64, 256, false, false, CUDA_R_32F, CUDA_R_32F);
  d.allow_tf32 = true;
  run_case({d, 5e-3});  // TF32 keeps 10 mantissa bits
}

TEST(CudaMatmul, Epilogues) {
  GRAFT_REQUIRE_GPUS(1);
  for (Epilogue e : {Epilogue::kBias, Epilogue::kRelu, Epilogue::kGelu, Epilogue::kBiasRelu,
                     Epilogue::kBiasGelu}) {
    // cuBLASLt's GELU is the tanh form, maybe with a fast tanh: a looser bound for f32.
    const bool gelu = e == Epilogue::kGelu || e == Epilogue::kBiasGelu;
    MatmulDesc d = dense(1, 32, 64, 48, false, true, CUDA_R_32F, CUDA_R_32F);
    d.epilogue = e;
    run_case({d, gelu ? 2e-3 : 1e-5});
    d = dense(1, 32, 64, 48, false, true, CUDA_R_16BF, CUDA_R_16BF);
    d.epilogue = e;
    run_case({d, 1e-2});
  }
}

TEST(CudaMatmul, AlphaBeta) {
  GRAFT_REQUIRE_GPUS(1);
  MatmulDesc d = dense(2, 24, 40, 16, true, false, CUDA_R_32F, CUDA_R_32F);
  d.alpha = 0.5;
  d.beta = -2.0;
  run_case({d, 1e-5});
  d = dense(1, 24, 40, 16, false, false, CUDA_R_16BF, CUDA_R_32F);
  d.alpha = 2.0;
  d.beta = 1.0;
  d.epilogue = Epilogue::kBias;
  run_case({d, 1e-5});
}

TEST(CudaMatmul, MissingBiasIsAnError) {
  GRAFT_REQUIRE_GPUS(1);
  MatmulDesc d = dense(1, 8, 8, 8, false, false, CUDA_R_32F, CUDA_R_32F);
  d.epilogue = Epilogue::kBiasRelu;
  auto buf = allocate_buffer(0, 1024);
  EXPECT_THROW(matmul(d, buf->data(), buf->data(), buf->data(), nullptr, 0, compute_stream(0)),
               Error);
}

TEST(CudaMatmul, RepeatedCallsReuseTheCachedAlgorithm) {
  GRAFT_REQUIRE_GPUS(1);
  for (int i = 0; i < 3; ++i) {
    run_case({dense(1, 64, 64, 64, false, false, CUDA_R_16BF, CUDA_R_16BF), 1e-2}, 10 + i);
  }
}
#endif  // GRAFT_CUDA

}  // namespace
}  // namespace graft::cuda
