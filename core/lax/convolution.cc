// Public convolution and windowed-reduction ops (core/lax/convolution.h). conv_general_dilated binds
// the primitive of core/primitives/conv.h; reduce_window is composed of lax.pad (padding and
// base dilation with the identity), one strided slice per window offset and the monoid, so
// its derivatives and batching are those of those ops (max / min: lax.max's derivative,
// which splits a tie evenly where JAX's select-and-scatter gives it to one element).
#include "core/lax/convolution.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>

#include "absl/strings/str_join.h"
#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/math.h"
#include "core/lax/util.h"
#include "core/primitives/conv.h"

namespace graft {

namespace {

constexpr std::string_view kConv = "conv_general_dilated";

std::vector<int64_t> iota_spec(size_t rank) {
  std::vector<int64_t> s(rank);
  for (size_t i = 0; i < rank; ++i) s[i] = static_cast<int64_t>(i);
  return s;
}

Shape ones_if_empty(const Shape& s, size_t n) { return s.empty() ? Shape(n, 1) : s; }

// JAX's conv_general_permutations: (N, C) / (O, I) first, then the spatial letters in the
// order the kernel's string lists them.
ConvDimensionNumbers from_strings(const std::vector<std::string>& specs, size_t rank) {
  const std::array<std::pair<char, char>, 3> pairs = {{{'N', 'C'}, {'O', 'I'}, {'N', 'C'}}};
  const char* names[] = {"lhs", "rhs", "out"};
  std::array<std::set<char>, 3> spatial;
  for (int i = 0; i < 3; ++i) {
    const std::string& s = specs[i];
    auto [a, b] = pairs[i];
    if (std::count(s.begin(), s.end(), a) != 1 || std::count(s.begin(), s.end(), b) != 1) {
      fail(kConv, "dimension_numbers: the ", names[i], " spec \"", s, "\" must contain '", a,
           "' and '", b, "' once each");
    }
    std::set<char> chars(s.begin(), s.end());
    if (chars.size() != s.size()) {
      fail(kConv, "dimension_numbers: the ", names[i], " spec \"", s, "\" repeats a letter");
    }
    if (s.size() != rank) {
      fail(kConv, "dimension_numbers: the ", names[i], " spec \"", s, "\" has ", s.size(),
           " letters for operands of rank ", rank);
    }
    for (char c : s) {
      if (c != a && c != b) spatial[i].insert(c);
    }
  }
  if (spatial[0] != spatial[1] || spatial[1] != spatial[2]) {
    fail(kConv, "dimension_numbers: the specs (\"", specs[0], "\", \"", specs[1], "\", \"",
         specs[2], "\") must name the same spatial dims");
  }
  const std::string& rhs = specs[1];
  auto perm = [&](const std::string& s, std::pair<char, char> p) {
    std::vector<int64_t> out = {static_cast<int64_t>(s.find(p.first)),
                                static_cast<int64_t>(s.find(p.second))};
    for (char c : rhs) {
      if (c != 'O' && c != 'I') out.push_back(static_cast<int64_t>(s.find(c)));
    }
    return out;
  };
  return {perm(specs[0], pairs[0]), perm(specs[1], pairs[1]), perm(specs[2], pairs[2])};
}

}  // namespace

ConvDimensionNumbers conv_dimension_numbers(size_t lhs_rank, size_t rhs_rank,
                                            const ConvDims& dn) {
  if (lhs_rank != rhs_rank) {
    fail(kConv, "lhs and rhs need the same rank, got ", lhs_rank, " and ", rhs_rank);
  }
  if (dn.numbers) return *dn.numbers;
  if (dn.strings) return from_strings(*dn.strings, lhs_rank);
  return {iota_spec(lhs_rank), iota_spec(lhs_rank), iota_spec(lhs_rank)};
}

std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(std::string_view op, const Shape& in,
                                                         const Shape& window,
                                                         const Shape& strides,
                                                         const WindowPadding& padding) {
  const size_t n = in.size();
  if (padding.name.empty()) {
    if (padding.pairs.size() != n) {
      fail(op, "padding needs one (lo, hi) pair per spatial dim (", n, "), got ",
           padding.pairs.size());
    }
    return padding.pairs;
  }
  std::vector<std::pair<int64_t, int64_t>> pads(n, {0, 0});
  if (padding.name == "VALID") return pads;
  if (padding.name != "SAME" && padding.name != "SAME_LOWER") {
    fail(op, "padding must be \"SAME\", \"SAME_LOWER\", \"VALID\" or (lo, hi) pairs, got \"",
         padding.name, "\"");
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t out = (in[i] + strides[i] - 1) / strides[i];
    const int64_t total = std::max<int64_t>((out - 1) * strides[i] + window[i] - in[i], 0);
    const int64_t half = total / 2;
    pads[i] = padding.name == "SAME" ? std::pair{half, total - half} : std::pair{total - half, half};
  }
  return pads;
}

Array conv_general_dilated(const Array& lhs, const Array& rhs, const Shape& window_strides,
                           const WindowPadding& padding, const Shape& lhs_dilation,
                           const Shape& rhs_dilation, const ConvDims& dimension_numbers,
                           int64_t feature_group_count, int64_t batch_group_count,
                           std::optional<DType> preferred_element_type) {
  detail::check_valid(kConv, lhs);
  detail::check_valid(kConv, rhs);
  if (lhs.ndim() < 2 || lhs.ndim() != rhs.ndim()) {
    fail(kConv, "lhs and rhs need the same rank, at least 2 (batch and feature dims), got ",
         lhs.aval().str(), " and ", rhs.aval().str());
  }
  const TypeInfo t = detail::result_type({lhs, rhs});
  const Array l = detail::convert(lhs, t.dtype, t.weak), r = detail::convert(rhs, t.dtype, t.weak);
  const size_t n = static_cast<size_t>(lhs.ndim()) - 2;
  ConvParams p;
  p.dims = conv_dimension_numbers(lhs.ndim(), rhs.ndim(), dimension_numbers);
  p.window_strides = ones_if_empty(window_strides, n);
  p.lhs_dilation = ones_if_empty(lhs_dilation, n);
  p.rhs_dilation = ones_if_empty(rhs_dilation, n);
  p.feature_group_count = feature_group_count;
  p.batch_group_count = batch_group_count;
  p.preferred = preferred_element_type;
  if (!padding.name.empty()) {
    // Checked here too: the spatial sizes below read the specs and the per-dim lists.
    p.padding.assign(n, {0, 0});
    check_conv(kConv, l.aval(), r.aval(), p);
    Shape in, window;
    for (size_t i = 0; i < n; ++i) {
      in.push_back(lhs.shape()[p.dims.lhs_spec[2 + i]]);
      window.push_back(dilate_dim(rhs.shape()[p.dims.rhs_spec[2 + i]], p.rhs_dilation[i]));
    }
    p.padding = padtype_to_pads(kConv, in, window, p.window_strides, padding);
  } else {
    p.padding = padding.pairs;
  }
  check_conv(kConv, l.aval(), r.aval(), p);
  return conv_with(l, r, std::move(p));
}

Array conv(const Array& lhs, const Array& rhs, const Shape& window_strides,
           const WindowPadding& padding) {
  return conv_general_dilated(lhs, rhs, window_strides, padding);
}

namespace {

// One step of a max (min) fold that keeps the first extreme element: s replaces acc where it
// is greater (less), where it is NaN and acc is not, and where +0 meets -0 (-0 meets +0), so
// the values are maximum's (minimum's) and the gradient reaches one element per window, the
// first extreme one in the window's order, as JAX's select_and_scatter_add gives it.
Array first_extreme(const Array& acc, const Array& s, bool max) {
  Array choose = max ? greater(s, acc) : less(s, acc);
  choose = logical_or(choose, logical_and(isnan(s), logical_not(isnan(acc))));
  const Array signed_tie = max ? logical_and(signbit(acc), logical_not(signbit(s)))
                               : logical_and(signbit(s), logical_not(signbit(acc)));
  choose = logical_or(choose, logical_and(equal(s, acc), signed_tie));
  return where(choose, s, acc);
}
Array first_max(const Array& acc, const Array& s) { return first_extreme(acc, s, true); }
Array first_min(const Array& acc, const Array& s) { return first_extreme(acc, s, false); }

}  // namespace

Array reduce_window(const Array& x, const Array& init_value,
                    WindowComputation computation,
                    const Shape& window_dimensions, const Shape& window_strides,
                    const WindowPadding& padding, const Shape& base_dilation,
                    const Shape& window_dilation) {
  constexpr std::string_view op = "reduce_window";
  detail::check_valid(op, x);
  detail::check_valid(op, init_value);
  const size_t r = static_cast<size_t>(x.ndim());
  if (init_value.ndim() != 0) fail(op, "init_value must be a scalar, got ", init_value.aval().str());
  auto per_dim = [&](const char* what, const Shape& v, bool defaults) {
    Shape s = defaults ? ones_if_empty(v, r) : v;
    if (s.size() != r) {
      fail(op, what, " needs one entry per dim of ", x.aval().str(), ", got (",
           absl::StrJoin(v, ", "), ")");
    }
    for (int64_t d : s) {
      if (d < 1) fail(op, what, " must be positive, got (", absl::StrJoin(v, ", "), ")");
    }
    return s;
  };
  const Shape w = per_dim("window_dimensions", window_dimensions, false);
  const Shape st = per_dim("window_strides", window_strides, true);
  const Shape bd = per_dim("base_dilation", base_dilation, true);
  const Shape wd = per_dim("window_dilation", window_dilation, true);
  Shape dilated_w(r);
  for (size_t i = 0; i < r; ++i) dilated_w[i] = dilate_dim(w[i], wd[i]);
  const auto pads = padtype_to_pads(op, x.shape(), dilated_w, st, padding);
  std::vector<std::array<int64_t, 3>> cfg(r);
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    cfg[i] = {pads[i].first, pads[i].second, bd[i] - 1};
    const int64_t padded = dilate_dim(x.shape()[i], bd[i]) + pads[i].first + pads[i].second;
    if (padded < 0) fail(op, "padding crops more than dim ", i, " of ", x.aval().str(), " holds");
    out[i] = padded < dilated_w[i] ? 0 : (padded - dilated_w[i]) / st[i] + 1;
  }
  const Array xp = lax_pad(x, astype(init_value, x.dtype()), cfg);
  // max and min fold keeping the first extreme element (their values, JAX's gradient).
  if (computation == static_cast<WindowComputation>(maximum)) computation = first_max;
  if (computation == static_cast<WindowComputation>(minimum)) computation = first_min;
  Array acc;
  // One strided slice per window offset k (row-major over the window), folded left to right.
  Shape k(r, 0);
  for (bool more = numel(w) > 0; more;) {
    Shape start(r), limit(r);
    for (size_t i = 0; i < r; ++i) {
      start[i] = k[i] * wd[i];
      limit[i] = out[i] == 0 ? start[i] : start[i] + (out[i] - 1) * st[i] + 1;
    }
    Array s = slice(xp, start, limit, st);
    acc = acc.valid() ? computation(acc, s) : s;
    more = false;
    for (size_t i = r; i-- > 0;) {
      if (++k[i] < w[i]) {
        more = true;
        break;
      }
      k[i] = 0;
    }
  }
  if (!acc.valid()) acc = broadcast_to(astype(init_value, x.dtype()), out);
  return acc;
}

