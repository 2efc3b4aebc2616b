// Linear-algebra primitives: dot_general (lax.dot_general semantics) and ragged_dot (grouped
// matmul, lax.ragged_dot semantics; see RaggedDot).
// Operands have equal dtypes (the public ops promote first, core/lax/dot.cc). The output
// is the batch dims, then the lhs free dims in order, then the rhs free dims in order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/lax/lax.h"
#include "core/ir/primitive.h"

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
  GRAFT_SHARDING_RULE;

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

// Grouped matmul over consecutive row groups (the MoE expert matmul). Operands are one float
// dtype (f32, f64, bf16, f16); group_sizes is i32 [g]; the output has the operands' dtype.
//  kRaggedRows     (lax.ragged_dot): lhs [m, k], rhs [g, k, n] -> [m, n]; rows of group i
//                  (group_sizes[i] consecutive rows) are multiplied by rhs[i].
//  kRaggedContract (lax.ragged_dot_general with a ragged contracting dim): lhs [m, k],
//                  rhs [m, n] -> [g, k, n]; out[i] = lhs_i^T @ rhs_i over group i's rows.
// One primitive with a mode, not two: each mode's vjp is written with the other (and
// itself), so they share the group bookkeeping, the kernel, the batching rule and one spec.
// Group sizes are read at run time and clamped, never trusted: a negative size counts as 0
// and the groups stop at row m (a group running past m is cut there). Rows past the last
// group give 0 (kRaggedRows) or contribute nothing (kRaggedContract).
enum class RaggedMode { kRaggedRows, kRaggedContract };

class RaggedDot : public Primitive {
 public:
  explicit RaggedDot(RaggedMode mode) : Primitive(PrimitiveId::kRaggedDot), mode_(mode) {}

  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;

  RaggedMode mode() const { return mode_; }

 private:
  RaggedMode mode_;
};

// Shape / dtype checks of ragged_dot (mode as above); errors name `op`.
void check_ragged_dot(std::string_view op, const Aval& lhs, const Aval& rhs, const Aval& sizes,
                      RaggedMode mode);

}  // namespace graft
