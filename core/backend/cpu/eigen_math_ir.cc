// Transcriptions of Eigen 3.4 (Eigen/src/Core/arch/Default/GenericPacketMathFunctions.h:
// pexp_float, with its pldexp_generic as one scaling (ldexp below says why that is the same);
// MathFunctionsImpl.h: generic_fast_tanh_float), with the AVX / AVX2 packet primitives they use
// spelled as the instructions compute them:
//   pmadd(a, b, c)  _mm256_fmadd_ps: fma(a, b, c), one rounding
//   pmin(a, b)      _mm256_min_ps(b, a): b < a ? b : a
//   pmax(a, b)      _mm256_max_ps(b, a): b > a ? b : a
//   pfloor          _mm256_floor_ps;  pabs: the sign bit cleared
//   pcmp_lt         _CMP_LT_OQ (false on NaN);  pselect(m, a, b): m ? a : b
// Constants are the float literals Eigen writes (the FMA build's clamps).
#include "core/backend/cpu/eigen_math_ir.h"

#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>

#include <Eigen/Core>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <vector>

namespace graft::cpu::fusion::eigen_ir {

#if EIGEN_WORLD_VERSION == 3 && EIGEN_MAJOR_VERSION == 4 && defined(EIGEN_VECTORIZE_AVX2) && \
    defined(EIGEN_VECTORIZE_FMA) && !defined(EIGEN_VECTORIZE_AVX512)
const bool kEigenMathIr = true;
#else
const bool kEigenMathIr = false;
#endif

namespace {

using V = llvm::Value*;

// The packet primitives on a block of f32 lanes.
struct Packet {
  llvm::IRBuilder<>& b;
  llvm::Type* type;  // the block's f32 vector type
  bool avx512;       // lanes a multiple of 16, vscalefps at hand

  llvm::Type* int_type() const {  // i32 lanes, as many
    return llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(type));
  }
  V k(float v) const { return llvm::ConstantFP::get(type, v); }
  V ki(int32_t v) const {
    return llvm::ConstantInt::get(int_type(), static_cast<uint64_t>(static_cast<uint32_t>(v)));
  }
  V madd(V x, V y, V z) const { return b.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {x, y, z}); }
  V mul(V x, V y) const { return b.CreateFMul(x, y); }
  V add(V x, V y) const { return b.CreateFAdd(x, y); }
  V div(V x, V y) const { return b.CreateFDiv(x, y); }
  V min(V x, V y) const { return b.CreateSelect(b.CreateFCmpOLT(y, x), y, x); }
  V max(V x, V y) const { return b.CreateSelect(b.CreateFCmpOGT(y, x), y, x); }
  V lt(V x, V y) const { return b.CreateFCmpOLT(x, y); }
  V abs(V x) const { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  V floor(V x) const { return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x); }
  // An integral f32 in [-2^22, 2^22] as i32 lanes: m + 1.5 * 2^23 is exact there and holds
  // m + 2^22 in its low mantissa bits. (cvttps2dq's value; one add instead of a convert and
  // the selects that keep fptosi from making NaN lanes poison.)
  V integral_to_int(V m) const {
    constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23, whose bits are 0x4b400000
    return b.CreateSub(b.CreateBitCast(add(m, k(kMagic)), int_type()), ki(0x4b400000));
  }
  // The f32 whose bits are (e + 127) << 23: 2^e for e in [-126, 127].
  V pow2(V e) const { return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, ki(127)), 23), type); }
};

// vscalefps on each 16 lanes of the block, the results concatenated.
V scalef(const Packet& p, V y, V m) {
  auto& b = p.b;
  const int lanes = static_cast<int>(llvm::cast<llvm::FixedVectorType>(p.type)->getNumElements());
  auto* zmm = llvm::FixedVectorType::get(b.getFloatTy(), 16);
  llvm::Function* fn = llvm::Intrinsic::getDeclaration(
      b.GetInsertBlock()->getModule(), llvm::Intrinsic::x86_avx512_mask_scalef_ps_512);
  std::vector<V> parts;
  for (int q = 0; q < lanes; q += 16) {
    std::vector<int> lane(16);
    std::iota(lane.begin(), lane.end(), q);
    // Every lane written (mask all ones), rounded as MXCSR says (4: _MM_FROUND_CUR_DIRECTION).
    parts.push_back(
        b.CreateCall(fn, {b.CreateShuffleVector(y, lane), b.CreateShuffleVector(m, lane),
                          llvm::Constant::getNullValue(zmm), b.getInt16(0xffff), b.getInt32(4)}));
  }
  while (parts.size() > 1) {  // pairwise: the block is 16 times a power of two lanes
    std::vector<V> joined;
    for (size_t i = 0; i < parts.size(); i += 2) {
      const auto n = llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements();
      std::vector<int> both(2 * n);
      std::iota(both.begin(), both.end(), 0);
      joined.push_back(b.CreateShuffleVector(parts[i], parts[i + 1], both));
    }
    parts = std::move(joined);
  }
  return parts[0];
}

