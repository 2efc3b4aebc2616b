// Specs of remat (checkpoint) and checkpoint_name: their values are those of the function /
// the identity, computed here by a loop. The transform harness checks their rules.
#include <cmath>

#include "tests/core/primitives/specs/spec.h"
#include "transforms/remat.h"

namespace graft::spec {

GRAFT_SPEC(Remat) {
  Spec s{PrimitiveId::kRemat};
  struct P {
    const char* name;
    RematPolicy policy;
  };
  for (const P& p : {P{"nothing", nothing_saveable()}, P{"everything", everything_saveable()},
                     P{"named", save_only_these_names({"t"})}}) {
    for (DType d : {DType::kF64, DType::kF32}) {
      for (Shape shape : {Shape{}, Shape{3}, Shape{2, 3}}) {
        Array x = random_array(shape, d, 51), y = random_array(shape, d, 52);
        RematPolicy policy = p.policy;
        s.cases.push_back(
            {std::string(p.name) + " " + dtype_name(d) + shape_str(shape),
             {x, y},
             [policy](const std::vector<Array>& in) {
               auto f = checkpoint(
                   [](const Array& a, const Array& b) {
                     return checkpoint_name(tanh(a * b), "t") * sin(a) + a;
                   },
                   policy);
               return f(in[0], in[1]);
             },
             ref_binary(x, y, d,
                        [](double a, double b) { return std::tanh(a * b) * std::sin(a) + a; }),
             default_rtol(d) * 4,
             default_rtol(d)});
      }
    }
  }
  return s;
}

GRAFT_SPEC(CheckpointName) {
  Spec s{PrimitiveId::kCheckpointName};
  for (DType d : {DType::kF64, DType::kF32, DType::kBF16, DType::kI32}) {
    for (Shape shape : {Shape{}, Shape{0}, Shape{4}, Shape{2, 3}}) {
      Array x = random_array(shape, d, 61);
      s.cases.push_back({std::string(dtype_name(d)) + shape_str(shape),
                         {x},
                         [](const std::vector<Array>& in) { return checkpoint_name(in[0], "x"); },
                         ref_unary(x, d, [](double v) { return v; }),
                         0,
                         0});
    }
  }
  return s;
}

}  // namespace graft::spec
