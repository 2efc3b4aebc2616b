// Transform rules of the collectives (core/primitives/collective.h), in one place.
//
// Derivatives follow JAX's shard_map semantics, where each value either varies over an axis or
// is the same on every member (Aval::vma). Reverse mode sums the cotangent of a value that
// does not vary over the members (core/interpreters/ad.cc, match_vma), so the transposes are:
//   psum         ct -> ct (pvary: the gradient of psum(x) is 1 per member, not n)
//   pvary        ct -> psum(ct)
//   pmax / pmin  ct -> ct where x is the extremum, shared among ties (psum of the count)
//   all_gather   ct -> psum_scatter(ct) over the same dimension (tiled alike)
//   psum_scatter ct -> all_gather(ct)
//   all_to_all   ct -> all_to_all(ct) with split and concat swapped
//   ppermute     ct -> ppermute(ct) with each pair reversed
// jvp applies the collective to the tangent (it is linear), except pmax / pmin.
//
// Batching: a collective over the axis of the vmap being interpreted (batch_axis_name) is
// computed over the batch axis with ordinary ops (psum a reduce_sum, all_gather a moveaxis,
// ...); one over another axis is bound again with the batch axis carried along, moved first.
#include <memory>

#include "core/error.h"
#include "core/interpreters/batching.h"
#include "core/lax/lax.h"
#include "core/primitives/collective.h"
#include "core/primitives/reduce.h"

namespace graft {

namespace {

// The batched operand with its batch axis first (an unbatched one broadcast to n members).
Array batch_first(const Array& x, int d, int64_t n) { return detail::move_batch_axis(x, d, 0, n); }

// Merges axes a and a + 1 of x.
Array merge_axes(const Array& x, int a) {
  Shape s = x.shape();
  s[a] *= s[a + 1];
  s.erase(s.begin() + a + 1);
  return reshape(x, s);
}

// Splits axis a of x into (n, size / n).
Array split_axis(const Array& x, int a, int64_t n) {
  Shape s = x.shape();
  const int64_t k = s[a] / n;
  s[a] = n;
  s.insert(s.begin() + a + 1, k);
  return reshape(x, s);
}

// x == extremum, as x's dtype, and how many members share it.
std::pair<Array, Array> extremum_mask(const Array& x, const Array& y, const AxisNames& axes) {
  Array m = astype(equal(x, y), x.dtype());
  return {m, psum(m, axes)};
}

Batched one(Array out, int dim) { return Batched{{std::move(out)}, {dim}}; }

}  // namespace

// ---- psum / pmax / pmin ----

std::vector<Array> AllReduce::jvp(const std::vector<Array>& primals,
                                  const std::vector<Array>& tangents,
                                  const std::vector<Array>& outputs) const {
  const Array& t = tangents[0];
  if (!t.valid()) return {Array()};
  if (id() == PrimitiveId::kPsum) return {psum(t, axes())};
  auto [m, count] = extremum_mask(primals[0], outputs[0], axes());
  return {psum(t * m, axes()) / count};
}

std::vector<Array> AllReduce::vjp(const std::vector<Array>& primals,
                                  const std::vector<Array>& outputs,
                                  const std::vector<Array>& cotangents) const {
  const Array& ct = cotangents[0];  // already the same on every member (ad.cc: match_vma)
  if (!ct.valid()) return {Array()};
  if (id() == PrimitiveId::kPsum) return {ct};
  auto [m, count] = extremum_mask(primals[0], outputs[0], axes());
  return {ct * m / count};
}

Batched AllReduce::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int k = batch_axis_position();
  if (k < 0)
    return one(bind1(std::make_shared<AllReduce>(id(), axes(), sizes()), {args[0]}), dims[0]);
  Array r;
  if (dims[0] < 0) {  // the same on every member
    r = id() == PrimitiveId::kPsum
            ? args[0] * scalar(static_cast<double>(sizes()[k]), args[0].dtype())
            : args[0];
  } else {
    PrimitiveId red = id() == PrimitiveId::kPsum   ? PrimitiveId::kReduceSum
                      : id() == PrimitiveId::kPmax ? PrimitiveId::kReduceMax
                                                   : PrimitiveId::kReduceMin;
    r = reduce(red, args[0], {dims[0]});
  }
  if (axes().size() > 1) {
    r = bind1(std::make_shared<AllReduce>(id(), axes_without(k), sizes_without(k)), {r});
  }
  return one(r, -1);
}

// ---- pvary ----

std::vector<Array> Pvary::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                              const std::vector<Array>&) const {
  if (!tangents[0].valid()) return {Array()};
  return {bind1(std::make_shared<Pvary>(axes(), sizes()), {tangents[0]})};
}

std::vector<Array> Pvary::vjp(const std::vector<Array>&, const std::vector<Array>&,
                              const std::vector<Array>& cotangents) const {
  if (!cotangents[0].valid()) return {Array()};
  return {psum(cotangents[0], axes())};
}

Batched Pvary::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int k = batch_axis_position();
  if (k < 0) return one(bind1(std::make_shared<Pvary>(axes(), sizes()), {args[0]}), dims[0]);
  if (axes().size() == 1) return one(args[0], dims[0]);
  return one(bind1(std::make_shared<Pvary>(axes_without(k), sizes_without(k)), {args[0]}), dims[0]);
}

