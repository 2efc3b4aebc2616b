// take's modes, repeat by array, the one-argument where, block, histogramdd / histogram2d,
// polydiv, polyfit and frombuffer, after JAX 0.10.2 (lax_numpy.py, indexing.py,
// polynomial.py), composed of core/ops.h ops.
#include "core/numpy/misc.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/buffer.h"
#include "core/error.h"
#include "core/lax/util.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

int64_t norm_axis(const char* op, int64_t axis, int64_t nd) {
  if (axis < -nd || axis >= nd) fail(op, "axis ", axis, " is out of range for rank ", nd);
  return axis < 0 ? axis + nd : axis;
}

// promote_dtypes_inexact: the common type, made floating (f32 for ints and bool). Complex
// operands are refused (these functions compare or fit real values).
DType inexact_of(const char* op, const std::vector<Array>& xs) {
  for (const Array& x : xs) detail::refuse_complex(op, x);
  const DType d = detail::result_type(xs).dtype;
  return is_floating(d) ? d : DType::kF32;
}

double eps_of(DType d) {
  switch (d) {
    case DType::kF16: return 0x1p-10;
    case DType::kBF16: return 0x1p-7;
    case DType::kF64: return 0x1p-52;
    default: return 0x1p-23;
  }
}

// x with `dims` size-1 axes in front (JAX's _atleast_nd).
Array atleast_nd(const Array& x, int64_t n) {
  if (x.ndim() >= n) return x;
  Shape s(static_cast<size_t>(n - x.ndim()), 1);
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return reshape(x, s);
}

std::pair<Array, int64_t> block_of(const BlockArg& b) {
  if (const Array* a = std::get_if<Array>(&b.item())) return {*a, 1};
  const auto& items = std::get<std::vector<BlockArg>>(b.item());
  if (items.empty()) fail("block", "empty lists are not allowed");
  std::vector<Array> xs;
  int64_t depth = -1, rank = 0;
  for (const BlockArg& item : items) {
    auto [x, d] = block_of(item);
    if (depth >= 0 && d != depth) fail("block", "mismatched list depths");
    depth = d;
    rank = std::max<int64_t>(rank, x.ndim());
    xs.push_back(x);
  }
  rank = std::max(rank, depth);
  for (Array& x : xs) x = atleast_nd(x, rank);
  return {concatenate(xs, rank - depth), depth + 1};
}

}  // namespace

Array take(const Array& x, const Array& indices, std::optional<int64_t> axis, TakeMode mode,
           std::optional<double> fill_value) {
  const Array a = axis ? x : ravel(x);
  const int64_t ax = axis ? norm_axis("take", *axis, x.ndim()) : 0;
  if (!is_integral(indices.dtype())) fail("take", "indices must be integers, got ", indices.dtype());
  if (a.ndim() == 0) fail("take", "x must have at least one dim");
  const int64_t n = a.shape()[ax];
  switch (mode) {
    case TakeMode::kClip:
      return take(a, indices, ax, GatherMode::kClip);
    case TakeMode::kWrap:
      if (n == 0) return take(a, indices, ax, GatherMode::kClip);  // the empty-axis error
      return take(a, remainder(indices, scalar(static_cast<double>(n), indices.dtype())), ax,
                  GatherMode::kClip);
    case TakeMode::kFill:
      break;
  }
  Array out = take(a, indices, ax, GatherMode::kFill);
  if (!fill_value) return out;
  // In range after one wrap of negatives: -n <= i < n.
  Array ok = indices < scalar(static_cast<double>(n), indices.dtype());
  if (!is_unsigned(indices.dtype())) {
    ok = logical_and(ok, indices >= scalar(-static_cast<double>(n), indices.dtype()));
  }
  Shape s(static_cast<size_t>(ax), 1);
  s.insert(s.end(), indices.shape().begin(), indices.shape().end());
  s.resize(static_cast<size_t>(out.ndim()), 1);
  return where(reshape(ok, s), out, scalar(*fill_value, a.dtype()));
}

Array repeat(const Array& x, const Array& repeats, std::optional<int64_t> axis,
             std::optional<int64_t> total_repeat_length) {
  const Array a = axis ? x : ravel(x);
  const int64_t ax = axis && x.ndim() > 0 ? norm_axis("repeat", *axis, x.ndim()) : 0;
  if (!is_integral(repeats.dtype())) fail("repeat", "repeats must be integers, got ", repeats.dtype());
  if (repeats.ndim() > 1) fail("repeat", "repeats must be a scalar or 1-D, got rank ", repeats.ndim());
  const int64_t n = a.ndim() == 0 ? 1 : a.shape()[ax];
  if (repeats.ndim() == 1 && repeats.shape()[0] != 1 && repeats.shape()[0] != n) {
    fail("repeat", repeats.shape()[0], " repeats for an axis of size ", n);
  }
  Array reps = broadcast_to(astype(ravel(repeats), DType::kI32), {n});
  int64_t total;
  if (total_repeat_length) {
    total = *total_repeat_length;
    if (total < 0) fail("repeat", "total_repeat_length must be >= 0, got ", total);
  } else {
    if (repeats.is_tracer()) {
      fail("repeat", "the repeats must be concrete (not traced by jit or vmap); pass a static "
           "total_repeat_length");
    }
    if (repeats.ndim() == 0 && a.ndim() != 0) return repeat(a, repeats.item<int64_t>(), ax);
    total = 0;
    for (int64_t r : reps.to_vector<int64_t>()) {
      if (r < 0) fail("repeat", "negative repeat count ", r);
      total += r;
    }
  }
  if (a.ndim() == 0) {
    if (repeats.size() != 1) fail("repeat", "a scalar x takes one repeat count");
    return broadcast_to(a, {total});
  }
  if (total == 0) {
    Shape s(a.shape());
    s[ax] = 0;
    return zeros(s, a.dtype());
  }
  if (n == 0) return a;
  // JAX's gather indices: mark where each element's run starts, then count the marks.
  Array starts = cumsum(concatenate({zeros({1}, DType::kI32), slice_axis(reps, 0, 0, n - 1)}));
  Array marks = scatter_add(zeros({total}, DType::kI32), starts, ones({n}, DType::kI32));
  return take(a, cumsum(marks) - 1, ax, GatherMode::kFill);
}

