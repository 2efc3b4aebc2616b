// NumPy-style subscripts, x.at[idx] updates, jnp.put / put_along_axis / place
// (core/lax/index_update.h).
//
// A subscript is applied to the array of x's flat positions (an iota of x's shape), which
// gives the flat position of every element it selects (negative: an out-of-range index).
// get() then takes those positions from ravel(x); the updates scatter into them with one
// scatter_add / scatter / scatter_mul / scatter_min / scatter_max primitive (duplicates
// combine; set: the last one wins), whose rules give grad, vmap and jit.
#include "core/lax/index_update.h"

#include <limits>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/ir/primitive.h"
#include "core/primitives/index.h"

namespace graft {
namespace {

constexpr const char* kAt = "at";

enum class Combine { kSet, kAdd, kMul, kMin, kMax };

// Whether `from` broadcasts to `to` (NumPy rules).
bool broadcasts_ok(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t off = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[off + d]) return false;
  }
  return true;
}

struct Advanced {
  Array idx;  // integer indices (a 0-d one for a Python int)
  int dim;    // the dim of the partly indexed position array it indexes
};

// The positions a subscript selects from x (shape: NumPy's result shape), as i32 (or i64 for
// an x of 2^31 elements or more); an out-of-range array index gives a negative position
// (kFill) or is clamped (kClip).
Array positions(std::string_view op, const Array& x, const std::vector<Index>& idx,
                GatherMode mode) {
  const DType pd = x.size() <= std::numeric_limits<int32_t>::max() ? DType::kI32 : DType::kI64;
  Array p = reshape(iota(pd, {x.size()}), x.shape());
  // The position of an out-of-range pick: negative even after scatter_add wraps it once.
  const double dropped = -static_cast<double>(x.size()) - 1;
  // Expand the ellipsis (at most one) into full slices.
  int consumed = 0, ellipses = 0;
  for (const Index& e : idx) {
    const auto& v = e.value();
    if (std::holds_alternative<Ellipsis>(v)) {
      ++ellipses;
    } else if (!std::holds_alternative<NewAxis>(v)) {
      ++consumed;
    }
  }
  if (ellipses > 1) fail(op, "an index can only have a single ellipsis");
  if (consumed > x.ndim()) {
    fail(op, "too many indices for ", x.aval().str(), ": ", consumed, " non-None/Ellipsis indices");
  }
  std::vector<Index> entries;
  for (const Index& e : idx) {
    if (std::holds_alternative<Ellipsis>(e.value())) {
      for (int k = 0; k < x.ndim() - consumed; ++k) entries.push_back(Range{});
    } else {
      entries.push_back(e);
    }
  }
  if (ellipses == 0) {
    for (int k = consumed; k < x.ndim(); ++k) entries.push_back(Range{});
  }
  // Basic entries (slices, newaxis) apply at once; integers and arrays are advanced.
  std::vector<Advanced> adv;
  int dim = 0;  // the dim of p the next entry indexes
  int first_adv_entry = -1, last_adv_entry = -1;
  bool adjacent = true;
  for (int e = 0; e < static_cast<int>(entries.size()); ++e) {
    const auto& v = entries[e].value();
    if (const auto* s = std::get_if<Range>(&v)) {
      if (s->step == 0) fail(op, "slice step cannot be zero");
      p = slice_axis(p, dim++, s->start, s->stop, s->step);
    } else if (std::holds_alternative<NewAxis>(v)) {
      p = expand_dims(p, {dim++});
    } else {
      Array a;
      if (const auto* i = std::get_if<int64_t>(&v)) {
        a = scalar(static_cast<double>(*i), DType::kI64);
        if (*i >= std::numeric_limits<int32_t>::min() && *i <= std::numeric_limits<int32_t>::max()) {
          a = scalar(static_cast<double>(*i), DType::kI32);
        }
      } else {
        a = std::get<Array>(v);
        detail::check_valid(op, a);
        if (!is_integral(a.dtype()) || a.dtype() == DType::kBool) {
          fail(op, "array indices must be integers, got ", a.aval().str());
        }
      }
      if (first_adv_entry >= 0 && last_adv_entry != e - 1) adjacent = false;
      if (first_adv_entry < 0) first_adv_entry = e;
      last_adv_entry = e;
      adv.push_back({a, dim++});
    }
  }
  if (adv.empty()) return p;
  // Broadcast the advanced indices together; wrap negative ones once; mark (or clamp) the
  // ones out of range; combine them into one linear index over the advanced dims.
  std::vector<Shape> shapes;
  for (const Advanced& a : adv) shapes.push_back(a.idx.shape());
  Shape b = shapes[0];
  for (const Shape& s : shapes) b = broadcast_shapes(op, b, s);
  const DType ld = DType::kI64;
  Array linear = zeros(b, ld);
  Array bad = zeros(b, DType::kBool);
  int64_t stride = 1;
  for (int k = static_cast<int>(adv.size()) - 1; k >= 0; --k) {
    const int64_t n = p.shape()[adv[k].dim];
    Array i = broadcast_to(astype(adv[k].idx, ld), b);
    i = where(i < scalar(0, ld), i + scalar(static_cast<double>(n), ld), i);
    if (mode == GatherMode::kClip) {
      i = clip(i, scalar(0, ld), scalar(static_cast<double>(std::max<int64_t>(n - 1, 0)), ld));
    } else {
      bad = logical_or(bad, logical_or(i < scalar(0, ld), i >= scalar(static_cast<double>(n), ld)));
    }
    linear = linear + i * scalar(static_cast<double>(stride), ld);
    stride *= n;
  }
  // The advanced dims of p to the front, flattened into one.
  std::vector<int> perm;
  for (const Advanced& a : adv) perm.push_back(a.dim);
  for (int d = 0; d < p.ndim(); ++d) {
    bool is_adv = false;
    for (const Advanced& a : adv) is_adv |= a.dim == d;
    if (!is_adv) perm.push_back(d);
  }
  p = transpose(p, perm);
  Shape flat{stride};
  flat.insert(flat.end(), p.shape().begin() + adv.size(), p.shape().end());
  p = reshape(p, flat);
  if (stride == 0) {
    Shape out = b;
    out.insert(out.end(), flat.begin() + 1, flat.end());
    return full(out, dropped, pd);  // an empty axis: every index is out of range
  }
  linear = where(bad, scalar(-1, ld), linear);
  Array out = take(p, linear, 0, GatherMode::kClip);
  // Out-of-range picks: position `dropped` (whatever clip read).
  std::vector<int> bd(b.size());
  for (size_t d = 0; d < b.size(); ++d) bd[d] = static_cast<int>(d);
  out = where(broadcast_in_dim(bad, out.shape(), bd), scalar(dropped, pd), out);
  // Adjacent advanced indices put their dims where the first one was (NumPy's rule).
  if (adjacent && adv[0].dim > 0) {
    const int nb = static_cast<int>(b.size());
    std::vector<int> back;
    for (int d = nb; d < nb + adv[0].dim; ++d) back.push_back(d);
    for (int d = 0; d < nb; ++d) back.push_back(d);
    for (int d = nb + adv[0].dim; d < out.ndim(); ++d) back.push_back(d);
    out = transpose(out, back);
  }
  return out;
}


