// lax.gather and the lax.scatter family with dimension numbers (core/lax/gather.h).
//
// Both compute, for every element moved, its flat position in the operand: the start of its
// window (index vector entries on start_index_map dims, the batch position on operand
// batching dims, clamped in kClip mode) times the operand's strides, plus the element's offset
// inside the window. gather is then one take from the flattened operand (out-of-bounds windows
// replaced by the fill value); a scatter one scatter primitive into it (dropped windows get a
// position that is negative even after the primitive's wrap). The checks are JAX's
// _gather_shape_rule / _scatter_shape_rule.
#include "core/lax/gather.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/ir/primitive.h"
#include "core/primitives/control.h"
#include "core/primitives/index.h"

namespace graft {
namespace {

using Dims = std::vector<int64_t>;

bool contains(const Dims& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string dims_str(const Dims& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

// Each of `dims` in [0, bound), without repeats, and sorted when asked.
void check_dims(std::string_view op, const char* what, const Dims& dims, int64_t bound,
                bool sorted) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= bound) {
      fail(op, what, " ", dims_str(dims), " must be in [0, ", bound, ")");
    }
    if (i > 0 && sorted && dims[i] <= dims[i - 1]) {
      fail(op, what, " ", dims_str(dims), " must be sorted and have no repeats");
    }
    if (!sorted && std::count(dims.begin(), dims.end(), dims[i]) > 1) {
      fail(op, what, " ", dims_str(dims), " must have no repeats");
    }
  }
}

void check_disjoint(std::string_view op, const char* a, const Dims& x, const char* b,
                    const Dims& y) {
  for (int64_t d : x) {
    if (contains(y, d)) fail(op, a, " ", dims_str(x), " and ", b, " ", dims_str(y), " overlap");
  }
}

void check_integer_indices(std::string_view op, const Array& indices) {
  detail::check_valid(op, indices);
  if (!is_integral(indices.dtype()) || indices.dtype() == DType::kBool) {
    fail(op, "indices must have an integer type, got ", indices.aval().str());
  }
  if (indices.ndim() < 1) {
    fail(op, "indices must have at least one dim (the last holds the index vectors), got ",
         indices.aval().str());
  }
}

// The checks both ops make of the index vectors and the batching dims. `start_map` is
// start_index_map / scatter_dims_to_operand_dims.
void check_index_map(std::string_view op, const char* map_name, const Shape& operand,
                     const Array& indices, const Dims& start_map, const Dims& operand_batching,
                     const char* indices_batching_name, const Dims& indices_batching) {
  const int64_t rank = static_cast<int64_t>(operand.size());
  check_dims(op, "operand_batching_dims", operand_batching, rank, true);
  check_dims(op, indices_batching_name, indices_batching, indices.ndim() - 1, false);
  if (indices_batching.size() != operand_batching.size()) {
    fail(op, "operand_batching_dims ", dims_str(operand_batching), " and ", indices_batching_name,
         " ", dims_str(indices_batching), " must have the same length");
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    if (operand[operand_batching[i]] != indices.shape()[indices_batching[i]]) {
      fail(op, "operand_batching_dims ", dims_str(operand_batching), " and ", indices_batching_name,
           " ", dims_str(indices_batching), " must have the same sizes, got operand ",
           shape_str(operand), " and indices ", indices.aval().str());
    }
  }
  if (static_cast<int64_t>(start_map.size()) != indices.shape().back()) {
    fail(op, map_name, " ", dims_str(start_map), " must have as many entries as the index "
         "vectors (the last dim of indices ", indices.aval().str(), ")");
  }
  check_dims(op, map_name, start_map, rank, false);
  check_disjoint(op, map_name, start_map, "operand_batching_dims", operand_batching);
}

// The flat operand position of every element of every window: shape batch + window (the
// batch shape is the indices' without the last dim, the window shape the sizes of
// `window_dims`). `extent[d]` is the window's size along operand dim d (1 where it has none).
// With clamp, starts are clamped into bounds; otherwise `ok` says which windows are wholly in
// bounds.
struct Positions {
  Array pos;  // i64
  Array ok;   // bool over the batch shape; invalid when clamped
};

Positions flat_positions(const Shape& operand, const Array& indices, const Dims& start_map,
                         const Dims& operand_batching, const Dims& indices_batching,
                         const Shape& extent, const Dims& window_dims, bool clamp) {
  const DType ld = DType::kI64;
  const int rank = static_cast<int>(operand.size());
  Shape strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * operand[d + 1];
  const Shape batch(indices.shape().begin(), indices.shape().end() - 1);
  Array idx = astype(indices, ld);
  const int last = indices.ndim() - 1;
  Array start = zeros(batch, ld);
  Array ok = clamp ? Array() : full(batch, 1, DType::kBool);
  for (size_t k = 0; k < start_map.size(); ++k) {
    const int64_t d = start_map[k];
    Array s = reshape(slice_axis(idx, last, static_cast<int64_t>(k), static_cast<int64_t>(k) + 1),
                      batch);
    Array upper = scalar(static_cast<double>(operand[d] - extent[d]), ld);
    Array zero = scalar(0, ld);
    if (clamp) {
      s = clip(s, zero, upper);
    } else {
      ok = logical_and(ok, logical_and(s >= zero, s <= upper));
    }
    start = start + s * scalar(static_cast<double>(strides[d]), ld);
  }
  for (size_t j = 0; j < operand_batching.size(); ++j) {
    Array b = iota(ld, batch, static_cast<int>(indices_batching[j]));
    start = start + b * scalar(static_cast<double>(strides[operand_batching[j]]), ld);
  }
  Shape window;
  for (int64_t d : window_dims) window.push_back(extent[d]);
  Array offset = zeros(window, ld);
  for (size_t j = 0; j < window_dims.size(); ++j) {
    Array o = iota(ld, window, static_cast<int>(j));
    offset = offset + o * scalar(static_cast<double>(strides[window_dims[j]]), ld);
  }
  Shape full_shape = batch;
  full_shape.insert(full_shape.end(), window.begin(), window.end());
  std::vector<int> lead(batch.size()), tail(window.size());
  for (size_t i = 0; i < lead.size(); ++i) lead[i] = static_cast<int>(i);
  for (size_t i = 0; i < tail.size(); ++i) tail[i] = static_cast<int>(batch.size() + i);
  Array pos = broadcast_in_dim(start, full_shape, lead) + broadcast_in_dim(offset, full_shape, tail);
  return {pos, ok};
}

// i32 positions when every position (and the dropped marker -size - 1) fits, else i64.
DType position_dtype(int64_t size) {
  return size < std::numeric_limits<int32_t>::max() ? DType::kI32 : DType::kI64;
}

// JAX's default gather fill: NaN, the lowest signed or highest unsigned integer, true.
Array default_fill(DType d) {
  if (d == DType::kBool) return scalar(1, d);
  // All bits set is every unsigned type's maximum (u64's is not a double).
  if (is_unsigned(d)) return astype(scalar(-1, DType::kI64), d);
  if (is_integral(d)) return scalar(static_cast<double>(iinfo(d).min), d);
  return scalar(NAN, d);
}

// The operand dims a window spans, in order: neither dropped nor batching.
Dims window_dims_of(int64_t rank, const Dims& dropped, const Dims& batching) {
  Dims w;
  for (int64_t d = 0; d < rank; ++d) {
    if (!contains(dropped, d) && !contains(batching, d)) w.push_back(d);
  }
  return w;
}

}  // namespace

