// lax.linalg.eig on the CPU: a general square x [..., n, n], f32, f64, c64 or
// c128, through LAPACK's geev (core/backend/cpu/eig_kernel.cc) -> eigenvalues w [..., n] and, with
// compute_right_eigenvectors (JAX's default), the right eigenvectors v [..., n, n] in columns
// (unit 2-norm, largest component real, as LAPACK and JAX give them), both complex (c64 for
// f32 and c64, c128 for f64 and c128). Derivatives as JAX's: the
// eigenvalues' jvp (without eigenvectors requested; its vjp is that jvp's transpose), and an
// error when eigenvectors are requested; vmap moves the batch to the front. A matrix geev
// cannot handle (no convergence) gives NaNs, as JAX.
#pragma once

#include <string>
#include <vector>

#include "core/ir/primitive.h"

namespace graft {

class Eig : public Primitive {
 public:
  explicit Eig(bool compute_right) : Primitive(PrimitiveId::kEig), right_(compute_right) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  bool compute_right() const { return right_; }

 private:
  bool right_;
};

}  // namespace graft
