// Random primitives: threefry2x32, the Threefry-2x32 block cipher (20 rounds) that
// jax.random is built on (lax's threefry2x32_p). Everything else in core/random/random.cc is
// composed from public ops around it, so random draws are ordinary lazy graphs.
#pragma once

#include "core/ir/primitive.h"

namespace graft {

// threefry2x32(k1, k2, x1, x2) -> (y1, y2): u32 operands; x1 and x2 have equal shapes, each
// key word is a scalar or has x's shape. Both outputs have x's shape. Not differentiable
// (random bits); batching is elementwise.
class Threefry2x32 : public Primitive {
 public:
  Threefry2x32() : Primitive(PrimitiveId::kThreefry2x32) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
};

}  // namespace graft
