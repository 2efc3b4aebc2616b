// SPMD partitioning (GSPMD's job in XLA): a program over global arrays, with shardings for its
// inputs, becomes one per-device program over their blocks, with the collectives that make
// the blocks add up to the global result. jit runs it when given shardings (transforms/jit.h);
// the result is a shard_map over the mesh whose body is the per-device program, so make_graph
// and as_text show it with its collectives.
//
// Shardings propagate forward, one equation at a time. Each primitive's sharding rule
// (Primitive::sharding_rule, beside its other rules in its family's rules file) looks at its
// inputs' layouts and says how it computes on blocks: the layouts it needs its inputs in, the
// layouts of its outputs, and whether those are partial results still to be reduced over some
// mesh axes (a contraction or a reduction over a split dimension). The interpreter moves each
// input to the layout asked for: an axis that changes dimension moves with one all_to_all,
// axes that go away are all_gathered, new splits are local dynamic_slices (no communication).
// It binds the local primitive; partial max / min outputs are reduced at once (pmax, pmin),
// partial sums when their first consumer asks for a layout: psum_scatter where that layout
// splits a dimension over the summed axes, psum otherwise. A primitive
// without a rule computes on whole arrays: its inputs are gathered, its outputs replicated.
// That is always correct; rules exist to avoid it. with_sharding_constraint pins a value's
// layout; a jit's out_shardings pin its outputs'.
//
// Layouts are DimAxes (core/sharding/device_put.h): per dimension, the mesh axes it is split over.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/ir/program.h"
#include "core/ir/primitive.h"
#include "core/ir/sharding_rule.h"
#include "core/sharding/device_put.h"

namespace graft::spmd {

// A value of the program being partitioned: its block on this device, its global aval and
// its layout (one entry per dimension). partial: the blocks are partial sums still to be added over `partial_axes` (mesh axis
// indices, none of them in `dims`); reshard finishes them in the layout asked for.
struct Value {
  Array local;
  Aval global;
  DimAxes dims;
  Partial partial = Partial::kNone;
  std::vector<int> partial_axes;
};

// ---- helpers for rules ----
// Unsplit layout of rank r.
DimAxes replicated(size_t rank);
// `d` padded with unsplit dimensions to rank r.
DimAxes full_rank(DimAxes d, size_t rank);
// Whether `axes` split a dimension of size n into equal blocks.
bool divides(const MeshAxes& mesh, const std::vector<int>& axes, int64_t n);
// The layout `d` without the splits that do not divide `shape` evenly.
DimAxes fit(const MeshAxes& mesh, DimAxes d, const Shape& shape);
// How many devices a layout cuts an array into (a rough measure of how sharded it is).
int64_t blocks(const MeshAxes& mesh, const DimAxes& d);
// One device's block shape of `global` under `d`.
Aval local_aval(const MeshAxes& mesh, Aval global, const DimAxes& d);
// The rule of elementwise primitives: operands of one shape computed block by block in the
// layout of the most split one (rank-0 operands stay whole).
Plan elementwise_plan(const RuleArgs& a);

// Finishes a partial result over mesh axes `axes`: psum, pmax or pmin by kind.
Array reduce_partial(const MeshAxes& mesh, Partial kind, const std::vector<int>& axes,
                     const Array& x);

// ---- the interpreter (reshard in spmd_reshard.cc) ----
// Moves `v` to layout `target`: a partial sum is finished first (psum_scatter onto the
// dimensions the target splits over its axes, psum over the others); an axis the target
// wants on another dimension moves there with an all_to_all; axes no longer wanted are
// all_gathered; the rest is a local slice.
Value reshard(const MeshAxes& mesh, const Value& v, const DimAxes& target);
// Runs `p` on sharded inputs inside a trace with the mesh's axes bound (a shard_map body):
// each equation through its sharding rule. want: layouts some outputs must have (nullopt:
// whatever propagation gives); empty for none. prefer: layouts to finish outputs that are
// still partial sums in (a psum_scatter where they split the summed axes; the others are
// psum'd in their own layout). finish = false: partial sums leave unfinished (a body inlined
// into the program being partitioned).
std::vector<Value> partition_program(const MeshAxes& mesh, const Program& p,
                                     const std::vector<Value>& inputs,
                                     const std::vector<std::optional<DimAxes>>& want = {},
                                     const std::vector<std::optional<DimAxes>>& prefer = {},
                                     bool finish = true);

// A body (scan's) partitioned for inputs in layouts `in`: its program over blocks and its
// outputs' layouts (those in `want` as given).
struct PartitionedBody {
  std::shared_ptr<const Program> program;
  std::vector<DimAxes> out;
};
PartitionedBody partition_body(const MeshAxes& mesh, const Program& body,
                               const std::vector<DimAxes>& in,
                               const std::vector<std::optional<DimAxes>>& want,
                               const std::vector<std::optional<DimAxes>>& prefer = {});

// Whether the program (its bodies too) has collectives or shard_maps: such a program is
// already per-device code and is not partitioned again.
bool has_collectives(const Program& p);

}  // namespace graft::spmd
