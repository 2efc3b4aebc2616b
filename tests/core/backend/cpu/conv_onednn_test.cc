// The oneDNN path of conv_general_dilated's CPU kernel (core/backend/cpu/onednn_conv.h)
// against its direct loop, over many geometries: every case runs once with oneDNN allowed
// and once with it switched off (set_onednn_enabled(false): the loop), and both are compared
// with the loop in f64 on the same values converted to f64 (the f64 path never takes oneDNN).
// Each case states whether oneDNN must take it, checked twice: by the conv_uses_onednn()
// predicate and by the counter of convolutions oneDNN ran, so a case cannot pass by silently
// running the loop. Gradients (whose transposes are convolutions again) compare the two paths
// the same way; their finite-difference checks are the op-spec rows (specs/conv_specs.cc).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/backend/cpu/onednn_conv.h"
#include "core/backend/cpu/onednn_matmul.h"
#include "core/ops.h"
#include "core/primitives/conv.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"

namespace graft {
namespace {

using Pads = std::vector<std::pair<int64_t, int64_t>>;

// A convolution by its logical sizes (batch, features, spatial) and dimension numbers; the
// operands' physical shapes follow from the specs.
struct ConvCase {
  std::string name;
  int64_t batch, in_feat, out_feat;
  Shape in_sp, window;
  ConvDimensionNumbers dn;  // empty: (N, C, spatial...) / (O, I, spatial...) / (N, C, ...)
  Shape strides = {}, rhs_dil = {}, lhs_dil = {};
  Pads pads = {};
  int64_t fg = 1, bg = 1;
  DType dtype = DType::kF32;
  std::optional<DType> preferred = std::nullopt;
  bool onednn = true;  // must oneDNN take it?
};

std::vector<int64_t> iota(size_t n) {
  std::vector<int64_t> s(n);
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<int64_t>(i);
  return s;
}

Shape physical(const std::vector<int64_t>& spec, int64_t a, int64_t b, const Shape& sp) {
  Shape s(spec.size());
  s[spec[0]] = a;
  s[spec[1]] = b;
  for (size_t i = 0; i < sp.size(); ++i) s[spec[2 + i]] = sp[i];
  return s;
}

Array normal(const Shape& shape, DType dt, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(numel(shape));
  for (auto& x : v) x = dist(gen);
  return astype(array<float>(v, shape), dt);
}

std::vector<double> values(const Array& a) { return astype(a, DType::kF64).to_vector<double>(); }

// The case's parameters with defaults filled in, its operands and its ConvParams.
struct Bound {
  ConvCase c;
  Array lhs, rhs;
  ConvParams p;
};

Bound bind_case(ConvCase c, uint32_t seed) {
  const size_t n = c.in_sp.size();
  if (c.dn.lhs_spec.empty()) c.dn = {iota(n + 2), iota(n + 2), iota(n + 2)};
  if (c.strides.empty()) c.strides.assign(n, 1);
  if (c.rhs_dil.empty()) c.rhs_dil.assign(n, 1);
  if (c.lhs_dil.empty()) c.lhs_dil.assign(n, 1);
  if (c.pads.empty()) c.pads.assign(n, {0, 0});
  Array l = normal(physical(c.dn.lhs_spec, c.batch, c.in_feat, c.in_sp), c.dtype, seed);
  Array r =
      normal(physical(c.dn.rhs_spec, c.out_feat, c.in_feat / c.fg, c.window), c.dtype, seed + 1);
  ConvParams p{c.strides, c.pads, c.lhs_dil, c.rhs_dil, c.dn, c.fg, c.bg, c.preferred};
  return {c, l, r, p};
}

Array run(const Bound& b, const Array& l, const Array& r, std::optional<DType> preferred) {
  const ConvCase& c = b.c;
  return conv_general_dilated(l, r, c.strides, WindowPadding(c.pads), c.lhs_dil, c.rhs_dil, c.dn,
                              c.fg, c.bg, preferred);
}

// Evaluates `f` with oneDNN switched on or off; returns its values and how many
// convolutions oneDNN ran meanwhile.
template <typename F>
std::pair<std::vector<std::vector<double>>, int64_t> evaluate(bool onednn, F f) {
  cpu::set_onednn_enabled(onednn);
  const int64_t before = cpu::onednn_conv_stats().runs;
  std::vector<Array> out = f();
  eval(out);
  const int64_t ran = cpu::onednn_conv_stats().runs - before;
  cpu::set_onednn_enabled(true);
  std::vector<std::vector<double>> v;
  for (const Array& a : out) v.push_back(values(a));
  return {v, ran};
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                  double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (!(std::abs(got[i] - want[i]) <= atol + rtol * std::abs(want[i]))) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", want " << want[i];
    }
  }
}

