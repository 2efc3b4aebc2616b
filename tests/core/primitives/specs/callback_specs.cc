// Spec of pure_callback: host functions computing with plain loops over the values, so the
// expected results are those loops' (never graft's). It has no derivative (a graft::Error,
// checked in tests/transforms/pure_callback_test.cc), so the gradient checks are skipped;
// the vmap check runs with each batching method.
#include <cmath>
#include <string>

#include "core/lax/callback.h"
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

// out = x^2 - y, elementwise (broadcasting), computed on the host as doubles, in x's dtype.
HostCallback host_square_minus() {
  return [](const std::vector<Array>& in) {
    // Under vmap(expand_dims) one argument may have a leading 1 where the other has the batch.
    Shape shape = broadcast_shapes("host_square_minus", in[0].shape(), in[1].shape());
    std::vector<double> x = broadcast_to(in[0], shape).to_vector<double>();
    std::vector<double> y = broadcast_to(in[1], shape).to_vector<double>();
    for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] * x[i] - y[i];
    return std::vector<Array>{astype(array(x, shape), in[0].dtype())};
  };
}

}  // namespace

GRAFT_SPEC(PureCallback) {
  Spec s{PrimitiveId::kPureCallback};
  const char* no_grad = "pure_callback has no derivative (as in JAX)";
  for (VmapMethod m :
       {VmapMethod::kSequential, VmapMethod::kExpandDims, VmapMethod::kBroadcastAll}) {
    for (DType d : {DType::kF32, DType::kF64, DType::kI32}) {
      Array x = random_array({2, 3}, d, 21), y = random_array({2, 3}, d, 22);
      std::vector<double> xv = values_of(x), yv = values_of(y), want;
      for (size_t i = 0; i < xv.size(); ++i) want.push_back(round_to(xv[i] * xv[i] - yv[i], d));
      Case c{std::string(dtype_name(d)) + " method " + std::to_string(static_cast<int>(m)),
             {x, y},
             [m](const std::vector<Array>& in) {
               return pure_callback(host_square_minus(), {in[0].aval()}, {in[0], in[1]}, m)[0];
             },
             Expected{{2, 3}, d, want}};
      c.rtol = d == DType::kI32 ? 0 : 1e-6;
      c.skip_grad = no_grad;
      s.cases.push_back(c);
    }
  }
  Array e = random_array({0, 3}, DType::kF32, 23);
  Case empty{"empty",
             {e, e},
             [](const std::vector<Array>& in) {
               return pure_callback(host_square_minus(), {in[0].aval()}, {in[0], in[1]},
                                    VmapMethod::kSequential)[0];
             },
             Expected{{0, 3}, DType::kF32, {}}};
  empty.skip_grad = no_grad;
  s.cases.push_back(empty);
  return s;
}

}  // namespace graft::spec
