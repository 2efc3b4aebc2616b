#include "core/primitives/linalg.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error.h"

namespace graft {

namespace {

std::string dims_str(const std::vector<int>& d) {
  return absl::StrCat("(", absl::StrJoin(d, ", "), ")");
}

// Checks that each dim is in range and that no dim is used twice on one side.
void check_side(std::string_view op, const char* side, const Shape& shape,
                const std::vector<int>& contract, const std::vector<int>& batch) {
  std::vector<bool> used(shape.size(), false);
  for (const auto* list : {&contract, &batch}) {
    for (int d : *list) {
      if (d < 0 || d >= static_cast<int>(shape.size())) {
        fail(op, side, " dim ", d, " is out of range for an operand of shape ", shape_str(shape));
      }
      if (used[d]) {
        fail(op, side, " dim ", d, " is used more than once (contracting ", dims_str(contract),
             ", batch ", dims_str(batch), ")");
      }
      used[d] = true;
    }
  }
}

}  // namespace

void check_dot_general(std::string_view op, const Aval& lhs, const Aval& rhs, const DotDims& dims,
                       std::optional<DType> preferred) {
  // As lax.dot_general: fp8 operands of the two fp8 types may meet when the output dtype is
  // given (they have no common type to default to).
  const bool mixed_float8 = is_float8(lhs.dtype) && is_float8(rhs.dtype) && preferred;
  if (lhs.dtype != rhs.dtype && !mixed_float8) {
    fail(op, "operands must have equal dtypes, got ", lhs.str(), " and ", rhs.str());
  }
  if (lhs.dtype == DType::kBool) {
    fail(op, "bool operands are not supported (cast them to a numeric dtype first), got ",
         lhs.str(), " and ", rhs.str());
  }
  if (dims.lhs_contract.size() != dims.rhs_contract.size()) {
    fail(op, "lhs and rhs need as many contracting dims, got ", dims_str(dims.lhs_contract),
         " and ", dims_str(dims.rhs_contract));
  }
  if (dims.lhs_batch.size() != dims.rhs_batch.size()) {
    fail(op, "lhs and rhs need as many batch dims, got ", dims_str(dims.lhs_batch), " and ",
         dims_str(dims.rhs_batch));
  }
  check_side(op, "lhs", lhs.shape, dims.lhs_contract, dims.lhs_batch);
  check_side(op, "rhs", rhs.shape, dims.rhs_contract, dims.rhs_batch);
  for (size_t i = 0; i < dims.lhs_contract.size(); ++i) {
    int l = dims.lhs_contract[i], r = dims.rhs_contract[i];
    if (lhs.shape[l] != rhs.shape[r]) {
      fail(op, "contracting dims differ: ", shape_str(lhs.shape), " @ ", shape_str(rhs.shape),
           " (lhs dim ", l, " has size ", lhs.shape[l], ", rhs dim ", r, " has size ", rhs.shape[r],
           ")");
    }
  }
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    int l = dims.lhs_batch[i], r = dims.rhs_batch[i];
    if (lhs.shape[l] != rhs.shape[r]) {
      fail(op, "batch dims differ: ", shape_str(lhs.shape), " @ ", shape_str(rhs.shape),
           " (lhs dim ", l, " has size ", lhs.shape[l], ", rhs dim ", r, " has size ", rhs.shape[r],
           ")");
    }
  }
  if (preferred) {
    // Like lax: (integer, integer not narrower), (integer, float) or (float, float).
    DType in = lhs.dtype, out = *preferred;
    bool ok = out != DType::kBool &&
              (is_floating(in) ? is_floating(out)
                               : (is_floating(out) || dtype_size(out) >= dtype_size(in)));
    if (!ok) {
      fail(op, "preferred dtype ", dtype_name(out), " is incompatible with operands of dtype ",
           dtype_name(in),
           " (allowed: a float for any operands, or an integer at least as wide for integers)");
    }
  }
}

std::vector<Aval> DotGeneral::infer(const std::vector<Aval>& in) const {
  if (in.size() != 2) fail(name(), "takes 2 operands, got ", in.size());
  check_dot_general(name(), in[0], in[1], dims_, preferred_);
  const Shape& ls = in[0].shape;
  const Shape& rs = in[1].shape;
  Shape out;
  for (int d : dims_.lhs_batch) out.push_back(ls[d]);
  auto add_free = [&out](const Shape& s, const std::vector<int>& c, const std::vector<int>& b) {
    for (int d = 0; d < static_cast<int>(s.size()); ++d) {
      if (std::find(c.begin(), c.end(), d) == c.end() &&
          std::find(b.begin(), b.end(), d) == b.end()) {
        out.push_back(s[d]);
      }
    }
  };
  add_free(ls, dims_.lhs_contract, dims_.lhs_batch);
  add_free(rs, dims_.rhs_contract, dims_.rhs_batch);
  bool weak = !preferred_ && in[0].weak && in[1].weak;
  return {Aval{out, dot_output_dtype(in[0].dtype, preferred_), weak}};
}

std::string DotGeneral::params() const {
  std::string s = absl::StrCat("dimension_numbers=((", dims_str(dims_.lhs_contract), ", ",
                               dims_str(dims_.rhs_contract), "), (", dims_str(dims_.lhs_batch),
                               ", ", dims_str(dims_.rhs_batch), "))");
  if (preferred_) absl::StrAppend(&s, " preferred_element_type=", dtype_name(*preferred_));
  return s;
}

bool DotGeneral::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  const auto& d = static_cast<const DotGeneral&>(o);
  return d.dims_.lhs_contract == dims_.lhs_contract && d.dims_.rhs_contract == dims_.rhs_contract &&
         d.dims_.lhs_batch == dims_.lhs_batch && d.dims_.rhs_batch == dims_.rhs_batch &&
         d.preferred_ == preferred_;
}

Cost DotGeneral::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  // Each output element is a K-long dot product: 2K flops.
  double k = 1;
  for (int d : dims_.lhs_contract) k *= static_cast<double>(in[0].shape[d]);
  c.flops = 2.0 * k * static_cast<double>(numel(out[0].shape));
  return c;
}

}  // namespace graft
