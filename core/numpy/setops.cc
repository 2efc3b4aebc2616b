// jax.numpy set operations (core/numpy/setops.h), written after JAX 0.10.2's setops.py:
// sort (lexsort for axis=), mark the first of each run of equal values, then gather the
// marked entries with nonzero(size=) and pad.
#include "core/numpy/setops.h"

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/numpy/numpy.h"
#include "core/lax/util.h"

namespace graft {

namespace detail {

int64_t concrete_count(const char* op, const Array& mask) {
  if (mask.is_tracer()) {
    fail(op,
         "the result's size depends on traced values (under jit / vmap / grad); pass a "
         "static size= as in JAX");
  }
  return sum(astype(mask, DType::kI32)).item<int64_t>();
}

Array boolean_select(const char* op, const Array& x, const Array& mask) {
  return take(x, nonzero(mask, concrete_count(op, mask))[0], 0);
}

}  // namespace detail

namespace {

Array i32_iota(int64_t n) { return iota(DType::kI32, {n}, 0); }
Array i32(int64_t v) { return scalar(static_cast<double>(v), DType::kI32); }
Array drop_first(const Array& x) { return slice_axis(x, 0, 1, std::nullopt); }  // x[1:]
Array drop_last(const Array& x) { return slice_axis(x, 0, 0, -1); }             // x[:-1]
Array elem0(const Array& x) { return reshape(slice(x, {0}, {1}), {}); }         // x[0]

// x.at[idx].get(mode='fill', fill_value=fill) for a 1-D x.
Array take_or(const Array& x, const Array& idx, const Array& fill) {
  const int64_t n = x.shape()[0];
  if (n == 0) return broadcast_to(astype(fill, x.dtype()), idx.shape());
  Array in = logical_and(idx >= 0, idx < i32(n));
  return where(in, take(x, clip(idx, i32(0), i32(n - 1)), 0, GatherMode::kClip),
               astype(fill, x.dtype()));
}

// x[:n] padded past `count` with fill_value, or (no fill_value) JAX's default: the smallest
// of the valid values (max of all, then min, as setops.py does).
Array pad_past(const Array& vals, const Array& count, std::optional<double> fill_value) {
  Array valid = i32_iota(vals.shape()[0]) < count;
  if (fill_value) return where(valid, vals, full_like(vals, *fill_value));
  if (vals.shape()[0] == 0) return vals;
  Array v = where(valid, vals, max(vals));
  return where(valid, v, min(v));
}

// JAX's _unique on axis 0 of `aux` (already moved there): the values (size rows, or the
// true count of them), first indices, inverse and counts, and the true count.
struct UniqueParts {
  Array values, index, inverse, counts, count;
};

UniqueParts unique_axis0(const char* op, const Array& ar, bool equal_nan,
                         std::optional<int64_t> size, std::optional<double> fill_value) {
  if (size && *size < 0) fail(op, "size must be >= 0, got ", *size);
  const int64_t n = ar.shape()[0];
  Shape rest(ar.shape().begin() + 1, ar.shape().end());
  const int64_t row = numel(rest);
  UniqueParts p;
  if (n == 0) {
    if (size && *size > 0 && !fill_value) {
      fail(op, "for zero-sized input with nonzero size argument, fill_value must be specified");
    }
    Shape vs = rest;
    vs.insert(vs.begin(), size.value_or(0));
    p.values = fill_value ? full(vs, *fill_value, ar.dtype()) : ar;
    p.index = p.inverse = p.counts = zeros({0}, DType::kI32);
    p.count = i32(0);
    return p;
  }
  if (row == 0) fail(op, "slices of size 0 (shape ", shape_str(ar.shape()), ") are not supported");
  // Rows in lexicographic order: lexsort's last key is primary, so the columns go reversed.
  Array flat = reshape(ar, {n, row});
  std::vector<Array> keys;
  for (int64_t j = row - 1; j >= 0; --j)
    keys.push_back(reshape(slice(flat, {0, j}, {n, j + 1}), {n}));
  Array perm = lexsort(keys);
  Array aux = take(ar, perm, 0);
  Array a1 = drop_first(aux), a0 = drop_last(aux);
  Array neq = not_equal(a1, a0);
  if (is_floating(ar.dtype()) && equal_nan) {
    neq = logical_and(neq, logical_not(logical_and(isnan(a1), isnan(a0))));
  }
  if (neq.ndim() > 1) {
    Axes others;
    for (int d = 1; d < neq.ndim(); ++d) others.push_back(d);
    neq = any(neq, others);
  }
  Array mask = concatenate({ones({1}, DType::kBool), neq}, 0);
  Array mask_i = astype(mask, DType::kI32);
  p.count = sum(mask_i);
  const int64_t sz = size ? *size : detail::concrete_count(op, mask);
  Array ind = nonzero(mask, sz)[0];
  Array values = take(aux, ind, 0);
  if (size && fill_value) {
    Shape vshape(values.ndim(), 1);
    vshape[0] = sz;
    Array valid = reshape(i32_iota(sz) < p.count, vshape);
    values = where(valid, values, full_like(values, *fill_value));
  }
  p.values = values;
  p.index = take(perm, ind, 0);
  p.inverse = scatter_add(zeros({n}, DType::kI32), perm, cumsum(mask_i) - 1, 0);
  // Run starts, the padding (nonzero's 0) replaced by n: differences are the run lengths.
  Array starts = nonzero(mask, sz + 1)[0];
  Array tail = drop_first(starts);
  tail = where(tail != 0, tail, full_like(tail, static_cast<double>(n)));
  p.counts = diff(concatenate({slice(starts, {0}, {1}), tail}, 0));
  return p;
}

std::pair<Array, Array> promoted_flat(const char* op, const Array& a, const Array& b) {
  detail::check_valid(op, a);
  detail::check_valid(op, b);
  std::vector<Array> p = detail::promote_dtypes({a, b});
  return {ravel(p[0]), ravel(p[1])};
}

void check_size(const char* op, std::optional<int64_t> size) {
  if (size && *size < 0) fail(op, "size must be >= 0, got ", *size);
}

// arr1's unique values, then arr2's, in one array of arr1.size + arr2.size (JAX's
// _concat_unique), and how many of them are valid.
std::pair<Array, Array> concat_unique(const char* op, const Array& arr1, const Array& arr2) {
  UniqueParts u1 = unique_axis0(op, arr1, true, arr1.size(), std::nullopt);
  UniqueParts u2 = unique_axis0(op, arr2, true, arr2.size(), std::nullopt);
  Array arr = zeros({arr1.size() + arr2.size()}, arr1.dtype());
  arr = dynamic_update_slice(arr, u1.values, {i32(0)});
  arr = dynamic_update_slice(arr, u2.values, {u1.count});
  return {arr, u1.count + u2.count};
}

// The valid entries (mask) first, each part sorted: lax.sort([~mask, arr], num_keys=2).
Array valid_first_order(const Array& arr, const Array& mask) {
  return lexsort({arr, astype(logical_not(mask), DType::kI32)});
}

}  // namespace

std::vector<Array> unique(const Array& ar, const UniqueOptions& o) {
  detail::check_valid("unique", ar);
  Array a = ar;
  int axis = 0;
  if (o.axis) {
    const int64_t nd = ar.ndim();
    if (*o.axis < -nd || *o.axis >= nd) {
      fail("unique", "axis ", *o.axis, " is out of bounds for rank ", nd);
    }
    axis = static_cast<int>(*o.axis < 0 ? *o.axis + nd : *o.axis);
    a = moveaxis(ar, axis, 0);
  } else {
    a = ravel(ar);
  }
  UniqueParts p = unique_axis0("unique", a, o.equal_nan, o.size, o.fill_value);
  std::vector<Array> out = {moveaxis(p.values, 0, axis)};
  if (o.return_index) out.push_back(p.index);
  if (o.return_inverse) out.push_back(o.axis ? p.inverse : reshape(p.inverse, ar.shape()));
  if (o.return_counts) out.push_back(p.counts);
  return out;
}

Array unique(const Array& ar, std::optional<int64_t> size, std::optional<double> fill_value) {
  return unique(ar, UniqueOptions{.size = size, .fill_value = fill_value})[0];
}

UniqueAllResult unique_all(const Array& x, std::optional<int64_t> size,
                           std::optional<double> fill_value) {
  std::vector<Array> r = unique(x, {.return_index = true,
                                    .return_inverse = true,
                                    .return_counts = true,
                                    .equal_nan = false,
                                    .size = size,
                                    .fill_value = fill_value});
  return {r[0], r[1], r[2], r[3]};
}

UniqueCountsResult unique_counts(const Array& x, std::optional<int64_t> size,
                                 std::optional<double> fill_value) {
  std::vector<Array> r = unique(
      x, {.return_counts = true, .equal_nan = false, .size = size, .fill_value = fill_value});
  return {r[0], r[1]};
}

UniqueInverseResult unique_inverse(const Array& x, std::optional<int64_t> size,
                                   std::optional<double> fill_value) {
  std::vector<Array> r = unique(
      x, {.return_inverse = true, .equal_nan = false, .size = size, .fill_value = fill_value});
  return {r[0], r[1]};
}

Array unique_values(const Array& x, std::optional<int64_t> size, std::optional<double> fill_value) {
  return unique(x, {.equal_nan = false, .size = size, .fill_value = fill_value})[0];
}

Array union1d(const Array& ar1, const Array& ar2, std::optional<int64_t> size,
              std::optional<double> fill_value) {
  auto [a, b] = promoted_flat("union1d", ar1, ar2);
  check_size("union1d", size);
  return unique_axis0("union1d", concatenate({a, b}, 0), true, size, fill_value).values;
}

Array setdiff1d(const Array& ar1, const Array& ar2, bool assume_unique, std::optional<int64_t> size,
                std::optional<double> fill_value) {
  detail::check_valid("setdiff1d", ar1);
  detail::check_valid("setdiff1d", ar2);
  check_size("setdiff1d", size);
  Array arr1 = ravel(ar1), arr2 = ravel(ar2);
  const double fill = fill_value.value_or(0.0);
  if (arr1.size() == 0 || (size && *size == 0)) {
    return full({size.value_or(0)}, fill, arr1.dtype());
  }
  if (!assume_unique) {
    arr1 = unique_axis0("setdiff1d", arr1, true, size ? std::optional(arr1.size()) : std::nullopt,
                        std::nullopt)
               .values;
  }
  Array mask = isin(arr1, arr2, true);
  if (!size) return detail::boolean_select("setdiff1d", arr1, mask);
  const int64_t n = arr1.size();
  if (!assume_unique) {
    // unique() padded with arr1[0]: those copies are not results.
    Array n_unique = i32(n + 1) - sum(astype(equal(arr1, elem0(arr1)), DType::kI32));
    mask = logical_and(mask, i32_iota(n) < n_unique);
  }
  Array vals = take(arr1, nonzero(mask, *size)[0], 0);
  Array valid = i32_iota(*size) < sum(astype(mask, DType::kI32));
  return where(valid, vals, full_like(vals, fill));
}

Array setxor1d(const Array& ar1, const Array& ar2, bool assume_unique, std::optional<int64_t> size,
               std::optional<double> fill_value) {
  auto [arr1, arr2] = promoted_flat("setxor1d", ar1, ar2);
  check_size("setxor1d", size);
  const int64_t n = arr1.size() + arr2.size();
  if (!size) {
    if (!assume_unique) {
      arr1 = unique_axis0("setxor1d", arr1, true, std::nullopt, std::nullopt).values;
      arr2 = unique_axis0("setxor1d", arr2, true, std::nullopt, std::nullopt).values;
    }
    Array aux = concatenate({arr1, arr2}, 0);
    if (aux.size() == 0) return aux;
    aux = sort(aux);
    Array t = ones({1}, DType::kBool);
    Array flag = concatenate({t, not_equal(drop_first(aux), drop_last(aux)), t}, 0);
    return detail::boolean_select("setxor1d", aux, logical_and(drop_first(flag), drop_last(flag)));
  }
  if (n == 0) return full({*size}, fill_value.value_or(0.0), arr1.dtype());
  Array aux, flag;
  if (assume_unique) {
    aux = sort(concatenate({arr1, arr2}, 0));
    Array t = ones({1}, DType::kBool);
    flag = concatenate({t, not_equal(drop_first(aux), drop_last(aux)), t}, 0);
  } else {
    auto [arr, num_unique] = concat_unique("setxor1d", arr1, arr2);
    Array mask = i32_iota(n + 1) < num_unique + 1;
    aux = take(arr, valid_first_order(arr, drop_first(mask)), 0);
    Array f = concatenate({ones({1}, DType::kBool), not_equal(drop_first(aux), drop_last(aux)),
                           zeros({1}, DType::kBool)},
                          0);
    f = logical_or(f, equal(i32_iota(n + 1), num_unique));  // .at[num_unique].set(True)
    flag = logical_and(mask, f);
  }
  Array aux_mask = logical_and(drop_first(flag), drop_last(flag));
  Array num = sum(astype(aux_mask, DType::kI32));
  Array vals = take_or(aux, nonzero(aux_mask, *size, n)[0], Array(0));
  return pad_past(vals, num, fill_value);
}

namespace {

Intersect1dResult intersect1d_impl(const Array& ar1, const Array& ar2, bool assume_unique,
                                   std::optional<int64_t> size, std::optional<double> fill_value,
                                   bool want_indices) {
  const char* op = "intersect1d";
  auto [arr1, arr2] = promoted_flat(op, ar1, ar2);
  check_size(op, size);
  const int64_t n1 = arr1.size(), n2 = arr2.size(), n = n1 + n2;
  Array ind1 = i32_iota(n1), ind2 = i32_iota(n2);
  if (!size) {
    if (!assume_unique) {
      UniqueParts u1 = unique_axis0(op, arr1, true, std::nullopt, std::nullopt);
      UniqueParts u2 = unique_axis0(op, arr2, true, std::nullopt, std::nullopt);
      arr1 = u1.values, ind1 = u1.index, arr2 = u2.values, ind2 = u2.index;
    }
    Array arr = concatenate({arr1, arr2}, 0);
    if (arr.size() == 0) return {arr, zeros({0}, DType::kI32), zeros({0}, DType::kI32)};
    Array perm = argsort(arr);
    Array aux = take(arr, perm, 0);
    Array mask = equal(drop_first(aux), drop_last(aux));
    Intersect1dResult r;
    r.values = detail::boolean_select(op, drop_last(aux), mask);
    if (want_indices) {
      r.ar1_indices = take(ind1, detail::boolean_select(op, drop_last(perm), mask), 0);
      r.ar2_indices =
          take(ind2, detail::boolean_select(op, drop_first(perm), mask) - i32(arr1.size()), 0);
    }
    return r;
  }
  Array num_unique1 = i32(n1), aux, sort_idx, mask;
  if (n == 0) {
    Array fill = full({*size}, fill_value.value_or(0.0), arr1.dtype());
    return {fill, full({*size}, n1, DType::kI32), full({*size}, n2, DType::kI32)};
  }
  if (assume_unique) {
    Array arr = concatenate({arr1, arr2}, 0);
    sort_idx = argsort(arr);
    aux = take(arr, sort_idx, 0);
    mask = ones({n}, DType::kBool);
  } else {
    UniqueParts u1 = unique_axis0(op, arr1, true, n1, 0.0);
    UniqueParts u2 = unique_axis0(op, arr2, true, n2, 0.0);
    ind1 = u1.index, ind2 = u2.index, num_unique1 = u1.count;
    Array arr = zeros({n}, arr1.dtype());
    arr = dynamic_update_slice(arr, u1.values, {i32(0)});
    arr = dynamic_update_slice(arr, u2.values, {u1.count});
    mask = i32_iota(n) < u1.count + u2.count;
    sort_idx = valid_first_order(arr, mask);
    aux = take(arr, sort_idx, 0);
  }
  Array aux_mask = logical_and(equal(drop_first(aux), drop_last(aux)), drop_first(mask));
  Array num = sum(astype(aux_mask, DType::kI32));
  Array val_indices = nonzero(aux_mask, *size, n)[0];
  Intersect1dResult r;
  r.values = pad_past(take_or(aux, val_indices, Array(0)), num, fill_value);
  if (!want_indices) return r;
  Array valid = i32_iota(*size) < num;
  Array a1 = where(valid, take_or(sort_idx, val_indices, i32(n1)), i32(n1));
  Array a2 = where(valid, take_or(sort_idx, val_indices + 1, i32(n2)) - num_unique1, i32(n2));
  if (!assume_unique) a1 = take_or(ind1, a1, i32(n1)), a2 = take_or(ind2, a2, i32(n2));
  r.ar1_indices = a1, r.ar2_indices = a2;
  return r;
}

}  // namespace

Array intersect1d(const Array& ar1, const Array& ar2, bool assume_unique,
                  std::optional<int64_t> size, std::optional<double> fill_value) {
  return intersect1d_impl(ar1, ar2, assume_unique, size, fill_value, false).values;
}

Intersect1dResult intersect1d_with_indices(const Array& ar1, const Array& ar2, bool assume_unique,
                                           std::optional<int64_t> size,
                                           std::optional<double> fill_value) {
  return intersect1d_impl(ar1, ar2, assume_unique, size, fill_value, true);
}

}  // namespace graft
