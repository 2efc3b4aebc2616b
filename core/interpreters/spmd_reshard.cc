// Resharding (spmd.h): moving a value's blocks to another layout, finishing partial sums.
#include <algorithm>

#include "core/error.h"
#include "core/interpreters/spmd.h"
#include "core/lax/lax.h"

namespace graft::spmd {

namespace {

AxisNames names_of(const MeshAxes& mesh, const std::vector<int>& axes) {
  AxisNames n;
  for (int a : axes) n.push_back(mesh.names[a]);
  return n;
}

// This device's block number along a dimension split over `axes` (major first).
Array block_number(const MeshAxes& mesh, const std::vector<int>& axes) {
  Array b = Array(0);
  for (int a : axes) b = b * Array(static_cast<int>(mesh.sizes[a])) + axis_index(mesh.names[a]);
  return b;
}

}  // namespace

Array reduce_partial(const MeshAxes& mesh, Partial kind, const std::vector<int>& axes,
                     const Array& x) {
  const AxisNames names = names_of(mesh, axes);
  switch (kind) {
    case Partial::kSum:
      return psum(x, names);
    case Partial::kMax:
      return pmax(x, names);
    case Partial::kMin:
      return pmin(x, names);
    case Partial::kNone:
      break;
  }
  return x;
}

namespace {

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool is_prefix(const std::vector<int>& a, const std::vector<int>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Finishes a partial sum over `axes`. Where the target splits a dimension over some of them
// next (after what the dimension is split over already), reduce_scatter (psum_scatter, tiled)
// does the sum and the cut at once, for half an all-reduce's traffic: FSDP gradients (partial
// over the batch's axis) arriving at parameters split over that same axis. The rest: psum.
Array finish_sum(const MeshAxes& mesh, Array x, std::vector<int> axes, DimAxes& cur,
                 const DimAxes& target) {
  for (size_t d = 0; d < cur.size(); ++d) {
    if (!is_prefix(cur[d], target[d])) continue;
    // Major axis first: scattering over a then b leaves block a * |b| + b.
    for (size_t k = cur[d].size(); k < target[d].size() && contains(axes, target[d][k]); ++k) {
      const int a = target[d][k];
      x = psum_scatter(x, mesh.names[a], static_cast<int64_t>(d), /*tiled=*/true);
      cur[d].push_back(a);
      axes.erase(std::find(axes.begin(), axes.end(), a));
    }
  }
  if (!axes.empty()) x = psum(x, names_of(mesh, axes));
  return x;
}

// The dimension that axis `a` (the innermost split of dimension `from`) can move to with one
// all_to_all: one the target splits over `a` right after what it is split over now; -1 if
// none. Concatenating over the innermost axis of `from` makes its block whole over that axis,
// and cutting dimension `to` in |a| pieces splits it over `a` as its innermost axis.
int move_target(const DimAxes& cur, const DimAxes& target, size_t from, int a) {
  for (size_t j = 0; j < cur.size(); ++j) {
    if (j == from || !is_prefix(cur[j], target[j]) || cur[j].size() >= target[j].size()) continue;
    if (target[j][cur[j].size()] == a) return static_cast<int>(j);
  }
  return -1;
}

}  // namespace

Value reshard(const MeshAxes& mesh, const Value& v, const DimAxes& target_in) {
  const size_t rank = v.global.shape.size();
  const DimAxes target = full_rank(target_in, rank);
  DimAxes cur = full_rank(v.dims, rank);
  Array x = v.local;
  if (v.partial == Partial::kSum && !v.partial_axes.empty()) {
    x = finish_sum(mesh, x, v.partial_axes, cur, target);
  } else if (v.partial != Partial::kNone && !v.partial_axes.empty()) {
    x = reduce_partial(mesh, v.partial, v.partial_axes, x);
  }
  if (cur == target) return Value{x, v.global, target};
  // A broadcast scalar (an optimizer's hyperparameter, a zero to start from) is made again at
  // the block's shape rather than cut out of a whole-array broadcast: then it stays a scalar
  // that the fused elementwise consumer reads, instead of a block-sized buffer that lives from
  // here to its use (the whole step's hyperparameters for every weight at once).
  if (const std::shared_ptr<Node>& n = x.node();
      n != nullptr && n->primitive != nullptr &&
      n->primitive->id() == PrimitiveId::kBroadcastInDim && n->inputs.size() == 1 &&
      n->inputs[0].ndim() == 0) {
    return Value{broadcast_to(n->inputs[0], local_aval(mesh, v.global, target).shape), v.global,
                 target};
  }
  // Take off each dimension the axes the target does not split it over (those after the
  // longest common prefix), innermost first. An axis the target wants on another dimension
  // moves there with one all_to_all (expert parallelism: tokens split by group become split
  // by expert); the others are all_gathered. When nothing can move, one axis is gathered and
  // the rest tried again (that may free the way for a move).
  auto suffix = [&](size_t d) { return !is_prefix(cur[d], target[d]); };
  for (;;) {
    bool progress = false;
    for (size_t d = 0; d < rank; ++d) {
      while (suffix(d)) {
        const int a = cur[d].back();
        const int to = move_target(cur, target, d, a);
        if (to < 0) break;
        x = all_to_all(x, mesh.names[a], /*split_axis=*/to, /*concat_axis=*/static_cast<int64_t>(d),
                       /*tiled=*/true);
        cur[d].pop_back();
        cur[static_cast<size_t>(to)].push_back(a);
        progress = true;
      }
    }
    if (progress) continue;
    // Gather first an axis no dimension of the target wants (it must go anyway).
    int pick = -1;
    for (size_t d = 0; d < rank && pick < 0; ++d) {
      if (!suffix(d)) continue;
      bool wanted = false;
      for (const auto& t : target) wanted = wanted || contains(t, cur[d].back());
      if (!wanted) pick = static_cast<int>(d);
    }
    for (size_t d = 0; d < rank && pick < 0; ++d) {
      if (suffix(d)) pick = static_cast<int>(d);
    }
    if (pick < 0) break;
    x = all_gather(x, mesh.names[cur[pick].back()], pick, /*tiled=*/true);
    cur[pick].pop_back();
  }
  // Now every dimension is split over a prefix of its target: cut this device's block out of
  // the current one along the remaining axes (no communication).
  bool cut = false;
  std::vector<Array> starts;
  Shape sizes = x.shape();
  for (size_t d = 0; d < rank; ++d) {
    if (cur[d] == target[d]) {
      starts.push_back(Array(0));
      continue;
    }
    cut = true;
    const std::vector<int> extra(target[d].begin() + cur[d].size(), target[d].end());
    sizes[d] = x.shape()[d] / detail::split_count(mesh, extra);
    starts.push_back(block_number(mesh, extra) * Array(static_cast<int>(sizes[d])));
  }
  if (cut) x = dynamic_slice(x, starts, sizes);
  return Value{x, v.global, target};
}

}  // namespace graft::spmd
