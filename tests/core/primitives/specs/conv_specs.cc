// Specs for conv_general_dilated, reached through the public op. The reference is a plain
// loop in double over the stored input values written from XLA's definition of
// ConvGeneralDilated (output position y, window tap k: input position (y * stride + k *
// rhs_dilation - pad_lo) / lhs_dilation when that divides and lands inside), with feature
// and batch groups, rounded to the output dtype at the end.
#include "core/ops.h"
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

struct Ref {
  Shape strides;
  std::vector<std::pair<int64_t, int64_t>> pads;
  Shape lhs_dil, rhs_dil;
  ConvDimensionNumbers dn;
  int64_t fg = 1, bg = 1;
};

Expected ref_conv(const Array& l, const Array& r, const Ref& p, DType out_dtype) {
  const Shape &lsh = l.shape(), &rsh = r.shape();
  const auto &ls = p.dn.lhs_spec, &rs = p.dn.rhs_spec, &os = p.dn.out_spec;
  const size_t n = lsh.size() - 2;
  Shape out(lsh.size());
  out[os[0]] = lsh[ls[0]] / p.bg;
  out[os[1]] = rsh[rs[0]];
  Shape window(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = 1 + p.lhs_dil[i] * (lsh[ls[2 + i]] - 1);
    window[i] = rsh[rs[2 + i]];
    const int64_t wd = 1 + p.rhs_dil[i] * (window[i] - 1);
    const int64_t padded = in + p.pads[i].first + p.pads[i].second;
    out[os[2 + i]] = padded < wd ? 0 : (padded - wd) / p.strides[i] + 1;
  }
  const std::vector<double> lv = values_of(l), rv = values_of(r);
  const int64_t in_feat = rsh[rs[1]], out_feat = rsh[rs[0]];
  const int64_t groups = p.fg > 1 ? p.fg : p.bg, per_group = out_feat / groups;
  Expected e{out, out_dtype, std::vector<double>(numel(out), 0.0)};
  for (int64_t flat = 0; flat < numel(out); ++flat) {
    std::vector<int64_t> oi = unravel(flat, out);
    const int64_t b = oi[os[0]], o = oi[os[1]], g = o / per_group;
    double s = 0;
    for (int64_t c = 0; c < in_feat; ++c) {
      for (int64_t t = 0; t < numel(window); ++t) {
        std::vector<int64_t> k = unravel(t, window);
        std::vector<int64_t> li(lsh.size()), ri(rsh.size());
        li[ls[0]] = p.bg > 1 ? g * out[os[0]] + b : b;
        li[ls[1]] = p.fg > 1 ? g * in_feat + c : c;
        ri[rs[0]] = o;
        ri[rs[1]] = c;
        bool inside = true;
        for (size_t i = 0; i < n; ++i) {
          const int64_t pos =
              oi[os[2 + i]] * p.strides[i] + k[i] * p.rhs_dil[i] - p.pads[i].first;
          if (pos < 0 || pos % p.lhs_dil[i] != 0 || pos / p.lhs_dil[i] >= lsh[ls[2 + i]]) {
            inside = false;
            break;
          }
          li[ls[2 + i]] = pos / p.lhs_dil[i];
          ri[rs[2 + i]] = k[i];
        }
        if (inside) s += lv[ravel(li, lsh)] * rv[ravel(ri, rsh)];
      }
    }
    e.values[flat] = round_to(s, out_dtype);
  }
  return e;
}

std::vector<int64_t> iota_spec(size_t n) {
  std::vector<int64_t> s(n);
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<int64_t>(i);
  return s;
}

void tol(Case& c, DType dt) {
  c.rtol = dt == DType::kBF16 ? 2e-2 : dt == DType::kF16 ? 4e-3 : dt == DType::kF32 ? 1e-5 : 1e-12;
  c.atol = dt == DType::kBF16 ? 5e-2 : dt == DType::kF16 ? 1e-2 : dt == DType::kF32 ? 1e-4 : 1e-12;
}

