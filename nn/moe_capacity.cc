#include "nn/moe_capacity.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "core/ops.h"

namespace graft::nn {

namespace {

// The layout constraint of expert parallelism, or the value itself when there is none.
Array constrain(const Array& x, const MoEConfig& cfg, int dim) {
  if (!cfg.sharding) return x;
  std::vector<DimSplit> spec(static_cast<size_t>(dim), none);
  spec.push_back(cfg.sharding->expert_axis);
  return with_sharding_constraint(x, NamedSharding(cfg.sharding->mesh, PartitionSpec(spec)));
}

// [N, k] -> [G, k * S]: each group's assignments in priority order (choice-major).
Array priority_order(const Array& a, int64_t g, int64_t s, int64_t k) {
  return reshape(transpose(reshape(a, {g, s, k}), std::vector<int>{0, 2, 1}), {g, k * s});
}

}  // namespace

int64_t moe_capacity(const MoEConfig& cfg, int64_t n_tokens) {
  const int64_t s = n_tokens / cfg.token_groups;
  const double want = std::ceil(cfg.capacity_factor * static_cast<double>(s * cfg.top_k) /
                                static_cast<double>(cfg.n_experts));
  // An expert can get at most one assignment per token: more slots would stay empty.
  return std::max<int64_t>(1, std::min<int64_t>(s, static_cast<int64_t>(want)));
}

MoEDispatch moe_dispatch(const MoERouting& r, const MoEConfig& cfg, int64_t n, DType dtype) {
  const int64_t g = cfg.token_groups, s = n / g, k = cfg.top_k, e = cfg.n_experts;
  const int64_t c = moe_capacity(cfg, n);
  // Slot of each assignment: how many assignments before it (in priority order) chose the
  // same expert. Counted in i32: exact at any size.
  Array mask = one_hot(priority_order(r.experts, g, s, k), e, DType::kI32);  // [G, kS, E]
  Array before = cumsum(mask, 1) - mask;
  Array slot = sum(before * mask, {-1});  // [G, kS]
  Array kept = astype(less(slot, scalar(static_cast<double>(c), DType::kI32)), dtype);
  Array slots = one_hot(slot, c, dtype) * expand_dims(kept, {2});               // [G, kS, C]
  Array per = expand_dims(astype(mask, dtype), {3}) * expand_dims(slots, {2});  // [G, kS, E, C]
  Array w = expand_dims(priority_order(r.weights, g, s, k), {2, 3});            // f32 [G, kS, 1, 1]
  Array dispatch = sum(reshape(per, {g, k, s, e, c}), {1});
  Array combine = sum(reshape(astype(per, DType::kF32) * w, {g, k, s, e, c}), {1});
  return MoEDispatch{dispatch, combine};
}

Array routed_capacity(const MoEParams& p, const Array& x, const MoEConfig& cfg,
                      const MoERouting& r) {
  const int64_t n = x.shape()[0], g = cfg.token_groups, d = cfg.dim;
  if (n % g != 0) {
    fail("moe_apply", "token_groups (", g, ") must divide the number of tokens (", n, ")");
  }
  const DType dt = x.dtype();
  MoEDispatch dc = moe_dispatch(r, cfg, n, dt);
  Array xg = constrain(reshape(x, {g, n / g, d}), cfg, 0);  // [G, S, dim], by group
  // expert_in[e, g, c] = sum_s dispatch[g, s, e, c] x[g, s]: then by expert (all_to_all).
  Array in = dot_general(constrain(dc.dispatch, cfg, 0), xg,
                         DotDims{.lhs_contract = {1},
                                 .rhs_contract = {1},
                                 .lhs_batch = {0},
                                 .rhs_batch = {0}});                    // [G, E, C, dim]
  in = constrain(transpose(in, std::vector<int>{1, 0, 2, 3}), cfg, 0);  // [E, G, C, dim]
  // Each expert's SwiGLU on its slots, batched over E (empty slots are zeros and stay so).
  const DotDims per_expert{
      .lhs_contract = {3}, .rhs_contract = {1}, .lhs_batch = {0}, .rhs_batch = {0}};
  Array a = dot_general(in, astype(p.w1, dt), per_expert);
  Array b = dot_general(in, astype(p.w3, dt), per_expert);
  Array h = a * sigmoid(a) * b;
  Array out = constrain(dot_general(h, astype(p.w2, dt), per_expert), cfg, 1);  // by group
  // y[g, s] = sum_{e, c} combine[g, s, e, c] out[e, g, c].
  Array y = dot_general(constrain(astype(dc.combine, dt), cfg, 0), out,
                        DotDims{.lhs_contract = {2, 3},
                                .rhs_contract = {0, 2},
                                .lhs_batch = {0},
                                .rhs_batch = {1}});  // [G, S, dim]
  return reshape(constrain(y, cfg, 0), {n, d});
}

}  // namespace graft::nn
