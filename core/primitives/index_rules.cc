// Transform rules of the indexing primitives: gather, scatter_add, sort.
//
// gather and scatter_add are linear in their data operands and transposes of each other; an
// index that is out of range contributes nothing (gather's fill value is a constant, so its
// tangent there is 0, like JAX's fill_value=0 tangent gather; scatter_add drops the update).
// sort permutes its operands: the permutation comes from sorting once more with an iota
// appended, and tangents / cotangents move along it. Batching uses the primitives' batch_dims
// or a free dim of the indices, so nothing loops over the batch.
#include <cstdint>
#include <limits>
#include <memory>

#include "core/interpreters/spmd.h"
#include "core/lax/lax.h"
#include "core/primitives/index.h"
#include "core/primitives/index_rules_util.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

using shape_rules::or_zeros;
using shape_rules::zeros_of;

namespace {

// The largest value of an index dtype, as a double (exact for all of them but i64).
double index_max(DType d) {
  return dispatch_dtype(d, []<typename T>() -> double {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) < 8) {
      return std::numeric_limits<T>::max();
    }
    return static_cast<double>(std::numeric_limits<int64_t>::max());
  });
}

}  // namespace

namespace index_rules {

Array gather(const Array& x, const Array& idx, int axis, int batch_dims, GatherMode mode) {
  return apply<Gather>({x, idx}, axis, batch_dims, mode);
}

Array scatter(const Array& x, const Array& idx, const Array& updates, int axis, int batch_dims) {
  return apply<ScatterAdd>({x, idx, updates}, axis, batch_dims);
}

Array scatter_with(PrimitiveId id, const Array& x, const Array& idx, const Array& updates,
                   int axis, int batch_dims) {
  if (id == PrimitiveId::kScatterAdd) return scatter(x, idx, updates, axis, batch_dims);
  return apply<ScatterCombine>({x, idx, updates}, id, axis, batch_dims);
}

// Whether each index addresses an element of an axis of size n (negative ones wrap once), or
// an empty Array when the dtype cannot hold an out-of-range index.
Array in_range(const Array& idx, int64_t n) {
  const DType d = idx.dtype();
  const double nd = static_cast<double>(n);
  // Every value of the dtype is in [-n, n) (also -2^31 >= -n for i32).
  if (nd > index_max(d)) return Array();
  Array below = idx < scalar(nd, d);
  return is_unsigned(d) ? below : logical_and(idx >= scalar(-nd, d), below);
}

// The element a kClip gather reads for each index (the kernel's rule: wrap a negative index
// once, then clamp into [0, n)); n > 0.
Array clipped(const Array& idx, int64_t n) {
  const DType d = idx.dtype();
  const double nd = static_cast<double>(n);
  if (nd - 1 >= index_max(d)) {
    if (is_unsigned(d)) return idx;  // every value is in range already
    // i32 indices into an axis longer than 2^31 - 1: wrap in i64.
    return clipped(astype(idx, DType::kI64), n);
  }
  Array zero = scalar(0, d);
  Array w = is_unsigned(d) ? idx : where(idx < zero, idx + scalar(nd, d), idx);
  return clip(w, zero, scalar(nd - 1, d));
}

// g (a gather output for these indices) with the elements of out-of-range indices set to 0.
Array mask_out_of_range(const Array& g, const Array& idx, int64_t n, int axis, int batch_dims) {
  Array ok = in_range(idx, n);
  if (!ok.valid()) return g;
  // Indices dims: batch dims (0..batch_dims) then the index dims, which start at `axis` in g.
  std::vector<int> bd(idx.ndim());
  for (int i = 0; i < idx.ndim(); ++i) bd[i] = i < batch_dims ? i : axis + i - batch_dims;
  return where(broadcast_in_dim(ok, g.shape(), bd), g, scalar(0, g.dtype()));
}

}  // namespace index_rules

namespace {

// x with a new axis of size b inserted at `at` (x broadcast along it).
Array broadcast_new_axis(const Array& x, int at, int64_t b) {
  Shape s = x.shape();
  s.insert(s.begin() + at, b);
  std::vector<int> bd(x.ndim());
  for (int i = 0; i < x.ndim(); ++i) bd[i] = i < at ? i : i + 1;
  return broadcast_in_dim(x, s, bd);
}

int64_t batch_size(const std::vector<Array>& args, const std::vector<int>& dims) {
  return shape_rules::batch_size(args, dims);
}

}  // namespace

