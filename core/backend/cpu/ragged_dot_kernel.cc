// CPU kernel of ragged_dot (both modes; see RaggedDot in core/primitives/linalg.h).
//
// The group sizes are read here, at run time, and clamped (negative -> 0, the groups cut at
// row m), so bad sizes never read or write out of bounds. Each group is one GEMM on the
// libraries dot_general uses: oneDNN for f32 and bf16 (with the group's row count as a
// run-time dimension, see rt_matmul), Eigen as the fallback and for f64; f16 computes in
// f32. Groups run one after another; each GEMM is parallel inside.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/onednn_exec.h"
#include "core/backend/cpu/onednn_matmul.h"
#include "core/backend/cpu/parallel.h"
#include "core/error.h"
#include "core/primitives/linalg.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace graft::cpu {
namespace {

struct Group {
  int64_t start, rows;
};

std::vector<Group> clamped_groups(const int32_t* sizes, int64_t g, int64_t m) {
  std::vector<Group> out(g);
  int64_t s = 0;
  for (int64_t i = 0; i < g; ++i) {
    const int64_t e = std::min(s + std::max<int64_t>(sizes[i], 0), m);
    out[i] = {s, e - s};
    s = e;
  }
  return out;
}

// oneDNN matmul whose ragged dim (M in rows mode, K in contract mode) is a run-time
// dimension: one created primitive per (mode, k, n, dtypes) serves every group size, so the
// sizes changing every step never create primitives (tens of microseconds to milliseconds
// each). Rows: c [rows, n] = a [rows, k] @ b [k, n]. Contract: c [k, n] = a [rows, k]^T @
// b [rows, n]. All buffers dense row-major. False when oneDNN has no implementation.
struct RtKey {
  bool contract;
  int64_t k, n;
  DType in, out;
  bool operator==(const RtKey&) const = default;
};

struct RtKeyHash {
  size_t operator()(const RtKey& key) const {
    size_t h = std::hash<int64_t>()(key.k) * 31 + std::hash<int64_t>()(key.n);
    return h * 31 + static_cast<size_t>(key.in) * 8 + static_cast<size_t>(key.out) * 2 +
           (key.contract ? 1 : 0);
  }
};

dnnl::memory::data_type dnnl_type(DType t) {
  return t == DType::kBF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

using dims = dnnl::memory::dims;

// Memory descriptors for `rows` ragged rows (DNNL_RUNTIME_DIM_VAL when creating).
std::array<dnnl::memory::desc, 3> rt_descs(const RtKey& key, int64_t rows) {
  const auto in = dnnl_type(key.in), out = dnnl_type(key.out);
  const int64_t k = key.k, n = key.n;
  if (!key.contract) {
    return {dnnl::memory::desc(dims{rows, k}, in, dims{k, 1}),
            dnnl::memory::desc(dims{k, n}, in, dims{n, 1}),
            dnnl::memory::desc(dims{rows, n}, out, dims{n, 1})};
  }
  return {dnnl::memory::desc(dims{k, rows}, in, dims{1, k}),
          dnnl::memory::desc(dims{rows, n}, in, dims{n, 1}),
          dnnl::memory::desc(dims{k, n}, out, dims{n, 1})};
}

// The created primitive for `key` (null: unimplemented). Few keys (one per layer shape),
// so the map is cleared rather than evicted if it ever grows large.
struct RtEntry {
  dnnl::matmul prim;
  size_t scratch_bytes;  // the scratchpad execute_primitive() provides
};

std::shared_ptr<const RtEntry> rt_primitive(const RtKey& key) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<RtKey, std::shared_ptr<const RtEntry>, RtKeyHash>();
  {
    std::lock_guard<std::mutex> l(mu);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  std::shared_ptr<const RtEntry> prim;
  try {
    auto d = rt_descs(key, DNNL_RUNTIME_DIM_VAL);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(d[0], d[1], d[2]),
                                    user_scratchpad_attr(), onednn_engine());
    prim = std::make_shared<const RtEntry>(
        RtEntry{dnnl::matmul(pd), pd.scratchpad_desc().get_size()});
  } catch (const dnnl::error&) {
    prim = nullptr;  // unimplemented for these types on this CPU
  }
  std::lock_guard<std::mutex> l(mu);
  if (cache->size() > 256) cache->clear();
  (*cache)[key] = prim;
  return prim;
}

bool rt_matmul(const RtKey& key, int64_t rows, const void* a, const void* b, void* c) {
  if (!onednn_enabled()) return false;
  std::shared_ptr<const RtEntry> prim = rt_primitive(key);
  if (!prim) return false;
  auto d = rt_descs(key, rows);
  dnnl::memory ma(d[0], onednn_engine(), const_cast<void*>(a));
  dnnl::memory mb(d[1], onednn_engine(), const_cast<void*>(b));
  dnnl::memory mc(d[2], onednn_engine(), c);
  execute_primitive(prim->prim, prim->scratch_bytes,
                    {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  return true;
}

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// c [rows, n] = a [rows, k] @ b [k, n], all dense row-major.
template <typename T>
void rows_gemm(const T* a, const T* b, T* c, int64_t rows, int64_t k, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (rt_matmul({false, k, n, DType::kF32, DType::kF32}, rows, a, b, c)) return;
  }
  parallel_for(rows, std::max<int64_t>(1, 262144 / std::max<int64_t>(1, k * n)),
               [&](int64_t r0, int64_t r1) {
                 Eigen::Map<const Mat<T>> am(a + r0 * k, r1 - r0, k);
                 Eigen::Map<const Mat<T>> bm(b, k, n);
                 Eigen::Map<Mat<T>> cm(c + r0 * n, r1 - r0, n);
                 cm.noalias() = am * bm;
               });
}

// c [k, n] = a[rows, k]^T @ b [rows, n] (a, b dense row-major); rows >= 1.
template <typename T>
void contract_gemm(const T* a, const T* b, T* c, int64_t rows, int64_t k, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (rt_matmul({true, k, n, DType::kF32, DType::kF32}, rows, a, b, c)) return;
  }
  parallel_for(k, std::max<int64_t>(1, 262144 / std::max<int64_t>(1, rows * n)),
               [&](int64_t k0, int64_t k1) {
                 Eigen::Map<const Mat<T>> am(a, rows, k);
                 Eigen::Map<const Mat<T>> bm(b, rows, n);
                 Eigen::Map<Mat<T>> cm(c + k0 * n, k1 - k0, n);
                 cm.noalias() = am.middleCols(k0, k1 - k0).transpose() * bm;
               });
}

// Both modes on dense buffers of the compute type T.
template <typename T>
void run(RaggedMode mode, const std::vector<Group>& groups, const T* lhs, const T* rhs, T* out,
         int64_t m, int64_t k, int64_t n) {
  const int64_t g = static_cast<int64_t>(groups.size());
  if (mode == RaggedMode::kRaggedRows) {
    int64_t end = 0;
    for (int64_t i = 0; i < g; ++i) {
      const Group& gr = groups[i];
      end = gr.start + gr.rows;
      if (gr.rows == 0) continue;
      if (k == 0) {
        std::fill(out + gr.start * n, out + end * n, T(0));
      } else {
        rows_gemm(lhs + gr.start * k, rhs + i * k * n, out + gr.start * n, gr.rows, k, n);
      }
    }
    std::fill(out + end * n, out + m * n, T(0));  // rows past the groups
    return;
  }
  for (int64_t i = 0; i < g; ++i) {
    const Group& gr = groups[i];
    T* o = out + i * k * n;
    if (gr.rows == 0) {
      std::fill(o, o + k * n, T(0));
    } else {
      contract_gemm(lhs + gr.start * k, rhs + gr.start * n, o, gr.rows, k, n);
    }
  }
}

// Dense f32 copy of a half-precision buffer, and back.
template <typename H>
std::vector<float> widen(const void* src, int64_t n) {
  std::vector<float> out(n);
  const H* s = static_cast<const H*>(src);
  parallel_for(n, 32768, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) out[i] = static_cast<float>(s[i]);
  });
  return out;
}

