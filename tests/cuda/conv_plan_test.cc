// The lowering of the CUDA conv_general_dilated kernel (core/backend/cuda/conv/conv_plan.h),
// checked on the CPU in every build: each case's plan is carried out on the host (a plain
// loop for the rearranging copies, as arrange.h defines them, and for the convolution cuDNN
// is asked for: dense NC... / OI... grouped cross-correlation without padding) and compared
// with graft's CPU kernel of conv_general_dilated, in f64. What runs on the GPU (the copy
// kernel, cuDNN) is tested by conv_cuda_test on a device.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/cuda/conv/conv_plan.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"

namespace graft::cuda::conv {
namespace {

// dst[i] per Arrange's definition (arrange.h).
std::vector<double> run_arrange(const std::vector<double>& src, const Arrange& a) {
  std::vector<double> dst(a.elements());
  for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
    int64_t rem = i, off = 0;
    bool inside = true;
    for (int d = a.rank - 1; d >= 0; --d) {
      const int64_t pos = rem % a.shape[d] - a.lo[d];
      rem /= a.shape[d];
      if (pos < 0 || pos % a.dil[d] != 0 || pos / a.dil[d] >= a.extent[d]) {
        inside = false;
      } else {
        off += pos / a.dil[d] * a.stride[d];
      }
    }
    dst[i] = inside ? src[off] : 0.0;
  }
  return dst;
}

// Row-major offset of idx in dims.
int64_t offset(const std::vector<int64_t>& idx, const int64_t* dims) {
  int64_t off = 0;
  for (size_t i = 0; i < idx.size(); ++i) off = off * dims[i] + idx[i];
  return off;
}

bool next(std::vector<int64_t>& idx, const int64_t* dims) {
  for (size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

// What cuDNN computes for the plan's ConvShape: y[n, o, p] = sum over c < I and taps t of
// x[n, g * I + c, p * stride + t * dilation] * w[o, c, t], g = o / (O / groups).
std::vector<double> grouped_conv(const ConvShape& s, const std::vector<double>& x,
                                 const std::vector<double>& w) {
  const int r = 2 + s.spatial;
  int64_t total = 1;
  for (int i = 0; i < r; ++i) total *= s.y[i];
  std::vector<double> y(total);
  const int64_t per = s.y[1] / s.groups, in = s.w[1];
  std::vector<int64_t> yi(r, 0);
  do {
    const int64_t g = yi[1] / per;
    double acc = 0;
    std::vector<int64_t> tap(s.spatial, 0);
    do {
      for (int64_t c = 0; c < in; ++c) {
        std::vector<int64_t> xi = {yi[0], g * in + c}, wi = {yi[1], c};
        for (int k = 0; k < s.spatial; ++k) {
          xi.push_back(yi[2 + k] * s.strides[k] + tap[k] * s.dilations[k]);
          wi.push_back(tap[k]);
        }
        acc += x[offset(xi, s.x)] * w[offset(wi, s.w)];
      }
    } while (next(tap, s.w + 2));
    y[offset(yi, s.y)] = acc;
  } while (next(yi, s.y));
  return y;
}

struct Case {
  std::string name;
  Shape lhs, rhs, strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  Shape lhs_dilation, rhs_dilation;
  ConvDims dims;
  int64_t feature_groups = 1, batch_groups = 1;
};

std::vector<Case> cases() {
  return {
      {"2-D NCHW padded", {2, 3, 9, 8}, {4, 3, 3, 3}, {1, 1}, {{1, 1}, {1, 1}}, {1, 1}, {1, 1}, {}},
      {"2-D NHWC / HWIO, strides, asymmetric and cropping padding, rhs dilation",
       {2, 10, 9, 3},
       {3, 2, 3, 5},
       {2, 1},
       {{1, 0}, {2, -1}},
       {1, 1},
       {1, 2},
       ConvDims("NHWC", "HWIO", "NHWC")},
      {"1-D lhs dilation", {2, 3, 7}, {4, 3, 3}, {1}, {{2, 2}}, {2}, {1}, {}},
      {"3-D feature groups, already cuDNN's layout",
       {1, 4, 5, 6, 4},
       {6, 2, 2, 3, 2},
       {1, 2, 1},
       {{0, 0}, {0, 0}, {0, 0}},
       {1, 1, 1},
       {1, 1, 1},
       {},
       2},
      {"2-D batch groups", {4, 3, 6, 5}, {6, 3, 3, 2}, {1, 1}, {{0, 0}, {0, 0}}, {1, 1}, {1, 1}, {},
       1, 2},
      {"2-D output layout NHWC, lhs dilation and strides together",
       {2, 3, 7, 6},
       {5, 3, 2, 2},
       {2, 2},
       {{1, 1}, {0, 1}},
       {2, 3},
       {1, 1},
       ConvDims("NCHW", "OIHW", "NHWC")},
      {"no spatial dims", {3, 4}, {5, 4}, {}, {}, {}, {}, {}},
  };
}

ConvParams params_of(const Case& c) {
  ConvParams p;
  p.window_strides = c.strides;
  p.padding = c.padding;
  p.lhs_dilation = c.lhs_dilation;
  p.rhs_dilation = c.rhs_dilation;
  p.dims = conv_dimension_numbers(c.lhs.size(), c.rhs.size(), c.dims);
  p.feature_group_count = c.feature_groups;
  p.batch_group_count = c.batch_groups;
  return p;
}

TEST(ConvPlanTest, CarriedOutOnTheHostTheLoweringGivesTheCpuKernelsResult) {
  const std::vector<Case> all = cases();
  for (size_t i = 0; i < all.size(); ++i) {
    const Case& c = all[i];
    const Array l = random::normal(random::key(2 * i), c.lhs, DType::kF64);
    const Array r = random::normal(random::key(2 * i + 1), c.rhs, DType::kF64);
    const Array want = conv_general_dilated(l, r, c.strides, c.padding, c.lhs_dilation,
                                            c.rhs_dilation, c.dims, c.feature_groups,
                                            c.batch_groups);
    const ConvPlan plan =
        plan_conv(params_of(c), Aval{c.lhs, DType::kF64}, Aval{c.rhs, DType::kF64},
                  Aval{want.shape(), DType::kF64});
    EXPECT_EQ(plan.conv.type, DType::kF64) << c.name;
    std::vector<double> x = l.to_vector<double>(), w = r.to_vector<double>();
    if (plan.arrange_lhs) x = run_arrange(x, plan.lhs);
    if (plan.arrange_rhs) w = run_arrange(w, plan.rhs);
    std::vector<double> y = grouped_conv(plan.conv, x, w);
    if (plan.arrange_out) y = run_arrange(y, plan.out);
    const std::vector<double> expected = want.to_vector<double>();
    ASSERT_EQ(y.size(), expected.size()) << c.name;
    double err = 0;
    for (size_t k = 0; k < y.size(); ++k) err = std::max(err, std::abs(y[k] - expected[k]));
    EXPECT_LE(err, 1e-12) << c.name;
  }
}

TEST(ConvPlanTest, CopiesOnlyWhatIsNotCuDnnsLayoutAlready) {
  const std::vector<Case> all = cases();
  const auto plan_of = [&](size_t i, DType in, std::optional<DType> out = std::nullopt) {
    const Case& c = all[i];
    const Array want = conv_general_dilated(zeros(c.lhs, in), zeros(c.rhs, in), c.strides,
                                            c.padding, c.lhs_dilation, c.rhs_dilation, c.dims,
                                            c.feature_groups, c.batch_groups, out);
    return plan_conv(params_of(c), Aval{c.lhs, in}, Aval{c.rhs, in},
                     Aval{want.shape(), want.dtype()});
  };
  const ConvPlan plain = plan_of(3, DType::kF32);  // NC... / OI... / NC..., no padding
  EXPECT_FALSE(plain.arrange_lhs || plain.arrange_rhs || plain.arrange_out);
  EXPECT_EQ(plain.conv.groups, 2);
  const ConvPlan padded = plan_of(0, DType::kBF16);  // padding: only the input moves
  EXPECT_TRUE(padded.arrange_lhs);
  EXPECT_FALSE(padded.arrange_rhs || padded.arrange_out);
  EXPECT_EQ(padded.conv.type, DType::kBF16);
  // bf16 into f32: cuDNN convolves in f32, so every operand is widened.
  const ConvPlan widened = plan_of(3, DType::kBF16, DType::kF32);
  EXPECT_EQ(widened.conv.type, DType::kF32);
  EXPECT_TRUE(widened.arrange_lhs && widened.arrange_rhs);
  EXPECT_FALSE(widened.arrange_out);
  // Batch groups: G groups of features, the batch divided by G.
  const ConvPlan groups = plan_of(4, DType::kF32);
  EXPECT_EQ(groups.conv.groups, 2);
  EXPECT_EQ(groups.conv.x[0], 2);
  EXPECT_EQ(groups.conv.x[1], 6);
  // 1-D: a leading size-1 spatial dim.
  const ConvPlan one = plan_of(2, DType::kF32);
  EXPECT_EQ(one.conv.spatial, 2);
  EXPECT_EQ(one.conv.x[2], 1);
  EXPECT_EQ(one.conv.x[3], 2 * (7 - 1) + 1 + 4);
}

TEST(ConvPlanTest, FourSpatialDimsAreAClearError) {
  ConvParams p;
  p.window_strides = p.lhs_dilation = p.rhs_dilation = {1, 1, 1, 1};
  p.padding.assign(4, {0, 0});
  p.dims = conv_dimension_numbers(6, 6, {});
  const Aval a{{1, 1, 2, 2, 2, 2}, DType::kF32};
  try {
    plan_conv(p, a, a, a);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[conv_general_dilated] 4 spatial dims on CUDA"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace graft::cuda::conv
