// Direct tests of dot_general's transform rules, called on concrete arrays: jvp and vjp
// against finite-difference Jacobians in f64, second order by differentiating the rules
// through the drivers, vmap against a loop over the batch (with in_axes mixes), and the
// dtype bookkeeping of preferred_element_type.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/ir/primitive.h"
#include "core/primitives/linalg.h"
#include "gtest/gtest.h"
#include "tests/core/primitives/rule_checks.h"
#include "core/interpreters/ad.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace testing_rules;  // NOLINT(build/namespaces)

// Contractions may sum in another order when batched: floats equal up to rounding.
const VmapCheck kDotVmap{.float_tol = 1e-13, .nan_equal = false};

Prim dot_prim(const Array& a, const Array& b, const DotDims& d,
              std::optional<DType> preferred = std::nullopt) {
  return prim_of(dot_general(a, b, d, preferred), PrimitiveId::kDotGeneral);
}

struct DotCase {
  Shape lhs, rhs;
  DotDims dims;
};

// Matmul, batched matmul, several contracting dims in crossed order, batch dims not leading,
// outer product, full contraction to a scalar, empty contraction.
std::vector<DotCase> dot_cases() {
  return {
      {{3, 4}, {4, 2}, {{1}, {0}, {}, {}}},
      {{2, 3, 4}, {2, 4, 5}, {{2}, {1}, {0}, {0}}},
      {{2, 3, 4, 2}, {4, 5, 2}, {{2, 3}, {0, 2}, {}, {}}},
      {{3, 2, 4}, {4, 3, 2}, {{0, 2}, {1, 0}, {}, {}}},
      {{3, 2, 4}, {4, 5, 2}, {{2}, {0}, {1}, {2}}},
      {{4, 3, 2, 5}, {2, 3, 5, 2}, {{3, 1}, {2, 1}, {2}, {0}}},
      {{3}, {4}, {{}, {}, {}, {}}},
      {{3, 4}, {3, 4}, {{0, 1}, {0, 1}, {}, {}}},
      {{2, 0}, {0, 3}, {{1}, {0}, {}, {}}},
  };
}

TEST(LinalgRules, DotGeneralAd) {
  uint32_t seed = 1;
  for (const DotCase& c : dot_cases()) {
    Array a = f64(c.lhs, seed++), b = f64(c.rhs, seed++);
    Prim p = dot_prim(a, b, c.dims);
    check_ad(p, {a, b});
    check_ad2(p, {a, b});
    // x @ x: the same array as both operands.
    if (c.lhs == c.rhs) check_ad(p, {a, a});
  }
}

TEST(LinalgRules, DotGeneralVmap) {
  uint32_t seed = 1;
  for (const DotCase& c : dot_cases()) {
    Array a = f64(c.lhs, seed++), b = f64(c.rhs, seed++);
    Prim p = dot_prim(a, b, c.dims);
    for (const auto& axes : axis_mixes(2)) check_vmap(p, {a, b}, axes, kDotVmap);
    for (int al = 0; al <= a.ndim(); ++al) {
      check_vmap(p, {a, b}, {al, kUnbatched}, kDotVmap);
      for (int ar = 0; ar <= b.ndim(); ++ar) check_vmap(p, {a, b}, {al, ar}, kDotVmap);
    }
    for (int ar = 0; ar <= b.ndim(); ++ar) check_vmap(p, {a, b}, {kUnbatched, ar}, kDotVmap);
  }
  // Integer operands, and a preferred dtype.
  Array ia = astype(random_array({3, 4}, DType::kF64, 4, -5, 5), DType::kI32);
  Array ib = astype(random_array({4, 2}, DType::kF64, 5, -5, 5), DType::kI32);
  Prim ip = dot_prim(ia, ib, {{1}, {0}, {}, {}}, DType::kI64);
  for (const auto& axes : axis_mixes(2)) check_vmap(ip, {ia, ib}, axes, kDotVmap);
}

TEST(LinalgRules, DotGeneralNoBatchLoop) {
  // The batching rule is one dot_general, not a loop: a batch of matmuls in one node.
  Array a = f64({5, 3, 4}), b = f64({4, 2});
  Prim p = dot_prim(f64({3, 4}), b, {{1}, {0}, {}, {}});
  Batched r = p->vmap({a, b}, {0, -1});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].primitive()->id(), PrimitiveId::kDotGeneral);
  EXPECT_EQ(r.dims[0], 0);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{5, 3, 2}));
}

