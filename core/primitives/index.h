// Indexing primitives: gather along one axis (with leading batch dims), its transpose
// scatter_add, and a stable multi-operand sort. The public ops (core/lax/indexing.cc) build
// jnp.take / take_along_axis / scatter_add / sort / argsort on these.
#pragma once

#include <cstdint>

#include "core/lax/lax.h"
#include "core/ir/primitive.h"

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

// The scatter primitives (operand, indices, updates): gather's axis / batch_dims layout
// (updates has gather's output shape); negative indices wrap once; updates at indices still
// out of range are dropped. Their shape rule, parameters, cost, batching and sharding are
// shared; each defines its derivative.
class ScatterPrimitive : public Primitive {
 public:
  ScatterPrimitive(PrimitiveId id, int axis, int batch_dims)
      : Primitive(id), axis_(axis), batch_dims_(batch_dims) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override;
  GRAFT_SHARDING_RULE;
  int axis() const { return axis_; }
  int batch_dims() const { return batch_dims_; }

 private:
  int axis_;
  int batch_dims_;
};

// Declares a scatter primitive's derivative rules (its batching is ScatterPrimitive's).
#define GRAFT_SCATTER_DERIVATIVES                                                               \
  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents, \
                         const std::vector<Array>& outputs) const override;                     \
  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,  \
                         const std::vector<Array>& cotangents) const override

// scatter_add: the transpose of gather. Duplicate indices accumulate. Numeric dtypes.
class ScatterAdd : public ScatterPrimitive {
 public:
  ScatterAdd(int axis, int batch_dims)
      : ScatterPrimitive(PrimitiveId::kScatterAdd, axis, batch_dims) {}
  GRAFT_SCATTER_DERIVATIVES;
};

// scatter / scatter_mul / scatter_min / scatter_max: scatter_add's layout, indices and
// dropping with another combiner (the primitive's id says which). Where several updates hit
// one element: scatter keeps the last one in index order (XLA leaves it unspecified; every
// graft backend keeps the last), the others combine them all. min / max propagate NaN;
// integer products wrap. scatter takes every dtype, the others numeric ones.
class ScatterCombine : public ScatterPrimitive {
 public:
  ScatterCombine(PrimitiveId id, int axis, int batch_dims);
  GRAFT_SCATTER_DERIVATIVES;
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