std::vector<ConvCase> forward_cases() {
  using DN = ConvDimensionNumbers;
  const DN nhwc = {{0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}};  // NHWC / HWIO / NHWC
  const DN nhwc_oihw_nchw = {{0, 3, 1, 2}, {0, 1, 2, 3}, {0, 1, 2, 3}};
  const DN odd = {{3, 1, 0, 2}, {1, 3, 2, 0}, {2, 0, 3, 1}};  // spatial and features scattered
  const DN nwc = {{0, 2, 1}, {2, 1, 0}, {0, 2, 1}};           // NWC / WIO / NWC
  const DN ndhwc = {{0, 4, 1, 2, 3}, {4, 3, 0, 1, 2}, {0, 4, 1, 2, 3}};
  // clang-format off
  return {
      {"2d_nchw_pad1", 2, 3, 5, {8, 7}, {3, 3}, {}, {}, {}, {}, {{1, 1}, {1, 1}}},
      {"2d_nhwc_stride2", 2, 4, 6, {9, 8}, {3, 3}, nhwc, {2, 2}, {}, {}, {{1, 1}, {0, 1}}},
      {"2d_nhwc_convnet_layer", 4, 16, 32, {16, 16}, {3, 3}, nhwc, {}, {}, {}, {{1, 1}, {1, 1}}},
      {"2d_nchw_convnet_layer", 4, 16, 32, {12, 12}, {3, 3}, {}, {}, {}, {}, {{1, 1}, {1, 1}}},
      {"2d_nhwc_in_oihw_nchw_out", 3, 5, 7, {6, 9}, {2, 3}, nhwc_oihw_nchw, {1, 2}},
      {"2d_odd_permutation", 3, 4, 5, {7, 6}, {2, 3}, odd, {}, {}, {}, {{0, 1}, {1, 0}}},
      {"2d_rhs_dilation_stride", 2, 3, 4, {11, 10}, {3, 2}, nhwc, {2, 1}, {2, 3}, {},
       {{1, 2}, {2, 0}}},
      {"1d_rhs_dilation", 2, 3, 4, {13}, {3}, {}, {}, {2}, {}, {{2, 1}}},
      {"1d_nwc_stride3", 3, 5, 2, {20}, {4}, nwc, {3}, {}, {}, {{1, 1}}},
      {"3d_ncdhw", 2, 2, 3, {4, 5, 6}, {2, 3, 2}, {}, {1, 2, 1}, {}, {}, {{0, 1}, {1, 1}, {0, 0}}},
      {"3d_ndhwc_dilated", 1, 3, 4, {6, 7, 5}, {2, 2, 2}, ndhwc, {}, {1, 2, 1}, {},
       {{1, 0}, {0, 0}, {1, 1}}},
      {"2d_feature_groups", 2, 6, 4, {6, 5}, {3, 2}, {}, {}, {}, {}, {{1, 1}, {0, 1}}, 2},
      {"2d_depthwise_nhwc", 2, 8, 8, {7, 7}, {3, 3}, nhwc, {}, {}, {}, {{1, 1}, {1, 1}}, 8},
      {"2d_depthwise_multiplier", 2, 4, 8, {6, 6}, {3, 3}, nhwc, {2, 2}, {}, {},
       {{1, 1}, {1, 1}}, 4},
      {"1d_crop_lo", 2, 3, 2, {10}, {3}, {}, {}, {}, {}, {{-1, 2}}},
      {"2d_crop_both", 2, 3, 4, {9, 8}, {2, 2}, nhwc, {}, {}, {}, {{-2, -1}, {1, -1}}},
      // Windows larger than the result (as kernel gradients): oneDNN's backward weights.
      {"2d_large_window", 3, 2, 3, {8, 8}, {6, 7}, nhwc},
      {"2d_large_window_odd_strided_crop", 3, 2, 4, {11, 9}, {6, 5}, odd, {2, 1}, {}, {},
       {{-1, 2}, {1, 0}}},
      {"1d_large_window_dilated", 2, 3, 2, {16}, {6}, nwc, {3}, {2}, {}, {{0, 1}}},
      {"2d_large_window_bf16", 3, 2, 3, {8, 8}, {6, 7}, nhwc, {}, {}, {}, {}, 1, 1,
       DType::kBF16},
      {"2d_pointwise", 2, 8, 5, {5, 4}, {1, 1}, nhwc},
      {"2d_bf16", 2, 4, 6, {7, 6}, {3, 3}, nhwc, {}, {}, {}, {{1, 1}, {1, 1}}, 1, 1, DType::kBF16},
      {"2d_bf16_preferred_f32", 2, 4, 6, {7, 6}, {3, 3}, {}, {2, 1}, {}, {}, {{1, 1}, {1, 1}},
       1, 1, DType::kBF16, DType::kF32},
      // lhs dilation (the input gradient of a strided convolution): oneDNN's backward data.
      {"2d_lhs_dilation", 2, 3, 4, {5, 4}, {3, 3}, {}, {}, {}, {2, 2}, {{2, 2}, {2, 2}}},
      {"1d_lhs_dilation_rhs_dilation", 2, 3, 4, {7}, {3}, {}, {}, {2}, {3}, {{1, 3}}},
      {"2d_lhs_dilation_nhwc_uneven", 2, 4, 6, {5, 6}, {3, 2}, nhwc, {}, {}, {2, 3},
       {{0, 2}, {1, -1}}},
      {"2d_lhs_dilation_odd_permutation", 3, 4, 5, {4, 3}, {2, 3}, odd, {}, {1, 2}, {2, 2},
       {{1, 0}, {2, 3}}},
      {"2d_lhs_dilation_groups", 2, 6, 4, {4, 5}, {3, 3}, nhwc, {}, {}, {2, 2},
       {{2, 2}, {1, 2}}, 2},
      {"3d_lhs_dilation", 1, 2, 3, {3, 4, 3}, {2, 2, 2}, {}, {}, {}, {2, 1, 3},
       {{1, 1}, {0, 1}, {1, 0}}},
      {"2d_lhs_dilation_bf16", 2, 4, 6, {5, 4}, {3, 3}, nhwc, {}, {}, {2, 2}, {{2, 2}, {2, 2}},
       1, 1, DType::kBF16},
      // Batch groups (the kernel gradient of a grouped convolution): oneDNN's backward
      // weights.
      {"2d_batch_groups", 4, 3, 4, {5, 4}, {2, 2}, {}, {}, {}, {}, {}, 1, 2},
      {"2d_batch_groups_strided_dilated", 6, 2, 6, {9, 8}, {3, 2}, nhwc, {2, 1}, {1, 2}, {},
       {{1, 0}, {2, 1}}, 1, 3},
      {"1d_batch_groups_crop", 4, 3, 8, {12}, {4}, {}, {}, {2}, {}, {{-1, 1}}, 1, 4},
      {"2d_batch_groups_odd_permutation", 4, 2, 4, {6, 5}, {2, 3}, odd, {1, 2}, {}, {},
       {{0, 1}, {1, 0}}, 1, 2},
      {"2d_depthwise_kernel_gradient_form", 8, 2, 8, {10, 10}, {10, 10}, nhwc, {}, {}, {},
       {{1, 1}, {1, 1}}, 1, 8},
      {"3d_batch_groups", 2, 2, 4, {4, 5, 3}, {2, 3, 2}, ndhwc, {}, {}, {}, {}, 1, 2},
      {"2d_batch_groups_bf16_preferred_f32", 4, 3, 4, {5, 4}, {2, 2}, nhwc, {}, {}, {}, {}, 1, 2,
       DType::kBF16, DType::kF32},
      // Left to the loop.
      {"2d_lhs_dilation_batch_groups", 4, 3, 4, {5, 4}, {2, 2}, {}, {}, {}, {2, 2}, {}, 1, 2,
       DType::kF32, std::nullopt, false},
      {"2d_lhs_dilation_strided", 2, 3, 4, {5, 4}, {3, 3}, {}, {2, 1}, {}, {2, 2},
       {{2, 2}, {2, 2}}, 1, 1, DType::kF32, std::nullopt, false},
      {"1d_lhs_dilation_wide_padding", 2, 3, 4, {5}, {3}, {}, {}, {}, {2}, {{3, 1}}, 1, 1,
       DType::kF32, std::nullopt, false},
      {"2d_f16", 2, 3, 4, {5, 4}, {3, 3}, {}, {}, {}, {}, {{1, 1}, {1, 1}}, 1, 1, DType::kF16,
       std::nullopt, false},
      {"2d_f64", 2, 3, 4, {5, 4}, {3, 3}, {}, {}, {}, {}, {{1, 1}, {1, 1}}, 1, 1, DType::kF64,
       std::nullopt, false},
      {"1d_cropped_to_nothing", 1, 2, 2, {3}, {2}, {}, {}, {}, {}, {{-3, 4}}, 1, 1, DType::kF32,
       std::nullopt, false},
  };
  // clang-format on
}

