// Fused groups for the CUDA fusion tests (fusion_codegen_test, fusion_gpu_test), built as jit
// builds them: bodies traced from functions and made into fused_elementwise, and the group the
// fusion pass itself makes of a chain with constants; integer groups (which jit does not fuse)
// as GroupSpecs.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/cuda/fusion/cuda_source.h"
#include "core/ir/graph.h"
#include "core/primitives/fusion.h"

namespace graft::fusion_test {

using cuda::fusion::GroupSpec;
using P = PrimitiveId;
using Group = std::shared_ptr<const FusedElementwise>;

inline constexpr DType kFusible[] = {DType::kF32, DType::kBF16, DType::kF16, DType::kF64,
                                     DType::kBool};
inline constexpr DType kIntegers[] = {DType::kU8, DType::kU32, DType::kI32, DType::kI64};
inline constexpr int64_t kN = 1037;

const char* name(P op);
// The fusible unary and binary ops: the kFuse rows of the primitive list.
std::vector<P> fusible_ops();
// Ops whose CUDA form gives the CPU's bits (the rest are transcendental).
bool exact(P op);
// The op's primitive applied to a[0] (and a[1]); a convert_element_type.
Array apply_op(P op, const std::vector<Array>& a);
Array convert(const Array& x, DType to);

// A fused_elementwise whose body is fn traced on avals, over `shape` (rank-0 inputs are
// broadcast scalars).
Group group(const FlatFn& fn, const std::vector<Aval>& avals, const Shape& shape);
// Every op of `ops` accepting d, on x (and y) of dtype d: one output each.
Group ops_group(DType d, const std::vector<P>& ops, int64_t n = kN);
// x of dtype `from` converted to every other fusible dtype.
Group converts_group(DType from, int64_t n = kN);
// bf16 x, an f32 scalar s, a bool p and an f16 h: converts, a select, mixed dtypes, four
// outputs (f32, bf16, bool, f16).
Group mixed_group(int64_t n = kN);
// The group jit's fusion pass makes of tanh(x * 1.5 + 0.5) * y - exp(-x) (two scalars).
Group jit_group(DType d, int64_t n = kN);
// Every op accepting integer dtype d on inputs 0 and 1 (input 2 is f32), and converts
// between d and f32 / bool / f16 / f64 (f32 -> d saturates).
GroupSpec integer_spec(DType d);
// Every kind of group above, named: what the NVRTC and GPU tests run.
std::vector<std::pair<std::string, GroupSpec>> all_groups();

}  // namespace graft::fusion_test