Array gather(const Array& operand, const Array& start_indices,
             const GatherDimensionNumbers& dn, const Shape& slice_sizes, bool, bool,
             GatherScatterMode mode, std::optional<double> fill_value) {
  constexpr const char* op = "gather";
  detail::check_valid(op, operand);
  check_integer_indices(op, start_indices);
  const Shape& os = operand.shape();
  const int64_t rank = operand.ndim();
  const int64_t batch_rank = start_indices.ndim() - 1;
  const int64_t out_rank = static_cast<int64_t>(dn.offset_dims.size()) + batch_rank;
  check_dims(op, "offset_dims", dn.offset_dims, out_rank, true);
  check_dims(op, "collapsed_slice_dims", dn.collapsed_slice_dims, rank, true);
  check_disjoint(op, "collapsed_slice_dims", dn.collapsed_slice_dims, "operand_batching_dims",
                 dn.operand_batching_dims);
  check_index_map(op, "start_index_map", os, start_indices, dn.start_index_map,
                  dn.operand_batching_dims, "start_indices_batching_dims",
                  dn.start_indices_batching_dims);
  if (static_cast<int64_t>(slice_sizes.size()) != rank) {
    fail(op, "slice_sizes ", shape_str(slice_sizes), " must have one entry per operand dim, "
         "operand ", operand.aval().str());
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > os[d]) {
      fail(op, "slice_sizes ", shape_str(slice_sizes), " must be in [0, operand dim] for operand ",
           operand.aval().str());
    }
    if ((contains(dn.collapsed_slice_dims, d) || contains(dn.operand_batching_dims, d)) &&
        slice_sizes[d] > 1) {
      fail(op, "collapsed and operand batching dims must have slice size 0 or 1, got ",
           slice_sizes[d], " for dim ", d);
    }
  }
  const Dims window = window_dims_of(rank, dn.collapsed_slice_dims, dn.operand_batching_dims);
  if (window.size() != dn.offset_dims.size()) {
    fail(op, "offset_dims ", dims_str(dn.offset_dims), " must have one entry per operand dim "
         "that is neither collapsed nor batching (", window.size(), ")");
  }
  // The result in (batch..., window...) order, then moved to offset_dims.
  Shape batch(start_indices.shape().begin(), start_indices.shape().end() - 1);
  Shape bw = batch;
  for (int64_t d : window) bw.push_back(slice_sizes[d]);
  const Array fill =
      fill_value ? scalar(*fill_value, operand.dtype()) : default_fill(operand.dtype());
  const bool clamp = mode != GatherScatterMode::kFillOrDrop;
  Array g;
  if (numel(bw) == 0 || operand.size() == 0) {
    g = broadcast_to(clamp ? zeros({}, operand.dtype()) : fill, bw);
  } else {
    Positions p = flat_positions(os, start_indices, dn.start_index_map, dn.operand_batching_dims,
                                 dn.start_indices_batching_dims, slice_sizes, window, clamp);
    Array flat = reshape(operand, {operand.size()});
    g = take(flat, astype(p.pos, position_dtype(operand.size())), 0, GatherMode::kClip);
    if (!clamp) {
      std::vector<int> lead(batch.size());
      for (size_t i = 0; i < lead.size(); ++i) lead[i] = static_cast<int>(i);
      g = where(broadcast_in_dim(p.ok, bw, lead), g, fill);
    }
  }
  std::vector<int> perm;
  int next_batch = 0, next_window = static_cast<int>(batch.size());
  for (int64_t o = 0; o < out_rank; ++o) {
    perm.push_back(contains(dn.offset_dims, o) ? next_window++ : next_batch++);
  }
  return transpose(g, perm);
}