// y * 2^m for pexp_float's y and m: m in [-128, 128] (x is clamped to +-88.723) and y in
// [0.7, 1.5): the exact product rounded once, to a subnormal below 2^-126. Eigen's
// pldexp_generic clamps m to [-278, 278] and multiplies by four powers of two so that any
// exponent works; for these m every product but its last is exact and the last rounds that
// same value once. Here AVX-512's vscalefps (y * 2^floor(m), one rounding) computes it, 16
// lanes an instruction; without it two normal factors 2^(m >> 1) and 2^(m - (m >> 1)). Neither
// form keeps a NaN m's payload: exp's callers take NaN lanes elsewhere.
V ldexp(const Packet& p, V y, V m) {
  auto& b = p.b;
  if (p.avx512) return scalef(p, y, m);
  V e = p.integral_to_int(m);
  V half = b.CreateAShr(e, 1);
  return p.mul(p.mul(y, p.pow2(half)), p.pow2(b.CreateSub(e, half)));
}

// Eigen's Horner steps on x2: madd(x2, c[0], c[1]), then madd(x2, sum, c[i]) for the rest.
V horner(const Packet& p, V x2, std::initializer_list<float> c) {
  const float* k = c.begin();
  V sum = p.madd(x2, p.k(k[0]), p.k(k[1]));
  for (size_t i = 2; i < c.size(); ++i) sum = p.madd(x2, sum, p.k(k[i]));
  return sum;
}

}  // namespace

V exp(llvm::IRBuilder<>& b, V x_in, bool avx512, bool clamp_below) {
  Packet p{b, x_in->getType(), avx512};
  V x = p.min(x_in, p.k(88.723f));
  if (clamp_below) x = p.max(x, p.k(-88.723f));
  // exp(x) = 2^m exp(r), m = floor(x / ln 2 + 1/2), r = x - m ln 2 (ln 2 in two parts).
  V m = p.floor(p.madd(x, p.k(1.44269504088896341f), p.k(0.5f)));
  V r = p.madd(m, p.k(-0.693359375f), x);
  r = p.madd(m, p.k(2.12194440e-4f), r);
  V r2 = p.mul(r, r);
  V r3 = p.mul(r2, r);
  V y = p.madd(p.k(1.9875691500E-4f), r, p.k(1.3981999507E-3f));
  V y1 = p.madd(p.k(4.1665795894E-2f), r, p.k(1.6666665459E-1f));
  V y2 = p.add(r, p.k(1.0f));
  y = p.madd(y, r, p.k(8.3334519073E-3f));
  y1 = p.madd(y1, r, p.k(5.0000001201E-1f));
  y = p.madd(y, r3, y1);
  y = p.madd(y, r2, y2);
  // Eigen ends with pmax(that, x); it never picks x: e^x > x and the value computed is no
  // less (+inf from the clamped x is y * 2^128, which overflows to +inf).
  return ldexp(p, y, m);
}

V tanh(llvm::IRBuilder<>& b, V a_x) {
  Packet p{b, a_x->getType(), false};
  V x = p.max(p.min(a_x, p.k(7.99881172180175781f)), p.k(-7.99881172180175781f));
  V tiny = p.lt(p.abs(a_x), p.k(0.0004f));
  V x2 = p.mul(x, x);
  // An odd numerator over an even denominator.
  V num = p.mul(x, horner(p, x2,
                          {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f,
                           5.12229709037114e-08f, 1.48572235717979e-05f, 6.37261928875436e-04f,
                           4.89352455891786e-03f}));
  V den = horner(
      p, x2,
      {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f, 4.89352518554385e-03f});
  return b.CreateSelect(tiny, x, p.div(num, den));
}

V if_any(llvm::IRBuilder<>& b, V mask, V otherwise, const std::function<V()>& then) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::BasicBlock* from = b.GetInsertBlock();
  llvm::Function* fn = from->getParent();
  auto* rare = llvm::BasicBlock::Create(ctx, "rare", fn);
  auto* join = llvm::BasicBlock::Create(ctx, "join", fn);
  b.CreateCondBr(b.CreateOrReduce(mask), rare, join,
                 llvm::MDBuilder(ctx).createBranchWeights(1, 1000));
  b.SetInsertPoint(rare);
  V taken = then();
  llvm::BasicBlock* rare_end = b.GetInsertBlock();
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode* phi = b.CreatePHI(otherwise->getType(), 2);
  phi->addIncoming(otherwise, from);
  phi->addIncoming(taken, rare_end);
  return phi;
}

}  // namespace graft::cpu::fusion::eigen_ir
