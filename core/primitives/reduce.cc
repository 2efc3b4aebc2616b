#include "core/primitives/reduce.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error.h"

namespace graft {

namespace {

void check_arity(const Primitive& p, const std::vector<Aval>& in) {
  if (in.size() != 1) fail(p.name(), "takes 1 operand, got ", in.size());
}

bool is_reduce_id(PrimitiveId id) {
  switch (id) {
    case PrimitiveId::kReduceSum:
    case PrimitiveId::kReduceProd:
    case PrimitiveId::kReduceMax:
    case PrimitiveId::kReduceMin:
    case PrimitiveId::kReduceAnd:
    case PrimitiveId::kReduceOr:
      return true;
    default:
      return false;
  }
}

void check_axis(const Primitive& p, int axis, const Aval& x) {
  if (axis < 0 || axis >= static_cast<int>(x.shape.size())) {
    fail(p.name(), "axis ", axis, " is out of range for ", x.str());
  }
}

}  // namespace

Reduce::Reduce(PrimitiveId id, std::vector<int> axes) : Primitive(id), axes_(std::move(axes)) {
  if (!is_reduce_id(id)) fail("reduce", "not a reduction primitive: ", name());
}

std::vector<Aval> Reduce::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in);
  const Aval& x = in[0];
  DType d = x.dtype;
  switch (id()) {
    case PrimitiveId::kReduceSum:
    case PrimitiveId::kReduceProd:
      if (d == DType::kBool) fail(name(), "requires a numeric dtype, got ", x.str());
      break;
    case PrimitiveId::kReduceAnd:
    case PrimitiveId::kReduceOr:
      if (d != DType::kBool && !is_integral(d)) {
        fail(name(), "requires a bool or integer dtype, got ", x.str());
      }
      break;
    default:
      break;
  }
  if (axes_.empty()) fail(name(), "needs at least one axis");
  for (size_t i = 0; i < axes_.size(); ++i) {
    check_axis(*this, axes_[i], x);
    if (i > 0 && axes_[i] <= axes_[i - 1]) {
      fail(name(), "axes must be sorted and distinct, got (", absl::StrJoin(axes_, ", "), ")");
    }
  }
  Shape out;
  for (int i = 0; i < static_cast<int>(x.shape.size()); ++i) {
    if (!std::binary_search(axes_.begin(), axes_.end(), i)) out.push_back(x.shape[i]);
  }
  return {Aval{std::move(out), d, x.weak}};
}

std::string Reduce::params() const {
  return absl::StrCat("axes=(", absl::StrJoin(axes_, ", "), axes_.size() == 1 ? ",)" : ")");
}

bool Reduce::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const Reduce&>(o).axes_ == axes_;
}

Cost Reduce::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  c.flops = static_cast<double>(numel(in[0].shape));  // one op per input element
  return c;
}

ArgReduce::ArgReduce(PrimitiveId id, int axis, DType index_dtype)
    : Primitive(id), axis_(axis), index_dtype_(index_dtype) {
  if (id != PrimitiveId::kArgmax && id != PrimitiveId::kArgmin) {
    fail("arg_reduce", "not argmax/argmin: ", name());
  }
}

std::vector<Aval> ArgReduce::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in);
  const Aval& x = in[0];
  check_axis(*this, axis_, x);
  if (index_dtype_ != DType::kI32 && index_dtype_ != DType::kI64) {
    fail(name(), "index dtype must be i32 or i64, got ", dtype_name(index_dtype_));
  }
  if (x.shape[axis_] == 0) {
    fail(name(), "cannot reduce zero-sized axis ", axis_, " of ", x.str());
  }
  Shape out = x.shape;
  out.erase(out.begin() + axis_);
  return {Aval{std::move(out), index_dtype_, false}};
}

std::string ArgReduce::params() const {
  return absl::StrCat("axes=(", axis_, ",) index_dtype=", dtype_name(index_dtype_));
}

bool ArgReduce::same_params(const Primitive& o) const {
  auto& a = static_cast<const ArgReduce&>(o);
  return o.id() == id() && a.axis_ == axis_ && a.index_dtype_ == index_dtype_;
}

Cost ArgReduce::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  c.flops = static_cast<double>(numel(in[0].shape));
  return c;
}

Cumsum::Cumsum(int axis, bool reverse)
    : Primitive(PrimitiveId::kCumsum), axis_(axis), reverse_(reverse) {}

std::vector<Aval> Cumsum::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in);
  check_axis(*this, axis_, in[0]);
  if (in[0].dtype == DType::kBool) fail(name(), "requires a numeric dtype, got ", in[0].str());
  return {in[0]};
}

std::string Cumsum::params() const {
  return absl::StrCat("axis=", axis_, " reverse=", reverse_ ? "True" : "False");
}

bool Cumsum::same_params(const Primitive& o) const {
  auto& c = static_cast<const Cumsum&>(o);
  return o.id() == id() && c.axis_ == axis_ && c.reverse_ == reverse_;
}

Array reduce(PrimitiveId id, const Array& x, std::vector<int> axes) {
  return bind1(std::make_shared<const Reduce>(id, std::move(axes)), {x});
}

Array arg_reduce(PrimitiveId id, const Array& x, int axis, DType index_dtype) {
  return bind1(std::make_shared<const ArgReduce>(id, axis, index_dtype), {x});
}

Array cumsum_along(const Array& x, int axis, bool reverse) {
  return bind1(std::make_shared<const Cumsum>(axis, reverse), {x});
}

}  // namespace graft
