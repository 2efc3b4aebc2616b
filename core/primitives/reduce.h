// Reduction primitives: reduce_{sum,prod,max,min,and,or} over a set of axes, argmax/argmin
// along one axis, and cumsum. They follow jax.lax: no dtype promotion (the public ops in
// core/lax/reduce_ops.cc promote like jax.numpy first), the output keeps the operand's dtype
// (argmax/argmin give the index dtype), and the reduced axes are dropped (keepdims is a
// reshape done by the public op). Their transform rules are in reduce_rules.cc.
#pragma once

#include <vector>

#include "core/ir/primitive.h"

namespace graft {

// reduce_sum ... reduce_or. `axes` is a sorted, non-empty set of distinct axes. sum/prod
// take numeric dtypes, max/min any dtype, and/or bool or integers (bitwise for integers).
// Reducing a zero-sized axis gives the identity (0, 1, -inf/lowest, +inf/highest, ~0, 0).
class Reduce : public Primitive {
 public:
  Reduce(PrimitiveId id, std::vector<int> axes);
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;
};

// argmax / argmin along `axis` (which must have a non-zero size). First occurrence wins on
// ties; NaN counts as larger (argmax) / smaller (argmin) than everything, first NaN wins.
class ArgReduce : public Primitive {
 public:
  ArgReduce(PrimitiveId id, int axis, DType index_dtype = DType::kI32);
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  int axis() const { return axis_; }
  DType index_dtype() const { return index_dtype_; }

 private:
  int axis_;
  DType index_dtype_;
};

// Inclusive cumulative sum along `axis`, from the end if `reverse`. Numeric dtypes; the
// output has the operand's aval. f16/bf16 accumulate in f32, each output rounded once.
class Cumsum : public Primitive {
 public:
  Cumsum(int axis, bool reverse);
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  int axis() const { return axis_; }
  bool reverse() const { return reverse_; }

 private:
  int axis_;
  bool reverse_;
};

// Binds the primitives (axes already normalized; no promotion).
Array reduce(PrimitiveId id, const Array& x, std::vector<int> axes);
Array arg_reduce(PrimitiveId id, const Array& x, int axis, DType index_dtype = DType::kI32);
Array cumsum_along(const Array& x, int axis, bool reverse);

}  // namespace graft
