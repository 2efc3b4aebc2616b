// Transform rules of conv_general_dilated, following jax/_src/lax/convolution.py:
//  - jvp: the convolution is linear in each operand, so d out = conv(dl, r) + conv(l, dr).
//  - vjp: the two transposes are convolutions again (_conv_general_dilated_transpose_lhs /
//    _rhs): the lhs cotangent convolves the output cotangent with the spatially reversed
//    kernel (strides become lhs dilation, lhs dilation becomes strides), the rhs cotangent
//    convolves the input with the output cotangent (strides become rhs dilation); feature
//    groups of one become batch groups of the other.
//  - vmap: the mapped axis is folded into the batch dim (lhs batched) or the out-feature dim
//    (rhs batched), or, both batched, into the feature dims as extra feature groups, as
//    _conv_general_dilated_batch_rule does; one convolution, no loop.
#include <algorithm>
#include <numeric>

#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/conv.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

namespace {

using Pads = std::vector<std::pair<int64_t, int64_t>>;

// _reshape_axis_into: moves axis src of x next to (before) axis dst (dst counted after src is
// removed) and merges the two, src the major one.
Array reshape_axis_into(int64_t src, int64_t dst, const Array& x) {
  std::vector<int> perm;
  for (int i = 0; i < x.ndim(); ++i) {
    if (i != src) perm.push_back(i);
  }
  perm.insert(perm.begin() + dst, static_cast<int>(src));
  Shape s;
  for (int i = 0; i < x.ndim(); ++i) {
    if (i != src) s.push_back(x.shape()[i]);
  }
  s[dst] *= x.shape()[src];
  return reshape(transpose(x, perm), s);
}

// _reshape_axis_out_of: splits axis src of x into (size1, rest).
Array reshape_axis_out_of(int64_t src, int64_t size1, const Array& x) {
  Shape s = x.shape();
  const int64_t size2 = s[src] / size1;
  s[src] = size2;
  s.insert(s.begin() + src, size1);
  return reshape(x, s);
}

std::vector<int64_t> spec_transpose(const std::vector<int64_t>& spec) {
  std::vector<int64_t> t = spec;
  std::swap(t[0], t[1]);
  return t;
}

Shape take_spatial(const Shape& shape, const std::vector<int64_t>& spec) {
  Shape out;
  for (size_t i = 2; i < spec.size(); ++i) out.push_back(shape[spec[i]]);
  return out;
}

// _conv_general_vjp_lhs_padding.
Pads vjp_lhs_padding(const Shape& in, const Shape& window, const Shape& strides, const Shape& out,
                     const Pads& padding, const Shape& lhs_dil, const Shape& rhs_dil) {
  Pads p;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t ld = dilate_dim(in[i], lhs_dil[i]), rd = dilate_dim(window[i], rhs_dil[i]);
    const int64_t od = dilate_dim(out[i], strides[i]);
    const int64_t before = rd - padding[i].first - 1;
    p.push_back({before, ld + rd - 1 - od - before});
  }
  return p;
}

// _conv_general_vjp_rhs_padding.
Pads vjp_rhs_padding(const Shape& in, const Shape& window, const Shape& strides, const Shape& out,
                     const Pads& padding, const Shape& lhs_dil, const Shape& rhs_dil) {
  Pads p;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t ld = dilate_dim(in[i], lhs_dil[i]), rd = dilate_dim(window[i], rhs_dil[i]);
    const int64_t od = dilate_dim(out[i], strides[i]);
    const int64_t lo = padding[i].first;
    p.push_back({lo, (od - ld) + (rd - lo - 1)});
  }
  return p;
}

Axes spatial_axes(const std::vector<int64_t>& spec) { return Axes(spec.begin() + 2, spec.end()); }

}  // namespace

std::vector<Array> ConvGeneralDilated::jvp(const std::vector<Array>& primals,
                                           const std::vector<Array>& t,
                                           const std::vector<Array>&) const {
  Array out;
  if (t[0].valid()) out = conv_with(t[0], primals[1], p_);
  if (t[1].valid()) out = detail::add_any(out, conv_with(primals[0], t[1], p_));
  return {out};
}