namespace index_rules {

Array batch_at(const Array& x, int dim, int at, int64_t b) {
  return dim >= 0 ? moveaxis(x, dim, at) : broadcast_new_axis(x, at, b);
}

Batched scatter_vmap(PrimitiveId id, const std::vector<Array>& args, const std::vector<int>& dims,
                     int axis, int batch_dims) {
  const int64_t b = batch_size(args, dims);
  int dx = dims[0], di = dims[1], du = dims[2];
  if (di >= 0) {
    // Every batch element scatters its own indices: a new leading batch dim for all three.
    Array x = batch_at(args[0], dx, 0, b);
    Array u = batch_at(args[2], du, 0, b);
    return {{scatter_with(id, x, moveaxis(args[1], di, 0), u, axis + 1, batch_dims + 1)}, {0}};
  }
  // Shared indices: the batch axis is a non-batch dim before `axis` in operand and updates
  // (which agree there); keep the operand's where it already is one.
  int at = dx >= batch_dims && dx <= axis ? dx : batch_dims;
  Array x = batch_at(args[0], dx, at, b);
  Array u = batch_at(args[2], du, at, b);
  return {{scatter_with(id, x, args[1], u, axis + 1, batch_dims)}, {at}};
}

// The scattered axis of x whole and the index dimensions past the batch ones too (split,
// each device would combine a part of the updates: a partial result); batch dimensions
// split alike on x, indices and updates (take_along_axis's transpose in MoE routing keeps its
// tokens split). The output is laid out as x.
std::optional<spmd::Plan> scatter_plan(const spmd::RuleArgs& a, int axis, int batch_dims) {
  DimAxes op = a.in_dims[0], idx = a.in_dims[1];
  op[axis].clear();
  for (size_t d = batch_dims; d < idx.size(); ++d) idx[d].clear();
  for (int b = 0; b < batch_dims; ++b) {
    if (op[b].empty()) op[b] = idx[b];
    idx[b] = op[b];
  }
  DimAxes upd;
  for (int d = 0; d < axis; ++d) upd.push_back(op[d]);
  for (size_t d = batch_dims; d < idx.size(); ++d) upd.push_back(idx[d]);
  for (size_t d = axis + 1; d < op.size(); ++d) upd.push_back(op[d]);
  spmd::Plan p;
  p.inputs = {op, idx, upd};
  p.outputs = {op};
  return p;
}

}  // namespace index_rules

using namespace index_rules;  // NOLINT: this file's own helpers

// ---------------------------------------------------------------------------- gather

std::vector<Array> Gather::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                               const std::vector<Array>&) const {
  if (!t[0].valid()) return {Array()};
  const Array& idx = primals[1];
  Array g = gather(t[0], idx, axis_, batch_dims_, mode_);
  // The fill value is a constant: zero tangent where an index misses.
  if (mode_ == GatherMode::kFill) {
    g = mask_out_of_range(g, idx, primals[0].shape()[axis_], axis_, batch_dims_);
  }
  return {g};
}

std::vector<Array> Gather::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                               const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(primals[0].dtype())) return {Array(), Array()};
  const Array& x = primals[0];
  const int64_t n = x.shape()[axis_];
  Array zeros = zeros_of(x.shape(), x.dtype());
  if (n == 0) return {zeros, Array()};
  // kFill: scatter_add drops out-of-range indices, as the fill value wants. kClip: the
  // cotangent goes to the element that was read.
  Array idx = mode_ == GatherMode::kClip ? clipped(primals[1], n) : primals[1];
  return {scatter(zeros, idx, ct[0], axis_, batch_dims_), Array()};
}

Batched Gather::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  Array x = args[0], idx = args[1];
  int dx = dims[0], di = dims[1];
  if (dx >= 0 && di >= 0) {
    // A new leading batch dim shared by operand and indices.
    return {{gather(moveaxis(x, dx, 0), moveaxis(idx, di, 0), axis_ + 1, batch_dims_ + 1, mode_)},
            {0}};
  }
  if (dx >= 0) {
    // The batch axis becomes a dim before or after `axis` that is not a batch dim.
    if (dx < batch_dims_) {
      x = moveaxis(x, dx, batch_dims_);
      dx = batch_dims_;
    }
    if (dx <= axis_) return {{gather(x, idx, axis_ + 1, batch_dims_, mode_)}, {dx}};
    return {{gather(x, idx, axis_, batch_dims_, mode_)}, {idx.ndim() - batch_dims_ + dx - 1}};
  }
  // Batched indices only: the batch axis becomes an index dim (the operand is not copied).
  if (di < batch_dims_) {
    idx = moveaxis(idx, di, batch_dims_);
    di = batch_dims_;
  }
  return {{gather(x, idx, axis_, batch_dims_, mode_)}, {axis_ + di - batch_dims_}};
}

// ------------------------------------------------------------------------ scatter_add

std::vector<Array> ScatterAdd::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                                   const std::vector<Array>&) const {
  if (!t[0].valid() && !t[2].valid()) return {Array()};
  if (!t[2].valid()) return {t[0]};
  return {scatter(or_zeros(t[0], primals[0]), primals[1], t[2], axis(), batch_dims())};
}

std::vector<Array> ScatterAdd::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                                   const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(primals[0].dtype())) return {Array(), Array(), Array()};
  const Array& idx = primals[1];
  const int64_t n = primals[0].shape()[axis()];
  Array cu;
  if (n == 0) {
    cu = zeros_of(primals[2].shape(), primals[2].dtype());  // every update was dropped
  } else {
    // Dropped updates get 0 (not the NaN a kFill gather would give).
    cu = mask_out_of_range(gather(ct[0], clipped(idx, n), axis(), batch_dims(), GatherMode::kClip),
                           idx, n, axis(), batch_dims());
  }
  return {ct[0], Array(), cu};
}

