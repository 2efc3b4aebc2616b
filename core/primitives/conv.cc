// conv_general_dilated's shape / dtype rule, parameters and cost (see conv.h).
#include "core/primitives/conv.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error.h"

namespace graft {

namespace {

void check_spec(std::string_view op, const char* which, const std::vector<int64_t>& spec,
                size_t rank) {
  std::vector<bool> seen(rank, false);
  bool ok = spec.size() == rank;
  for (int64_t d : spec) {
    if (!ok || d < 0 || d >= static_cast<int64_t>(rank) || seen[d]) {
      ok = false;
      break;
    }
    seen[d] = true;
  }
  if (!ok) {
    fail(op, "dimension_numbers: ", which, " (", absl::StrJoin(spec, ", "),
         ") must list each of the ", rank, " dims of the operand once");
  }
}

void check_per_dim(std::string_view op, const char* what, const Shape& v, size_t n) {
  if (v.size() != n) {
    fail(op, what, " needs one entry per spatial dim (", n, "), got (", absl::StrJoin(v, ", "),
         ")");
  }
  for (int64_t x : v) {
    if (x < 1) fail(op, what, " must be positive, got (", absl::StrJoin(v, ", "), ")");
  }
}

}  // namespace

Aval check_conv(std::string_view op, const Aval& lhs, const Aval& rhs, const ConvParams& p) {
  if (lhs.dtype != rhs.dtype) {
    fail(op, "operands must have equal dtypes, got ", lhs.str(), " and ", rhs.str());
  }
  if (!is_floating(lhs.dtype)) {
    fail(op, "operands must be floating (f32, f64, bf16, f16), got ", lhs.str(), " and ",
         rhs.str());
  }
  if (p.preferred && !is_floating(*p.preferred)) {
    fail(op, "preferred_element_type must be floating, got ", dtype_name(*p.preferred));
  }
  const size_t rank = lhs.shape.size();
  if (rank < 2 || rhs.shape.size() != rank) {
    fail(op, "lhs and rhs need the same rank, at least 2 (batch and feature dims), got ",
         lhs.str(), " and ", rhs.str());
  }
  check_spec(op, "lhs_spec", p.dims.lhs_spec, rank);
  check_spec(op, "rhs_spec", p.dims.rhs_spec, rank);
  check_spec(op, "out_spec", p.dims.out_spec, rank);
  const size_t n = rank - 2;
  check_per_dim(op, "window_strides", p.window_strides, n);
  check_per_dim(op, "lhs_dilation", p.lhs_dilation, n);
  check_per_dim(op, "rhs_dilation", p.rhs_dilation, n);
  if (p.padding.size() != n) {
    fail(op, "padding needs one (lo, hi) pair per spatial dim (", n, "), got ", p.padding.size());
  }
  const int64_t fg = p.feature_group_count, bg = p.batch_group_count;
  if (fg < 1 || bg < 1) {
    fail(op, "feature_group_count and batch_group_count must be positive, got ", fg, " and ", bg);
  }
  if (fg > 1 && bg > 1) {
    fail(op, "at most one of feature_group_count (", fg, ") and batch_group_count (", bg,
         ") may exceed 1");
  }
  const auto& ls = p.dims.lhs_spec;
  const auto& rs = p.dims.rhs_spec;
  const int64_t batch = lhs.shape[ls[0]], in_features = lhs.shape[ls[1]];
  const int64_t out_features = rhs.shape[rs[0]], rhs_in = rhs.shape[rs[1]];
  if (in_features % fg != 0 || in_features / fg != rhs_in) {
    fail(op, "lhs feature dim (", in_features, ") must equal the rhs input-feature dim (", rhs_in,
         ") times feature_group_count (", fg, "): ", lhs.str(), " and ", rhs.str());
  }
  if (out_features % fg != 0) {
    fail(op, "rhs output-feature dim (", out_features,
         ") must be a multiple of feature_group_count (", fg, ")");
  }
  if (batch % bg != 0 || out_features % bg != 0) {
    fail(op, "lhs batch dim (", batch, ") and rhs output-feature dim (", out_features,
         ") must be multiples of batch_group_count (", bg, ")");
  }
  Shape out(rank);
  out[p.dims.out_spec[0]] = batch / bg;
  out[p.dims.out_spec[1]] = out_features;
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = dilate_dim(lhs.shape[ls[2 + i]], p.lhs_dilation[i]);
    const int64_t padded = in + p.padding[i].first + p.padding[i].second;
    const int64_t window = dilate_dim(rhs.shape[rs[2 + i]], p.rhs_dilation[i]);
    if (padded < 0) {
      fail(op, "padding (", p.padding[i].first, ", ", p.padding[i].second,
           ") crops more than spatial dim ", i, " holds (", in, ")");
    }
    out[p.dims.out_spec[2 + i]] = padded < window ? 0 : (padded - window) / p.window_strides[i] + 1;
  }
  return Aval{out, p.preferred.value_or(lhs.dtype), lhs.weak && rhs.weak && !p.preferred};
}

std::vector<Aval> ConvGeneralDilated::infer(const std::vector<Aval>& in) const {
  if (in.size() != 2) fail(name(), "takes 2 operands (lhs, rhs), got ", in.size());
  return {check_conv(name(), in[0], in[1], p_)};
}

std::string ConvGeneralDilated::params() const {
  std::vector<std::string> pads;
  for (auto [lo, hi] : p_.padding) pads.push_back(absl::StrCat("(", lo, ", ", hi, ")"));
  std::string s = absl::StrCat(
      "window_strides=(", absl::StrJoin(p_.window_strides, ", "), ") padding=(",
      absl::StrJoin(pads, ", "), ") lhs_dilation=(", absl::StrJoin(p_.lhs_dilation, ", "),
      ") rhs_dilation=(", absl::StrJoin(p_.rhs_dilation, ", "), ") dimension_numbers=((",
      absl::StrJoin(p_.dims.lhs_spec, ", "), "), (", absl::StrJoin(p_.dims.rhs_spec, ", "), "), (",
      absl::StrJoin(p_.dims.out_spec, ", "), ")) feature_group_count=", p_.feature_group_count,
      " batch_group_count=", p_.batch_group_count);
  if (p_.preferred) absl::StrAppend(&s, " preferred_element_type=", dtype_name(*p_.preferred));
  return s;
}

bool ConvGeneralDilated::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const ConvGeneralDilated&>(o).p_ == p_;
}

Cost ConvGeneralDilated::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  // Each output element is a dot over (in features / groups) x window elements.
  const Shape& rs = in[1].shape;
  double window = 1;
  for (size_t i = 2; i < rs.size(); ++i) window *= static_cast<double>(rs[p_.dims.rhs_spec[i]]);
  c.flops = 2.0 * static_cast<double>(numel(out[0].shape)) * window *
            static_cast<double>(rs[p_.dims.rhs_spec[1]]);
  return c;
}

Array conv_with(const Array& lhs, const Array& rhs, ConvParams p) {
  return apply<ConvGeneralDilated>({lhs, rhs}, std::move(p));
}

}  // namespace graft
