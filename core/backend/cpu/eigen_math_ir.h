// Eigen's f32 packet algorithms for exp and tanh written as LLVM IR on a vector of f32 lanes:
// per lane the same IEEE operations in the same order (FMAs where Eigen's pmadd is one, min /
// max with x86's operand order), so a compiled fused loop gives the bits of the elementwise
// functors (core/primitives/elementwise_unary_ops.h) without calling them.
// The functors run Eigen 3.4's AVX2 + FMA packets (the build's -mavx2 -mfma); kEigenMathIr is
// false for any other build (an AVX-512 packet, whose exp is another algorithm, or no FMA), and
// the compiled loop then calls the functors instead.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <functional>

namespace graft::cpu::fusion::eigen_ir {

extern const bool kEigenMathIr;

// pexp_float: exp without the functor's subnormal fix-up (exp_value's lanes below -87), for
// lanes that are not NaN (a NaN lane's value is unspecified: callers take those elsewhere).
// avx512: the target has AVX-512F and x's lanes are 16 times a power of two. clamp_below:
// false where only lanes >= -87 count (Eigen's lower clamp, to -88.723, is then the identity).
llvm::Value* exp(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512, bool clamp_below);
// generic_fast_tanh_float.
llvm::Value* tanh(llvm::IRBuilder<>& b, llvm::Value* x);

// `any lane of mask ? then() : otherwise`, branching so that then() runs only for the blocks
// that need it (marked unlikely).
llvm::Value* if_any(llvm::IRBuilder<>& b, llvm::Value* mask, llvm::Value* otherwise,
                    const std::function<llvm::Value*()>& then);

}  // namespace graft::cpu::fusion::eigen_ir