// ---- all_gather ----

std::vector<Array> AllGather::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                  const std::vector<Array>&) const {
  if (!tangents[0].valid()) return {Array()};
  return {all_gather(tangents[0], axes()[0], dim(), tiled())};
}

std::vector<Array> AllGather::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>& cotangents) const {
  if (!cotangents[0].valid()) return {Array()};
  return {psum_scatter(cotangents[0], axes()[0], dim(), tiled())};
}

Batched AllGather::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t n = sizes()[0];
  Array x = batch_first(args[0], dims[0], n);
  if (batch_axis_position() < 0) {
    return one(bind1(std::make_shared<AllGather>(axes()[0], n, dim() + 1, tiled()), {x}), 0);
  }
  // Every member receives the whole batch: the batch axis becomes the gathered one.
  Array g = moveaxis(x, 0, dim());
  return one(tiled() ? merge_axes(g, dim()) : g, -1);
}

// ---- psum_scatter ----

std::vector<Array> PsumScatter::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                    const std::vector<Array>&) const {
  if (!tangents[0].valid()) return {Array()};
  return {psum_scatter(tangents[0], axes()[0], dim(), tiled())};
}

std::vector<Array> PsumScatter::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                    const std::vector<Array>& cotangents) const {
  if (!cotangents[0].valid()) return {Array()};
  return {all_gather(cotangents[0], axes()[0], dim(), tiled())};
}

Batched PsumScatter::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t n = sizes()[0];
  Array x = batch_first(args[0], dims[0], n);
  if (batch_axis_position() < 0) {
    return one(bind1(std::make_shared<PsumScatter>(axes()[0], n, dim() + 1, tiled()), {x}), 0);
  }
  // The sum over the batch; member j keeps block j of the scatter dimension, which becomes
  // the batch axis.
  Array s = reduce(PrimitiveId::kReduceSum, x, {0});
  return one(tiled() ? split_axis(s, dim(), n) : s, dim());
}

// ---- all_to_all ----

std::vector<Array> AllToAll::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                 const std::vector<Array>&) const {
  if (!tangents[0].valid()) return {Array()};
  return {all_to_all(tangents[0], axes()[0], split_, concat_, tiled_)};
}

std::vector<Array> AllToAll::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                 const std::vector<Array>& cotangents) const {
  if (!cotangents[0].valid()) return {Array()};
  return {all_to_all(cotangents[0], axes()[0], concat_, split_, tiled_)};
}

Batched AllToAll::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t n = sizes()[0];
  Array x = batch_first(args[0], dims[0], n);  // [b, member dims]
  if (batch_axis_position() < 0) {
    return one(
        bind1(std::make_shared<AllToAll>(axes()[0], n, split_ + 1, concat_ + 1, tiled_), {x}), 0);
  }
  // Member j receives block j of every member b: the split dimension's blocks become the
  // batch, and the sending member's index the concat dimension.
  if (!tiled_) {
    Array y = moveaxis(x, split_ + 1, 0);        // [j, b, member dims without split]
    return one(moveaxis(y, 1, 1 + concat_), 0);  // b at concat
  }
  Array y = moveaxis(split_axis(x, split_ + 1, n), split_ + 1, 0);  // [j, b, member dims]
  return one(merge_axes(moveaxis(y, 1, 1 + concat_), 1 + concat_), 0);
}

// ---- ppermute ----

std::vector<Array> Ppermute::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                 const std::vector<Array>&) const {
  if (!tangents[0].valid()) return {Array()};
  return {ppermute(tangents[0], axes()[0], perm_)};
}

std::vector<Array> Ppermute::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                 const std::vector<Array>& cotangents) const {
  if (!cotangents[0].valid()) return {Array()};
  std::vector<std::pair<int, int>> inverse;
  for (auto [s, d] : perm_) inverse.emplace_back(d, s);
  return {ppermute(cotangents[0], axes()[0], inverse)};
}

Batched Ppermute::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t n = sizes()[0];
  if (batch_axis_position() < 0) {
    return one(bind1(std::make_shared<Ppermute>(axes()[0], n, perm_), {args[0]}), dims[0]);
  }
  Array x = batch_first(args[0], dims[0], n);
  std::vector<Array> members;
  for (int dst = 0; dst < n; ++dst) {
    int src = source_of(dst);
    Array m = squeeze(slice_axis(x, 0, src < 0 ? 0 : src, (src < 0 ? 0 : src) + 1), {0});
    members.push_back(src < 0 ? zeros_like(m) : m);
  }
  return one(stack(members, 0), 0);
}

// ---- axis_index ----

std::vector<Array> AxisIndex::jvp(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>&) const {
  return {Array()};
}

std::vector<Array> AxisIndex::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>&) const {
  return {};
}

Batched AxisIndex::vmap(const std::vector<Array>&, const std::vector<int>&) const {
  if (batch_axis_position() < 0) {
    return one(bind1(std::make_shared<AxisIndex>(axes()[0], sizes()[0]), {}), -1);
  }
  return one(iota(DType::kI32, {sizes()[0]}, 0), 0);
}

}  // namespace graft
