// jax.numpy searching and counting (core/numpy/searching.h), written after JAX 0.10.2's
// lax_numpy.py, setops.py and hijax.py (searchsorted's "compare_all" method: a count of
// comparisons, fast for the small sorted arrays these are used with).
#include "core/numpy/searching.h"

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/lax/util.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

// lax.sort's order: x < y, with NaN above everything (floats).
Array sort_lt(const Array& x, const Array& y) {
  if (!is_floating(x.dtype())) return less(x, y);
  return logical_or(less(x, y), logical_and(logical_not(isnan(x)), isnan(y)));
}
Array sort_le(const Array& x, const Array& y) {
  if (!is_floating(x.dtype())) return less_equal(x, y);
  return logical_or(less_equal(x, y), isnan(y));
}

Array flat_iota(int64_t n, DType dtype = DType::kI32) { return iota(dtype, {n}, 0); }

}  // namespace

Array searchsorted(const Array& a, const Array& v, const std::string& side) {
  detail::check_valid("searchsorted", a);
  detail::check_valid("searchsorted", v);
  if (a.ndim() != 1) fail("searchsorted", "a must be 1-D, got shape ", shape_str(a.shape()));
  if (side != "left" && side != "right") {
    fail("searchsorted", "side must be 'left' or 'right', got '", side, "'");
  }
  TypeInfo t = detail::result_type({a, v});
  Array sa = detail::convert(a, t.dtype), sv = detail::convert(v, t.dtype);
  // [a..., 1...] against [v...]: a's dim leads, so summing it counts the elements before v.
  Shape ashape = {a.shape()[0]};
  ashape.resize(1 + v.ndim(), 1);
  Array ab = reshape(sa, ashape), vb = expand_dims(sv, {0});
  Array before = side == "left" ? sort_lt(ab, vb) : sort_le(ab, vb);
  return sum(astype(before, DType::kI32), {0});
}

Array digitize(const Array& x, const Array& bins, bool right) {
  detail::check_valid("digitize", x);
  detail::check_valid("digitize", bins);
  if (bins.ndim() != 1) fail("digitize", "bins must be 1-D, got shape ", shape_str(bins.shape()));
  const int64_t n = bins.shape()[0];
  if (n == 0) return zeros(x.shape(), DType::kI32);
  const std::string side = right ? "left" : "right";
  Array increasing = greater_equal(slice(bins, {n - 1}, {n}), slice(bins, {0}, {1}));
  return where(reshape(increasing, {}), searchsorted(bins, x, side),
               scalar(static_cast<double>(n), DType::kI32) - searchsorted(flip(bins), x, side));
}

Array bincount(const Array& x_in, int64_t length, const std::optional<Array>& weights) {
  detail::check_valid("bincount", x_in);
  Array x = x_in.dtype() == DType::kBool ? astype(x_in, DType::kI32) : x_in;
  if (!is_integral(x.dtype())) {
    fail("bincount", "x must have an integer type, got ", dtype_name(x.dtype()));
  }
  if (x.ndim() != 1) fail("bincount", "x must be 1-D, got shape ", shape_str(x.shape()));
  if (length < 0) fail("bincount", "length must be >= 0, got ", length);
  Array w = ones(x.shape(), DType::kI32);
  if (weights) {
    detail::check_valid("bincount", *weights);
    if (weights->shape() != x.shape()) {
      fail("bincount", "weights of shape ", shape_str(weights->shape()),
           " do not match x's shape ", shape_str(x.shape()));
    }
    w = *weights;
  }
  return scatter_add(zeros({length}, w.dtype()), maximum(x, 0), w, 0);
}

Array isin(const Array& element, const Array& test_elements, bool invert) {
  detail::check_valid("isin", element);
  detail::check_valid("isin", test_elements);
  TypeInfo t = detail::result_type({element, test_elements});
  Array e = ravel(detail::convert(element, t.dtype));
  Array s = ravel(detail::convert(test_elements, t.dtype));
  if (e.size() == 0 || s.size() == 0) {
    return invert ? ones(element.shape(), DType::kBool) : zeros(element.shape(), DType::kBool);
  }
  Array r = invert ? all(not_equal(expand_dims(e, {1}), expand_dims(s, {0})), {-1})
                   : any(equal(expand_dims(e, {1}), expand_dims(s, {0})), {-1});
  return reshape(r, element.shape());
}

