// Transform rules of the static shape primitives: reshape, transpose, broadcast_in_dim,
// slice, concatenate, rev, iota. All are linear, so each jvp applies the primitive to the
// tangent and each vjp is the transposed data movement. Batching keeps the batch axis in
// place where the params allow it (no copy) and moves it to the front otherwise.
#include <numeric>

#include "core/interpreters/spmd.h"
#include "core/lax/lax.h"
#include "core/primitives/shape.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

using shape_rules::batch_size;
using shape_rules::batch_to_front;
using shape_rules::or_zeros;
using shape_rules::zeros_of;

namespace {

// Axis a of the unbatched operand, seen in the operand batched at axis b.
int shifted(int a, int b) { return a < b ? a : a + 1; }

template <typename V>
V inserted(V v, int at, typename V::value_type x) {
  v.insert(v.begin() + at, x);
  return v;
}

}  // namespace

// ---- reshape ----

std::vector<Array> Reshape::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                                const std::vector<Array>&) const {
  if (!t[0].valid()) return {Array()};
  return {reshape(t[0], shape_)};
}
std::vector<Array> Reshape::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array()};
  return {reshape(ct[0], x[0].shape())};
}
Batched Reshape::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  // Row-major order only survives with the batch axis in front.
  Array x = moveaxis(args[0], dims[0], 0);
  return {{reshape(x, inserted(shape_, 0, x.shape()[0]))}, {0}};
}

// ---- transpose ----

std::vector<Array> Transpose::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                                  const std::vector<Array>&) const {
  if (!t[0].valid()) return {Array()};
  return {transpose(t[0], perm_)};
}
std::vector<Array> Transpose::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array()};
  std::vector<int> inverse(perm_.size());
  for (size_t i = 0; i < perm_.size(); ++i) inverse[perm_[i]] = static_cast<int>(i);
  return {transpose(ct[0], inverse)};
}
Batched Transpose::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  // One transpose moves the batch axis to the front and permutes the rest.
  int b = dims[0];
  std::vector<int> p{b};
  for (int a : perm_) p.push_back(shifted(a, b));
  return {{transpose(args[0], p)}, {0}};
}

// ---- broadcast_in_dim ----

std::vector<Array> BroadcastInDim::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                                       const std::vector<Array>&) const {
  if (!t[0].valid()) return {Array()};
  return {broadcast_in_dim(t[0], shape_, dims_)};
}
std::vector<Array> BroadcastInDim::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                       const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array()};
  // Sum over the new dims and over the size-1 operand dims that were stretched.
  const Shape& s = x[0].shape();
  std::vector<bool> keep(shape_.size(), false);
  for (size_t i = 0; i < dims_.size(); ++i) keep[dims_[i]] = s[i] == shape_[dims_[i]];
  Axes axes;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (!keep[d]) axes.push_back(static_cast<int64_t>(d));
  }
  Array g = ct[0];
  if (!axes.empty()) g = sum(g, axes);  // sum keeps float dtypes
  return {reshape(g, s)};
}
Batched BroadcastInDim::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  // The batch axis goes right after the output dim of the operand dim before it, which keeps
  // broadcast_dimensions increasing without moving the operand.
  int b = dims[0];
  int q = b == 0 ? 0 : dims_[b - 1] + 1;
  std::vector<int> bd;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (static_cast<int>(i) == b) bd.push_back(q);
    bd.push_back(dims_[i] >= q ? dims_[i] + 1 : dims_[i]);
  }
  if (b == static_cast<int>(dims_.size())) bd.push_back(q);
  Shape out = inserted(shape_, q, args[0].shape()[b]);
  return {{broadcast_in_dim(args[0], out, bd)}, {q}};
}

// ---- slice ----

std::vector<Array> Slice::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                              const std::vector<Array>&) const {
  if (!t[0].valid()) return {Array()};
  return {slice(t[0], start_, limit_, strides_)};
}
std::vector<Array> Slice::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                              const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array()};
  // Zero padding puts each element back: low = start, interior = stride - 1.
  const Shape& s = x[0].shape();
  const Shape& m = ct[0].shape();
  std::vector<std::array<int64_t, 3>> cfg(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    if (m[d] == 0) {
      cfg[d] = {0, s[d], 0};
    } else {
      int64_t last = start_[d] + (m[d] - 1) * strides_[d];
      cfg[d] = {start_[d], s[d] - last - 1, strides_[d] - 1};
    }
  }
  return {lax_pad(ct[0], scalar(0.0, ct[0].dtype()), cfg)};
}
Batched Slice::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  int b = dims[0];
  int64_t n = args[0].shape()[b];
  return {
      {slice(args[0], inserted(start_, b, 0), inserted(limit_, b, n), inserted(strides_, b, 1))},
      {b}};
}

// ---- concatenate ----

std::vector<Array> Concatenate::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                    const std::vector<Array>&) const {
  if (!shape_rules::any_valid(t)) return {Array()};
  std::vector<Array> parts;
  for (size_t i = 0; i < x.size(); ++i) parts.push_back(or_zeros(t[i], x[i]));
  return {concatenate(parts, axis_)};
}
std::vector<Array> Concatenate::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                    const std::vector<Array>& ct) const {
  std::vector<Array> out(x.size());
  if (!ct[0].valid()) return out;
  int64_t at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t n = x[i].shape()[axis_];
    out[i] = slice_axis(ct[0], axis_, at, at + n);
    at += n;
  }
  return out;
}
Batched Concatenate::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  int64_t b = batch_size(args, dims);
  std::vector<Array> parts;
  for (size_t i = 0; i < args.size(); ++i) parts.push_back(batch_to_front(args[i], dims[i], b));
  return {{concatenate(parts, axis_ + 1)}, {0}};
}

