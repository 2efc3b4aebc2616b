#include "core/backend/cuda/conv/conv_plan.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace graft::cuda::conv {
namespace {

constexpr const char* kOp = "conv_general_dilated";

Shape row_major_strides(const Shape& s) {
  Shape st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

bool in_order(const std::vector<int64_t>& spec) {
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

void Arrange::padded(int64_t size, int64_t src_stride, int64_t low, int64_t dilation,
                     int64_t src_size) {
  if (rank == kMaxRank) fail(kOp, "more than ", kMaxRank, " dims to rearrange");
  shape[rank] = size;
  stride[rank] = src_stride;
  lo[rank] = low;
  dil[rank] = dilation;
  extent[rank] = src_size;
  ++rank;
}

int64_t Arrange::elements() const {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[d];
  return n;
}

ConvPlan plan_conv(const ConvParams& p, const Aval& la, const Aval& ra, const Aval& oa) {
  const size_t n = la.shape.size() - 2;
  if (n > 3) fail(kOp, n, " spatial dims on CUDA (cuDNN convolves 1 to 3; the CPU has the rest)");
  if (p.feature_group_count > 1 && p.batch_group_count > 1) {
    fail(kOp, "feature_group_count and batch_group_count both above 1");
  }
  const DType in = la.dtype, od = oa.dtype;
  const bool half = in == DType::kF16 || in == DType::kBF16;
  const DType ct = half && od != in ? DType::kF32 : in;
  const auto &ld = p.dims.lhs_spec, &rd = p.dims.rhs_spec, &odims = p.dims.out_spec;
  const Shape lst = row_major_strides(la.shape), rst = row_major_strides(ra.shape);
  const Shape &ls = la.shape, &rs = ra.shape, &os = oa.shape;
  const int64_t bg = p.batch_group_count, batch = os[odims[0]], feat = ls[ld[1]];
  const int spatial = static_cast<int>(std::max<size_t>(n, 2));
  const int lead = spatial - static_cast<int>(n);

  ConvPlan plan;
  ConvShape& s = plan.conv;
  s.spatial = spatial;
  s.type = ct;
  s.groups = bg > 1 ? bg : p.feature_group_count;
  s.x[0] = s.y[0] = batch;
  s.x[1] = bg * feat;
  s.w[0] = rs[rd[0]];
  s.w[1] = rs[rd[1]];
  s.y[1] = os[odims[1]];
  for (int i = 0; i < lead; ++i) s.x[2 + i] = s.w[2 + i] = s.y[2 + i] = 1;

  // The input: [batch, bg, feat, (1,)..., padded and dilated spatial dims].
  Arrange& lx = plan.lhs;
  lx.plain(batch, lst[ld[0]]);
  lx.plain(bg, batch * lst[ld[0]]);
  lx.plain(feat, lst[ld[1]]);
  for (int i = 0; i < lead; ++i) lx.plain(1, 0);
  bool lhs_plain = in_order(ld) && bg == 1 && ct == in;
  for (size_t i = 0; i < n; ++i) {
    const int64_t size = ls[ld[2 + i]];
    const auto [lo, hi] = p.padding[i];
    const int64_t padded = std::max<int64_t>(0, dilate_dim(size, p.lhs_dilation[i]) + lo + hi);
    lx.padded(padded, lst[ld[2 + i]], lo, p.lhs_dilation[i], size);
    lhs_plain = lhs_plain && lo == 0 && hi == 0 && p.lhs_dilation[i] == 1;
    s.x[2 + lead + i] = padded;
    s.w[2 + lead + i] = rs[rd[2 + i]];
    s.y[2 + lead + i] = os[odims[2 + i]];
    s.strides[lead + i] = p.window_strides[i];
    s.dilations[lead + i] = p.rhs_dilation[i];
  }
  plan.arrange_lhs = !lhs_plain;

  // The kernel: [out features, in features, (1,)..., window].
  Arrange& rw = plan.rhs;
  rw.plain(s.w[0], rst[rd[0]]);
  rw.plain(s.w[1], rst[rd[1]]);
  for (int i = 0; i < lead; ++i) rw.plain(1, 0);
  for (size_t i = 0; i < n; ++i) rw.plain(rs[rd[2 + i]], rst[rd[2 + i]]);
  plan.arrange_rhs = !(in_order(rd) && ct == in);

  // The result: cuDNN's [batch, out features, (1,)..., spatial] into the output's layout.
  const Shape yst = row_major_strides(Shape(s.y, s.y + 2 + spatial));
  Shape src_stride(os.size());
  src_stride[odims[0]] = yst[0];
  src_stride[odims[1]] = yst[1];
  for (size_t i = 0; i < n; ++i) src_stride[odims[2 + i]] = yst[2 + lead + i];
  for (size_t d = 0; d < os.size(); ++d) plan.out.plain(os[d], src_stride[d]);
  plan.arrange_out = !(in_order(odims) && ct == od);
  return plan;
}

}  // namespace graft::cuda::conv