// x (flat, [n]) with the updates u ([m]) combined in at positions q ([m]; negative after one
// wrap: dropped): one scatter primitive.
Array scatter_flat(const Array& x, const Array& q, const Array& u, Combine how) {
  switch (how) {
    case Combine::kAdd:
      return scatter_add(x, q, u, 0);
    case Combine::kSet:
      return detail::scatter_combine(x, q, u, PrimitiveId::kScatter);
    case Combine::kMul:
      return detail::scatter_combine(x, q, u, PrimitiveId::kScatterMul);
    case Combine::kMin:
      return detail::scatter_combine(x, q, u, PrimitiveId::kScatterMin);
    default:
      return detail::scatter_combine(x, q, u, PrimitiveId::kScatterMax);
  }
}

// x with v combined in at the flat positions `pos` (any shape; v broadcasts to it). bool x
// is updated as i32 and turned back.
Array update_at(std::string_view op, const Array& x, const Array& pos, const Array& v,
                Combine how) {
  detail::check_valid(op, v);
  const DType d = x.dtype() == DType::kBool ? DType::kI32 : x.dtype();
  Array u = detail::convert(v, x.dtype());
  if (!broadcasts_ok(u.shape(), pos.shape())) {
    fail(op, "updates ", v.aval().str(), " cannot be broadcast to the indexed shape ",
         shape_str(pos.shape()));
  }
  u = reshape(broadcast_to(astype(u, d), pos.shape()), {pos.size()});
  Array out = scatter_flat(reshape(astype(x, d), {x.size()}), reshape(pos, {pos.size()}), u, how);
  out = reshape(out, x.shape());
  return x.dtype() == DType::kBool ? out != scalar(0, d) : out;
}

}  // namespace