// ---- rev ----

std::vector<Array> Rev::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                            const std::vector<Array>&) const {
  if (!t[0].valid()) return {Array()};
  return {apply<Rev>({t[0]}, dims_)};
}
std::vector<Array> Rev::vjp(const std::vector<Array>&, const std::vector<Array>&,
                            const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array()};
  return {apply<Rev>({ct[0]}, dims_)};
}
Batched Rev::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  int b = dims[0];
  std::vector<int> d;
  for (int a : dims_) d.push_back(shifted(a, b));
  return {{apply<Rev>({args[0]}, d)}, {b}};
}

// ---- iota ----

// iota has no inputs: its output is a constant, with a zero tangent and nothing to pull back.
std::vector<Array> Iota::jvp(const std::vector<Array>&, const std::vector<Array>&,
                             const std::vector<Array>&) const {
  return {Array()};
}
std::vector<Array> Iota::vjp(const std::vector<Array>&, const std::vector<Array>&,
                             const std::vector<Array>&) const {
  return {};
}
// Never called (vmap needs a batched argument); the output would not depend on the batch.
Batched Iota::vmap(const std::vector<Array>&, const std::vector<int>&) const {
  return {{apply<Iota>({}, dtype_, shape_, dimension_)}, {-1}};
}


// ---- sharding (core/interpreters/spmd.h) ----
std::optional<spmd::Plan> Transpose::sharding_rule(const spmd::RuleArgs& a) const {
  DimAxes out;
  for (int d : perm_) out.push_back(a.in_dims[0][d]);
  spmd::Plan p;
  p.inputs = {a.in_dims[0]};
  p.outputs = {out};
  p.linear = true;
  return p;
}

// Operand dimensions keep their split in the output dimension they become (a size-1 one
// being broadcast is never split); new dimensions are whole.
std::optional<spmd::Plan> BroadcastInDim::sharding_rule(const spmd::RuleArgs& a) const {
  DimAxes in = a.in_dims[0], out = spmd::replicated(shape_.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (a.in[0].shape[i] == shape_[dims_[i]]) {
      out[dims_[i]] = in[i];
    } else {
      in[i].clear();
    }
  }
  spmd::Plan p;
  p.inputs = {in};
  p.outputs = {out};
  p.local = std::make_shared<const BroadcastInDim>(spmd::local_aval(a.mesh, Aval{shape_}, out).shape,
                                                   dims_);
  return p;
}

// A split input dimension stays split in the output dimension that starts at the same place
// in row-major order (the same product of sizes before it) if that dimension divides into as
// many blocks: then each device's block reshapes to its output block. Other splits are
// gathered first.
std::optional<spmd::Plan> Reshape::sharding_rule(const spmd::RuleArgs& a) const {
  const Shape& ins = a.in[0].shape;
  DimAxes in = a.in_dims[0], out = spmd::replicated(shape_.size());
  int64_t before_in = 1;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!in[i].empty()) {
      int64_t before_out = 1;
      bool mapped = false;
      for (size_t j = 0; j < shape_.size() && before_out <= before_in; ++j) {
        if (before_out == before_in && shape_[j] > 1 && spmd::divides(a.mesh, in[i], shape_[j])) {
          out[j] = in[i];
          mapped = true;
          break;
        }
        before_out *= shape_[j];
      }
      if (!mapped) in[i].clear();
    }
    before_in *= ins[i];
  }
  spmd::Plan p;
  p.inputs = {in};
  p.outputs = {out};
  p.local = std::make_shared<const Reshape>(spmd::local_aval(a.mesh, Aval{shape_}, out).shape);
  return p;
}

// Dimensions the slice keeps whole (start 0, stride 1, to the end) keep their split.
std::optional<spmd::Plan> Slice::sharding_rule(const spmd::RuleArgs& a) const {
  DimAxes in = a.in_dims[0];
  Shape limit = limit_;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool whole = start_[d] == 0 && strides_[d] == 1 && limit_[d] == a.in[0].shape[d];
    if (!whole) in[d].clear();
    limit[d] /= detail::split_count(a.mesh, in[d]);
  }
  spmd::Plan p;
  p.inputs = {in};
  p.outputs = {in};
  p.local = std::make_shared<const Slice>(start_, limit, strides_);
  return p;
}

// The operands, in the layout of the most split one, with the joined dimension whole.
std::optional<spmd::Plan> Concatenate::sharding_rule(const spmd::RuleArgs& a) const {
  DimAxes lead = spmd::replicated(a.out[0].shape.size());
  int64_t best = 0;
  for (const DimAxes& d : a.in_dims) {
    DimAxes c = d;
    c[axis_].clear();
    if (spmd::blocks(a.mesh, c) > best) {
      best = spmd::blocks(a.mesh, c);
      lead = c;
    }
  }
  spmd::Plan p;
  p.inputs.assign(a.in.size(), lead);
  p.outputs = {lead};
  return p;
}

}  // namespace graft
