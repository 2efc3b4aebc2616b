#include "core/primitives/shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error.h"

namespace graft {

namespace {

void check_arity(const Primitive& p, const std::vector<Aval>& in, size_t n) {
  if (in.size() != n) fail(p.name(), "takes ", n, " operands, got ", in.size());
}

// Negative dims and element counts beyond int64 (numel of the shape is safe after).
void check_dims_nonnegative(const Primitive& p, const Shape& s) { check_shape(p.name(), s); }

template <typename V>
std::string tuple_str(const V& v) {
  if (v.size() == 1) return absl::StrCat("(", v[0], ",)");
  return absl::StrCat("(", absl::StrJoin(v, ", "), ")");
}

template <typename P>
const P& as(const Primitive& o) {
  return static_cast<const P&>(o);
}

// Scalar integer start indices (dynamic_slice / dynamic_update_slice operands from `first`).
void check_starts(const Primitive& p, const std::vector<Aval>& in, size_t first, int rank) {
  if (in.size() != first + rank) {
    fail(p.name(), "needs one start index per operand dimension (", rank, "), got ",
         in.size() - first);
  }
  for (size_t i = first; i < in.size(); ++i) {
    if (!in[i].shape.empty() || !is_integral(in[i].dtype)) {
      fail(p.name(), "start indices must be integer scalars, got ", in[i].str());
    }
  }
}

}  // namespace

Cost CopyPrimitive::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  c.flops = 0;
  return c;
}

// ---- reshape ----

std::vector<Aval> Reshape::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  check_dims_nonnegative(*this, shape_);
  if (numel(in[0].shape) != numel(shape_)) {
    fail(name(), "cannot reshape ", shape_str(in[0].shape), " into ", shape_str(shape_));
  }
  return {Aval{shape_, in[0].dtype, in[0].weak}};
}
std::string Reshape::params() const { return absl::StrCat("new_sizes=", tuple_str(shape_)); }
bool Reshape::same_params(const Primitive& o) const {
  return o.id() == id() && as<Reshape>(o).shape_ == shape_;
}
Cost Reshape::cost(const std::vector<Aval>&, const std::vector<Aval>&) const {
  return {};  // the kernel aliases its input
}

// ---- transpose ----

std::vector<Aval> Transpose::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  const Shape& s = in[0].shape;
  std::vector<int> sorted = perm_;
  std::sort(sorted.begin(), sorted.end());
  bool ok = perm_.size() == s.size();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int>(i);
  if (!ok) {
    fail(name(), "permutation ", tuple_str(perm_), " is not a permutation of the axes of ",
         shape_str(s));
  }
  Shape out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = s[perm_[i]];
  return {Aval{out, in[0].dtype, in[0].weak}};
}
std::string Transpose::params() const { return absl::StrCat("permutation=", tuple_str(perm_)); }
bool Transpose::same_params(const Primitive& o) const {
  return o.id() == id() && as<Transpose>(o).perm_ == perm_;
}

// ---- broadcast_in_dim ----

std::vector<Aval> BroadcastInDim::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  check_dims_nonnegative(*this, shape_);
  const Shape& s = in[0].shape;
  if (dims_.size() != s.size()) {
    fail(name(), "broadcast_dimensions ", tuple_str(dims_), " must have one entry per operand dim ",
         shape_str(s));
  }
  for (size_t i = 0; i < dims_.size(); ++i) {
    int d = dims_[i];
    if (d < 0 || d >= static_cast<int>(shape_.size()) || (i > 0 && d <= dims_[i - 1])) {
      fail(name(), "broadcast_dimensions ", tuple_str(dims_),
           " must be strictly increasing and within the rank of ", shape_str(shape_));
    }
    if (s[i] != 1 && s[i] != shape_[d]) {
      fail(name(), "cannot broadcast ", shape_str(s), " to ", shape_str(shape_),
           " with broadcast_dimensions ", tuple_str(dims_));
    }
  }
  return {Aval{shape_, in[0].dtype, in[0].weak}};
}
std::string BroadcastInDim::params() const {
  return absl::StrCat("shape=", tuple_str(shape_), " broadcast_dimensions=", tuple_str(dims_));
}
bool BroadcastInDim::same_params(const Primitive& o) const {
  return o.id() == id() && as<BroadcastInDim>(o).shape_ == shape_ &&
         as<BroadcastInDim>(o).dims_ == dims_;
}

