// The complex-number primitives of lax: real, imag, complex (x + i y from two real
// arrays) and conj. Elementwise; real / imag / conj take c64 or c128, complex takes two f32 or
// two f64 operands of one shape. Rules as JAX's (jax/_src/lax/lax.py): all four are linear, and
// their transposes follow JAX's convention for complex cotangents (real's is complex(ct, 0),
// imag's complex(0, -ct), complex's (real(ct), -imag(ct)), conj's conj(ct)), so the gradient
// of a real function of real inputs through complex values is JAX's.
#pragma once

#include <vector>

#include "core/ir/primitive.h"

namespace graft {

class Real : public Primitive {
 public:
  Real() : Primitive(PrimitiveId::kReal) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
};

class Imag : public Primitive {
 public:
  Imag() : Primitive(PrimitiveId::kImag) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
};

class Complex : public Primitive {
 public:
  Complex() : Primitive(PrimitiveId::kComplex) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
};

class Conj : public Primitive {
 public:
  Conj() : Primitive(PrimitiveId::kConj) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
};

}  // namespace graft
