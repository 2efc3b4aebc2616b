#include "tests/cuda/fusion_test_groups.h"

#include <optional>

#include "core/error.h"
#include "core/ir/program.h"
#include "core/ops.h"
#include "core/primitives/elementwise.h"
#include "gtest/gtest.h"
#include "transforms/passes/passes.h"

namespace graft::fusion_test {

namespace cf = cuda::fusion;

const char* name(P op) { return kPrimitiveNames[static_cast<int>(op)]; }

// The fusible unary and binary ops: the kFuse rows of the primitive list.
std::vector<P> fusible_ops() {
  std::vector<P> ops;
  for (int i = 0; i < kNumPrimitives; ++i) {
    const PrimitiveFacts& f = kPrimitiveFacts[i];
    if (f.has(kFuse) && f.kind != OpKind::kOther) ops.push_back(static_cast<P>(i));
  }
  return ops;
}

// Ops whose CUDA form gives the CPU's bits (the rest are transcendental).
bool exact(P op) {
  for (P e : {P::kNeg,  P::kAbs,   P::kSign,     P::kSquare, P::kSqrt, P::kRsqrt, P::kFloor,
              P::kCeil, P::kRound, P::kIsFinite, P::kNot,    P::kAdd,  P::kSub,   P::kMul,
              P::kDiv,  P::kRem,   P::kMax,      P::kMin,    P::kEq,   P::kNe,    P::kLt,
              P::kLe,   P::kGt,    P::kGe,       P::kAnd,    P::kOr,   P::kXor}) {
    if (e == op) return true;
  }
  return false;
}

Array apply_op(P op, const std::vector<Array>& a) {
  if (primitive_facts(op).kind == OpKind::kUnary) return bind1(std::make_shared<Unary>(op), {a[0]});
  return bind1(std::make_shared<Binary>(op), {a[0], a[1]});
}
Array convert(const Array& x, DType to) {
  return bind1(std::make_shared<ConvertElementType>(to, false), {x});
}

// A fused_elementwise whose body is fn traced on avals, over `shape` (rank-0 inputs are
// broadcast scalars).
Group group(const FlatFn& fn, const std::vector<Aval>& avals, const Shape& shape) {
  std::optional<Program> p = lower(trace_avals(fn, avals));
  EXPECT_TRUE(p.has_value());
  return make_fused_elementwise(std::make_shared<const Program>(*p), shape);
}

// Every op of `ops` accepting d, on x (and y) of dtype d: one output each.
Group ops_group(DType d, const std::vector<P>& ops, int64_t n) {
  auto fn = [&](const std::vector<Array>& in) {
    std::vector<Array> out;
    for (P op : ops) {
      if (accepts(dtype_class(op), d)) out.push_back(apply_op(op, {in[0], in[1]}));
    }
    return out;
  };
  return group(fn, {Aval{{n}, d, false}, Aval{{n}, d, false}}, {n});
}

// x converted to every other fusible dtype.
Group converts_group(DType from, int64_t n) {
  auto fn = [&](const std::vector<Array>& in) {
    std::vector<Array> out;
    for (DType to : kFusible) {
      if (to != from) out.push_back(convert(in[0], to));
    }
    return out;
  };
  return group(fn, {Aval{{n}, from, false}}, {n});
}

// bf16 x, an f32 scalar s, a bool p and an f16 h: converts, a select, mixed dtypes, three
// outputs of three dtypes.
Group mixed_group(int64_t n) {
  auto fn = [n](const std::vector<Array>& in) {
    Array xf = convert(in[0], DType::kF32) * broadcast_in_dim(in[1], {n}, {});
    Array z = bind1(std::make_shared<SelectN>(), {in[2], xf, exp(xf)});
    Array b = convert(z, DType::kBF16) + in[0];
    Array h = convert(convert(in[3], DType::kF32) - z, DType::kF16) * in[3];
    return std::vector<Array>{z, b, z > xf, h};
  };
  return group(fn,
               {Aval{{n}, DType::kBF16, false}, Aval{{}, DType::kF32, false},
                Aval{{n}, DType::kBool, false}, Aval{{n}, DType::kF16, false}},
               {n});
}

// The group jit's fusion pass makes of a chain with two scalar constants.
Group jit_group(DType d, int64_t n) {
  auto chain = [](const std::vector<Array>& in) {
    Array a = tanh(in[0] * 1.5f + 0.5f) * in[1];
    return std::vector<Array>{a - exp(-in[0]), a};
  };
  Program p = eliminate_dead_code(
      fuse_elementwise(*lower(trace_avals(chain, {Aval{{n}, d, false}, Aval{{n}, d, false}}))));
  Group g;
  for (const Instr& i : p.instrs) {
    if (i.prim->id() == P::kFusedElementwise) {
      g = std::static_pointer_cast<const FusedElementwise>(i.prim);
    }
  }
  EXPECT_NE(g, nullptr) << print_program(p);
  return g;
}

// An integer group (jit does not fuse integers; the emitter takes them): every op accepting
// d on inputs 0 and 1, and converts between d and f32 / bool / f16.
GroupSpec integer_spec(DType d) {
  GroupSpec g{{d, d, DType::kF32}, {false, false, false}, {}, {}};
  for (P op : fusible_ops()) {
    if (!accepts(dtype_class(op), d)) continue;
    const bool unary = primitive_facts(op).kind == OpKind::kUnary;
    const DType out = primitive_facts(op).has(kBoolOut) ? DType::kBool : d;
    g.steps.push_back({op, unary ? std::vector<int>{0} : std::vector<int>{0, 1}, out});
  }
  for (DType to : {DType::kF32, DType::kBool, DType::kF16, DType::kF64}) {
    g.steps.push_back({P::kConvertElementType, {0}, to});
  }
  g.steps.push_back({P::kConvertElementType, {2}, d});  // f32 -> d saturates
  for (size_t k = 0; k < g.steps.size(); ++k) g.outputs.push_back(3 + static_cast<int>(k));
  return g;
}

// Every kind of group the tests build, with its name.
std::vector<std::pair<std::string, GroupSpec>> all_groups() {
  std::vector<std::pair<std::string, GroupSpec>> all;
  std::vector<P> exact_ops, math_ops;
  for (P op : fusible_ops()) (exact(op) ? exact_ops : math_ops).push_back(op);
  for (DType d : kFusible) {
    all.push_back({str_cat("exact ops ", dtype_name(d)), cf::spec_of(*ops_group(d, exact_ops))});
    if (d != DType::kBool) {
      all.push_back({str_cat("math ops ", dtype_name(d)), cf::spec_of(*ops_group(d, math_ops))});
    }
    all.push_back({str_cat("converts ", dtype_name(d)), cf::spec_of(*converts_group(d))});
  }
  for (DType d : kIntegers) all.push_back({str_cat("integers ", dtype_name(d)), integer_spec(d)});
  all.push_back({"mixed", cf::spec_of(*mixed_group())});
  all.push_back({"jit f32", cf::spec_of(*jit_group(DType::kF32))});
  all.push_back({"jit bf16", cf::spec_of(*jit_group(DType::kBF16))});
  return all;
}

}  // namespace graft::fusion_test