// ---- slice ----

std::vector<Aval> Slice::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  const Shape& s = in[0].shape;
  size_t r = s.size();
  if (start_.size() != r || limit_.size() != r || strides_.size() != r) {
    fail(name(), "start ", tuple_str(start_), ", limit ", tuple_str(limit_), " and strides ",
         tuple_str(strides_), " must each have one entry per dim of ", shape_str(s));
  }
  Shape out(r);
  for (size_t d = 0; d < r; ++d) {
    if (start_[d] < 0 || start_[d] > limit_[d] || limit_[d] > s[d] || strides_[d] < 1) {
      fail(name(), "invalid start ", tuple_str(start_), ", limit ", tuple_str(limit_), ", strides ",
           tuple_str(strides_), " for shape ", shape_str(s));
    }
    const int64_t span = limit_[d] - start_[d];  // in [0, dim]; no stride overflows below
    out[d] = span == 0 ? 0 : 1 + (span - 1) / strides_[d];
  }
  return {Aval{out, in[0].dtype, in[0].weak}};
}
std::string Slice::params() const {
  return absl::StrCat("start_indices=", tuple_str(start_), " limit_indices=", tuple_str(limit_),
                      " strides=", tuple_str(strides_));
}
bool Slice::same_params(const Primitive& o) const {
  auto& p = as<Slice>(o);
  return o.id() == id() && p.start_ == start_ && p.limit_ == limit_ && p.strides_ == strides_;
}

// ---- dynamic_slice ----

std::vector<Aval> DynamicSlice::infer(const std::vector<Aval>& in) const {
  if (in.empty()) fail(name(), "needs an operand");
  const Shape& s = in[0].shape;
  check_starts(*this, in, 1, static_cast<int>(s.size()));
  if (sizes_.size() != s.size()) {
    fail(name(), "slice_sizes ", tuple_str(sizes_), " must have one entry per dim of ",
         shape_str(s));
  }
  for (size_t d = 0; d < s.size(); ++d) {
    if (sizes_[d] < 0 || sizes_[d] > s[d]) {
      fail(name(), "slice_sizes ", tuple_str(sizes_), " do not fit in ", shape_str(s));
    }
  }
  return {Aval{sizes_, in[0].dtype, in[0].weak}};
}
std::string DynamicSlice::params() const { return absl::StrCat("slice_sizes=", tuple_str(sizes_)); }
bool DynamicSlice::same_params(const Primitive& o) const {
  return o.id() == id() && as<DynamicSlice>(o).sizes_ == sizes_;
}

// ---- dynamic_update_slice ----

std::vector<Aval> DynamicUpdateSlice::infer(const std::vector<Aval>& in) const {
  if (in.size() < 2) fail(name(), "needs an operand and an update");
  const Shape& s = in[0].shape;
  const Shape& u = in[1].shape;
  check_starts(*this, in, 2, static_cast<int>(s.size()));
  bool ok = u.size() == s.size() && in[0].dtype == in[1].dtype;
  for (size_t d = 0; ok && d < s.size(); ++d) ok = u[d] <= s[d];
  if (!ok) {
    fail(name(), "update ", in[1].str(), " must have the operand's rank and dtype and fit in ",
         in[0].str());
  }
  return {Aval{s, in[0].dtype, in[0].weak && in[1].weak}};
}

// ---- concatenate ----

