// Linear-algebra primitives: dot_general (lax.dot_general semantics).
// Operands have equal dtypes (the public ops promote first, core/ops_linalg.cc). The output
// is the batch dims, then the lhs free dims in order, then the rhs free dims in order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitive.h"

namespace graft {

class DotGeneral : public Primitive {
 public:
  // `dims` must be normalized (no negative dims); `preferred` is the output dtype (default:
  // the operands' dtype). Integers accumulate in the output dtype, floats in f32 or wider.
  DotGeneral(DotDims dims, std::optional<DType> preferred)
      : Primitive(PrimitiveId::kDotGeneral), dims_(std::move(dims)), preferred_(preferred) {}

  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;

  const DotDims& dims() const { return dims_; }
  std::optional<DType> preferred() const { return preferred_; }

 private:
  DotDims dims_;
  std::optional<DType> preferred_;
};

// Checks dims against the operand shapes (range, duplicates, matching sizes) and the
// operand / preferred dtypes; errors name `op`. Shared by the public op and infer().
void check_dot_general(std::string_view op, const Aval& lhs, const Aval& rhs, const DotDims& dims,
                       std::optional<DType> preferred);

// The output dtype of dot_general for operand dtype `in`.
inline DType dot_output_dtype(DType in, std::optional<DType> preferred) {
  return preferred ? *preferred : in;
}

}  // namespace graft
