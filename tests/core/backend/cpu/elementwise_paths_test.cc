// Every unary and binary elementwise op of core/primitives/list.h (the table is iterated, so a
// new row is covered without touching this file) gives the same bits on each path it runs on:
// the eager kernel, a fused_elementwise group run by the tile interpreter, and the same group
// compiled by LLVM (f32 / bf16, where the code generator takes the op: inline, or a call of its
// functor; the test asserts that it does). Special values (NaN, infinities, signed zeros,
// exp's subnormal range, ties) and random ones, on sizes with a vector tail and on many
// threads. Also: the kernel, fusion and in-place tables follow the rows' facts.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/backend/cpu/fusion_codegen.h"
#include "core/backend/cpu/kernel.h"
#include "core/ops.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/fusion.h"
#include "core/random/random.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using cpu::fusion::Codegen;
using cpu::fusion::set_codegen;

std::vector<float> values(int64_t n, uint32_t seed) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> v = {nan,     -nan,    1.0f,       -inf,   inf,     -0.0f, 0.0f,  -88.0f,
                          -100.0f, -87.5f,  89.0f,      1e-5f,  -3e-4f,  9.0f,  -9.0f, 0.5f,
                          -0.5f,   2.5f,    -1.5f,      1e-38f, -1e-39f, 3.0f,  1e30f, -1e30f,
                          0.999f,  -0.999f, 1.5707964f, -1.0f,  2.0f,    7.9f};
  std::vector<float> r = (random::normal(random::key(seed), {n}) * 3.0f).to_vector<float>();
  std::vector<float> u =
      (random::uniform(random::key(seed + 7), {n}) * 2.0f - 1.0f).to_vector<float>();
  for (int64_t i = static_cast<int64_t>(v.size()); i < n; ++i) v.push_back(i % 3 ? r[i] : u[i]);
  v.resize(n);
  return v;
}

std::vector<uint64_t> bits_of(const Array& a) {
  std::vector<double> v = astype(a, DType::kF64).to_vector<double>();
  std::vector<uint64_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * 8);
  return out;
}

void expect_same_bits(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  std::vector<uint64_t> g = bits_of(got), w = bits_of(want);
  ASSERT_EQ(g.size(), w.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 4; ++i) {
    if (g[i] != w[i]) {
      ++bad;
      double gd, wd;
      std::memcpy(&gd, &g[i], 8);
      std::memcpy(&wd, &w[i], 8);
      ADD_FAILURE() << what << ": element " << i << " got " << gd << " want " << wd;
    }
  }
}

std::vector<PrimitiveId> rows(OpKind kind) {
  std::vector<PrimitiveId> out;
  for (int i = 0; i < kNumPrimitives; ++i) {
    if (kPrimitiveFacts[i].kind == kind) out.push_back(static_cast<PrimitiveId>(i));
  }
  return out;
}

// The dtypes a fused group may hold that the row accepts.
std::vector<DType> fusible_dtypes(PrimitiveId id) {
  std::vector<DType> out;
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kBool}) {
    if (accepts(dtype_class(id), d)) out.push_back(d);
  }
  return out;
}

Array input(int64_t n, DType d, uint32_t seed) {
  Array x = array<float>(values(n, seed), Shape{n});
  if (d == DType::kBool) return x > 0.0f;
  return astype(x, d);
}

// op(inputs) as a one-step fused group.
Array fused(PrimitiveId id, const std::vector<Array>& in) {
  auto body = std::make_shared<Program>();
  Instr step;
  for (size_t i = 0; i < in.size(); ++i) {
    body->inputs.push_back(static_cast<int>(i));
    body->avals.push_back(in[i].aval());
  }
  if (in.size() == 1) {
    step.prim = std::make_shared<const Unary>(id);
  } else {
    step.prim = std::make_shared<const Binary>(id);
  }
  step.in = body->inputs;
  step.out = {static_cast<int>(in.size())};
  body->avals.push_back(step.prim->infer(body->input_avals())[0]);
  body->outputs = step.out;
  body->instrs.push_back(std::move(step));
  return bind1(make_fused_elementwise(std::move(body), in[0].shape()), in);
}

void check_paths(PrimitiveId id, const std::vector<Array>& in, const std::string& what) {
  Array want = in.size() == 1 ? unary(id, in[0]) : binary(id, in[0], in[1]);
  set_codegen(Codegen::kOff);
  expect_same_bits(fused(id, in), want, what + " interpreted");
  set_codegen(Codegen::kAlways);
  Array compiled = fused(id, in);
  expect_same_bits(compiled, want, what + " compiled");
  set_codegen(Codegen::kAuto);
}

