// The op-spec table: every primitive in core/primitives/list.h has a spec here, with cases
// whose expected values come from plain loops in the spec files (never from graft itself).
// op_spec_test.cc runs every case, checks that each case really exercises its primitive,
// and fails if any primitive of the list has no spec. The Transforms issue extends the table
// with gradient and batching checks, which is why a case is a function of its inputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/ops.h"
#include "core/primitives/list.h"

namespace graft::spec {

// A host tensor of reference values (as double; ints and bools exactly representable).
struct Expected {
  Shape shape;
  DType dtype;
  std::vector<double> values;
};

struct Case {
  std::string name;
  std::vector<Array> inputs;
  std::function<Array(const std::vector<Array>&)> fn;
  Expected expected;
  double rtol = 0;  // |actual - expected| <= atol + rtol * |expected|; NaNs must match
  double atol = 0;
  // Transform checks (tests/core/primitives/op_spec_transforms.cc) run on every case. A case may skip
  // one only by stating why here; an empty string means "run it".
  std::string skip_grad;  // finite-difference jvp / vjp, first and second order
  std::string skip_vmap;  // vmap against a loop over the batch
};

struct Spec {
  PrimitiveId prim;
  std::vector<Case> cases;
};

using SpecFn = Spec (*)();
std::map<PrimitiveId, SpecFn>& registry();

struct Registrar {
  Registrar(PrimitiveId id, SpecFn fn) { registry()[id] = fn; }
};

// GRAFT_SPEC(Add) { Spec s{PrimitiveId::kAdd}; ...; return s; }
#define GRAFT_SPEC(Name)                                                                         \
  static ::graft::spec::Spec spec_##Name();                                                      \
  static ::graft::spec::Registrar registrar_##Name(::graft::PrimitiveId::k##Name, &spec_##Name); \
  static ::graft::spec::Spec spec_##Name()

// ---- helpers for writing cases ----

// Host data with a deterministic generator; values in [lo, hi) (integers: [lo, hi)).
std::vector<double> random_values(int64_t n, DType dtype, uint32_t seed, double lo = -2.0,
                                  double hi = 2.0);
// An Array holding `values` converted to `dtype` (rounded as the dtype stores them).
Array make(const std::vector<double>& values, const Shape& shape, DType dtype);
Array random_array(const Shape& shape, DType dtype, uint32_t seed, double lo = -2.0,
                   double hi = 2.0);
// The values an Array holds, as double (evaluates).
std::vector<double> values_of(const Array& a);
// Rounds v as `dtype` stores it (f16/bf16/f32 rounding, integer truncation).
double round_to(double v, DType dtype);

// Reference for an elementwise unary op: out[i] = f(in[i]), rounded to `out_dtype`.
Expected ref_unary(const Array& x, DType out_dtype, const std::function<double(double)>& f);
// Reference for a broadcasting binary op (NumPy broadcasting computed by index arithmetic).
Expected ref_binary(const Array& a, const Array& b, DType out_dtype,
                    const std::function<double(double, double)>& f);

// Multi-index helpers for loop references.
std::vector<int64_t> unravel(int64_t flat, const Shape& shape);
int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape);

// Default tolerance for floating results of `dtype` computed in f32 or wider.
double default_rtol(DType dtype);

}  // namespace graft::spec
