// What a primitive's sharding rule (Primitive::sharding_rule) is given and says: the types
// the SPMD partitioner (core/interpreters/spmd.h, which describes the scheme) and the rules
// share. Here, beside the Primitive interface, so that the interface's default rule (none:
// the primitive computes on whole arrays) is defined where the interface is.
#pragma once

#include <memory>
#include <vector>

#include "core/array.h"
#include "core/sharding/mesh.h"

namespace graft {

class Primitive;
struct Program;

namespace spmd {

// Whether a value's blocks are partial results still to be reduced over some mesh axes.
enum class Partial { kNone, kSum, kMax, kMin };

// What a sharding rule says (see above). inputs / outputs: one layout per input / output
// (full rank). partial: the outputs are partial results over `partial_axes` (mesh axis
// indices), reduced with psum (kSum), pmax or pmin. local: the primitive to apply to blocks
// when this one's parameters name global sizes (reshape, broadcast_in_dim, slice, scan);
// null: the primitive itself.
struct Plan {
  std::vector<DimAxes> inputs;
  std::vector<DimAxes> outputs;
  Partial partial = Partial::kNone;
  std::vector<int> partial_axes;
  std::shared_ptr<const Primitive> local;
  // Blocks pass through unchanged (with_sharding_constraint: its work is the resharding).
  bool identity = false;
  // The outputs are linear in each operand on its own (transpose, neg, mul): one partial-sum
  // operand already in the layout asked for passes through, its outputs partial sums too, so
  // the sum waits for a consumer that says where it wants it (an FSDP gradient: dot_general,
  // transpose, times the learning rate, into a sharded update: one psum_scatter).
  bool linear = false;
  // The outputs are linear in all operands together (add, sub): when every operand is a
  // partial sum over the same axes in the layout asked for, so are the outputs (gradients
  // accumulated over micro-batches, or over the uses of a weight).
  bool additive = false;
  // Set instead of the above by call primitives (custom_jvp_call, custom_vjp_call, remat): what
  // they compute is this body of theirs (taking their inputs), partitioned in their place.
  std::shared_ptr<const Program> inline_body;
};

// What a rule is given: the mesh, the inputs' global avals and current layouts, and the
// outputs' global avals.
struct RuleArgs {
  const MeshAxes& mesh;
  const std::vector<Aval>& in;
  const std::vector<DimAxes>& in_dims;
  const std::vector<Aval>& out;
};

}  // namespace spmd
}  // namespace graft
