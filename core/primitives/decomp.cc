// Shape / dtype rules, parameters and costs of the factorizations (see decomp.h).
#include "core/primitives/decomp.h"

#include <algorithm>

#include "core/error.h"

namespace graft {

namespace {

// Checks one f32 / f64 operand of rank >= 2 (square when asked); returns its batch dims.
Shape check_matrix(std::string_view op, const std::vector<Aval>& in, size_t arity, bool square) {
  if (in.size() != arity) fail(op, "takes ", arity, " operand(s), got ", in.size());
  const Aval& a = in[0];
  if (a.dtype != DType::kF32 && a.dtype != DType::kF64) {
    fail(op, "needs a floating operand (f32 or f64), got ", a.str());
  }
  if (a.shape.size() < 2) fail(op, "needs a matrix (rank >= 2), got ", a.str());
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back();
  if (square && m != n) fail(op, "needs square matrices in the last two dims, got ", a.str());
  return Shape(a.shape.begin(), a.shape.end() - 2);
}

Shape with(Shape batch, std::initializer_list<int64_t> dims) {
  batch.insert(batch.end(), dims.begin(), dims.end());
  return batch;
}

double batch_count(const Shape& s) {
  double b = 1;
  for (size_t i = 0; i + 2 < s.size(); ++i) b *= static_cast<double>(s[i]);
  return b;
}

Cost cubic(const Primitive& p, const std::vector<Aval>& in, const std::vector<Aval>& out,
           double factor) {
  Cost c = p.Primitive::cost(in, out);
  const Shape& s = in[0].shape;
  const double m = static_cast<double>(s[s.size() - 2]), n = static_cast<double>(s.back());
  c.flops = factor * batch_count(s) * m * n * std::min(m, n);
  return c;
}

const char* flag(bool b) { return b ? "True" : "False"; }

}  // namespace

std::vector<Aval> Cholesky::infer(const std::vector<Aval>& in) const {
  check_matrix(name(), in, 1, true);
  return {Aval{in[0].shape, in[0].dtype, in[0].weak}};
}

Cost Cholesky::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  return cubic(*this, in, out, 1.0 / 3);
}

std::vector<Aval> Qr::infer(const std::vector<Aval>& in) const {
  Shape b = check_matrix(name(), in, 1, false);
  const Shape& s = in[0].shape;
  const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
  const DType d = in[0].dtype;
  if (full_matrices_) return {Aval{with(b, {m, m}), d}, Aval{with(b, {m, n}), d}};
  return {Aval{with(b, {m, k}), d}, Aval{with(b, {k, n}), d}};
}

std::string Qr::params() const { return str_cat("full_matrices=", flag(full_matrices_)); }

bool Qr::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const Qr&>(o).full_matrices_ == full_matrices_;
}

Cost Qr::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  return cubic(*this, in, out, 4.0);
}

std::vector<Aval> Svd::infer(const std::vector<Aval>& in) const {
  Shape b = check_matrix(name(), in, 1, false);
  const Shape& s = in[0].shape;
  const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
  const DType d = in[0].dtype;
  std::vector<Aval> out{Aval{with(b, {k}), d}};
  if (compute_uv_) {
    out.push_back(Aval{with(b, {m, full_matrices_ ? m : k}), d});
    out.push_back(Aval{with(b, {full_matrices_ ? n : k, n}), d});
  }
  return out;
}

std::string Svd::params() const {
  return str_cat("full_matrices=", flag(full_matrices_), " compute_uv=", flag(compute_uv_));
}

bool Svd::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  const auto& s = static_cast<const Svd&>(o);
  return s.full_matrices_ == full_matrices_ && s.compute_uv_ == compute_uv_;
}

Cost Svd::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  return cubic(*this, in, out, 12.0);
}

std::vector<Aval> Eigh::infer(const std::vector<Aval>& in) const {
  Shape b = check_matrix(name(), in, 1, true);
  const int64_t n = in[0].shape.back();
  return {Aval{in[0].shape, in[0].dtype}, Aval{with(b, {n}), in[0].dtype}};
}

std::string Eigh::params() const { return str_cat("lower=", flag(lower_)); }

bool Eigh::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const Eigh&>(o).lower_ == lower_;
}

Cost Eigh::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  return cubic(*this, in, out, 9.0);
}

std::vector<Aval> Lu::infer(const std::vector<Aval>& in) const {
  Shape b = check_matrix(name(), in, 1, false);
  const Shape& s = in[0].shape;
  const int64_t m = s[s.size() - 2], n = s.back();
  return {Aval{s, in[0].dtype}, Aval{with(b, {std::min(m, n)}), DType::kI32},
          Aval{with(b, {m}), DType::kI32}};
}

Cost Lu::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  return cubic(*this, in, out, 2.0 / 3);
}

std::vector<Aval> TriangularSolve::infer(const std::vector<Aval>& in) const {
  Shape batch = check_matrix(name(), in, 2, true);
  const Aval &a = in[0], &b = in[1];
  if (b.dtype != a.dtype) fail(name(), "a and b need equal dtypes, got ", a.str(), " and ", b.str());
  if (b.shape.size() != a.shape.size()) {
    fail(name(), "a and b need equal ranks, got ", a.str(), " and ", b.str());
  }
  if (!std::equal(batch.begin(), batch.end(), b.shape.begin())) {
    fail(name(), "a and b need equal batch dims, got ", a.str(), " and ", b.str());
  }
  const int64_t m = a.shape.back();
  const int64_t bm = p_.left_side ? b.shape[b.shape.size() - 2] : b.shape.back();
  if (bm != m) {
    fail(name(), p_.left_side ? "(left_side) b's rows" : "b's columns",
         " must match a's size: ", a.str(), " and ", b.str());
  }
  return {Aval{b.shape, b.dtype, a.weak && b.weak}};
}

std::string TriangularSolve::params() const {
  return str_cat("left_side=", flag(p_.left_side), " lower=", flag(p_.lower),
                 " transpose_a=", flag(p_.transpose_a), " unit_diagonal=", flag(p_.unit_diagonal));
}

bool TriangularSolve::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const TriangularSolve&>(o).p_ == p_;
}

Cost TriangularSolve::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  const double m = static_cast<double>(in[0].shape.back());
  c.flops = m * static_cast<double>(numel(in[1].shape));
  return c;
}

}  // namespace graft
