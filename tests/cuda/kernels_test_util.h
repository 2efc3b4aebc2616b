// Shared pieces of the CUDA kernel tests (elementwise, reduce, random): device buffers, the
// GPU gate (gpu_skip.h), test inputs with the edge cases each dtype has, graft Arrays over
// host bytes (the CPU reference runs graft's own CPU kernels on them), and the comparison with
// a normalized error per dtype. Only compiled with --config=cuda (GRAFT_CUDA).
#pragma once

#ifdef GRAFT_CUDA

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/dtype/dtype.h"
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"

namespace graft::cuda::testing {

// Device memory for one test value; freed on destruction.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    check(cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes), "cudaMalloc (test buffer)");
  }
  explicit DeviceBuffer(const std::vector<uint8_t>& host) : DeviceBuffer(host.size()) {
    upload(host);
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void upload(const std::vector<uint8_t>& host) {
    check(cudaMemcpy(ptr_, host.data(), host.size(), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  std::vector<uint8_t> download() const {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (kernel under test)");
    std::vector<uint8_t> host(bytes_);
    check(cudaMemcpy(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    return host;
  }
  void* get() const { return ptr_; }
  template <typename T>
  T* as(int64_t offset_elems = 0) const {
    return static_cast<T*>(ptr_) + offset_elems;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_;
};

inline size_t byte_size(DType d, int64_t n) { return static_cast<size_t>(n * dtype_size(d)); }

// Element i of a dense host array of dtype d, as a double (f16 / bf16 exactly).
inline double value_at(DType d, const void* p, int64_t i) {
  return dispatch_dtype(d, [&]<typename T>() -> double {
    T v;
    std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
      return static_cast<double>(static_cast<float>(v));
    } else {
      return static_cast<double>(v);
    }
  });
}

inline bool same_bytes(DType d, const void* a, const void* b, int64_t i) {
  const int64_t w = dtype_size(d);
  return std::memcmp(static_cast<const char*>(a) + i * w, static_cast<const char*>(b) + i * w, w) ==
         0;
}

// Allowed difference: |got - want| <= atol + rtol * |want| (scale adds a per-element term,
// e.g. a sum's sum of magnitudes). Exact: the same bits (for floats, a NaN matches any NaN:
// CPUs and GPUs make NaNs with different signs and payloads).
struct Tol {
  double rtol = 0, atol = 0;
  bool exact() const { return rtol == 0 && atol == 0; }
};

// Compares n elements; `scale` (optional, n values) widens the tolerance per element by
// rtol * scale[i].
inline ::testing::AssertionResult agree(DType d, const void* got, const void* want, int64_t n,
                                        Tol tol, const std::vector<double>* scale = nullptr) {
  double worst = 0;
  auto mismatch = [&](int64_t i) {
    return ::testing::AssertionFailure()
           << dtype_name(d) << " element " << i << " of " << n << ": got " << value_at(d, got, i)
           << ", want " << value_at(d, want, i) << " (rtol " << tol.rtol << ", atol " << tol.atol
           << ")";
  };
  for (int64_t i = 0; i < n; ++i) {
    if (same_bytes(d, got, want, i)) continue;
    if (!is_floating(d)) return mismatch(i);
    const double g = value_at(d, got, i), w = value_at(d, want, i);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (tol.exact()) return mismatch(i);
    if (g == w) continue;
    if (!std::isfinite(g) || !std::isfinite(w)) return mismatch(i);
    const double allowed =
        tol.atol + tol.rtol * (std::fabs(w) + (scale != nullptr ? (*scale)[i] : 0.0));
    const double err = std::fabs(g - w) / allowed;
    worst = std::max(worst, err);
    if (!(err <= 1.0)) return mismatch(i);
  }
  return ::testing::AssertionSuccess() << "max normalized error " << worst;
}

template <typename T>
void put(std::vector<uint8_t>& bytes, int64_t i, T v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

// Where random test values come from: floats uniform in [lo, hi]; integers in [ilo, ihi]
// when ilo < ihi, else half small values and half random bits.
struct Domain {
  double lo = -10, hi = 10;
  int64_t ilo = 0, ihi = 0;
};

// n values of dtype d: first (if `edges`) each dtype's edge cases (zeros of both signs,
// infinities, NaN, subnormals, extremes, halves for round-to-even; MIN, MAX, 0, +-1 and shift
// widths for integers), then random values from `dom`.
inline std::vector<uint8_t> make_values(DType d, int64_t n, const Domain& dom, uint64_t seed,
                                        bool edges = true) {
  std::vector<uint8_t> bytes(byte_size(d, n));
  std::mt19937_64 rng(seed);
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> float_edges = {0.0,    -0.0,  1.0,      -1.0,     0.5,    -0.5, 2.5,
                                           -2.5,   3.5,   inf,      -inf,     NAN,    -NAN, 1e-40,
                                           -1e-40, 1e-7,  65504,    70000,    -70000, 3e38, -3e38,
                                           1e-310, 1e300, 0.999999, -0.999999};
  dispatch_dtype(d, [&]<typename T>() {
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        put<bool>(bytes, i, (rng() & 1) != 0);
      } else if constexpr (std::is_integral_v<T>) {
        const int64_t int_edges[] = {0,
                                     1,
                                     -1,
                                     2,
                                     7,
                                     -7,
                                     31,
                                     32,
                                     33,
                                     63,
                                     64,
                                     static_cast<int64_t>(std::numeric_limits<T>::min()),
                                     static_cast<int64_t>(std::numeric_limits<T>::max())};
        int64_t v;
        if (edges && i < static_cast<int64_t>(std::size(int_edges))) {
          v = int_edges[i];
        } else if (dom.ilo < dom.ihi) {
          v = dom.ilo + static_cast<int64_t>(rng() % static_cast<uint64_t>(dom.ihi - dom.ilo + 1));
        } else {
          v = (rng() & 1) ? static_cast<int64_t>(rng() % 81) - 40 : static_cast<int64_t>(rng());
        }
        put<T>(bytes, i, static_cast<T>(v));
      } else {
        double v = edges && i < static_cast<int64_t>(float_edges.size())
                       ? float_edges[i]
                       : dom.lo + (dom.hi - dom.lo) * std::uniform_real_distribution<double>()(rng);
        if constexpr (std::is_same_v<T, double>) {
          put<T>(bytes, i, v);
        } else {
          put<T>(bytes, i, T(static_cast<float>(v)));
        }
      }
    }
  });
  return bytes;
}

// A graft Array (on the CPU) holding a copy of `bytes`.
inline Array host_array(const std::vector<uint8_t>& bytes, const Shape& shape, DType d) {
  auto buf = Buffer::make(bytes.size());
  if (!bytes.empty()) std::memcpy(buf->data(), bytes.data(), bytes.size());
  return Array::from_buffer(std::move(buf), shape, d);
}

// An evaluated Array's bytes.
inline std::vector<uint8_t> bytes_of(const Array& a) {
  const auto buf = a.buffer();
  const auto* p = static_cast<const uint8_t*>(buf->data());
  return std::vector<uint8_t>(p, p + byte_size(a.dtype(), a.size()));
}

}  // namespace graft::cuda::testing

#endif  // GRAFT_CUDA