std::vector<Array> nonzero(const Array& a, int64_t size, int64_t fill_value) {
  detail::check_valid("nonzero", a);
  if (size < 0) fail("nonzero", "size must be >= 0, got ", size);
  if (a.ndim() == 0) fail("nonzero", "a must have rank >= 1 (use atleast_1d)");
  Array mask = ravel(astype(not_equal(a, zeros_like(a)), DType::kI32));
  // Each nonzero element's rank among them is its slot; slots >= size are dropped.
  Array slot = cumsum(mask) - 1;
  slot = where(mask != 0, slot, full_like(slot, static_cast<double>(size)));
  Array flat = scatter_add(zeros({size}, DType::kI32), slot, flat_iota(a.size()), 0);
  Array valid = less(flat_iota(size), sum(mask));
  Array fill = full({size}, static_cast<double>(fill_value), DType::kI32);
  std::vector<Array> out;
  int64_t stride = a.size();
  for (int d = 0; d < a.ndim(); ++d) {
    const int64_t dim = a.shape()[d];
    stride = dim == 0 ? 0 : stride / dim;
    Array c = stride == 0 ? flat : floor_divide(flat, scalar(stride, DType::kI32));
    if (dim > 0) c = remainder(c, scalar(dim, DType::kI32));
    out.push_back(where(valid, c, fill));
  }
  return out;
}

Array flatnonzero(const Array& a, int64_t size, int64_t fill_value) {
  detail::check_valid("flatnonzero", a);
  return nonzero(ravel(a), size, fill_value)[0];
}

Array argwhere(const Array& a, int64_t size, int64_t fill_value) {
  detail::check_valid("argwhere", a);
  if (a.ndim() == 0) return zeros({size, 0}, DType::kI32);
  return stack(nonzero(a, size, fill_value), 1);
}

Array lexsort(const std::vector<Array>& keys, int64_t axis) {
  if (keys.empty()) fail("lexsort", "need at least one key");
  for (const Array& k : keys) {
    detail::check_valid("lexsort", k);
    if (k.shape() != keys[0].shape()) {
      fail("lexsort", "keys differ in shape: ", shape_str(keys[0].shape()), " and ",
           shape_str(k.shape()));
    }
  }
  const int64_t nd = keys[0].ndim();
  if (nd == 0) fail("lexsort", "keys must have rank >= 1");
  if (axis < -nd || axis >= nd) fail("lexsort", "axis ", axis, " is out of bounds for rank ", nd);
  const int ax = static_cast<int>(axis < 0 ? axis + nd : axis);
  // Stable sorts from the least significant key (the first) to the primary one (the last).
  Array idx = iota(DType::kI32, keys[0].shape(), ax);
  for (const Array& k : keys) {
    idx = take_along_axis(idx, argsort(take_along_axis(k, idx, ax), ax), ax);
  }
  return idx;
}

Array histogram_bin_edges(const Array& a, int64_t bins,
                          std::optional<std::pair<double, double>> range) {
  detail::check_valid("histogram_bin_edges", a);
  detail::refuse_complex("histogram_bin_edges", a);
  if (bins < 1) fail("histogram_bin_edges", "bins must be >= 1, got ", bins);
  const DType dt = detail::float_dtype_for(a);
  Array lo, hi;
  if (range) {
    lo = scalar(range->first, dt), hi = scalar(range->second, dt);
  } else {
    if (a.size() == 0) fail("histogram_bin_edges", "a is empty and no range was given");
    Array af = astype(a, dt);
    lo = min(af), hi = max(af);
  }
  Array same = equal(lo, hi);
  lo = where(same, lo - 0.5, lo), hi = where(same, hi + 0.5, hi);
  // jnp.linspace's formula: start * (1 - i / bins) + stop * (i / bins), then stop itself.
  Array step = iota(dt, {bins}, 0) / scalar(static_cast<double>(bins), dt);
  Array body = lo * (1.0 - step) + hi * step;
  return concatenate({body, reshape(hi, {1})}, 0);
}

std::pair<Array, Array> histogram(const Array& a, int64_t bins,
                                  std::optional<std::pair<double, double>> range,
                                  const std::optional<Array>& weights, bool density) {
  detail::check_valid("histogram", a);
  detail::refuse_complex("histogram", a);
  Array x = a, w;
  if (weights) {
    detail::check_valid("histogram", *weights);
    if (weights->shape() != a.shape()) {
      fail("histogram", "weights of shape ", shape_str(weights->shape()),
           " do not match a's shape ", shape_str(a.shape()));
    }
    TypeInfo t = detail::result_type({a, *weights});
    const DType dt = is_floating(t.dtype) ? t.dtype : DType::kF32;
    x = astype(a, dt), w = astype(*weights, dt);
  } else {
    x = astype(a, detail::float_dtype_for(a));
    w = ones_like(x);
  }
  x = ravel(x), w = ravel(w);
  Array edges = histogram_bin_edges(x, bins, range);
  Array idx = searchsorted(edges, x, "right");
  Array last = slice(edges, {bins}, {bins + 1});
  idx = where(equal(x, last), full_like(idx, static_cast<double>(bins)), idx);
  Array counts = scatter_add(zeros({bins + 1}, w.dtype()), idx, w, 0);
  counts = slice(counts, {1}, {bins + 1});
  if (density) counts = counts / diff(edges) / sum(counts);
  return {counts, edges};
}