Batched ScatterPrimitive::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return scatter_vmap(id(), args, dims, axis_, batch_dims_);
}

// ------------------------------------------------------------------------------ sort

namespace {

// The permutation that sorts `primals` along `axis`: sort once more with an iota appended.
Array sort_permutation(const Sort& s, const std::vector<Array>& primals) {
  const Shape& shape = primals[0].shape();
  DType d = shape[s.axis()] <= std::numeric_limits<int32_t>::max() ? DType::kI32 : DType::kI64;
  std::vector<Array> ops = primals;
  ops.push_back(iota(d, shape, s.axis()));
  return graft::bind(std::make_shared<const Sort>(s.axis(), s.num_keys(), s.stable()), ops).back();
}

// out[.., j, ..] = x[.., perm[.., j, ..], ..] along `axis` (perm has x's shape).
Array permute(const Array& x, const Array& perm, int axis) {
  const int last = x.ndim() - 1;
  Array g = gather(moveaxis(x, axis, last), moveaxis(perm, axis, last), last, last,
                   GatherMode::kClip);  // indices are in range: clip needs no mask
  return moveaxis(g, last, axis);
}

// The transpose of permute: out[.., perm[.., j, ..], ..] = ct[.., j, ..].
Array unpermute(const Array& ct, const Array& perm, int axis) {
  const int last = ct.ndim() - 1;
  Array c = moveaxis(ct, axis, last);
  Array s = scatter(zeros_of(c.shape(), c.dtype()), moveaxis(perm, axis, last), c, last, last);
  return moveaxis(s, last, axis);
}

}  // namespace

std::vector<Array> Sort::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                             const std::vector<Array>&) const {
  std::vector<Array> out(primals.size());
  if (!shape_rules::any_valid(t)) return out;
  Array perm = sort_permutation(*this, primals);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].valid()) out[i] = permute(t[i], perm, axis_);
  }
  return out;
}

std::vector<Array> Sort::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                             const std::vector<Array>& ct) const {
  std::vector<Array> out(primals.size());
  bool any = false;
  for (size_t i = 0; i < ct.size(); ++i) any |= ct[i].valid() && is_floating(primals[i].dtype());
  if (!any) return out;
  Array perm = sort_permutation(*this, primals);
  for (size_t i = 0; i < ct.size(); ++i) {
    if (ct[i].valid() && is_floating(primals[i].dtype())) {
      out[i] = unpermute(ct[i], perm, axis_);
    }
  }
  return out;
}

Batched Sort::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  // All operands batched at the first batched one's axis (unbatched ones broadcast: sort
  // needs equal shapes).
  const int64_t b = batch_size(args, dims);
  int at = -1;
  for (int d : dims) {
    if (d >= 0 && at < 0) at = d;
  }
  std::vector<Array> ops(args.size());
  for (size_t i = 0; i < args.size(); ++i) ops[i] = batch_at(args[i], dims[i], at, b);
  int axis = axis_ >= at ? axis_ + 1 : axis_;
  std::vector<Array> out = graft::bind(std::make_shared<const Sort>(axis, num_keys_, stable_), ops);
  return {out, std::vector<int>(out.size(), at)};
}


// ---- sharding (core/interpreters/spmd.h) ----
// The gathered axis of the operand must be whole; batch dimensions are split alike on both
// sides; the output's dimensions keep the splits of the operand or index dimensions they
// come from (an embedding lookup of batch-split tokens gives batch-split rows).
std::optional<spmd::Plan> Gather::sharding_rule(const spmd::RuleArgs& a) const {
  DimAxes op = a.in_dims[0], idx = a.in_dims[1];
  op[axis_].clear();
  for (int b = 0; b < batch_dims_; ++b) {
    if (idx[b].empty()) idx[b] = op[b];
    op[b] = idx[b];
  }
  DimAxes out;
  for (int d = 0; d < axis_; ++d) out.push_back(op[d]);
  for (size_t d = batch_dims_; d < idx.size(); ++d) out.push_back(idx[d]);
  for (size_t d = axis_ + 1; d < op.size(); ++d) out.push_back(op[d]);
  spmd::Plan p;
  p.inputs = {op, idx};
  p.outputs = {out};
  return p;  // an axis used twice makes the plan ill-formed: then whole arrays
}

// The scatters: see index_rules::scatter_plan.
std::optional<spmd::Plan> ScatterPrimitive::sharding_rule(const spmd::RuleArgs& a) const {
  return scatter_plan(a, axis_, batch_dims_);
}

// sort: every operand in the first one's layout, the sorted axis whole (rows of an argsort
// over experts stay split by token).
std::optional<spmd::Plan> Sort::sharding_rule(const spmd::RuleArgs& a) const {
  DimAxes d = a.in_dims[0];
  d[axis_].clear();
  spmd::Plan p;
  p.inputs.assign(a.in.size(), d);
  p.outputs.assign(a.out.size(), d);
  return p;
}

}  // namespace graft
