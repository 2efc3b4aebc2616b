// ragged_dot's shape / dtype rule, parameters and cost (see RaggedDot in linalg.h).
#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "core/primitives/linalg.h"

namespace graft {

void check_ragged_dot(std::string_view op, const Aval& lhs, const Aval& rhs, const Aval& sizes,
                      RaggedMode mode) {
  if (lhs.dtype != rhs.dtype) {
    fail(op, "operands must have equal dtypes, got ", lhs.str(), " and ", rhs.str());
  }
  if (!is_floating(lhs.dtype)) {
    fail(op, "operands must be floating (f32, f64, bf16, f16), got ", lhs.str(), " and ",
         rhs.str());
  }
  if (sizes.dtype != DType::kI32 || sizes.shape.size() != 1) {
    fail(op, "group_sizes must be an i32 vector [g], got ", sizes.str());
  }
  if (lhs.shape.size() != 2) fail(op, "lhs must be [m, k], got ", lhs.str());
  const int64_t g = sizes.shape[0];
  if (mode == RaggedMode::kRaggedRows) {
    if (rhs.shape.size() != 3) fail(op, "rhs must be [g, k, n], got ", rhs.str());
    if (rhs.shape[0] != g) {
      fail(op, "rhs has ", rhs.shape[0], " groups but group_sizes has ", g, ": ", lhs.str(), " @ ",
           rhs.str());
    }
    if (rhs.shape[1] != lhs.shape[1]) {
      fail(op, "contracting dims differ: ", shape_str(lhs.shape), " @ ", shape_str(rhs.shape),
           " (lhs k = ", lhs.shape[1], ", rhs k = ", rhs.shape[1], ")");
    }
  } else {
    if (rhs.shape.size() != 2) fail(op, "rhs must be [m, n] (ragged contraction), got ", rhs.str());
    if (rhs.shape[0] != lhs.shape[0]) {
      fail(op, "lhs and rhs need as many rows (the ragged contracting dim): ", shape_str(lhs.shape),
           " and ", shape_str(rhs.shape));
    }
  }
}

std::vector<Aval> RaggedDot::infer(const std::vector<Aval>& in) const {
  if (in.size() != 3) fail(name(), "takes 3 operands (lhs, rhs, group_sizes), got ", in.size());
  check_ragged_dot(name(), in[0], in[1], in[2], mode_);
  const Shape& ls = in[0].shape;
  const Shape& rs = in[1].shape;
  Shape out =
      mode_ == RaggedMode::kRaggedRows ? Shape{ls[0], rs[2]} : Shape{in[2].shape[0], ls[1], rs[1]};
  return {Aval{out, in[0].dtype, in[0].weak && in[1].weak}};
}

std::string RaggedDot::params() const {
  return mode_ == RaggedMode::kRaggedRows ? "mode=ragged_rows" : "mode=ragged_contract";
}

bool RaggedDot::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const RaggedDot&>(o).mode_ == mode_;
}

Cost RaggedDot::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  // Every row of lhs meets one [k, n] block once (at most: rows past the groups do not).
  const Shape& ls = in[0].shape;
  const int64_t n = mode_ == RaggedMode::kRaggedRows ? in[1].shape[2] : in[1].shape[1];
  c.flops = 2.0 * static_cast<double>(ls[0]) * static_cast<double>(ls[1]) * static_cast<double>(n);
  return c;
}

}  // namespace graft