namespace {

Array identity_for(const Array& x, double v) { return scalar(v, x.dtype()); }

}  // namespace

Array reduce_window_sum(const Array& x, const Shape& window_dimensions,
                        const Shape& window_strides, const WindowPadding& padding,
                        const Shape& base_dilation, const Shape& window_dilation) {
  return reduce_window(x, identity_for(x, 0), add, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation);
}

Array reduce_window_max(const Array& x, const Shape& window_dimensions,
                        const Shape& window_strides, const WindowPadding& padding,
                        const Shape& base_dilation, const Shape& window_dilation) {
  return reduce_window(x, identity_for(x, -std::numeric_limits<double>::infinity()), maximum,
                       window_dimensions, window_strides, padding, base_dilation,
                       window_dilation);
}

Array reduce_window_min(const Array& x, const Shape& window_dimensions,
                        const Shape& window_strides, const WindowPadding& padding,
                        const Shape& base_dilation, const Shape& window_dilation) {
  return reduce_window(x, identity_for(x, std::numeric_limits<double>::infinity()), minimum,
                       window_dimensions, window_strides, padding, base_dilation,
                       window_dilation);
}

namespace {

// jnp's _conv: the longer input slides over the shorter (flipped for convolve) in one 1-D
// conv_general_dilated.
Array conv_1d(std::string_view op, const Array& a, const Array& v, const std::string& mode,
              bool flip_kernel) {
  detail::check_valid(op, a);
  detail::check_valid(op, v);
  detail::refuse_complex(op, a);  // correlate of complex values would need conj(v)
  detail::refuse_complex(op, v);
  if (a.ndim() != 1 || v.ndim() != 1) {
    fail(op, "only 1-D inputs are supported, got ", a.aval().str(), " and ", v.aval().str());
  }
  if (a.size() == 0 || v.size() == 0) {
    fail(op, "inputs cannot be empty, got ", a.aval().str(), " and ", v.aval().str());
  }
  if (mode != "full" && mode != "same" && mode != "valid") {
    fail(op, "mode must be one of \"full\", \"same\", \"valid\", got \"", mode, "\"");
  }
  TypeInfo t = detail::result_type({a, v});
  if (!is_floating(t.dtype)) t = {DType::kF32, t.weak};
  Array x = detail::convert(a, t.dtype, t.weak), y = detail::convert(v, t.dtype, t.weak);
  bool reverse_out = false;
  if (x.size() < y.size()) {
    std::swap(x, y);
    reverse_out = !flip_kernel;  // correlate is not symmetric in its inputs
  }
  if (flip_kernel) y = flip(y);
  const int64_t m = y.size();
  std::pair<int64_t, int64_t> pad{0, 0};
  if (mode == "same") pad = {m / 2, m - m / 2 - 1};
  if (mode == "full") pad = {m - 1, m - 1};
  Array out = conv_general_dilated(reshape(x, {1, 1, x.size()}), reshape(y, {1, 1, m}), {1},
                                   std::vector<std::pair<int64_t, int64_t>>{pad});
  out = reshape(out, {out.size()});
  return reverse_out ? flip(out) : out;
}

}  // namespace

Array convolve(const Array& a, const Array& v, const std::string& mode) {
  return conv_1d("convolve", a, v, mode, true);
}

Array correlate(const Array& a, const Array& v, const std::string& mode) {
  return conv_1d("correlate", a, v, mode, false);
}

}  // namespace graft
