// Helpers the index family's rules share (index_rules.cc, scatter_rules.cc): the primitives
// bound with their axis / batch_dims layout, the masks of out-of-range indices, batching and
// the sharding plan of every scatter.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/interpreters/spmd.h"
#include "core/lax/lax.h"
#include "core/primitives/index.h"

namespace graft::index_rules {

Array gather(const Array& x, const Array& idx, int axis, int batch_dims, GatherMode mode);
// scatter_add.
Array scatter(const Array& x, const Array& idx, const Array& updates, int axis, int batch_dims);
// scatter_add, scatter, scatter_mul, scatter_min or scatter_max, as `id` says.
Array scatter_with(PrimitiveId id, const Array& x, const Array& idx, const Array& updates,
                   int axis, int batch_dims);

// Whether each index addresses an element of an axis of size n (negative ones wrap once), or
// an empty Array when the dtype cannot hold an out-of-range index.
Array in_range(const Array& idx, int64_t n);
// The element a kClip gather reads for each index (wrap a negative index once, then clamp
// into [0, n)); n > 0.
Array clipped(const Array& idx, int64_t n);
// g (a gather output for these indices) with the elements of out-of-range indices set to 0.
Array mask_out_of_range(const Array& g, const Array& idx, int64_t n, int axis, int batch_dims);

// x batched at `at`: its batch axis (`dim`) moved there, or broadcast when it is unbatched.
Array batch_at(const Array& x, int dim, int at, int64_t b);
// The batching rule of every scatter (`id` as scatter_with's).
Batched scatter_vmap(PrimitiveId id, const std::vector<Array>& args, const std::vector<int>& dims,
                     int axis, int batch_dims);
// The sharding plan of every scatter.
std::optional<spmd::Plan> scatter_plan(const spmd::RuleArgs& a, int axis, int batch_dims);

}  // namespace graft::index_rules
