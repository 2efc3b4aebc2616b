#include "core/backend/cuda/linalg/operand.h"

#include <algorithm>

#include "core/backend/cuda/linalg/linalg_device.h"
#include "core/error.h"

namespace graft::cuda::linalg {
namespace {

// linalg_device.cu numbers element types as graft::DType does.
static_assert(static_cast<int>(DType::kBool) == 0 && static_cast<int>(DType::kU8) == 1 &&
              static_cast<int>(DType::kU32) == 2 && static_cast<int>(DType::kI32) == 3 &&
              static_cast<int>(DType::kI64) == 4 && static_cast<int>(DType::kF16) == 5 &&
              static_cast<int>(DType::kBF16) == 6 && static_cast<int>(DType::kF32) == 7 &&
              static_cast<int>(DType::kF64) == 8);

constexpr int64_t kAnyStride = -1;  // a group of size 1: its stride does not matter

// The single stride of a group laid out like one dim, kAnyStride for size 1, or nullopt.
std::optional<int64_t> group_stride(const Side& s, int g) {
  std::vector<int> dims;
  for (int d : s.groups[g]) {
    if (s.shape[d] != 1) dims.push_back(d);
  }
  if (dims.empty()) return kAnyStride;
  for (size_t j = 0; j + 1 < dims.size(); ++j) {
    if (s.strides[dims[j]] != s.strides[dims[j + 1]] * s.shape[dims[j + 1]]) return std::nullopt;
  }
  return s.strides[dims.back()];
}

}  // namespace

Side make_side(const void* data, const Aval& aval, const std::vector<int>& batch,
               const std::vector<int>& contract, bool contract_is_rows) {
  Side s{data, aval.dtype, aval.shape, row_major_strides(aval.shape), {}, {1, 1, 1}};
  std::vector<int> free;
  for (int d = 0; d < static_cast<int>(s.shape.size()); ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contract.begin(), contract.end(), d) == contract.end()) {
      free.push_back(d);
    }
  }
  s.groups = {batch, contract_is_rows ? contract : free, contract_is_rows ? free : contract};
  for (int g = 0; g < 3; ++g) {
    for (int d : s.groups[g]) s.size[g] *= s.shape[d];
  }
  return s;
}

std::optional<Strides3> blas_view(const Side& s) {
  Strides3 st;
  for (int g = 0; g < 3; ++g) {
    auto v = group_stride(s, g);
    if (!v) return std::nullopt;
    st[g] = *v;
  }
  if (st[2] == 1 || st[2] == kAnyStride) {  // row-major: ld = the row stride
    st[2] = 1;
    if (st[1] == kAnyStride) st[1] = s.size[2];
    if (st[1] < s.size[2]) return std::nullopt;
  } else if (st[1] == 1 || st[1] == kAnyStride) {  // column-major: ld = the col stride
    st[1] = 1;
    if (st[2] < s.size[1]) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (st[0] == kAnyStride) st[0] = std::max(st[1] * s.size[1], st[2] * s.size[2]);
  return st;
}

Strides3 dense_strides(const Side& s) { return {s.size[1] * s.size[2], s.size[2], 1}; }

void gather(const Side& s, DType dtype, void* dst, cudaStream_t stream) {
  // The source dims in group order, size-1 dims dropped, neighbours that are contiguous in
  // the source merged: most permutes become rank 2 or 3.
  std::vector<int64_t> shape, strides;
  for (const auto& g : s.groups) {
    for (int d : g) {
      if (s.shape[d] == 1) continue;
      if (!shape.empty() && strides.back() == s.strides[d] * s.shape[d]) {
        shape.back() *= s.shape[d];
        strides.back() = s.strides[d];
      } else {
        shape.push_back(s.shape[d]);
        strides.push_back(s.strides[d]);
      }
    }
  }
  if (shape.empty()) {  // one element
    shape.push_back(1);
    strides.push_back(1);
  }
  if (shape.size() > static_cast<size_t>(kMaxGatherRank)) {
    graft::fail("cuda", "dot_general: an operand of shape ", shape_str(s.shape), " needs a ",
                shape.size(), "-dim permute; the CUDA gather takes at most ", kMaxGatherRank);
  }
  gather_convert(s.data, static_cast<int>(s.dtype), dst, static_cast<int>(dtype),
                 static_cast<int>(shape.size()), shape.data(), strides.data(), stream);
}

void convert(const void* src, DType src_type, void* dst, DType dst_type, int64_t n,
             cudaStream_t stream) {
  const int64_t shape[1] = {n}, strides[1] = {1};
  gather_convert(src, static_cast<int>(src_type), dst, static_cast<int>(dst_type), 1, shape,
                 strides, stream);
}

}  // namespace graft::cuda::linalg
