// Indexing primitives: gather along one axis (with leading batch dims), its transpose
// scatter_add, and a stable multi-operand sort. The public ops (core/ops_index.cc) build
// jnp.take / take_along_axis / scatter_add / sort / argsort on these.
#pragma once

#include <cstdint>

#include "core/ops.h"
#include "core/primitive.h"

namespace graft {

// gather(operand, indices): like tf.gather with batch_dims. The first `batch_dims` dims of
// operand and indices are equal and correspond; axis >= batch_dims. The output has shape
// operand.shape[:axis] + indices.shape[batch_dims:] + operand.shape[axis+1:], and
//   out[b, p, i, s] = operand[b, p, indices[b, i], s]
// with b the batch dims, p the dims before axis, i the index dims, s the dims after axis.
// Negative indices wrap once (idx + n); indices still out of range give the fill value
// (kFill: NaN, the lowest signed, the highest unsigned value, or true) or clamp (kClip).
class Gather : public Primitive {
 public:
  Gather(int axis, int batch_dims, GatherMode mode)
      : Primitive(PrimitiveId::kGather), axis_(axis), batch_dims_(batch_dims), mode_(mode) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  int axis() const { return axis_; }
  int batch_dims() const { return batch_dims_; }
  GatherMode mode() const { return mode_; }

 private:
  int axis_;
  int batch_dims_;
  GatherMode mode_;
};

// scatter_add(operand, indices, updates): the transpose of gather (same axis/batch_dims
// layout; updates has gather's output shape). Duplicate indices accumulate; negative
// indices wrap once; updates at indices still out of range are dropped. Numeric dtypes.
class ScatterAdd : public Primitive {
 public:
  ScatterAdd(int axis, int batch_dims)
      : Primitive(PrimitiveId::kScatterAdd), axis_(axis), batch_dims_(batch_dims) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  int axis() const { return axis_; }
  int batch_dims() const { return batch_dims_; }

 private:
  int axis_;
  int batch_dims_;
};

// scatter / scatter_mul / scatter_min / scatter_max(operand, indices, updates): scatter_add's
// layout, indices and dropping with another combiner (the primitive's id says which). Where
// several updates hit one element: scatter keeps the last one in index order (XLA leaves it
// unspecified; every graft backend keeps the last), the others combine them all. min / max
// propagate NaN; integer products wrap. scatter takes every dtype, the others numeric ones.
// The public lax ops (core/ops_lax_gather.h) and x.at[].set / mul / min / max use them.
class ScatterCombine : public Primitive {
 public:
  ScatterCombine(PrimitiveId id, int axis, int batch_dims);
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  int axis() const { return axis_; }
  int batch_dims() const { return batch_dims_; }

 private:
  int axis_;
  int batch_dims_;
};

// sort(operands...): like lax.sort. All operands have one shape; they are permuted along
// `axis` by the lexicographic order of the first `num_keys` operands. Floats order as
// -inf < ... < -0 == +0 < ... < inf < NaN, every NaN (either sign) equal to the others (like
// JAX: tied keys keep their input order). One output per operand. The CPU kernel is always
// stable; `stable` is recorded for other backends.
class Sort : public Primitive {
 public:
  Sort(int axis, int num_keys, bool stable)
      : Primitive(PrimitiveId::kSort), axis_(axis), num_keys_(num_keys), stable_(stable) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  int axis() const { return axis_; }
  int num_keys() const { return num_keys_; }
  bool stable() const { return stable_; }

 private:
  int axis_;
  int num_keys_;
  bool stable_;
};

// True for the dtypes gather/scatter_add accept as indices (i32, i64, u8, u32).
bool is_index_dtype(DType d);

}  // namespace graft
