// Helpers shared by the tests of jit's passes (jit_passes_test, jit_bodies_test,
// jit_dce_bodies_test): a traced program, avals, random inputs, closeness, text counting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/program.h"

namespace graft::pass_test {

// fn traced on placeholders of `avals` and lowered (fails the test if it cannot be).
Program program_of(const FlatFn& fn, const std::vector<Aval>& avals);
Aval f32(Shape s);
// Normal(0, 1) values of shape s, from a fixed seed.
Array randn(Shape s, uint32_t seed);
// Same shape, and every element within 1e-5 relative (plus 1e-5 absolute).
void expect_close(const Array& a, const Array& b);
// How often `what` occurs in `text`.
int count(const std::string& text, const std::string& what);

}  // namespace graft::pass_test
