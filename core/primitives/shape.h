// Shape primitives (lax semantics): reshape, transpose, broadcast_in_dim, slice,
// dynamic_slice, dynamic_update_slice, concatenate, pad, rev, iota. Their shape rules check
// everything a kernel relies on; the public ops (core/lax/shape_ops.cc) add jnp conveniences
// (-1 in reshape, negative axes, Python slicing, dtype promotion) and nicer messages.
// Transform rules: core/primitives/shape_rules.cc (static shapes) and
// shape_rules_dynamic.cc (dynamic_slice, dynamic_update_slice, pad).
#pragma once

#include <array>
#include <vector>

#include "core/ir/primitive.h"

namespace graft {

// Shape primitives move bytes and compute nothing: cost is zero flops, bytes read + written.
class CopyPrimitive : public Primitive {
 public:
  using Primitive::Primitive;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
};

// reshape(x): same elements in row-major order, new dims (no -1 here).
class Reshape : public Primitive {
 public:
  explicit Reshape(Shape shape) : Primitive(PrimitiveId::kReshape), shape_(std::move(shape)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  const Shape& shape() const { return shape_; }

 private:
  Shape shape_;
};

// transpose(x): output dim i is input dim perm[i].
class Transpose : public CopyPrimitive {
 public:
  explicit Transpose(std::vector<int> perm)
      : CopyPrimitive(PrimitiveId::kTranspose), perm_(std::move(perm)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  const std::vector<int>& perm() const { return perm_; }

 private:
  std::vector<int> perm_;
};

// broadcast_in_dim(x): operand dim i becomes output dim dims[i] (strictly increasing); the
// operand dim is 1 or equals the output dim.
class BroadcastInDim : public CopyPrimitive {
 public:
  BroadcastInDim(Shape shape, std::vector<int> dims)
      : CopyPrimitive(PrimitiveId::kBroadcastInDim),
        shape_(std::move(shape)),
        dims_(std::move(dims)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  const Shape& shape() const { return shape_; }
  const std::vector<int>& dims() const { return dims_; }

 private:
  Shape shape_;
  std::vector<int> dims_;
};

// slice(x): elements start[d], start[d] + strides[d], ... below limit[d] in each dim.
class Slice : public CopyPrimitive {
 public:
  Slice(Shape start, Shape limit, Shape strides)
      : CopyPrimitive(PrimitiveId::kSlice),
        start_(std::move(start)),
        limit_(std::move(limit)),
        strides_(std::move(strides)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  const Shape& start() const { return start_; }
  const Shape& limit() const { return limit_; }
  const Shape& strides() const { return strides_; }  // all >= 1

 private:
  Shape start_, limit_, strides_;
};

// dynamic_slice(x, s_0, ..., s_{n-1}): a `sizes` block at the scalar integer starts s_d; as in
// lax, a negative s_d first gets x.dim(d) added (once), then is clamped into
// [0, x.dim(d) - sizes[d]].
class DynamicSlice : public CopyPrimitive {
 public:
  explicit DynamicSlice(Shape sizes)
      : CopyPrimitive(PrimitiveId::kDynamicSlice), sizes_(std::move(sizes)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  const Shape& sizes() const { return sizes_; }

 private:
  Shape sizes_;
};

// dynamic_update_slice(x, update, s_0, ..., s_{n-1}): x with `update` written at the starts,
// wrapped and clamped as dynamic_slice's.
class DynamicUpdateSlice : public CopyPrimitive {
 public:
  DynamicUpdateSlice() : CopyPrimitive(PrimitiveId::kDynamicUpdateSlice) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
};

// concatenate(x_0, ..., x_{n-1}) along `axis`: equal dtypes, equal other dims.
class Concatenate : public CopyPrimitive {
 public:
  explicit Concatenate(int axis) : CopyPrimitive(PrimitiveId::kConcatenate), axis_(axis) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  int axis() const { return axis_; }

 private:
  int axis_;
};

// pad(x, value): per dim (low, high, interior); low/high may be negative (cropping),
// interior >= 0. `value` is a scalar of x's dtype.
using PadConfig = std::vector<std::array<int64_t, 3>>;
class Pad : public CopyPrimitive {
 public:
  explicit Pad(PadConfig config) : CopyPrimitive(PrimitiveId::kPad), config_(std::move(config)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  const PadConfig& config() const { return config_; }

 private:
  PadConfig config_;
};

// rev(x): reverses the listed dims.
class Rev : public CopyPrimitive {
 public:
  explicit Rev(std::vector<int> dims) : CopyPrimitive(PrimitiveId::kRev), dims_(std::move(dims)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  const std::vector<int>& dims() const { return dims_; }

 private:
  std::vector<int> dims_;
};

// iota(): no inputs; 0, 1, 2, ... along `dimension` of `shape`.
class Iota : public CopyPrimitive {
 public:
  Iota(DType dtype, Shape shape, int dimension)
      : CopyPrimitive(PrimitiveId::kIota),
        dtype_(dtype),
        shape_(std::move(shape)),
        dimension_(dimension) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int dimension() const { return dimension_; }

 private:
  DType dtype_;
  Shape shape_;
  int dimension_;
};

}  // namespace graft