// Tolerances against the f64 loop: f32 accumulation in either order; a bf16 result is
// rounded to 8 bits (the two paths may round a sum on either side of a half-way point).
std::pair<double, double> tolerances(DType in, DType out) {
  if (out == DType::kBF16) return {2e-2, 5e-2};
  if (out == DType::kF16) return {4e-3, 1e-2};
  if (in == DType::kF64) return {1e-12, 1e-12};
  return {1e-5, 1e-4};
}

TEST(ConvOnednnTest, ForwardMatchesTheLoop) {
  uint32_t seed = 1;
  for (const ConvCase& cc : forward_cases()) {
    SCOPED_TRACE(cc.name);
    const Bound b = bind_case(cc, seed += 2);
    const DType out_dtype = cc.preferred.value_or(cc.dtype);
    const Aval out =
        check_conv("test", Aval{b.lhs.shape(), cc.dtype}, Aval{b.rhs.shape(), cc.dtype}, b.p);
    const cpu::ConvOperands ops{b.lhs.shape(), b.rhs.shape(), out.shape, cc.dtype, out_dtype};
    EXPECT_EQ(cpu::conv_uses_onednn(b.p, ops), cc.onednn);
    if (std::getenv("GRAFT_TEST_VERBOSE")) {  // which oneDNN implementation ran each case
      std::printf("%-28s %s\n", cc.name.c_str(), cpu::onednn_conv_impl(b.p, ops).c_str());
    }
    auto f = [&] { return std::vector<Array>{run(b, b.lhs, b.rhs, cc.preferred)}; };
    auto [fast, fast_runs] = evaluate(true, f);
    auto [loop, loop_runs] = evaluate(false, f);
    EXPECT_EQ(fast_runs, cc.onednn ? 1 : 0);
    EXPECT_EQ(loop_runs, 0);
    // The loop in f64 on the same values (f64 operands never take oneDNN).
    const Array l64 = astype(b.lhs, DType::kF64), r64 = astype(b.rhs, DType::kF64);
    auto [ref, ref_runs] = evaluate(true, [&] { return std::vector<Array>{run(b, l64, r64, {})}; });
    EXPECT_EQ(ref_runs, 0);
    const auto [rtol, atol] = tolerances(cc.dtype, out_dtype);
    expect_close(fast[0], ref[0], rtol, atol, "oneDNN path vs f64 loop");
    expect_close(loop[0], ref[0], rtol, atol, "direct loop vs f64 loop");
    expect_close(fast[0], loop[0], rtol, atol, "oneDNN path vs direct loop");
  }
}

