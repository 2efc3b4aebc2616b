#include "core/lax/triangles.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"

namespace graft {

Array tri(int64_t n, std::optional<int64_t> m_opt, int64_t k, DType dtype) {
  int64_t m = m_opt.value_or(n);
  if (n < 0 || m < 0) fail("tri", "negative size ", n, " x ", m);
  Array i = iota(DType::kI32, {n, m}, 0), j = iota(DType::kI32, {n, m}, 1);
  Array mask = less_equal(j, add(i, scalar(static_cast<double>(k), DType::kI32)));
  return astype(mask, dtype);
}

namespace {
Array tri_mask(const char* op, const Array& m, int64_t k) {
  detail::check_valid(op, m);
  if (m.ndim() < 2) fail(op, "needs an array of rank >= 2, got ", shape_str(m.shape()));
  int64_t n = m.shape()[m.ndim() - 2], c = m.shape()[m.ndim() - 1];
  return broadcast_to(tri(n, c, k, DType::kBool), m.shape());
}
}  // namespace

Array tril(const Array& m, int64_t k) { return where(tri_mask("tril", m, k), m, zeros_like(m)); }

Array triu(const Array& m, int64_t k) {
  return where(tri_mask("triu", m, k - 1), zeros_like(m), m);
}

Array diagonal(const Array& a, int64_t offset, int64_t axis1, int64_t axis2) {
  detail::check_valid("diagonal", a);
  if (a.ndim() < 2) fail("diagonal", "needs an array of rank >= 2, got ", shape_str(a.shape()));
  int64_t ax1 = normalize_axis("diagonal", axis1, a.ndim());
  int64_t ax2 = normalize_axis("diagonal", axis2, a.ndim());
  if (ax1 == ax2) fail("diagonal", "axis1 and axis2 are both ", ax1);
  // Move (axis1, axis2) to the end, flatten that plane; the diagonal is a strided slice.
  std::vector<int> perm;
  for (int i = 0; i < a.ndim(); ++i) {
    if (i != ax1 && i != ax2) perm.push_back(i);
  }
  perm.push_back(static_cast<int>(ax1));
  perm.push_back(static_cast<int>(ax2));
  Array t = transpose(a, perm);
  int64_t n = a.shape()[ax1], m = a.shape()[ax2];
  int64_t len = std::max<int64_t>(
      0, std::min(n + std::min<int64_t>(offset, 0), m - std::max<int64_t>(offset, 0)));
  Shape lead(t.shape().begin(), t.shape().end() - 2);
  Shape flat = lead;
  flat.push_back(n * m);
  Array f = reshape(t, flat);
  int64_t begin = offset >= 0 ? offset : -offset * m;
  Shape start(lead.size(), 0), limit = lead, strides(lead.size(), 1);
  start.push_back(len == 0 ? 0 : begin);
  limit.push_back(len == 0 ? 0 : begin + (len - 1) * (m + 1) + 1);
  strides.push_back(m + 1);
  return slice(f, start, limit, strides);
}

}  // namespace graft
