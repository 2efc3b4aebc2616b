// GShard / Switch capacity dispatch for the MoE layer (nn/moe.h, capacity_factor > 0).
//
// The N tokens are viewed as G = token_groups groups of S = N / G. Within a group each expert
// has C = min(S, ceil(capacity_factor * S * top_k / E)) slots. Assignments claim slots in
// priority order: every token's first choice in token order, then every second choice, and
// so on (GShard's and Switch's order: a token's best expert is served before anyone's second
// one). An assignment that finds its expert full is dropped: it adds nothing to the token's
// output (its weight counts 0; the others keep theirs, not renormalized). Dispatch and
// combine are one-hot [G, S, E, C] tensors, so the whole layer is dense contractions:
//   expert_in [E, G, C, dim] = dispatch . x;  per-expert SwiGLU batched over E;
//   y [G, S, dim] = combine . expert_out.
// Fixed shapes split by expert: with MoEConfig::sharding, expert_in and expert_out are
// constrained by expert and by group, and jit's partitioner exchanges them with all_to_all.
// Errors: "[moe_apply] ..." (graft::Error) when token_groups does not divide N, or the groups
// do not split over the expert axis.
#pragma once

#include <cstdint>

#include "core/array.h"
#include "nn/moe.h"

namespace graft::nn {

// C, the slots per expert per group, for N tokens.
int64_t moe_capacity(const MoEConfig& cfg, int64_t n_tokens);

// dispatch: 1 where token s of group g takes slot c of expert e (x's dtype); combine: the
// same times the assignment's routing weight (f32). Both [G, S, E, C].
struct MoEDispatch {
  Array dispatch, combine;
};
MoEDispatch moe_dispatch(const MoERouting& r, const MoEConfig& cfg, int64_t n_tokens, DType dtype);

// The routed experts' weighted output [N, dim] under capacity dispatch.
Array routed_capacity(const MoEParams& p, const Array& x, const MoEConfig& cfg,
                      const MoERouting& r);

}  // namespace graft::nn
