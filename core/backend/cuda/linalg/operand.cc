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
              static_cast<int>(DType::kF64) == 8 && static_cast<int>(DType::kC64) == 9 &&
              static_cast<int>(DType::kC128) == 10 && static_cast<int>(DType::kI8) == 11 &&
              static_cast<int>(DType::kI16) == 12 && static_cast<int>(DType::kU16) == 13 &&
              static_cast<int>(DType::kU64) == 14 && static_cast<int>(DType::kF8E4M3FN) == 15 &&
              static_cast<int>(DType::kF8E5M2) == 16);

void gather_or_fail(const void* src, DType src_type, void* dst, DType dst_type, int rank,
                    const int64_t* shape, const int64_t* strides, cudaStream_t stream) {
  if (!gather_convert(src, static_cast<int>(src_type), dst, static_cast<int>(dst_type), rank,
                      shape, strides, stream)) {
    graft::fail("dot_general", "has no CUDA kernel to gather or convert ", dtype_name(src_type),
                " to ", dtype_name(dst_type));
  }
}

}  // namespace

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
  gather_or_fail(s.data, s.dtype, dst, dtype, static_cast<int>(shape.size()), shape.data(),
                 strides.data(), stream);
}

void convert(const void* src, DType src_type, void* dst, DType dst_type, int64_t n,
             cudaStream_t stream) {
  const int64_t shape[1] = {n}, strides[1] = {1};
  gather_or_fail(src, src_type, dst, dst_type, 1, shape, strides, stream);
}

}  // namespace graft::cuda::linalg