// A case calling conv_general_dilated with explicit padding and ConvDimensionNumbers (or,
// when `strings` is given, those strings and `padding_name`, whose meaning `ref` spells out).
void add(Spec& s, std::string name, const Shape& lshape, const Shape& rshape, Ref ref, DType dt,
         uint32_t seed, std::optional<DType> preferred = std::nullopt,
         std::optional<std::vector<std::string>> strings = std::nullopt,
         std::string padding_name = "") {
  const size_t n = lshape.size() - 2;
  if (ref.strides.empty()) ref.strides.assign(n, 1);
  if (ref.lhs_dil.empty()) ref.lhs_dil.assign(n, 1);
  if (ref.rhs_dil.empty()) ref.rhs_dil.assign(n, 1);
  if (ref.pads.empty()) ref.pads.assign(n, {0, 0});
  if (ref.dn.lhs_spec.empty()) ref.dn = {iota_spec(n + 2), iota_spec(n + 2), iota_spec(n + 2)};
  Array l = random_array(lshape, dt, seed), r = random_array(rshape, dt, seed + 1);
  ConvDims dims = ref.dn;
  if (strings) dims = ConvDims((*strings)[0], (*strings)[1], (*strings)[2]);
  WindowPadding pad = padding_name.empty() ? WindowPadding(ref.pads) : WindowPadding(padding_name);
  Case c{name,
         {l, r},
         [ref, dims, pad, preferred](const std::vector<Array>& in) {
           return conv_general_dilated(in[0], in[1], ref.strides, pad, ref.lhs_dil, ref.rhs_dil,
                                       dims, ref.fg, ref.bg, preferred);
         },
         ref_conv(l, r, ref, preferred.value_or(dt))};
  tol(c, dt);
  s.cases.push_back(std::move(c));
}

}  // namespace

GRAFT_SPEC(ConvGeneralDilated) {
  Spec s{PrimitiveId::kConvGeneralDilated};
  // 2-d NCHW / OIHW, padding 1, every dtype.
  for (DType dt : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    add(s, std::string("2d_pad1_") + dtype_name(dt), {2, 3, 5, 4}, {4, 3, 3, 3},
        {.pads = {{1, 1}, {1, 1}}}, dt, 10);
  }
  // Strided, unequal padding, f64 (second-order checks run on f64 cases).
  add(s, "2d_stride2_f64", {2, 2, 6, 5}, {3, 2, 3, 2}, {.strides = {2, 2}, .pads = {{1, 0}, {0, 2}}},
      DType::kF64, 20);
  // 1-d with kernel (rhs) dilation.
  add(s, "1d_rhs_dilation_f64", {2, 2, 9}, {3, 2, 3}, {.pads = {{2, 1}}, .rhs_dil = {2}},
      DType::kF64, 30);
  // 3-d with a stride in one dim.
  add(s, "3d_f32", {1, 2, 4, 5, 3}, {2, 2, 2, 3, 2}, {.strides = {1, 2, 1}, .pads = {{0, 1}, {1, 1}, {0, 0}}},
      DType::kF32, 40);
  // lhs dilation (a transposed convolution) with a stride.
  add(s, "2d_lhs_dilation_f64", {1, 2, 3, 4}, {2, 2, 3, 2},
      {.strides = {1, 2}, .pads = {{2, 2}, {1, 0}}, .lhs_dil = {2, 3}}, DType::kF64, 50);
  // Padding that crops.
  add(s, "1d_negative_pad_f64", {2, 3, 8}, {2, 3, 3}, {.pads = {{-1, 2}}}, DType::kF64, 60);
  // Feature groups (2 groups of 2 features), and depthwise (as many groups as features).
  add(s, "2d_feature_groups_f64", {2, 4, 4, 4}, {6, 2, 2, 2}, {.fg = 2}, DType::kF64, 70);
  add(s, "1d_depthwise_f32", {2, 3, 7}, {3, 1, 3}, {.pads = {{1, 1}}, .fg = 3}, DType::kF32, 80);
  // Batch groups (what the kernel gradient of grouped convolutions uses).
  add(s, "2d_batch_groups_f64", {4, 2, 4, 3}, {4, 2, 2, 2}, {.bg = 2}, DType::kF64, 90);
  // Dimension numbers: NHWC / HWIO / NHWC by strings with "SAME" padding (3x3, stride 2 on
  // 5x6: out 3x3, total padding 2 and 1, so (1, 1) and (0, 1)).
  add(s, "2d_nhwc_same_f32", {2, 5, 6, 3}, {3, 3, 3, 4},
      {.strides = {2, 2}, .pads = {{1, 1}, {0, 1}}, .dn = {{0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}}},
      DType::kF32, 100, std::nullopt, std::vector<std::string>{"NHWC", "HWIO", "NHWC"}, "SAME");
  // Arbitrary ConvDimensionNumbers: the output in another layout than the input.
  add(s, "2d_permuted_dims_f64", {3, 2, 4, 2}, {2, 3, 2, 2},
      {.pads = {{0, 1}, {1, 0}}, .dn = {{3, 1, 0, 2}, {1, 3, 2, 0}, {2, 0, 3, 1}}}, DType::kF64,
      110);
  // bf16 operands with an f32 result (accumulated in f32).
  add(s, "2d_bf16_preferred_f32", {1, 2, 4, 4}, {2, 2, 2, 2}, {}, DType::kBF16, 120, DType::kF32);
  return s;
}

}  // namespace graft::spec