namespace {

Array scatter_impl(std::string_view op, PrimitiveId id, const Array& operand,
                   const Array& indices, const Array& updates, const ScatterDimensionNumbers& dn,
                   GatherScatterMode mode) {
  detail::check_valid(op, operand);
  detail::check_valid(op, updates);
  check_integer_indices(op, indices);
  if (updates.dtype() != operand.dtype()) {
    fail(op, "operand and updates must have the same dtype, got ", operand.aval().str(), " and ",
         updates.aval().str());
  }
  if (id != PrimitiveId::kScatter && operand.dtype() == DType::kBool) {
    fail(op, "requires a numeric dtype, got ", operand.aval().str());
  }
  const Shape& os = operand.shape();
  const int64_t rank = operand.ndim();
  check_dims(op, "update_window_dims", dn.update_window_dims, updates.ndim(), true);
  check_dims(op, "inserted_window_dims", dn.inserted_window_dims, rank, true);
  check_disjoint(op, "inserted_window_dims", dn.inserted_window_dims, "operand_batching_dims",
                 dn.operand_batching_dims);
  check_index_map(op, "scatter_dims_to_operand_dims", os, indices,
                  dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                  "scatter_indices_batching_dims", dn.scatter_indices_batching_dims);
  const Dims window = window_dims_of(rank, dn.inserted_window_dims, dn.operand_batching_dims);
  if (window.size() != dn.update_window_dims.size()) {
    fail(op, "update_window_dims ", dims_str(dn.update_window_dims), " must have one entry per "
         "operand dim that is neither inserted nor batching (", window.size(), ")");
  }
  const Shape batch(indices.shape().begin(), indices.shape().end() - 1);
  if (updates.ndim() != static_cast<int>(window.size() + batch.size())) {
    fail(op, "updates ", updates.aval().str(), " must have rank ", window.size() + batch.size(),
         " (update_window_dims and the indices' batch dims)");
  }
  Shape extent(rank, 1);
  for (size_t j = 0; j < window.size(); ++j) {
    extent[window[j]] = updates.shape()[dn.update_window_dims[j]];
    if (extent[window[j]] > os[window[j]]) {
      fail(op, "updates ", updates.aval().str(), " window dim ", dn.update_window_dims[j],
           " is larger than operand dim ", window[j], " of ", operand.aval().str());
    }
  }
  std::vector<int> perm;
  for (int d = 0; d < updates.ndim(); ++d) {
    if (!contains(dn.update_window_dims, d)) perm.push_back(d);
  }
  for (size_t j = 0; j < perm.size(); ++j) {
    if (updates.shape()[perm[j]] != batch[j]) {
      fail(op, "updates ", updates.aval().str(), " scatter dims must match the indices' batch "
           "dims, indices ", indices.aval().str());
    }
  }
  if (operand.size() == 0 || updates.size() == 0) return operand;
  for (int64_t d : dn.update_window_dims) perm.push_back(static_cast<int>(d));
  Array u = transpose(updates, perm);
  Positions p = flat_positions(os, indices, dn.scatter_dims_to_operand_dims,
                               dn.operand_batching_dims, dn.scatter_indices_batching_dims, extent,
                               window, mode == GatherScatterMode::kClip);
  Array pos = p.pos;
  if (p.ok.valid()) {
    std::vector<int> lead(batch.size());
    for (size_t i = 0; i < lead.size(); ++i) lead[i] = static_cast<int>(i);
    // Negative even after the primitive wraps it once: dropped.
    const double dropped = -static_cast<double>(operand.size()) - 1;
    pos = where(broadcast_in_dim(p.ok, pos.shape(), lead), pos, scalar(dropped, DType::kI64));
  }
  const int64_t m = u.size();
  Array flat = reshape(operand, {operand.size()});
  Array q = reshape(astype(pos, position_dtype(operand.size())), {m});
  Array fu = reshape(u, {m});
  Array out = id == PrimitiveId::kScatterAdd ? scatter_add(flat, q, fu, 0)
                                             : detail::scatter_combine(flat, q, fu, id);
  return reshape(out, os);
}

}  // namespace