std::vector<Array> ConvGeneralDilated::vjp(const std::vector<Array>& primals,
                                           const std::vector<Array>&,
                                           const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array(), Array()};
  const Array &lhs = primals[0], &rhs = primals[1];
  const DType dt = lhs.dtype();
  const Array g = astype(ct[0], dt);
  const auto& [ls, rs, os] = std::tie(p_.dims.lhs_spec, p_.dims.rhs_spec, p_.dims.out_spec);
  const Shape lsp = take_spatial(lhs.shape(), ls), rsp = take_spatial(rhs.shape(), rs);
  const Shape gsp = take_spatial(g.shape(), os);

  // d lhs: _conv_general_dilated_transpose_lhs.
  Array dlhs;
  {
    int64_t fg = p_.feature_group_count;
    const int64_t bg = p_.batch_group_count;
    Array r = rhs;
    if (fg > 1 || bg > 1) {
      r = reshape_axis_out_of(rs[0], fg > 1 ? fg : bg, r);
      r = reshape_axis_into(rs[0], rs[1], r);
      if (bg > 1) fg = bg;
    }
    ConvParams q;
    q.window_strides = p_.lhs_dilation;
    q.padding = vjp_lhs_padding(lsp, rsp, p_.window_strides, gsp, p_.padding, p_.lhs_dilation,
                                p_.rhs_dilation);
    q.lhs_dilation = p_.window_strides;
    q.rhs_dilation = p_.rhs_dilation;
    q.dims = {os, spec_transpose(rs), ls};
    q.feature_group_count = fg;
    Array out = conv_with(g, flip(r, spatial_axes(rs)), q);
    if (bg > 1) {
      out = reshape_axis_out_of(ls[1], bg, out);
      out = reshape_axis_into(ls[1], ls[0], out);
    }
    dlhs = out;
  }

  // d rhs: _conv_general_dilated_transpose_rhs.
  Array drhs;
  if (g.size() == 0) {
    drhs = zeros(rhs.shape(), dt);
  } else {
    ConvParams q;
    q.window_strides = p_.rhs_dilation;
    q.padding = vjp_rhs_padding(lsp, rsp, p_.window_strides, gsp, p_.padding, p_.lhs_dilation,
                                p_.rhs_dilation);
    q.lhs_dilation = p_.lhs_dilation;
    q.rhs_dilation = p_.window_strides;
    q.dims = {spec_transpose(ls), spec_transpose(os), spec_transpose(rs)};
    q.feature_group_count = p_.batch_group_count;
    q.batch_group_count = p_.feature_group_count;
    drhs = conv_with(lhs, g, q);
  }
  return {dlhs, drhs};
}

Batched ConvGeneralDilated::vmap(const std::vector<Array>& args,
                                 const std::vector<int>& dims) const {
  const Array &lhs = args[0], &rhs = args[1];
  const int lb = dims[0], rb = dims[1];
  const auto& [ls, rs, os] = std::tie(p_.dims.lhs_spec, p_.dims.rhs_spec, p_.dims.out_spec);
  ConvParams q = p_;
  if (lb >= 0 && rb >= 0) {
    const int64_t b = lhs.shape()[lb];
    Array nl;
    if (q.batch_group_count > 1) {
      nl = reshape_axis_into(lb, ls[0], lhs);
      q.batch_group_count *= b;
    } else {
      nl = reshape_axis_into(lb, ls[1], lhs);
      q.feature_group_count *= b;
    }
    Array nr = reshape_axis_into(rb, rs[0], rhs);
    Array out = reshape_axis_out_of(os[1], b, conv_with(nl, nr, q));
    return {{out}, {static_cast<int>(os[1])}};
  }
  if (lb >= 0) {
    const int64_t b = lhs.shape()[lb];
    Array nl;
    if (q.batch_group_count == 1) {
      nl = reshape_axis_into(lb, ls[0], lhs);
    } else {
      // Batch groups must stay outermost in the batch dim: put the vmapped axis inside them.
      nl = reshape_axis_out_of(ls[0] + (lb <= ls[0] ? 1 : 0), q.batch_group_count, lhs);
      nl = reshape_axis_into(lb + (ls[0] < lb ? 1 : 0), ls[0] + 1, nl);
      nl = reshape_axis_into(ls[0], ls[0], nl);
    }
    Array out = reshape_axis_out_of(os[0], b, conv_with(nl, rhs, q));
    return {{out}, {static_cast<int>(os[0])}};
  }
  const int64_t b = rhs.shape()[rb];
  if (q.feature_group_count == 1 && q.batch_group_count == 1) {
    Array out = reshape_axis_out_of(os[1], b, conv_with(lhs, reshape_axis_into(rb, rs[0], rhs), q));
    return {{out}, {static_cast<int>(os[1])}};
  }
  // Groups must stay outermost in the out-feature dim: fold the vmapped axis inside them.
  const int64_t groups = q.feature_group_count > 1 ? q.feature_group_count : q.batch_group_count;
  Array nr = reshape_axis_out_of(rs[0] + (rb <= rs[0] ? 1 : 0), groups, rhs);
  nr = reshape_axis_into(rb + (rs[0] < rb ? 1 : 0), rs[0] + 1, nr);
  nr = reshape_axis_into(rs[0], rs[0], nr);
  Array out = reshape_axis_out_of(os[1], groups, conv_with(lhs, nr, q));
  out = reshape_axis_out_of(os[1] + 1, b, out);
  out = reshape_axis_into(os[1], os[1] + 1, out);
  return {{out}, {static_cast<int>(os[1])}};
}

}  // namespace graft
