// The CUDA kernel of conv_general_dilated (core/primitives/conv.h): every case the primitive
// allows with 0 to 3 spatial dims, through one cuDNN forward convolution (cudnn_conv.h) on
// dense NC... / OI... operands. What cuDNN cannot express is lowered around it, as XLA does:
// - dimension numbers: the operands are rearranged into NC... / OI... and the NC... result
//   into the output's layout (skipped where a layout already is that);
// - padding (asymmetric or cropping) and lhs dilation: written into the rearranged input as
//   zeros (a transposed convolution thus becomes a plain one), so cuDNN pads nothing;
// - batch_group_count G: the input's batch (G groups of N) becomes G groups of features, a
//   feature-grouped convolution of G groups (the CPU kernel's group g reads batch g * N + n);
// - 0 / 1 spatial dims: leading size-1 spatial dims up to 2 (cuDNN convolves 2-D and 3-D).
// dtypes: f32 and f64 convolve in their own type; bf16 / f16 in theirs (accumulating in f32)
// when the output keeps it, else the operands are widened to f32 first (the CPU's sums).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "core/backend/cuda/conv/conv_device.h"
#include "core/backend/cuda/conv/cudnn_conv.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"
#include "core/primitives/conv.h"

namespace graft::cuda {
namespace {

static_assert(static_cast<int>(DType::kF16) == 5 && static_cast<int>(DType::kBF16) == 6 &&
                  static_cast<int>(DType::kF32) == 7 && static_cast<int>(DType::kF64) == 8,
              "conv_device.cu numbers dtypes as graft::DType does");

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

void conv_kernel(Call& call) {
  const ConvParams& p = call.params<ConvGeneralDilated>().conv();
  const Aval &la = call.in_aval(0), &ra = call.in_aval(1), &oa = call.out_aval();
  void* out = call.out_raw();
  if (numel(oa.shape) == 0) return;
  const size_t n = la.shape.size() - 2;
  if (n > 3) graft::fail(kOp, n, " spatial dims on CUDA (cuDNN convolves 1 to 3; the CPU has the rest)");
  if (p.feature_group_count > 1 && p.batch_group_count > 1) {
    graft::fail(kOp, "feature_group_count and batch_group_count both above 1");
  }
  if (numel(la.shape) == 0 || numel(ra.shape) == 0) {  // an empty sum everywhere
    check(cudaMemsetAsync(out, 0, numel(oa.shape) * dtype_size(oa.dtype), call.stream()),
          "cudaMemsetAsync");
    return;
  }
  const DType in = la.dtype, od = oa.dtype;
  const bool half = in == DType::kF16 || in == DType::kBF16;
  const DType ct = half && od != in ? DType::kF32 : in;  // cuDNN's tensors
  const int64_t csize = dtype_size(ct);
  const auto &ld = p.dims.lhs_spec, &rd = p.dims.rhs_spec, &odims = p.dims.out_spec;
  const Shape lst = row_major_strides(la.shape), rst = row_major_strides(ra.shape);
  const Shape& ls = la.shape;
  const Shape& rs = ra.shape;
  const Shape& os = oa.shape;
  const int64_t groups = p.batch_group_count > 1 ? p.batch_group_count : p.feature_group_count;
  const int64_t bg = p.batch_group_count, batch = os[odims[0]], feat = ls[ld[1]];
  const int spatial = static_cast<int>(std::max<size_t>(n, 2)), lead = spatial - static_cast<int>(n);

  conv::ConvShape s;
  s.spatial = spatial;
  s.type = ct;
  s.groups = groups;
  s.x[0] = batch;
  s.x[1] = bg * feat;
  s.w[0] = rs[rd[0]];
  s.w[1] = rs[rd[1]];
  s.y[0] = batch;
  s.y[1] = os[odims[1]];
  for (int i = 0; i < lead; ++i) s.x[2 + i] = s.w[2 + i] = s.y[2 + i] = 1;

  // The input: [batch, bg, feat, (1,)..., padded and dilated spatial dims].
  conv::Arrange lx;
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
  const void* x = call.in_raw(0);
  if (!lhs_plain) {
    void* buf = call.scratch(numel(Shape(s.x, s.x + 2 + spatial)) * csize);
    conv::arrange(x, static_cast<int>(in), buf, static_cast<int>(ct), lx, call.stream());
    x = buf;
  }

  // The kernel: [out features, in features, (1,)..., window].
  const void* w = call.in_raw(1);
  if (!(in_order(rd) && ct == in)) {
    conv::Arrange rw;
    rw.plain(s.w[0], rst[rd[0]]);
    rw.plain(s.w[1], rst[rd[1]]);
    for (int i = 0; i < lead; ++i) rw.plain(1, 0);
    for (size_t i = 0; i < n; ++i) rw.plain(rs[rd[2 + i]], rst[rd[2 + i]]);
    void* buf = call.scratch(numel(rs) * csize);
    conv::arrange(w, static_cast<int>(in), buf, static_cast<int>(ct), rw, call.stream());
    w = buf;
  }

  // The result: cuDNN's [batch, out features, (1,)..., spatial], then the output's layout.
  const bool out_plain = in_order(odims) && ct == od;
  void* y = out_plain ? out : call.scratch(numel(os) * csize);
  conv::cudnn_convolve(call, s, x, w, y);
  if (!out_plain) {
    const Shape yst = row_major_strides(Shape(s.y, s.y + 2 + spatial));
    Shape src_stride(os.size());
    src_stride[odims[0]] = yst[0];
    src_stride[odims[1]] = yst[1];
    for (size_t i = 0; i < n; ++i) src_stride[odims[2 + i]] = yst[2 + lead + i];
    conv::Arrange ro;
    for (size_t d = 0; d < os.size(); ++d) ro.plain(os[d], src_stride[d]);
    conv::arrange(y, static_cast<int>(ct), out, static_cast<int>(od), ro, call.stream());
  }
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kConvGeneralDilated)] = &conv_kernel;
}

}  // namespace graft::cuda
