// The public collectives: read each axis's size from the axis environment, insert pvary for
// an operand that does not vary over the axes yet (JAX does the same), and bind.
#include <memory>

#include "core/sharding/axis.h"
#include "core/error.h"
#include "core/lax/lax.h"
#include "core/primitives/collective.h"

namespace graft {

namespace {

std::vector<int64_t> sizes_of(const char* op, const AxisNames& axes) {
  if (axes.empty()) fail(op, "needs at least one axis name");
  std::vector<int64_t> s;
  for (const std::string& a : axes) s.push_back(bound_axis_size(op, a));
  return s;
}

// x typed as varying over every axis of `axes` (pvary over those it does not vary over yet).
Array varying(const Array& x, const AxisNames& axes) {
  AxisNames missing;
  for (const std::string& a : axes) {
    if (!(x.aval().vma >> axis_bit(a) & 1)) missing.push_back(a);
  }
  return missing.empty() ? x : pvary(x, missing);
}

int norm_dim(const char* op, const char* what, int64_t d, int64_t rank) {
  int64_t r = d < 0 ? d + rank : d;
  if (r < 0 || r >= rank) fail(op, what, " ", d, " is out of range for rank ", rank);
  return static_cast<int>(r);
}

Array all_reduce(PrimitiveId id, const char* op, const Array& x, const AxisNames& axes) {
  std::vector<int64_t> sizes = sizes_of(op, axes);
  return apply<AllReduce>({varying(x, axes)}, id, axes, sizes);
}

}  // namespace

Array pvary(const Array& x, const AxisNames& axes) {
  return apply<Pvary>({x}, axes, sizes_of("pvary", axes));
}

Array psum(const Array& x, const AxisNames& axes) {
  return all_reduce(PrimitiveId::kPsum, "psum", x, axes);
}

Array pmean(const Array& x, const AxisNames& axes) {
  int64_t n = 1;
  for (int64_t s : sizes_of("pmean", axes)) n *= s;
  Array s = psum(x, axes);
  return s / scalar(static_cast<double>(n), is_floating(s.dtype()) ? s.dtype() : DType::kF32);
}

Array pmax(const Array& x, const AxisNames& axes) {
  return all_reduce(PrimitiveId::kPmax, "pmax", x, axes);
}

Array pmin(const Array& x, const AxisNames& axes) {
  return all_reduce(PrimitiveId::kPmin, "pmin", x, axes);
}

Array all_gather(const Array& x, const std::string& axis, int64_t gather_axis, bool tiled) {
  int64_t n = bound_axis_size("all_gather", axis);
  int rank = static_cast<int>(x.ndim()) + (tiled ? 0 : 1);
  int d = norm_dim("all_gather", "axis", gather_axis, rank);
  return apply<AllGather>({varying(x, {axis})}, axis, n, d, tiled);
}

Array psum_scatter(const Array& x, const std::string& axis, int64_t scatter_dimension, bool tiled) {
  int64_t n = bound_axis_size("psum_scatter", axis);
  int d = norm_dim("psum_scatter", "scatter_dimension", scatter_dimension, x.ndim());
  return apply<PsumScatter>({varying(x, {axis})}, axis, n, d, tiled);
}

Array all_to_all(const Array& x, const std::string& axis, int64_t split_axis, int64_t concat_axis,
                 bool tiled) {
  int64_t n = bound_axis_size("all_to_all", axis);
  int s = norm_dim("all_to_all", "split_axis", split_axis, x.ndim());
  int c = norm_dim("all_to_all", "concat_axis", concat_axis, x.ndim());
  return apply<AllToAll>({varying(x, {axis})}, axis, n, s, c, tiled);
}

Array ppermute(const Array& x, const std::string& axis,
               const std::vector<std::pair<int, int>>& perm) {
  int64_t n = bound_axis_size("ppermute", axis);
  return apply<Ppermute>({varying(x, {axis})}, axis, n, perm);
}

Array axis_index(const std::string& axis) {
  return apply<AxisIndex>({}, axis, bound_axis_size("axis_index", axis));
}

int64_t axis_size(const std::string& axis) { return bound_axis_size("axis_size", axis); }

}  // namespace graft
