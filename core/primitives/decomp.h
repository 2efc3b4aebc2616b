// Matrix factorizations (lax.linalg semantics), computed on the CPU by LAPACK
// (core/backend/cpu/decomp_kernels.cc): cholesky, qr, svd, eigh, lu and triangular_solve.
// Operands are f32 or f64 with the matrix in the last two dims; leading dims are a batch the
// kernel loops over (vmap moves the batched axis to the front). Misuse (rank < 2, a
// non-float dtype, a non-square matrix where one is needed) is a graft::Error naming the op.
// A factorization that fails (cholesky of a matrix that is not positive definite, an eigh or
// svd that does not converge) gives NaNs, as JAX does on the CPU.
#pragma once

#include <string>
#include <vector>

#include "core/ir/primitive.h"

namespace graft {

// cholesky: x [..., n, n] -> L [..., n, n], lower, x = L L^T; reads x's lower triangle.
class Cholesky : public Primitive {
 public:
  Cholesky() : Primitive(PrimitiveId::kCholesky) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
};

// qr: x [..., m, n] -> (q, r): full_matrices q [..., m, m], r [..., m, n]; otherwise
// q [..., m, k], r [..., k, n] with k = min(m, n).
class Qr : public Primitive {
 public:
  explicit Qr(bool full_matrices) : Primitive(PrimitiveId::kQr), full_matrices_(full_matrices) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  bool full_matrices() const { return full_matrices_; }

 private:
  bool full_matrices_;
};

// svd: x [..., m, n] -> s [..., k] (descending) and, with compute_uv, u [..., m, m | k] and
// vt [..., m | k, n] (outputs in that order: s, u, vt, as lax's svd_p).
class Svd : public Primitive {
 public:
  Svd(bool full_matrices, bool compute_uv)
      : Primitive(PrimitiveId::kSvd), full_matrices_(full_matrices), compute_uv_(compute_uv) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  bool full_matrices() const { return full_matrices_; }
  bool compute_uv() const { return compute_uv_; }

 private:
  bool full_matrices_, compute_uv_;
};

// eigh: symmetric x [..., n, n] -> (v [..., n, n] eigenvectors in columns, w [..., n]
// ascending eigenvalues); reads the lower (or upper) triangle only.
class Eigh : public Primitive {
 public:
  explicit Eigh(bool lower) : Primitive(PrimitiveId::kEigh), lower_(lower) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  bool lower() const { return lower_; }

 private:
  bool lower_;
};

// lu: x [..., m, n] -> (lu [..., m, n]: L below the diagonal (unit diagonal implied) and U
// on and above it; pivots i32 [..., min(m, n)]: row i was swapped with row pivots[i];
// permutation i32 [..., m]: P x = L U with P the rows permutation), partial pivoting.
class Lu : public Primitive {
 public:
  Lu() : Primitive(PrimitiveId::kLu) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
};

// triangular_solve(a [..., m, m], b): left_side solves op(a) x = b with b [..., m, n],
// otherwise x op(a) = b with b [..., n, m]; op(a) is a or a^T (transpose_a); a's lower or
// upper triangle is read, with ones on the diagonal when unit_diagonal. Batch dims equal.
struct TriangularSolveParams {
  bool left_side = false, lower = false, transpose_a = false, unit_diagonal = false;
  bool operator==(const TriangularSolveParams&) const = default;
};

class TriangularSolve : public Primitive {
 public:
  explicit TriangularSolve(TriangularSolveParams p)
      : Primitive(PrimitiveId::kTriangularSolve), p_(p) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  const TriangularSolveParams& options() const { return p_; }

 private:
  TriangularSolveParams p_;
};

}  // namespace graft