template <typename H>
void narrow(const std::vector<float>& src, void* dst) {
  H* d = static_cast<H*>(dst);
  parallel_for(static_cast<int64_t>(src.size()), 32768, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) d[i] = H(src[i]);
  });
}

// bf16 straight through oneDNN (f32 accumulation, one rounding); false if unavailable.
bool bf16_onednn(RaggedMode mode, const std::vector<Group>& groups, const bf16* lhs,
                 const bf16* rhs, bf16* out, int64_t m, int64_t k, int64_t n) {
  if (k == 0) return false;
  const bool contract = mode == RaggedMode::kRaggedContract;
  const RtKey key{contract, k, n, DType::kBF16, DType::kBF16};
  int64_t end = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const Group& gr = groups[i];
    end = gr.start + gr.rows;
    if (gr.rows == 0) {
      if (contract) std::fill_n(out + i * k * n, k * n, bf16{});
      continue;
    }
    bool ok =
        contract ? rt_matmul(key, gr.rows, lhs + gr.start * k, rhs + gr.start * n, out + i * k * n)
                 : rt_matmul(key, gr.rows, lhs + gr.start * k, rhs + i * k * n, out + gr.start * n);
    if (!ok) return false;
  }
  if (!contract) std::fill_n(out + end * n, (m - end) * n, bf16{});
  return true;
}

