// Elementwise primitives: unary math, binary arithmetic and comparisons, select, converts.
// Operands of binary primitives have equal shapes and dtypes: the public ops promote and
// broadcast first (core/lax/elementwise_ops.cc), as jax.numpy does over jax.lax.
#pragma once

#include "core/ir/primitive.h"

namespace graft {

// Which dtypes an elementwise primitive accepts (its row in core/primitives/list.h).
inline DTypeClass dtype_class(PrimitiveId id) { return primitive_facts(id).dtypes; }
bool accepts(DTypeClass c, DType d);

// The Unary rows of core/primitives/list.h (neg, exp, ... is_finite, not; their functors:
// elementwise_unary_ops.h): one input, output of the same shape (bool for kBoolOut rows).
class Unary : public Primitive {
 public:
  explicit Unary(PrimitiveId id) : Primitive(id) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
};

// The Binary rows (add, ..., shift_right_logical; elementwise_binary_ops.h): two inputs of equal
// shape and dtype. Comparisons (kBoolOut) give bool.
class Binary : public Primitive {
 public:
  explicit Binary(PrimitiveId id) : Primitive(id) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  bool is_comparison() const { return primitive_facts(id()).has(kBoolOut); }
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
};

// select_n(pred, on_false, on_true): pred is bool with the cases' shape.
class SelectN : public Primitive {
 public:
  SelectN() : Primitive(PrimitiveId::kSelectN) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
};

class ConvertElementType : public Primitive {
 public:
  ConvertElementType(DType dtype, bool weak)
      : Primitive(PrimitiveId::kConvertElementType), dtype_(dtype), weak_(weak) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  DType dtype() const { return dtype_; }
  bool weak() const { return weak_; }

 private:
  DType dtype_;
  bool weak_;
};

class BitcastConvertType : public Primitive {
 public:
  explicit BitcastConvertType(DType dtype)
      : Primitive(PrimitiveId::kBitcastConvertType), dtype_(dtype) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  GRAFT_TRANSFORM_RULES;
  DType dtype() const { return dtype_; }

 private:
  DType dtype_;
};

// The identity on values; blocks derivatives (zero tangent, no cotangent).
class StopGradient : public Primitive {
 public:
  StopGradient() : Primitive(PrimitiveId::kStopGradient) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
};

// Binds a unary / binary elementwise primitive by id (no promotion or broadcasting).
Array unary(PrimitiveId id, const Array& x);
Array binary(PrimitiveId id, const Array& a, const Array& b);

}  // namespace graft
