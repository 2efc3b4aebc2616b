// Specs of fused_elementwise: tanh(x * y) + x, with a scalar and the intermediate x*y as a
// second output, fused by transforms/fusion.h; references from plain loops (rounded after
// each op, as the unfused ops round). And of fused_reduce: that group's value summed (or its
// max / min taken) over the trailing axes, references from plain loops in double.
#include <algorithm>
#include <cmath>

#include "tests/core/primitives/specs/spec.h"
#include "transforms/fusion.h"

namespace graft::spec {
namespace {

// Returns tanh(x * y) + x * 0.5 (the fused group's second output x * y feeds a non-fused sum
// in a separate case).
Array fused_fn(const Array& x, const Array& y) {
  return fuse_elementwise_call(
      [](const std::vector<Array>& in) {
        return std::vector<Array>{tanh(in[0] * in[1]) + in[0] * 0.5};
      },
      {x, y})[0];
}

// reduce(tanh(x * y) + x * 0.5) over the trailing `axes` of x's shape, fused into one
// fused_reduce.
Array fused_reduce_fn(const Array& x, const Array& y, PrimitiveId op, const Axes& axes) {
  return fuse_elementwise_call(
      [op, axes](const std::vector<Array>& in) {
        Array v = tanh(in[0] * in[1]) + in[0] * 0.5;
        if (op == PrimitiveId::kReduceMax) return std::vector<Array>{max(v, axes)};
        if (op == PrimitiveId::kReduceMin) return std::vector<Array>{min(v, axes)};
        return std::vector<Array>{sum(v, axes)};
      },
      {x, y})[0];
}

}  // namespace

GRAFT_SPEC(FusedReduce) {
  Spec s{PrimitiveId::kFusedReduce};
  struct Case {
    Shape shape;
    Axes axes;  // one run of dims
  };
  // Rows of 32 (the kernel's single pass), of 7 (not on its 16-element grid: the body runs as
  // it is), one long row of 6000 (pieces combined pairwise; sum only: among 6000 f32 values a
  // max or min has near-ties that finite differences cannot follow), two trailing axes;
  // columns of 32 (the column pass), of 7 (off the grid), and a middle axis.
  for (const Case& c :
       {Case{{3, 32}, {1}}, Case{{4, 7}, {1}}, Case{{6000}, {0}}, Case{{2, 3, 16}, {1, 2}},
        Case{{5, 32}, {0}}, Case{{4, 7}, {0}}, Case{{3, 4, 16}, {1}}}) {
    for (PrimitiveId op :
         {PrimitiveId::kReduceSum, PrimitiveId::kReduceMax, PrimitiveId::kReduceMin}) {
      if (c.shape == Shape{6000} && op != PrimitiveId::kReduceSum) continue;
      Array x = random_array(c.shape, DType::kF32, 55), y = random_array(c.shape, DType::kF32, 56);
      auto xv = values_of(x), yv = values_of(y);
      // The array as [outer, n, inner], reduced over n.
      int64_t outer = 1, n = 1, inner = 1;
      Shape out_shape;
      for (int d = 0; d < static_cast<int>(c.shape.size()); ++d) {
        if (std::find(c.axes.begin(), c.axes.end(), d) != c.axes.end()) {
          n *= c.shape[d];
        } else {
          (d < c.axes.front() ? outer : inner) *= c.shape[d];
          out_shape.push_back(c.shape[d]);
        }
      }
      Expected e{out_shape, DType::kF32, {}};
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t k = 0; k < inner; ++k) {
          double acc =
              op == PrimitiveId::kReduceSum ? 0 : (op == PrimitiveId::kReduceMax ? -1e300 : 1e300);
          for (int64_t j = 0; j < n; ++j) {
            const size_t i = (o * n + j) * inner + k;
            const double v = std::tanh(xv[i] * yv[i]) + xv[i] * 0.5;
            acc = op == PrimitiveId::kReduceSum   ? acc + v
                  : op == PrimitiveId::kReduceMax ? std::max(acc, v)
                                                  : std::min(acc, v);
          }
          e.values.push_back(acc);
        }
      }
      const Axes axes = c.axes;
      s.cases.push_back({std::string(kPrimitiveNames[static_cast<int>(op)]) + shape_str(c.shape) +
                             " over " + shape_str(Shape(c.axes.begin(), c.axes.end())),
                         {x, y},
                         [op, axes](const std::vector<Array>& in) {
                           return fused_reduce_fn(in[0], in[1], op, axes);
                         },
                         e,
                         1e-5,
                         op == PrimitiveId::kReduceSum ? 1e-5 * static_cast<double>(n) : 0});
    }
  }
  return s;
}

GRAFT_SPEC(FusedElementwise) {
  Spec s{PrimitiveId::kFusedElementwise};
  for (DType d : {DType::kF64, DType::kF32, DType::kBF16, DType::kF16}) {
    for (Shape shape : {Shape{}, Shape{0, 3}, Shape{5}, Shape{2, 3, 4}}) {
      Array x = random_array(shape, d, 51), y = random_array(shape, d, 52);
      auto xv = values_of(x), yv = values_of(y);
      Expected e{shape, d, {}};
      for (size_t i = 0; i < xv.size(); ++i) {
        // f16 / bf16 carried in f32 inside the group, rounded on store (fusion.h).
        e.values.push_back(round_to(std::tanh(xv[i] * yv[i]) + xv[i] * 0.5, d));
      }
      s.cases.push_back({std::string(dtype_name(d)) + shape_str(shape),
                         {x, y},
                         [](const std::vector<Array>& in) { return fused_fn(in[0], in[1]); },
                         e,
                         default_rtol(d) * 4,
                         0});
    }
  }
  // Non-contiguous operand: x transposed inside fn; the reference indexes the original.
  Array x = random_array({3, 4}, DType::kF32, 53), y = random_array({4, 3}, DType::kF32, 54);
  auto xv = values_of(x), yv = values_of(y);
  Expected e{{4, 3}, DType::kF32, {}};
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      double a = xv[j * 4 + i], b = yv[i * 3 + j];
      e.values.push_back(std::tanh(a * b) + a * 0.5);
    }
  }
  s.cases.push_back({"f32 transposed",
                     {x, y},
                     [](const std::vector<Array>& in) {
                       return fused_fn(transpose(in[0], std::vector<int>{1, 0}), in[1]);
                     },
                     e,
                     1e-5,
                     0});
  return s;
}

}  // namespace graft::spec