// Forward and both gradients of sum(conv(x, w) * ct): equal on the two paths. The input
// gradient is a convolution with lhs dilation when the forward one is strided (oneDNN's
// backward data), the kernel gradient one with batch groups when the forward one has feature
// groups (oneDNN's backward weights); `onednn_runs` asserts that all three ran on oneDNN.
TEST(ConvOnednnTest, GradientsMatchTheLoop) {
  struct GradCase {
    ConvCase c;
    int64_t onednn_runs;  // of the forward, input and kernel gradient convolutions
  };
  const ConvDimensionNumbers nhwc = {{0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}};
  // clang-format off
  const std::vector<GradCase> cases = {
      {{"nhwc_same", 2, 3, 8, {8, 8}, {3, 3}, nhwc, {}, {}, {}, {{1, 1}, {1, 1}}}, 3},
      {{"nchw_valid_dilated", 2, 4, 3, {9, 7}, {2, 3}, {}, {}, {2, 1}}, 3},
      {{"nhwc_stride2", 2, 3, 4, {9, 8}, {3, 3}, nhwc, {2, 2}, {}, {}, {{1, 1}, {1, 1}}}, 3},
      {{"stride2_valid_remainder", 2, 3, 4, {8, 9}, {3, 2}, {}, {2, 3}, {1, 2}}, 3},
      {{"stride3_nwc", 2, 3, 4, {11}, {3}, {{0, 2, 1}, {2, 1, 0}, {0, 2, 1}}, {3}, {}, {},
        {{2, 0}}}, 3},
      {{"groups", 2, 4, 6, {6, 6}, {3, 3}, nhwc, {}, {}, {}, {{1, 1}, {1, 1}}, 2}, 3},
      {{"depthwise_stride2", 2, 4, 4, {7, 8}, {3, 3}, nhwc, {2, 2}, {}, {}, {{1, 1}, {0, 1}}, 4},
       3},
      {{"1d_crop", 2, 3, 2, {10}, {3}, {}, {}, {}, {}, {{-1, 2}}}, 3},
      {{"3d", 1, 2, 3, {4, 5, 4}, {2, 2, 2}, {}, {}, {}, {}, {{1, 0}, {0, 1}, {1, 1}}}, 3},
  };
  // clang-format on
  uint32_t seed = 100;
  for (const GradCase& gc : cases) {
    SCOPED_TRACE(gc.c.name);
    const Bound b = bind_case(gc.c, seed += 3);
    const Array fwd = run(b, b.lhs, b.rhs, {});
    const Array ct = normal(fwd.shape(), DType::kF32, seed + 2);
    auto loss = [&](const Array& x, const Array& w) { return sum(run(b, x, w, {}) * ct); };
    auto f = [&] {
      auto [v, g] = value_and_grad(loss, argnums<0, 1>)(b.lhs, b.rhs);
      return std::vector<Array>{run(b, b.lhs, b.rhs, {}), std::get<0>(g), std::get<1>(g)};
    };
    auto [fast, fast_runs] = evaluate(true, f);
    auto [loop, loop_runs] = evaluate(false, f);
    EXPECT_EQ(fast_runs, gc.onednn_runs);
    EXPECT_EQ(loop_runs, 0);
    const char* what[] = {"forward", "input gradient", "kernel gradient"};
    for (int i = 0; i < 3; ++i) expect_close(fast[i], loop[i], 1e-5, 1e-4, what[i]);
  }
}

TEST(ConvOnednnTest, PrimitivesAreCachedPerGeometry) {
  const Bound b = bind_case({"cached", 2, 3, 4, {6, 6}, {3, 3}}, 7);
  eval(run(b, b.lhs, b.rhs, {}));
  const cpu::ConvCacheStats s0 = cpu::onednn_conv_stats();
  for (int i = 0; i < 3; ++i) eval(run(b, b.lhs, b.rhs, {}));
  const cpu::ConvCacheStats s1 = cpu::onednn_conv_stats();
  EXPECT_EQ(s1.runs - s0.runs, 3);
  EXPECT_EQ(s1.misses, s0.misses);
  EXPECT_GE(s1.hits - s0.hits, 3);
}

}  // namespace
}  // namespace graft