IndexUpdateRef at(const Array& x, std::vector<Index> idx) {
  detail::check_valid(kAt, x);
  return IndexUpdateRef(x, std::move(idx));
}

Array IndexUpdateRef::get(GatherMode mode) const {
  Array pos = positions(kAt, x_, idx_, mode);
  Array flat = reshape(x_, {x_.size()});
  if (x_.size() == 0) return zeros(pos.shape(), x_.dtype());
  // Marked (negative) positions read the fill value: make them certainly out of range.
  return take(flat, where(pos < scalar(0, pos.dtype()), scalar(-x_.size() - 1.0, pos.dtype()),
                          pos), 0, mode);
}
Array IndexUpdateRef::get() const { return get(GatherMode::kClip); }

Array IndexUpdateRef::set(const Array& v) const {
  return update_at(kAt, x_, positions(kAt, x_, idx_, GatherMode::kFill), v, Combine::kSet);
}
Array IndexUpdateRef::add(const Array& v) const {
  if (x_.dtype() == DType::kBool) fail(kAt, "add needs a numeric array, got ", x_.aval().str());
  return update_at(kAt, x_, positions(kAt, x_, idx_, GatherMode::kFill), v, Combine::kAdd);
}
Array IndexUpdateRef::multiply(const Array& v) const {
  return update_at(kAt, x_, positions(kAt, x_, idx_, GatherMode::kFill), v, Combine::kMul);
}
Array IndexUpdateRef::min(const Array& v) const {
  return update_at(kAt, x_, positions(kAt, x_, idx_, GatherMode::kFill), v, Combine::kMin);
}
Array IndexUpdateRef::max(const Array& v) const {
  return update_at(kAt, x_, positions(kAt, x_, idx_, GatherMode::kFill), v, Combine::kMax);
}
// As JAX: x / (ones with the updates multiplied in), x ** (the same).
Array IndexUpdateRef::divide(const Array& v) const {
  return graft::divide(x_, at(ones_like(x_), idx_).multiply(v));
}
Array IndexUpdateRef::power(const Array& v) const {
  return graft::power(x_, at(ones_like(x_), idx_).multiply(v));
}

