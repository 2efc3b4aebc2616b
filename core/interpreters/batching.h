// vmap as an interpreter of Programs: the engine behind graft::vmap (transforms/vmap.h) and
// the batching rules of primitives that hold bodies (which call vmap_program on them).
//
// vmap_flat traces fn into a closed Program on the unbatched shapes (values of outer traces
// it uses become leading, unbatched inputs), then runs its equations on the batched
// arguments: an equation whose inputs are all unbatched is bound as is, any other goes
// through its primitive's batching rule. Nothing loops over the batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/program.h"

namespace graft::detail {

struct VmapResult {
  std::vector<Array> outputs;
  std::vector<int> dims;  // batch axis of each output, -1 where it does not depend on the batch
  int64_t axis_size = 0;
};

// in_dims: one per argument, a normalized axis or -1 (not batched). A non-empty axis_name
// binds the mapped axis for collectives (core/sharding/axis.h): psum(x, {axis_name}) inside fn sums
// over the batch, as under pmap.
VmapResult vmap_flat(const FlatFn& fn, const std::vector<Array>& args,
                     const std::vector<int>& in_dims, std::optional<int64_t> axis_size,
                     const std::string& axis_name = "");

// The axis name of the vmap whose program this thread is interpreting ("" if unnamed or
// none): collectives' batching rules resolve over the batch those that name it. The batching
// rules of primitives with bodies inherit it when they call vmap_program.
const std::string& batch_axis_name();

// vmap of a program: args one per input, each batched along dims[i] (-1: not batched) with
// batch size `size`.
VmapResult vmap_program(const Program& p, const std::vector<Array>& args,
                        const std::vector<int>& dims, int64_t size);

// Moves the batch axis `from` of x to `to` (normalized against the batched rank);
// broadcasts an unbatched x (from == -1) to `size` along `to`.
Array move_batch_axis(const Array& x, int from, int to, int64_t size);

}  // namespace graft::detail
