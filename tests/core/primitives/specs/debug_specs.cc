// Spec of debug_print: an identity on its values (what it prints is checked in
// tests/transforms/debug_print_test.cc). Its derivative is the identity too, so the transform
// harness's finite-difference and vmap checks apply as they are.
#include <string>

#include "core/primitives/debug.h"
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {

GRAFT_SPEC(DebugPrint) {
  Spec s{PrimitiveId::kDebugPrint};
  set_debug_print_sink([](const std::string&) {});  // keep the test log readable
  auto second = [](const std::vector<Array>& in) { return debug_print("{} {}", in[0], in[1])[1]; };
  auto first = [](const std::vector<Array>& in) { return debug_print("x = {}", in[0])[0]; };
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kI32, DType::kBool}) {
    Array x = random_array({2, 3}, d, 7);
    s.cases.push_back(Case{
        std::string(dtype_name(d)) + " identity", {x}, first, Expected{{2, 3}, d, values_of(x)}});
  }
  Array scalar = random_array({}, DType::kF64, 8);
  s.cases.push_back(Case{"scalar", {scalar}, first, Expected{{}, DType::kF64, values_of(scalar)}});
  Array empty = random_array({0, 3}, DType::kF32, 9);
  s.cases.push_back(Case{"empty", {empty}, first, Expected{{0, 3}, DType::kF32, {}}});
  Array a = random_array({3}, DType::kF64, 10), b = random_array({2, 2}, DType::kF64, 11);
  s.cases.push_back(
      Case{"second of two arrays", {a, b}, second, Expected{{2, 2}, DType::kF64, values_of(b)}});
  return s;
}

}  // namespace graft::spec