namespace {

// promote_dtypes_inexact: the common type, made floating (f32 for ints and bool). Complex
// operands are refused (these functions compare or fit real values).
DType inexact_of(const char* op, const std::vector<Array>& xs) {
  for (const Array& x : xs) detail::refuse_complex(op, x);
  const DType d = detail::result_type(xs).dtype;
  return is_floating(d) ? d : DType::kF32;
}

}  // namespace

std::vector<Array> where(const Array& condition, NonzeroSize size) {
  return nonzero(condition, size.size, size.fill_value);
}

std::pair<Array, std::vector<Array>> histogramdd(
    const Array& sample, const HistBins& bins,
    const std::optional<std::vector<std::pair<double, double>>>& range,
    const std::optional<Array>& weights, bool density) {
  if (sample.ndim() != 2) fail("histogramdd", "sample must be [N, D], got rank ", sample.ndim());
  const int64_t N = sample.shape()[0], D = sample.shape()[1];
  std::vector<Array> ins = {sample};
  if (weights) {
    if (weights->shape() != Shape{N}) fail("histogramdd", "should have one weight for each sample");
    ins.push_back(*weights);
  }
  const DType dt = inexact_of("histogramdd", ins);
  const Array s = astype(sample, dt);
  if (range && static_cast<int64_t>(range->size()) != D) {
    fail("histogramdd", "range has ", range->size(), " pairs for ", D, " dims");
  }
  if (bins.size() != 1 && static_cast<int64_t>(bins.size()) != D) {
    fail("histogramdd", "should be a bin for each dimension: ", bins.size(), " for ", D);
  }
  std::vector<Array> edges, idx;
  Shape nbins;
  for (int64_t i = 0; i < D; ++i) {
    const Array col = reshape(slice_axis(s, 1, i, i + 1), {N});
    const auto& b = bins[bins.size() == 1 ? 0 : i];
    Array e;
    if (const int64_t* count = std::get_if<int64_t>(&b)) {
      if (*count < 1) fail("histogramdd", "bins must be positive, got ", *count);
      e = astype(histogram_bin_edges(col, *count,
                                     range ? std::optional((*range)[i]) : std::nullopt), dt);
    } else {
      e = std::get<Array>(b);
      if (e.ndim() != 1 || e.size() < 1) fail("histogramdd", "bin edges must be a non-empty 1-D array");
      e = astype(e, dt);
    }
    const int64_t ne = e.shape()[0];
    Array k = searchsorted(e, col, "right");
    k = where(col == slice_axis(e, 0, ne - 1, ne), k - 1, k);
    idx.push_back(k);
    edges.push_back(e);
    nbins.push_back(ne + 1);
  }
  // ravel_multi_index(idx, nbins, mode="clip").
  Array flat = zeros({N}, DType::kI32);
  for (int64_t i = 0; i < D; ++i) {
    Array k = clip(astype(idx[i], DType::kI32), Array(0), Array(nbins[i] - 1));
    flat = flat * static_cast<int>(nbins[i]) + k;
  }
  int64_t total = 1;
  for (int64_t nb : nbins) total *= nb;
  Array hist = reshape(bincount(flat, total, weights ? std::optional(astype(*weights, dt)) : std::nullopt), nbins);
  Shape lo(static_cast<size_t>(D), 1), hi(nbins);
  for (auto& h : hi) h -= 1;
  hist = slice(hist, lo, hi);
  if (density) {
    hist = astype(hist, dt);
    hist = hist / sum(hist);
    for (int64_t i = 0; i < D; ++i) {
      Shape bs(static_cast<size_t>(D), 1);
      bs[i] = nbins[i] - 2;
      hist = hist / reshape(diff(edges[i]), bs);
    }
  }
  return {hist, edges};
}

std::tuple<Array, Array, Array> histogram2d(
    const Array& x, const Array& y, const HistBins& bins,
    const std::optional<std::vector<std::pair<double, double>>>& range,
    const std::optional<Array>& weights, bool density) {
  if (x.ndim() != 1 || x.shape() != y.shape()) {
    fail("histogram2d", "x and y must be 1-D of one length, got ", shape_str(x.shape()), " and ",
         shape_str(y.shape()));
  }
  if (bins.size() != 1 && bins.size() != 2) fail("histogram2d", "bins has ", bins.size(), " entries");
  auto [hist, edges] = histogramdd(stack({x, y}, 1), bins, range, weights, density);
  return {hist, edges[0], edges[1]};
}

}  // namespace graft