namespace {

// v flattened and cycled (or cut) to n elements, like jnp's _tile_to_size.
Array tile_to_size(const Array& v, int64_t n) {
  Array f = reshape(v, {v.size()});
  if (f.size() < n) f = tile(f, {(n + f.size() - 1) / f.size()});
  return f.size() > n ? slice_axis(f, 0, 0, n) : f;
}

Array put_impl(std::string_view op, const Array& a, const Array& ind, const Array& v,
               std::optional<GatherMode> mode, bool wrap) {
  detail::check_valid(op, a);
  detail::check_valid(op, ind);
  detail::check_valid(op, v);
  if (!is_integral(ind.dtype()) || ind.dtype() == DType::kBool) {
    fail(op, "indices must be integers, got ", ind.aval().str());
  }
  if (a.size() == 0 || ind.size() == 0 || v.size() == 0) return a;
  Array i = astype(reshape(ind, {ind.size()}), DType::kI64);
  const double n = static_cast<double>(a.size());
  if (wrap) {
    i = remainder(i, scalar(n, DType::kI64));
  } else if (mode && *mode == GatherMode::kClip) {
    i = clip(i, scalar(0, DType::kI64), scalar(n - 1, DType::kI64));
  } else {
    // As JAX (through jnp.unravel_index): clipped into [-size, size), then negative ones wrap.
    i = clip(i, scalar(-n, DType::kI64), scalar(n - 1, DType::kI64));
    i = where(i < scalar(0, DType::kI64), i + scalar(n, DType::kI64), i);
  }
  return update_at(op, a, i, tile_to_size(v, ind.size()), Combine::kSet);
}

}  // namespace

Array put(const Array& a, const Array& ind, const Array& v, std::optional<GatherMode> mode) {
  return put_impl("put", a, ind, v, mode, false);
}

Array put_wrap(const Array& a, const Array& ind, const Array& v) {
  return put_impl("put", a, ind, v, std::nullopt, true);
}

Array put_along_axis(const Array& arr, const Array& indices, const Array& values,
                     std::optional<int64_t> axis) {
  constexpr const char* op = "put_along_axis";
  detail::check_valid(op, arr);
  detail::check_valid(op, indices);
  detail::check_valid(op, values);
  if (!axis) {
    return reshape(put_along_axis(reshape(arr, {arr.size()}), indices, values, 0), arr.shape());
  }
  if (arr.ndim() != indices.ndim()) {
    fail(op, "arr and indices must have the same ndim, got ", arr.aval().str(), " and ",
         indices.aval().str());
  }
  if (!is_integral(indices.dtype()) || indices.dtype() == DType::kBool) {
    fail(op, "indices must be integers, got ", indices.aval().str());
  }
  const int ax = normalize_axis(op, *axis, arr.ndim());
  if (!broadcasts_ok(values.shape(), indices.shape())) {
    fail(op, "values ", values.aval().str(), " must be broadcastable to indices ",
         indices.aval().str());
  }
  // The other dims of indices index arr's along with them (size 1: broadcast).
  std::vector<Index> sub;
  for (int d = 0; d < arr.ndim(); ++d) {
    if (d == ax) {
      sub.push_back(indices);
      continue;
    }
    if (indices.shape()[d] != 1 && indices.shape()[d] != arr.shape()[d]) {
      fail(op, "indices ", indices.aval().str(), " do not broadcast against arr ",
           arr.aval().str(), " in dim ", d);
    }
    Shape s(arr.ndim(), 1);
    s[d] = arr.shape()[d];
    sub.push_back(reshape(iota(DType::kI32, {arr.shape()[d]}), s));
  }
  return at(arr, sub).set(values);
}

Array place(const Array& arr, const Array& mask, const Array& vals) {
  constexpr const char* op = "place";
  detail::check_valid(op, arr);
  detail::check_valid(op, mask);
  detail::check_valid(op, vals);
  if (arr.size() != mask.size()) {
    fail(op, "arr and mask must have the same size, got ", arr.aval().str(), " and ",
         mask.aval().str());
  }
  if (vals.size() == 0) fail(op, "cannot place values from an empty array");
  if (arr.size() == 0) return arr;
  // The k-th true element of mask (in order) gets vals[k % vals.size].
  Array m = reshape(astype(mask, DType::kBool), {arr.size()});
  Array rank = cumsum(astype(m, DType::kI32)) - 1;
  Array v = tile_to_size(detail::convert(vals, arr.dtype()), arr.size());
  Array picked = take(v, clip(rank, scalar(0, DType::kI32), scalar(arr.size() - 1.0, DType::kI32)),
                      0, GatherMode::kClip);
  return reshape(where(m, picked, reshape(arr, {arr.size()})), arr.shape());
}

}  // namespace graft