std::vector<Array> where(const Array& condition, int64_t size, int64_t fill_value) {
  return nonzero(condition, size, fill_value);
}

Array block(const BlockArg& arrays) { return block_of(arrays).first; }

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

std::pair<Array, Array> polydiv(const Array& u0, const Array& v0, bool trim_leading_zeros) {
  if (u0.ndim() != 1 || v0.ndim() != 1 || v0.size() == 0 || u0.size() == 0) {
    fail("polydiv", "u and v must be non-empty 1-D coefficient arrays");
  }
  const DType dt = inexact_of("polydiv", {u0, v0});
  Array u = astype(u0, dt), v = astype(v0, dt);
  const int64_t m = u.size() - 1, n = v.size() - 1;
  const Array scale = 1.0 / slice_axis(v, 0, 0, 1);
  std::vector<Array> q;
  for (int64_t k = 0; k <= m - n; ++k) {
    Array d = scale * slice_axis(u, 0, k, k + 1);
    q.push_back(d);
    u = u + pad(-d * v, {{k, m - n - k}});
  }
  Array quot = q.empty() ? zeros({1}, dt) : concatenate(q);
  if (trim_leading_zeros) {
    if (u.is_tracer()) fail("polydiv", "trim_leading_zeros needs concrete values (not under jit or vmap)");
    const double tol = std::sqrt(eps_of(dt));
    std::vector<double> r = astype(u, DType::kF64).to_vector<double>();
    int64_t start = 0;
    while (start < static_cast<int64_t>(r.size()) && std::fabs(r[start]) < tol) ++start;
    u = slice_axis(u, 0, start, u.size());
  }
  return {quot, u};
}

PolyfitFull polyfit_full(const Array& x0, const Array& y0, int64_t deg, std::optional<double> rcond,
                         const std::optional<Array>& w) {
  if (deg < 0) fail("polyfit", "expected deg >= 0, got ", deg);
  if (x0.ndim() != 1) fail("polyfit", "expected 1D vector for x");
  if (x0.size() == 0) fail("polyfit", "expected non-empty vector for x");
  if (y0.ndim() < 1 || y0.ndim() > 2) fail("polyfit", "expected 1D or 2D array for y");
  if (x0.shape()[0] != y0.shape()[0]) fail("polyfit", "expected x and y to have same length");
  std::vector<Array> ins = {x0, y0};
  if (w) ins.push_back(*w);
  const DType dt = inexact_of("polyfit", ins);
  const Array x = astype(x0, dt);
  const double rc = rcond.value_or(static_cast<double>(x.size()) * eps_of(dt));
  Array lhs = vander(x, deg + 1);
  Array rhs = astype(y0, dt);
  if (w) {
    if (w->ndim() != 1) fail("polyfit", "expected a 1-d array for weights");
    if (w->shape()[0] != y0.shape()[0]) fail("polyfit", "expected w and y to have the same length");
    const Array wc = reshape(astype(*w, dt), {w->shape()[0], 1});
    lhs = lhs * wc;
    rhs = rhs * (rhs.ndim() == 2 ? wc : reshape(wc, {w->shape()[0]}));
  }
  const Array scale = sqrt(sum(lhs * lhs, {0}));
  lhs = lhs / reshape(scale, {1, deg + 1});
  LstsqResult r = linalg::lstsq(lhs, rhs, rc);
  Array c = r.x.ndim() > 1 ? r.x / reshape(scale, {deg + 1, 1}) : r.x / scale;
  return {c, r.resid, r.rank, r.s, scalar(rc, dt)};
}

Array polyfit(const Array& x, const Array& y, int64_t deg, std::optional<double> rcond,
              const std::optional<Array>& w) {
  return polyfit_full(x, y, deg, rcond, w).coef;
}

Array frombuffer(std::string_view buffer, DType dtype, int64_t count, int64_t offset) {
  const int64_t size = static_cast<int64_t>(buffer.size()), item = dtype_size(dtype);
  if (offset < 0 || offset > size) {
    fail("frombuffer", "offset ", offset, " is outside the buffer of ", size, " bytes");
  }
  const int64_t avail = size - offset;
  int64_t n = count;
  if (count < 0) {
    if (avail % item != 0) {
      fail("frombuffer", "buffer size ", avail, " must be a multiple of element size ", item);
    }
    n = avail / item;
  } else if (count * item > avail) {
    fail("frombuffer", "buffer of ", avail, " bytes is smaller than requested size ", count, " x ",
         item);
  }
  auto buf = Buffer::make(static_cast<size_t>(n * item));
  if (n > 0) std::memcpy(buf->data(), buffer.data() + offset, static_cast<size_t>(n * item));
  if (dtype == DType::kBool) {  // graft's bools are 0 / 1 bytes
    auto* b = static_cast<uint8_t*>(buf->data());
    for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
  return Array::from_buffer(std::move(buf), {n}, dtype);
}

}  // namespace graft
