// vmap over flat lists of arrays: the engine behind graft::vmap (transforms/vmap.h).
//
// fn is traced on placeholders of the unbatched shapes, then the graph is replayed with the
// batched arguments: a node whose inputs are all unbatched is re-applied as is, any other
// goes through its primitive's batching rule. Nothing loops over the batch.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/graph.h"

namespace graft::detail {

struct VmapResult {
  std::vector<Array> outputs;
  std::vector<int> dims;  // batch axis of each output, -1 where it does not depend on the batch
  int64_t axis_size = 0;
};

// in_dims: one per argument, a normalized axis or -1 (not batched).
VmapResult vmap_flat(const FlatFn& fn, const std::vector<Array>& args,
                     const std::vector<int>& in_dims, std::optional<int64_t> axis_size);

// Moves the batch axis `from` of x to `to` (normalized against the batched rank);
// broadcasts an unbatched x (from == -1) to `size` along `to`.
Array move_batch_axis(const Array& x, int from, int to, int64_t size);

}  // namespace graft::detail
