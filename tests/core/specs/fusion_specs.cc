// Spec of fused_elementwise: tanh(x * y) + x, with a scalar and the intermediate x*y as a
// second output, fused by transforms/fusion.h; references from plain loops (rounded after
// each op, as the unfused ops round).
#include <cmath>

#include "tests/core/specs/spec.h"
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

}  // namespace

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
