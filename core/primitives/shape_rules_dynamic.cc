// Transform rules of dynamic_slice, dynamic_update_slice and pad. Start indices are integer
// operands: they get no tangent or cotangent. Batched start indices (one start per batch
// element) are handled without loops: dynamic_slice gathers each sliced dim with
// take/take_along_axis, dynamic_update_slice gathers the update to the operand's shape and
// selects it with an iota mask.
#include <utility>

#include "core/lax/lax.h"
#include "core/primitives/shape.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

using shape_rules::batch_size;
using shape_rules::batch_to_front;
using shape_rules::or_zeros;
using shape_rules::zeros_of;

namespace {

std::vector<Array> tail(const std::vector<Array>& v, size_t from) {
  return std::vector<Array>(v.begin() + from, v.end());
}

// Start s (a scalar, or a [B] vector when batched) on a dim of n for a block of `size`, as the
// kernels take it (as i64): a negative start is wrapped once (plus n), then clamped.
Array clamped(const Array& s, int64_t n, int64_t size) {
  Array i = astype(s, DType::kI64);
  i = where(i < int64_t{0}, i + n, i);
  return clip(i, Array(int64_t{0}), Array(n - size));
}

// v (shape [B] or []) reshaped to broadcast along dim `d` of a batched rank-(r + 1) array:
// [B, 1, ..., n at 1 + d, ..., 1]; `v` already has the trailing n (or none).
Array along(const Array& v, int d, int r) {
  Shape s(r + 1, 1);
  s[0] = v.ndim() == 2 ? v.shape()[0] : 1;
  s[1 + d] = v.shape().back();
  return reshape(v, s);
}

}  // namespace

// ---- dynamic_slice ----

std::vector<Array> DynamicSlice::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                     const std::vector<Array>&) const {
  if (!t[0].valid()) return {Array()};
  return {dynamic_slice(t[0], tail(x, 1), sizes_)};
}
std::vector<Array> DynamicSlice::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                     const std::vector<Array>& ct) const {
  std::vector<Array> out(x.size());
  if (!ct[0].valid()) return out;
  // Same wrapping and clamping in both primitives, so the block goes back where it came from.
  out[0] = dynamic_update_slice(zeros_of(x[0].shape(), x[0].dtype()), ct[0], tail(x, 1));
  return out;
}
Batched DynamicSlice::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t b = batch_size(args, dims);
  const int r = static_cast<int>(sizes_.size());
  bool x_batched = dims[0] >= 0;
  Array x = x_batched ? moveaxis(args[0], dims[0], 0) : args[0];
  const int off = x_batched ? 1 : 0;
  const Shape n(x.shape().begin() + off, x.shape().end());  // operand dims
  // First slice the dims with unbatched starts (the dims with batched starts stay whole).
  std::vector<Array> starts(off, Array(0));
  Shape sizes(off, b);
  std::vector<int> gathered;
  for (int d = 0; d < r; ++d) {
    bool batched = dims[1 + d] >= 0;
    starts.push_back(batched ? Array(0) : args[1 + d]);
    sizes.push_back(batched ? n[d] : sizes_[d]);
    if (batched && sizes_[d] < n[d]) gathered.push_back(d);  // else the start clamps to 0
  }
  x = dynamic_slice(x, starts, sizes);
  // Then gather each dim with batched starts: element i of batch k reads start_k + i.
  for (int d : gathered) {
    Array s = clamped(args[1 + d], n[d], sizes_[d]);
    Array idx = add(reshape(s, {b, 1}), iota(DType::kI64, {1, sizes_[d]}, 1));  // [B, size]
    if (!x_batched) {
      x = moveaxis(take(x, idx, d, GatherMode::kClip), d, 0);
      x_batched = true;
    } else {
      x = take_along_axis(x, along(idx, d, r), d + 1, GatherMode::kClip);
    }
  }
  if (!x_batched) x = batch_to_front(x, -1, b);  // only starts of full dims were batched
  return {{x}, {0}};
}

// ---- dynamic_update_slice ----

