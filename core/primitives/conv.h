// The convolution primitive: conv_general_dilated with lax.conv_general_dilated's semantics
// (XLA's ConvGeneralDilated). Parameters are normalized by the public op (core/lax/convolution.cc):
// padding is explicit (lo, hi) pairs (negative values crop), dilations and strides have one
// entry per spatial dim, and the dimension numbers are JAX's ConvDimensionNumbers:
//   lhs_spec = (batch dim, feature dim, spatial dims...) of the input,
//   rhs_spec = (out-feature dim, in-feature dim, spatial dims...) of the kernel,
//   out_spec = (batch dim, feature dim, spatial dims...) of the output,
// spatial dims listed in one common order that strides / padding / dilations follow.
// Operands are one floating dtype (f32, f64, bf16, f16); bf16 / f16 accumulate in f32, f64
// in f64. The output has the preferred element type, or the operands' dtype.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/lax/lax.h"
#include "core/ir/primitive.h"

namespace graft {

struct ConvParams {
  Shape window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  Shape lhs_dilation, rhs_dilation;
  ConvDimensionNumbers dims;
  int64_t feature_group_count = 1, batch_group_count = 1;
  std::optional<DType> preferred;
  bool operator==(const ConvParams&) const = default;
};

class ConvGeneralDilated : public Primitive {
 public:
  explicit ConvGeneralDilated(ConvParams p)
      : Primitive(PrimitiveId::kConvGeneralDilated), p_(std::move(p)) {}

  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;

  const ConvParams& conv() const { return p_; }

 private:
  ConvParams p_;
};

// Checks normalized parameters against the operand avals and returns the output aval;
// errors name `op`. Shared by the public op and infer().
Aval check_conv(std::string_view op, const Aval& lhs, const Aval& rhs, const ConvParams& p);

// The size of a dim of d elements dilated by `dilation` (0 stays 0).
inline int64_t dilate_dim(int64_t d, int64_t dilation) { return d == 0 ? 0 : 1 + dilation * (d - 1); }

// Binds the primitive on already-checked parameters (the rules use it).
Array conv_with(const Array& lhs, const Array& rhs, ConvParams p);

}  // namespace graft
