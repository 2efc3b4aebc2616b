// Specs of the call primitives (custom_jvp_call, custom_vjp_call): their values are those of
// the user's function, computed here by a loop.
#include <cmath>

#include "tests/core/primitives/specs/spec.h"
#include "transforms/custom_derivatives.h"

namespace graft::spec {
namespace {

// log(1 + e^x) with the stable derivative sigmoid(x) (the example from JAX's docs).
Array log1pexp(const Array& x) {
  auto f = custom_jvp([](const Array& a) { return log1p(exp(a)); },
                      [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                        const Array& a = std::get<0>(p);
                        return std::pair{log1p(exp(a)), std::get<0>(t) * sigmoid(a)};
                      },
                      "log1pexp");
  return f(x);
}

// x * y with a hand-written reverse rule.
Array scaled_product(const Array& x, const Array& y) {
  auto f = custom_vjp([](const Array& a, const Array& b) { return a * b; },
                      [](const Array& a, const Array& b) {
                        return std::pair{a * b, std::pair{a, b}};
                      },
                      [](const std::pair<Array, Array>& res, const Array& ct) {
                        return std::tuple{ct * res.second, ct * res.first};
                      },
                      "product");
  return f(x, y);
}

}  // namespace

GRAFT_SPEC(CustomJvpCall) {
  Spec s{PrimitiveId::kCustomJvpCall};
  for (DType d : {DType::kF64, DType::kF32}) {
    for (Shape shape : {Shape{}, Shape{4}, Shape{2, 3}}) {
      Array x = random_array(shape, d, 31, -3, 3);
      s.cases.push_back({std::string(dtype_name(d)) + shape_str(shape),
                         {x},
                         [](const std::vector<Array>& in) { return log1pexp(in[0]); },
                         ref_unary(x, d, [](double v) { return std::log1p(std::exp(v)); }),
                         default_rtol(d) * 4,
                         0});
    }
  }
  return s;
}

GRAFT_SPEC(CustomVjpCall) {
  Spec s{PrimitiveId::kCustomVjpCall};
  for (DType d : {DType::kF64, DType::kF32}) {
    Array x = random_array({2, 3}, d, 41), y = random_array({2, 3}, d, 42);
    Case c{std::string(dtype_name(d)) + " product",
           {x, y},
           [](const std::vector<Array>& in) { return scaled_product(in[0], in[1]); },
           ref_binary(x, y, d, [](double a, double b) { return a * b; }),
           default_rtol(d),
           0};
    c.skip_grad =
        "custom_vjp has no forward mode (jvp), like JAX; its reverse mode is checked in "
        "tests/transforms/custom_derivatives_test.cc";
    s.cases.push_back(c);
  }
  return s;
}

}  // namespace graft::spec
