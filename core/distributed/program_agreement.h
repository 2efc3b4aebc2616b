// Before a shard_map of a multi-process run exchanges anything (the backends' shard_map
// kernels), the processes check that they run the same shard_map: its mesh, specs and body,
// on inputs of the same shapes and dtypes (core/distributed/agreement.h). A jit with
// shardings and a pmap run as one, so they are checked too.
#pragma once

#include <vector>

#include "core/primitives/shard_map.h"

namespace graft::distributed {

// Throws graft::Error "[shard_map] processes disagree on input 0: process 0 has f32[8,3],
// process 1 has f32[8,6]" on every process when they differ (graft::DistributedError when the
// exchange itself fails). One allgather of 8 bytes when they agree; nothing in a one-process
// run.
void check_processes_agree(const ShardMap& p, const std::vector<Aval>& in);

}  // namespace graft::distributed