TEST(LinalgRules, DotGeneralPreferredDtype) {
  // bf16 operands with an f32 result: cotangents come back in bf16 (computed by bf16 matmuls),
  // tangents in f32, and the values match the f64 computation to bf16 precision.
  Array a = f64({3, 4}, 1), b = f64({4, 2}, 2);
  Array a16 = astype(a, DType::kBF16), b16 = astype(b, DType::kBF16);
  DotDims d{{1}, {0}, {}, {}};
  Prim p = dot_prim(a16, b16, d, DType::kF32);
  Arrays outs = graft::bind(p, {a16, b16});
  ASSERT_EQ(outs[0].dtype(), DType::kF32);
  Array ct = f64({3, 2}, 3);
  Arrays g = p->vjp({a16, b16}, outs, {astype(ct, DType::kF32)});
  ASSERT_EQ(g[0].dtype(), DType::kBF16);
  ASSERT_EQ(g[1].dtype(), DType::kBF16);
  // Both backward products are bf16 matmuls (the f32 cotangent rounded to bf16), as forward:
  // a bf16 model's backward pass runs at the bf16 GEMM rate.
  for (const Array& gi : g) {
    std::vector<const Node*> stack{gi.node().get()};
    int bf16_dots = 0;
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (n->primitive && n->primitive->id() == PrimitiveId::kDotGeneral) {
        EXPECT_EQ(n->inputs[0].dtype(), DType::kBF16);
        EXPECT_EQ(n->inputs[1].dtype(), DType::kBF16);
        ++bf16_dots;
      }
      for (const Array& in : n->inputs) stack.push_back(in.node().get());
    }
    EXPECT_EQ(bf16_dots, 1);
  }
  // ct @ b^T and a^T @ ct in f64 from the bf16-rounded operands.
  std::vector<double> av = a16.to_vector<double>(), bv = b16.to_vector<double>();
  std::vector<double> cv = astype(ct, DType::kF32).to_vector<double>();
  std::vector<double> ga = g[0].to_vector<double>(), gb = g[1].to_vector<double>();
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 4; ++k) {
      double want = 0;
      for (int j = 0; j < 2; ++j) want += cv[i * 2 + j] * bv[k * 2 + j];
      EXPECT_NEAR(ga[i * 4 + k], want, 1e-2 * (1 + std::abs(want)));
    }
  }
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 2; ++j) {
      double want = 0;
      for (int i = 0; i < 3; ++i) want += av[i * 4 + k] * cv[i * 2 + j];
      EXPECT_NEAR(gb[k * 2 + j], want, 1e-2 * (1 + std::abs(want)));
    }
  }
  Arrays t = p->jvp({a16, b16}, {astype(f64({3, 4}, 4), DType::kBF16), Array()}, outs);
  EXPECT_EQ(t[0].dtype(), DType::kF32);
  // f64 operands with an f32 result: the cotangents are f64.
  Prim q = dot_prim(a, b, d, DType::kF32);
  Arrays gq = q->vjp({a, b}, graft::bind(q, {a, b}), {astype(ct, DType::kF32)});
  EXPECT_EQ(gq[0].dtype(), DType::kF64);
  EXPECT_EQ(gq[1].dtype(), DType::kF64);
}

TEST(LinalgRules, IntegerOperandsHaveNoDerivative) {
  Array ia = astype(random_array({3, 4}, DType::kF64, 4, -5, 5), DType::kI32);
  Array ib = astype(random_array({4, 2}, DType::kF64, 5, -5, 5), DType::kI32);
  for (std::optional<DType> pref : {std::optional<DType>(), std::optional<DType>(DType::kF32)}) {
    Prim p = dot_prim(ia, ib, {{1}, {0}, {}, {}}, pref);
    Arrays outs = graft::bind(p, {ia, ib});
    Arrays g = p->vjp({ia, ib}, outs, {ones(outs[0].shape(), outs[0].dtype())});
    EXPECT_FALSE(g[0].valid());
    EXPECT_FALSE(g[1].valid());
    EXPECT_FALSE(p->jvp({ia, ib}, {Array(), Array()}, outs)[0].valid());
  }
}

}  // namespace
}  // namespace graft