const int64_t kSizes[] = {7, 1037, 70001};

TEST(ElementwisePathsTest, UnaryOpsGiveTheSameBitsEagerFusedAndCompiled) {
  int checked = 0;
  for (PrimitiveId id : rows(OpKind::kUnary)) {
    if (!kPrimitiveFacts[static_cast<int>(id)].has(kFuse)) continue;
    for (DType d : fusible_dtypes(id)) {
      for (int64_t n : kSizes) {
        std::string what = std::string(kPrimitiveNames[static_cast<int>(id)]) + " " +
                           dtype_name(d) + " n=" + std::to_string(n);
        check_paths(id, {input(n, d, 1)}, what);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 20 * 3);
}

TEST(ElementwisePathsTest, BinaryOpsGiveTheSameBitsEagerFusedAndCompiled) {
  for (PrimitiveId id : rows(OpKind::kBinary)) {
    if (!kPrimitiveFacts[static_cast<int>(id)].has(kFuse)) continue;
    for (DType d : fusible_dtypes(id)) {
      for (int64_t n : kSizes) {
        std::string what = std::string(kPrimitiveNames[static_cast<int>(id)]) + " " +
                           dtype_name(d) + " n=" + std::to_string(n);
        check_paths(id, {input(n, d, 2), input(n, d, 3)}, what);
      }
    }
  }
}

// The code generator takes every fusible op with f32 operands: inline, or through a call of
// its functor. A new row therefore runs compiled with no change to the emitter.
TEST(ElementwisePathsTest, EveryFusibleF32OpIsCompiled) {
  for (OpKind kind : {OpKind::kUnary, OpKind::kBinary}) {
    for (PrimitiveId id : rows(kind)) {
      const PrimitiveFacts& f = kPrimitiveFacts[static_cast<int>(id)];
      if (!f.has(kFuse) || !accepts(f.dtypes, DType::kF32)) continue;
      Array x = input(64, DType::kF32, 4);
      std::vector<Array> in(kind == OpKind::kUnary ? 1 : 2, x);
      Array y = fused(id, in);
      const auto& group = static_cast<const FusedElementwise&>(*y.node()->primitive);
      EXPECT_NE(cpu::fusion::compiled_group(group), nullptr)
          << kPrimitiveNames[static_cast<int>(id)];
    }
  }
}

// The tables that used to be switches follow the rows: every Unary / Binary row has a kernel,
// kFuse rows (and only they) fuse, kInPlace rows (and only they) may reuse an input buffer.
TEST(ElementwisePathsTest, TablesFollowTheListFacts) {
  const Aval f32{{4}, DType::kF32, false};
  for (int i = 0; i < kNumPrimitives; ++i) {
    const auto id = static_cast<PrimitiveId>(i);
    const PrimitiveFacts& f = kPrimitiveFacts[i];
    SCOPED_TRACE(kPrimitiveNames[i]);
    EXPECT_EQ(cpu::runs_in_place(id), f.has(kInPlace));
    if (f.kind == OpKind::kOther) continue;
    EXPECT_NE(cpu::kernels()[i], nullptr);
    std::shared_ptr<const Primitive> p;
    std::vector<Aval> in(f.kind == OpKind::kUnary ? 1 : 2, f32);
    if (f.kind == OpKind::kUnary) {
      p = std::make_shared<const Unary>(id);
    } else {
      p = std::make_shared<const Binary>(id);
    }
    EXPECT_EQ(fusion_supports(*p, in, f32), f.has(kFuse));
  }
}

// Dtype checks come from the row's class: a float-only op rejects ints at the lax level, and
// the public op promotes them (jnp.exp(int_array)); a numeric op rejects bool.
TEST(ElementwisePathsTest, DtypeClassesAreChecked) {
  Array i = array<int32_t>({1, 2});
  EXPECT_THROW(unary(PrimitiveId::kExp, i), Error);
  EXPECT_EQ(exp(i).dtype(), DType::kF32);
  try {
    neg(array<bool>({true}));
    ADD_FAILURE() << "neg of bool did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[neg]", 0), 0u) << e.what();
  }
  EXPECT_THROW(binary(PrimitiveId::kShiftLeft, array<float>({1}), array<float>({1})), Error);
  EXPECT_EQ(binary(PrimitiveId::kLt, array<float>({1}), array<float>({2})).dtype(), DType::kBool);
  EXPECT_EQ(unary(PrimitiveId::kIsFinite, array<float>({1})).dtype(), DType::kBool);
}

}  // namespace
}  // namespace graft