void ragged_dot_kernel(Call& call) {
  const auto& p = call.params<RaggedDot>();
  const RaggedMode mode = p.mode();
  const Shape& ls = call.in_aval(0).shape;
  const Shape& rs = call.in_aval(1).shape;
  const int64_t m = ls[0], k = ls[1];
  const int64_t n = mode == RaggedMode::kRaggedRows ? rs[2] : rs[1];
  const int64_t g = call.in_aval(2).shape[0];
  std::vector<Group> groups = clamped_groups(call.in<int32_t>(2), g, m);
  const DType dt = call.in_aval(0).dtype;
  const int64_t out_n = numel(call.out_aval().shape);
  void* out = call.out_raw();
  if (out_n == 0) return;
  switch (dt) {
    case DType::kF32:
      run(mode, groups, call.in<float>(0), call.in<float>(1), static_cast<float*>(out), m, k, n);
      return;
    case DType::kF64:
      run(mode, groups, call.in<double>(0), call.in<double>(1), static_cast<double*>(out), m, k, n);
      return;
    case DType::kBF16:
    case DType::kF16: {
      if (dt == DType::kBF16 && bf16_onednn(mode, groups, call.in<bf16>(0), call.in<bf16>(1),
                                            static_cast<bf16*>(out), m, k, n)) {
        return;
      }
      const bool b = dt == DType::kBF16;
      std::vector<float> l =
          b ? widen<bf16>(call.in_raw(0), numel(ls)) : widen<f16>(call.in_raw(0), numel(ls));
      std::vector<float> r =
          b ? widen<bf16>(call.in_raw(1), numel(rs)) : widen<f16>(call.in_raw(1), numel(rs));
      std::vector<float> o(out_n);
      run(mode, groups, l.data(), r.data(), o.data(), m, k, n);
      if (b) {
        narrow<bf16>(o, out);
      } else {
        narrow<f16>(o, out);
      }
      return;
    }
    default:
      fail("ragged_dot", "no CPU kernel for dtype ", dtype_name(dt));
  }
}

}  // namespace

void register_ragged_dot_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kRaggedDot)] = &ragged_dot_kernel;
}

}  // namespace graft::cpu