std::vector<Aval> Concatenate::infer(const std::vector<Aval>& in) const {
  if (in.empty()) fail(name(), "needs at least one operand");
  const Shape& s0 = in[0].shape;
  int r = static_cast<int>(s0.size());
  if (axis_ < 0 || axis_ >= r) fail(name(), "axis ", axis_, " out of range for ", shape_str(s0));
  Shape out = s0;
  bool weak = in[0].weak;
  for (size_t i = 1; i < in.size(); ++i) {
    const Shape& s = in[i].shape;
    bool ok = s.size() == s0.size() && in[i].dtype == in[0].dtype;
    for (int d = 0; ok && d < r; ++d) ok = d == axis_ || s[d] == s0[d];
    if (!ok) {
      fail(name(), "operands must have equal dtypes and equal dims except along axis ", axis_,
           ", got ", in[0].str(), " and ", in[i].str());
    }
    out[axis_] = checked_add(name(), out[axis_], s[axis_], "concatenated size");
    weak = weak && in[i].weak;
  }
  return {Aval{out, in[0].dtype, weak}};
}
std::string Concatenate::params() const { return absl::StrCat("dimension=", axis_); }
bool Concatenate::same_params(const Primitive& o) const {
  return o.id() == id() && as<Concatenate>(o).axis_ == axis_;
}

// ---- pad ----

std::vector<Aval> Pad::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 2);
  const Shape& s = in[0].shape;
  if (!in[1].shape.empty() || in[1].dtype != in[0].dtype) {
    fail(name(), "padding value must be a scalar of the operand's dtype, got ", in[1].str(),
         " for ", in[0].str());
  }
  if (config_.size() != s.size()) {
    fail(name(), "padding config needs one (low, high, interior) per dim of ", shape_str(s));
  }
  Shape out(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    auto [lo, hi, interior] = config_[d];
    if (interior < 0) fail(name(), "interior padding must be >= 0, got ", interior);
    const std::string_view n = name(), what = "padded size";
    int64_t core =
        s[d] == 0 ? 0 : checked_add(n, s[d], checked_mul(n, s[d] - 1, interior, what), what);
    out[d] = checked_add(n, checked_add(n, lo, hi, what), core, what);
    if (out[d] < 0) {
      fail(name(), "padding (", lo, ", ", hi, ", ", interior, ") of dim ", d, " of ", shape_str(s),
           " gives a negative size");
    }
  }
  return {Aval{out, in[0].dtype, in[0].weak && in[1].weak}};
}
std::string Pad::params() const {
  std::vector<std::string> parts;
  for (auto& c : config_) parts.push_back(absl::StrCat("(", c[0], ", ", c[1], ", ", c[2], ")"));
  return absl::StrCat("padding_config=(", absl::StrJoin(parts, ", "), ")");
}
bool Pad::same_params(const Primitive& o) const {
  return o.id() == id() && as<Pad>(o).config_ == config_;
}

// ---- rev ----

std::vector<Aval> Rev::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  int r = static_cast<int>(in[0].shape.size());
  std::vector<int> sorted = dims_;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= r || (i > 0 && sorted[i] == sorted[i - 1])) {
      fail(name(), "dimensions ", tuple_str(dims_), " must be distinct dims of ",
           shape_str(in[0].shape));
    }
  }
  return {in[0]};
}
std::string Rev::params() const { return absl::StrCat("dimensions=", tuple_str(dims_)); }
bool Rev::same_params(const Primitive& o) const {
  return o.id() == id() && as<Rev>(o).dims_ == dims_;
}

// ---- iota ----

std::vector<Aval> Iota::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 0);
  check_dims_nonnegative(*this, shape_);
  if (dimension_ < 0 || dimension_ >= static_cast<int>(shape_.size())) {
    fail(name(), "dimension ", dimension_, " out of range for shape ", shape_str(shape_));
  }
  if (dtype_ == DType::kBool) fail(name(), "needs a numeric dtype, got bool");
  return {Aval{shape_, dtype_, false}};
}
std::string Iota::params() const {
  return absl::StrCat("dtype=", dtype_name(dtype_), " shape=", tuple_str(shape_),
                      " dimension=", dimension_);
}
bool Iota::same_params(const Primitive& o) const {
  auto& p = as<Iota>(o);
  return o.id() == id() && p.dtype_ == dtype_ && p.shape_ == shape_ && p.dimension_ == dimension_;
}

}  // namespace graft
