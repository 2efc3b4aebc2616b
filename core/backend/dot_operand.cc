#include "core/backend/dot_operand.h"

#include <algorithm>

namespace graft {
namespace {

constexpr int64_t kAnyStride = -1;  // a group of size 1: its stride does not matter

// The single stride of a group laid out like one dim, kAnyStride for size 1, or nullopt.
std::optional<int64_t> group_stride(const DotOperand& s, int g) {
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

DotOperand make_dot_operand(const void* data, const Aval& aval, const std::vector<int>& batch,
                            const std::vector<int>& contract, bool contract_is_rows) {
  DotOperand s{data, aval.dtype, aval.shape, row_major_strides(aval.shape), {}, {1, 1, 1}};
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

std::optional<Strides3> gemm_view(const DotOperand& s, bool leading_dim_fits) {
  Strides3 st;
  for (int g = 0; g < 3; ++g) {
    auto v = group_stride(s, g);
    if (!v) return std::nullopt;
    st[g] = *v;
  }
  if (st[2] == 1 || st[2] == kAnyStride) {  // row-major: the row stride leads
    st[2] = 1;
    if (st[1] == kAnyStride) st[1] = s.size[2];
    if (leading_dim_fits && st[1] < s.size[2]) return std::nullopt;
  } else if (st[1] == 1 || st[1] == kAnyStride) {  // transposed: the col stride leads
    st[1] = 1;
    if (leading_dim_fits && st[2] < s.size[1]) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (st[0] == kAnyStride) st[0] = std::max(st[1] * s.size[1], st[2] * s.size[2]);
  return st;
}

}  // namespace graft