std::vector<Array> DynamicUpdateSlice::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                           const std::vector<Array>&) const {
  if (!t[0].valid() && !t[1].valid()) return {Array()};
  return {dynamic_update_slice(or_zeros(t[0], x[0]), or_zeros(t[1], x[1]), tail(x, 2))};
}
std::vector<Array> DynamicUpdateSlice::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                           const std::vector<Array>& ct) const {
  std::vector<Array> out(x.size());
  if (!ct[0].valid()) return out;
  std::vector<Array> starts = tail(x, 2);
  out[0] = dynamic_update_slice(ct[0], zeros_of(x[1].shape(), x[1].dtype()), starts);
  out[1] = dynamic_slice(ct[0], starts, x[1].shape());
  return out;
}
Batched DynamicUpdateSlice::vmap(const std::vector<Array>& args,
                                 const std::vector<int>& dims) const {
  const int64_t b = batch_size(args, dims);
  const int r = args[0].ndim() - (dims[0] >= 0 ? 1 : 0);
  Array x = batch_to_front(args[0], dims[0], b);
  bool starts_batched = false;
  for (int d = 0; d < r; ++d) starts_batched = starts_batched || dims[2 + d] >= 0;
  if (!starts_batched) {
    std::vector<Array> starts{Array(0)};
    for (int d = 0; d < r; ++d) starts.push_back(args[2 + d]);
    Array u = batch_to_front(args[1], dims[1], b);
    return {{dynamic_update_slice(x, u, starts)}, {0}};
  }
  const Shape n = x.shape();  // [B, operand dims...]
  bool u_batched = dims[1] >= 0;
  Array u = u_batched ? moveaxis(args[1], dims[1], 0) : args[1];
  if (u.size() == 0) return {{x}, {0}};  // nothing written
  // Spread the update over the operand's shape (position i of dim d reads update element
  // i - start, clamped), then select it where every dim is inside the written block.
  Array mask(true);
  for (int d = 0; d < r; ++d) {
    const int64_t nd = n[1 + d], ud = u.shape()[(u_batched ? 1 : 0) + d];
    if (ud == nd) continue;  // the start clamps to 0: the whole dim is written
    const bool s_batched = dims[2 + d] >= 0;
    Array s = clamped(args[2 + d], nd, ud);
    if (s_batched) s = reshape(s, {b, 1});
    Array rel = subtract(iota(DType::kI64, {1, nd}, 1), s);  // [B or 1, nd]
    mask = logical_and(mask, along(logical_and(rel >= 0, rel < ud), d, r));
    Array idx = clip(rel, Array(int64_t{0}), Array(ud - 1));
    if (u_batched) {
      u = take_along_axis(u, along(idx, d, r), d + 1, GatherMode::kClip);
    } else if (s_batched) {
      u = moveaxis(take(u, idx, d, GatherMode::kClip), d, 0);
      u_batched = true;
    } else {
      u = take(u, reshape(idx, {nd}), d, GatherMode::kClip);
    }
  }
  return {{where(mask, u, x)}, {0}};
}

// ---- pad ----

std::vector<Array> Pad::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                            const std::vector<Array>&) const {
  if (!t[0].valid() && !t[1].valid()) return {Array()};
  return {lax_pad(or_zeros(t[0], x[0]), or_zeros(t[1], x[1]), config_)};
}
std::vector<Array> Pad::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                            const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array(), Array()};
  const Array& g = ct[0];
  // Undo the low/high padding (negated widths put back cropped elements as zeros), then
  // drop the interior padding with a strided slice.
  std::vector<std::array<int64_t, 3>> unpad;
  Shape strides;
  for (const auto& [lo, hi, interior] : config_) {
    unpad.push_back({-lo, -hi, 0});
    strides.push_back(interior + 1);
  }
  Array core = lax_pad(g, scalar(0.0, g.dtype()), unpad);
  Array gx = slice(core, Shape(config_.size(), 0), core.shape(), strides);
  // The padding value fed every output element the operand did not.
  Array gv = subtract(sum(g), sum(gx));
  if (gv.dtype() != x[1].dtype()) gv = astype(gv, x[1].dtype());
  return {gx, gv};
}
Batched Pad::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t b = batch_size(args, dims);
  if (dims[1] < 0) {  // one padding value: pad the batched operand, not its batch axis
    int at = dims[0];
    PadConfig cfg = config_;
    cfg.insert(cfg.begin() + at, {0, 0, 0});
    return {{lax_pad(args[0], args[1], cfg)}, {at}};
  }
  // A padding value per batch element: pad with zeros, then select the values outside the
  // operand with a mask padded the same way.
  const Array& x0 = args[0];
  Shape inner = x0.shape();
  if (dims[0] >= 0) inner.erase(inner.begin() + dims[0]);
  Array x = dims[0] >= 0 ? moveaxis(x0, dims[0], 0) : x0;
  PadConfig cfg = config_;
  if (dims[0] >= 0) cfg.insert(cfg.begin(), {0, 0, 0});
  Array padded = lax_pad(x, scalar(0.0, x.dtype()), cfg);
  Array inside = lax_pad(broadcast_to(Array(true), inner), Array(false), config_);
  Shape vs(inner.size() + 1, 1);
  vs[0] = b;
  Array v = reshape(moveaxis(args[1], dims[1], 0), vs);
  return {{where(inside, padded, v)}, {0}};
}

}  // namespace graft
