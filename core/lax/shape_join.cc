// Public shape ops, part 2: concatenate, stack, split, pad, tile, repeat.
#include <algorithm>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/shape.h"

namespace graft {

using detail::check_valid;

Array concatenate(const std::vector<Array>& xs, int64_t axis) {
  if (xs.empty()) fail("concatenate", "needs at least one array");
  for (const Array& x : xs) check_valid("concatenate", x);
  const Shape& s0 = xs[0].shape();
  if (s0.empty()) fail("concatenate", "zero-dimensional arrays cannot be concatenated");
  int a = normalize_axis("concatenate", axis, xs[0].ndim());
  for (const Array& x : xs) {
    bool ok = x.ndim() == xs[0].ndim();
    for (int d = 0; ok && d < x.ndim(); ++d) ok = d == a || x.shape()[d] == s0[d];
    if (!ok) {
      fail("concatenate", "all dims but the concatenation axis ", a, " must match, got ",
           shape_str(s0), " and ", shape_str(x.shape()));
    }
  }
  TypeInfo t = detail::result_type(xs);
  std::vector<Array> in;
  for (const Array& x : xs) in.push_back(detail::convert(x, t.dtype, t.weak));
  if (in.size() == 1) return in[0];
  return bind1(std::make_shared<const Concatenate>(a), std::move(in));
}

Array stack(const std::vector<Array>& xs, int64_t axis) {
  if (xs.empty()) fail("stack", "needs at least one array");
  for (const Array& x : xs) {
    check_valid("stack", x);
    if (x.shape() != xs[0].shape()) {
      fail("stack", "all input arrays must have the same shape, got ", shape_str(xs[0].shape()),
           " and ", shape_str(x.shape()));
    }
  }
  int a = normalize_axis("stack", axis, xs[0].ndim() + 1);
  std::vector<Array> parts;
  for (const Array& x : xs) parts.push_back(expand_dims(x, {a}));
  return concatenate(parts, a);
}

std::vector<Array> split(const Array& x, int64_t sections, int64_t axis) {
  check_valid("split", x);
  int a = normalize_axis("split", axis, x.ndim());
  int64_t n = x.shape()[a];
  if (sections <= 0 || n % sections != 0) {
    fail("split", "array split does not result in an equal division: ", n, " into ", sections,
         " sections");
  }
  std::vector<int64_t> idx;
  for (int64_t i = 1; i < sections; ++i) idx.push_back(i * (n / sections));
  return split(x, idx, a);
}

std::vector<Array> split(const Array& x, const std::vector<int64_t>& indices, int64_t axis) {
  check_valid("split", x);
  int a = normalize_axis("split", axis, x.ndim());
  std::vector<Array> out;
  std::optional<int64_t> from = 0;
  // Piece i is x[indices[i-1]:indices[i]] along the axis, with Python slicing semantics.
  for (size_t i = 0; i <= indices.size(); ++i) {
    std::optional<int64_t> to;
    if (i < indices.size()) to = indices[i];
    out.push_back(slice_axis(x, a, from, to, 1));
    from = to;
  }
  return out;
}

Array lax_pad(const Array& x, const Array& value,
              const std::vector<std::array<int64_t, 3>>& low_high_interior) {
  check_valid("pad", x);
  check_valid("pad", value);
  if (value.ndim() != 0) fail("pad", "padding value must be a scalar, got ", value.aval().str());
  if (low_high_interior.size() != static_cast<size_t>(x.ndim())) {
    fail("pad", "needs one (low, high, interior) per dim of ", shape_str(x.shape()), ", got ",
         low_high_interior.size());
  }
  Array v = value;
  if (v.dtype() != x.dtype()) {
    if (!v.weak_type()) {
      fail("pad", "padding value dtype ", dtype_name(v.dtype()), " differs from the operand's ",
           dtype_name(x.dtype()));
    }
    v = detail::convert(v, x.dtype(), x.weak_type());
  }
  for (size_t d = 0; d < low_high_interior.size(); ++d) {
    auto [lo, hi, in] = low_high_interior[d];
    int64_t n = x.shape()[d];
    if (in < 0) fail("pad", "interior padding must be >= 0, got ", in, " for dim ", d);
    const char* what = "padded size";
    int64_t core = n == 0 ? 0 : checked_add("pad", n, checked_mul("pad", n - 1, in, what), what);
    if (checked_add("pad", checked_add("pad", lo, hi, what), core, what) < 0) {
      fail("pad", "padding (", lo, ", ", hi, ", ", in, ") of dim ", d, " of ", shape_str(x.shape()),
           " gives a negative size");
    }
  }
  return bind1(std::make_shared<const Pad>(low_high_interior), {x, v});
}

Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& widths,
          const Array& value) {
  check_valid("pad", x);
  check_valid("pad", value);
  // Like NumPy, a single (low, high) pair applies to every dim.
  size_t r = x.ndim();
  if (widths.size() != r && widths.size() != 1) {
    fail("pad", "needs one (low, high) pair per dim of ", shape_str(x.shape()),
         " (or one for all)");
  }
  std::vector<std::array<int64_t, 3>> cfg;
  for (size_t d = 0; d < r; ++d) {
    auto [lo, hi] = widths.size() == 1 ? widths[0] : widths[d];
    if (lo < 0 || hi < 0) fail("pad", "pad widths must be non-negative, got (", lo, ", ", hi, ")");
    cfg.push_back({lo, hi, 0});
  }
  if (value.ndim() != 0) fail("pad", "constant value must be a scalar, got ", value.aval().str());
  // jnp.pad casts the constant to the array's dtype.
  return lax_pad(x, detail::convert(value, x.dtype(), x.weak_type()), cfg);
}

Array tile(const Array& x, const Shape& reps) {
  check_valid("tile", x);
  for (int64_t r : reps) {
    if (r < 0) fail("tile", "repetitions must be non-negative, got ", shape_str(reps));
  }
  size_t r = std::max(reps.size(), static_cast<size_t>(x.ndim()));
  Shape rp(r - reps.size(), 1), s(r - x.ndim(), 1);
  rp.insert(rp.end(), reps.begin(), reps.end());
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  // Broadcast to (rp0, s0, rp1, s1, ...) then merge each pair.
  Shape wide, out;
  std::vector<int> dims;
  for (size_t d = 0; d < r; ++d) {
    wide.push_back(rp[d]);
    wide.push_back(s[d]);
    dims.push_back(static_cast<int>(2 * d + 1));
    out.push_back(checked_mul("tile", rp[d], s[d], "tiled size"));
  }
  check_shape("tile", out, x.dtype());
  return reshape(broadcast_in_dim(reshape(x, s), wide, dims), out);
}

Array repeat(const Array& x, int64_t repeats, std::optional<int64_t> axis) {
  check_valid("repeat", x);
  if (repeats < 0) fail("repeat", "repeats must be non-negative, got ", repeats);
  Array src = axis ? x : ravel(x);
  int a = normalize_axis("repeat", axis.value_or(0), src.ndim());
  // Broadcast to (..., n, repeats, ...) then merge the pair.
  Shape wide = src.shape(), out = src.shape();
  wide.insert(wide.begin() + a + 1, repeats);
  out[a] = checked_mul("repeat", out[a], repeats, "repeated size");
  check_shape("repeat", out, x.dtype());
  std::vector<int> dims;
  for (int d = 0; d < src.ndim(); ++d) dims.push_back(d <= a ? d : d + 1);
  return reshape(broadcast_in_dim(src, wide, dims), out);
}

}  // namespace graft