Array scatter(const Array& operand, const Array& scatter_indices, const Array& updates,
              const ScatterDimensionNumbers& dn, bool, bool, GatherScatterMode mode) {
  return scatter_impl("scatter", PrimitiveId::kScatter, operand, scatter_indices, updates, dn,
                      mode);
}
Array scatter_add(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, bool, bool, GatherScatterMode mode) {
  return scatter_impl("scatter_add", PrimitiveId::kScatterAdd, operand, scatter_indices, updates,
                      dn, mode);
}
Array scatter_mul(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, bool, bool, GatherScatterMode mode) {
  return scatter_impl("scatter_mul", PrimitiveId::kScatterMul, operand, scatter_indices, updates,
                      dn, mode);
}
Array scatter_min(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, bool, bool, GatherScatterMode mode) {
  return scatter_impl("scatter_min", PrimitiveId::kScatterMin, operand, scatter_indices, updates,
                      dn, mode);
}
Array scatter_max(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, bool, bool, GatherScatterMode mode) {
  return scatter_impl("scatter_max", PrimitiveId::kScatterMax, operand, scatter_indices, updates,
                      dn, mode);
}

Array scatter_sub(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, bool, bool, GatherScatterMode mode) {
  detail::check_valid("scatter_sub", updates);
  if (updates.dtype() == DType::kBool) {
    fail("scatter_sub", "requires a numeric dtype, got ", updates.aval().str());
  }
  return scatter_impl("scatter_sub", PrimitiveId::kScatterAdd, operand, scatter_indices, -updates,
                      dn, mode);
}

Array scatter_apply(const Array& operand, const Array& scatter_indices,
                    const std::function<Array(const Array&)>& func,
                    const ScatterDimensionNumbers& dn, const Shape& update_shape, bool, bool,
                    GatherScatterMode mode) {
  constexpr const char* op = "scatter_apply";
  detail::check_valid(op, operand);
  if (!func) fail(op, "func is empty");
  // How many windows land on each element: func is applied that many times there.
  Array counts = scatter_impl(op, PrimitiveId::kScatterAdd, zeros(operand.shape(), DType::kI32),
                              scatter_indices, ones(update_shape, DType::kI32), dn, mode);
  if (operand.size() == 0) return operand;
  auto apply_once = [func](const Array& x, const Array& mask) {
    Array y = func(x);
    if (!y.valid() || y.shape() != x.shape() || y.dtype() != x.dtype()) {
      fail("scatter_apply", "func must return an array like its argument ", x.aval().str(),
           ", got ", y.valid() ? y.aval().str() : std::string("an empty handle"));
    }
    return where(mask, y, x);
  };
  // Windows rarely overlap: one application, then more for elements hit more than once.
  Array x = apply_once(operand, counts > 0);
  if (!counts.is_tracer()) {  // concrete indices: a known number of steps (differentiable)
    const int32_t most = max(counts).item<int32_t>();
    for (int32_t k = 1; k < most; ++k) x = apply_once(x, counts > k);
    return x;
  }
  FlatFn cond = [](const std::vector<Array>& in) {  // [max count, x, k]
    return std::vector<Array>{in[2] < in[0]};
  };
  FlatFn body = [apply_once](const std::vector<Array>& in) {  // [counts, x, k]
    return std::vector<Array>{apply_once(in[1], in[0] > in[2]), in[2] + 1};
  };
  return detail::bind_while(cond, body, {max(counts)}, {counts}, {x, scalar(1, DType::kI32)})[0];
}

}  // namespace graft
