#include "core/primitives/index.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace graft {

bool is_index_dtype(DType d) {
  return is_integral(d);
}

namespace {

void check_arity(const Primitive& p, const std::vector<Aval>& in, size_t n) {
  if (in.size() != n) fail(p.name(), "takes ", n, " operands, got ", in.size());
}

// Shared by gather and scatter_add: checks the axis / batch layout of operand and indices
// and returns gather's output shape.
Shape gather_shape(const Primitive& p, const Aval& operand, const Aval& indices, int axis,
                   int batch_dims) {
  int rank = static_cast<int>(operand.shape.size());
  if (!is_index_dtype(indices.dtype)) {
    fail(p.name(), "indices must be i32, i64, u8 or u32, got ", indices.str());
  }
  if (batch_dims < 0 || axis < batch_dims || axis >= rank) {
    fail(p.name(), "needs 0 <= batch_dims <= axis < rank, got batch_dims=", batch_dims,
         " axis=", axis, " for operand ", operand.str());
  }
  if (static_cast<int>(indices.shape.size()) < batch_dims) {
    fail(p.name(), "indices ", indices.str(), " have fewer than batch_dims=", batch_dims, " dims");
  }
  for (int d = 0; d < batch_dims; ++d) {
    if (operand.shape[d] != indices.shape[d]) {
      fail(p.name(), "batch dims differ: operand ", operand.str(), ", indices ", indices.str());
    }
  }
  Shape out(operand.shape.begin(), operand.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin() + batch_dims, indices.shape.end());
  out.insert(out.end(), operand.shape.begin() + axis + 1, operand.shape.end());
  return out;
}

double bytes_of(const Aval& a) { return static_cast<double>(numel(a.shape) * dtype_size(a.dtype)); }

// The shape rule of every scatter: updates of gather's output shape and the operand's dtype.
std::vector<Aval> scatter_infer(const Primitive& p, const std::vector<Aval>& in, int axis,
                                int batch_dims, bool allow_bool) {
  check_arity(p, in, 3);
  if (!allow_bool && in[0].dtype == DType::kBool) {
    fail(p.name(), "requires a numeric dtype, got ", in[0].str());
  }
  Shape want = gather_shape(p, in[0], in[1], axis, batch_dims);
  if (in[2].shape != want || in[2].dtype != in[0].dtype) {
    fail(p.name(), "updates must be ", Aval{want, in[0].dtype}.str(), " for operand ",
         in[0].str(), " and indices ", in[1].str(), ", got ", in[2].str());
  }
  return {in[0]};
}

// Copies the operand, then reads updates and indices and read-modify-writes their targets.
Cost scatter_cost(const std::vector<Aval>& in, const std::vector<Aval>& out) {
  return Cost{static_cast<double>(numel(in[2].shape)),
              2 * bytes_of(out[0]) + 3 * bytes_of(in[2]) + bytes_of(in[1])};
}

}  // namespace

// ---------------------------------------------------------------------------- gather

std::vector<Aval> Gather::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 2);
  return {Aval{gather_shape(*this, in[0], in[1], axis_, batch_dims_), in[0].dtype, in[0].weak}};
}

std::string Gather::params() const {
  return absl::StrCat("axis=", axis_, " batch_dims=", batch_dims_,
                      " mode=", mode_ == GatherMode::kFill ? "fill" : "clip");
}

bool Gather::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  auto& g = static_cast<const Gather&>(o);
  return g.axis_ == axis_ && g.batch_dims_ == batch_dims_ && g.mode_ == mode_;
}

Cost Gather::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  // Reads the gathered elements (not the whole operand) and the indices; writes the output.
  return Cost{0, 2 * bytes_of(out[0]) + bytes_of(in[1])};
}

// ------------------------------------------------------- scatter_add, scatter, ...

std::vector<Aval> ScatterPrimitive::infer(const std::vector<Aval>& in) const {
  return scatter_infer(*this, in, axis_, batch_dims_, id() == PrimitiveId::kScatter);
}

std::string ScatterPrimitive::params() const {
  return absl::StrCat("axis=", axis_, " batch_dims=", batch_dims_);
}

bool ScatterPrimitive::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  auto& s = static_cast<const ScatterPrimitive&>(o);
  return s.axis_ == axis_ && s.batch_dims_ == batch_dims_;
}

Cost ScatterPrimitive::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  return scatter_cost(in, out);
}

ScatterCombine::ScatterCombine(PrimitiveId id, int axis, int batch_dims)
    : ScatterPrimitive(id, axis, batch_dims) {
  if (id != PrimitiveId::kScatter && id != PrimitiveId::kScatterMul &&
      id != PrimitiveId::kScatterMin && id != PrimitiveId::kScatterMax) {
    fail(name(), "is not a scatter combiner");
  }
}

// ------------------------------------------------------------------------------ sort

std::vector<Aval> Sort::infer(const std::vector<Aval>& in) const {
  if (in.empty()) fail(name(), "needs at least one operand");
  if (num_keys_ < 1 || num_keys_ > static_cast<int>(in.size())) {
    fail(name(), "num_keys=", num_keys_, " must be in [1, ", in.size(), "]");
  }
  int rank = static_cast<int>(in[0].shape.size());
  if (axis_ < 0 || axis_ >= rank) {
    fail(name(), "axis ", axis_, " is out of range for operand ", in[0].str());
  }
  for (const Aval& a : in) {
    if (a.shape != in[0].shape) {
      fail(name(), "operands must have equal shapes, got ", in[0].str(), " and ", a.str());
    }
  }
  return in;
}

std::string Sort::params() const {
  return absl::StrCat("dimension=", axis_, " is_stable=", stable_ ? "True" : "False",
                      " num_keys=", num_keys_);
}

bool Sort::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  auto& s = static_cast<const Sort&>(o);
  return s.axis_ == axis_ && s.num_keys_ == num_keys_ && s.stable_ == stable_;
}

Cost Sort::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  double n = in.empty() || in[0].shape.empty() ? 1 : static_cast<double>(in[0].shape[axis_]);
  double total = in.empty() ? 0 : static_cast<double>(numel(in[0].shape));
  Cost c;
  c.flops = total * std::max(1.0, std::log2(std::max(n, 1.0))) * num_keys_;
  for (const Aval& a : in) c.bytes += bytes_of(a);
  for (const Aval& a : out) c.bytes += bytes_of(a);
  return c;
}

}  // namespace graft
