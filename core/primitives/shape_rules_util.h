// Helpers shared by the shape family's transform rules (not part of the public API).
#pragma once

#include <vector>

#include "core/lax/lax.h"
#include "core/ir/primitive.h"

namespace graft::shape_rules {

// The batch size of a vmap call: the size of the first batched argument's batch axis.
inline int64_t batch_size(const std::vector<Array>& args, const std::vector<int>& dims) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] >= 0) return args[i].shape()[dims[i]];
  }
  fail("vmap", "no batched argument");
}

// x with its batch axis moved to the front, or broadcast to a new leading axis of size b
// when x is not batched (dim < 0).
inline Array batch_to_front(const Array& x, int dim, int64_t b) {
  if (dim >= 0) return moveaxis(x, dim, 0);
  Shape s = x.shape();
  s.insert(s.begin(), b);
  std::vector<int> bd(x.ndim());
  for (int i = 0; i < x.ndim(); ++i) bd[i] = i + 1;
  return broadcast_in_dim(x, s, bd);
}

// A lazy zero array (a broadcast scalar, nothing materialized while tracing).
inline Array zeros_of(const Shape& shape, DType dtype) {
  return broadcast_in_dim(scalar(0.0, dtype), shape, {});
}

// The tangent t, or zeros like `like` when t is a symbolic zero (empty).
inline Array or_zeros(const Array& t, const Array& like) {
  return t.valid() ? t : zeros_of(like.shape(), like.dtype());
}

inline bool any_valid(const std::vector<Array>& xs) {
  for (const Array& x : xs) {
    if (x.valid()) return true;
  }
  return false;
}

}  // namespace graft::shape_rules
