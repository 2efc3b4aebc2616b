// fused_elementwise groups compiled to native loops with LLVM's ORC JIT (see the header).
//
// The loop works on blocks of 4 vector registers (64 f32 with AVX-512, 32 with AVX2) as one
// LLVM vector value, which instruction selection splits into registers: per block it loads
// each input once, applies the steps in order and stores the outputs. Steps emitted inline are
// exact IEEE operations written as the interpreter's Eigen packets compute them (max/min
// propagate a NaN first operand and order -0 below +0, sign of NaN or +-0 is the operand, sqrt
// and 1 / sqrt correctly rounded: core/primitives/elementwise_math.h; comparisons and logic as the
// C++ of the interpreter; exp and tanh as Eigen's packet algorithms, eigen_math_ir.h; logistic
// through that exp), and LLVM does not contract a mul and an add into an FMA without fast-math
// flags, so compiled and interpreted groups give the same bits; the rest call their functor on
// the block (call_unary / call_binary). Bool lanes are i1 vectors, loaded from and stored to
// 0/1 bytes.
#include "core/backend/cpu/fusion_codegen.h"

#include <llvm/ExecutionEngine/JITEventListener.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/SubtargetFeature.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <strings.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "core/backend/cpu/eigen_math_ir.h"
#include "core/backend/cpu/elementwise_loops.h"
#include "core/backend/cpu/fusion_kernels.h"
#include "core/backend/cpu/fusion_loop_ir.h"
#include "core/env.h"
#include "core/primitives/elementwise_ops.h"

namespace graft::cpu::fusion {
namespace {

using P = PrimitiveId;

Codegen mode_from_env() {
  const char* env = std::getenv("GRAFT_FUSION_CODEGEN");
  if (env == nullptr || *env == '\0' || strcasecmp(env, "auto") == 0) return Codegen::kAuto;
  if (strcasecmp(env, "always") == 0) return Codegen::kAlways;
  if (env_value_is_off(env)) return Codegen::kOff;
  std::fprintf(stderr, "graft: GRAFT_FUSION_CODEGEN=%s is not auto, always or off; using auto\n",
               env);
  return Codegen::kAuto;
}

std::atomic<Codegen>& mode() {
  static std::atomic<Codegen> m{mode_from_env()};
  return m;
}

// Slots held in f32 lanes: f32, and bf16 (widened on load, carried in f32 and rounded where
// core/primitives/fusion.h's rounds_to_half says and on store), as the interpreter holds them.
bool is_f32(DType d) { return d == DType::kF32 || d == DType::kBF16; }
bool is_bool(DType d) { return d == DType::kBool; }

// What a compiled loop calls for an f32 step it does not emit
// inline: the functor on a block.
using BlockFn = void (*)(const float* a, const float* b, float* y, int64_t n);
template <typename Op>
void call_unary(const float* a, const float*, float* y, int64_t n) noexcept {
  map_unary<Op>(a, y, n);
}
template <typename Op>
void call_binary(const float* a, const float* b, float* y, int64_t n) noexcept {
  map_binary<Op>(a, b, y, n);
}

using V = llvm::Value*;

struct Ir {
  llvm::IRBuilder<>& b;
  llvm::VectorType* vt;           // a block of f32 lanes
  llvm::AllocaInst* const* bufs;  // three blocks on the stack, for call()
  bool avx512;                    // the target has AVX-512F (the block is whole zmm registers)
  V f(double v) { return llvm::ConstantFP::get(vt, v); }

  // Stores the operands to stack blocks, calls fn on them, loads
  // its result.
  V call(BlockFn fn, V u, V v) {
    llvm::Type* f32p = b.getFloatTy()->getPointerTo();
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {f32p, f32p, f32p, b.getInt64Ty()}, false);
    V callee = b.CreateIntToPtr(b.getInt64(reinterpret_cast<uint64_t>(fn)), fty->getPointerTo());
    const llvm::Align align(64);
    b.CreateAlignedStore(u, bufs[0], align);
    if (v != nullptr) b.CreateAlignedStore(v, bufs[1], align);
    auto ptr = [&](int i) { return b.CreateBitCast(bufs[i], f32p); };
    const auto lanes =
        static_cast<uint64_t>(llvm::cast<llvm::FixedVectorType>(vt)->getNumElements());
    b.CreateCall(fty, callee, {ptr(0), ptr(1), ptr(2), b.getInt64(lanes)});
    return b.CreateAlignedLoad(vt, bufs[2], align);
  }
};

// The ops emitted inline, as exact IEEE operations written as the functors compute them:
// Inline<Op>::f32 on f32 lanes (giving f32 lanes, or bool lanes for comparisons and
// is_finite), Inline<Op>::i1 on bool lanes. Every other unary / binary op with f32 operands and
// result calls its functor on a block held on the stack (call_unary / call_binary), so a new
// op needs nothing here.
template <typename Op>
struct Inline {};
template <>
struct Inline<ew::Add> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFAdd(u, v); }
};
template <>
struct Inline<ew::Sub> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFSub(u, v); }
};
template <>
struct Inline<ew::Mul> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFMul(u, v); }
};
template <>
struct Inline<ew::Div> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFDiv(u, v); }
};
// u == v ? (bits of u & v, or u | v when `use_or`) : otherwise: max / min of equal values
// (+0 and -0 compare equal) as max_value / min_value give them.
V equal_bits(Ir& ir, V u, V v, bool use_or, V otherwise) {
  auto* it = llvm::VectorType::getInteger(ir.vt);
  V ui = ir.b.CreateBitCast(u, it);
  V vi = ir.b.CreateBitCast(v, it);
  V bits = ir.b.CreateBitCast(use_or ? ir.b.CreateOr(ui, vi) : ir.b.CreateAnd(ui, vi), ir.vt);
  return ir.b.CreateSelect(ir.b.CreateFCmpOEQ(u, v), bits, otherwise);
}
// Bool max / min are or / and.
template <>
struct Inline<ew::Max> {  // u == v ? u & v : isnan(u) || v < u ? u : v
  static V f32(Ir& ir, V u, V v) {
    auto& b = ir.b;
    return equal_bits(
        ir, u, v, false,
        b.CreateSelect(b.CreateOr(b.CreateFCmpOLT(v, u), b.CreateFCmpUNO(u, u)), u, v));
  }
  static V i1(Ir& ir, V u, V v) { return ir.b.CreateOr(u, v); }
};
template <>
struct Inline<ew::Min> {  // u == v ? u | v : isnan(u) || u < v ? u : v
  static V f32(Ir& ir, V u, V v) {
    auto& b = ir.b;
    return equal_bits(
        ir, u, v, true,
        b.CreateSelect(b.CreateOr(b.CreateFCmpOLT(u, v), b.CreateFCmpUNO(u, u)), u, v));
  }
  static V i1(Ir& ir, V u, V v) { return ir.b.CreateAnd(u, v); }
};
template <>
struct Inline<ew::Sqrt> {  // llvm.sqrt: the IEEE (correctly rounded) instruction
  static V f32(Ir& ir, V u) { return ir.b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, u); }
};
template <>
struct Inline<ew::Rsqrt> {  // 1 / sqrt(u), two IEEE operations (no fast-math: not vrsqrt)
  static V f32(Ir& ir, V u) {
    return ir.b.CreateFDiv(ir.f(1.0), ir.b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, u));
  }
};
template <>
struct Inline<ew::Neg> {
  static V f32(Ir& ir, V u) { return ir.b.CreateFNeg(u); }
};
template <>
struct Inline<ew::Square> {
  static V f32(Ir& ir, V u) { return ir.b.CreateFMul(u, u); }
};
template <>
struct Inline<ew::Abs> {
  static V f32(Ir& ir, V u) { return ir.b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, u); }
};
template <>
struct Inline<ew::Floor> {
  static V f32(Ir& ir, V u) { return ir.b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, u); }
};
template <>
struct Inline<ew::Ceil> {
  static V f32(Ir& ir, V u) { return ir.b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, u); }
};
template <>
struct Inline<ew::Round> {  // to nearest even, as rint
  static V f32(Ir& ir, V u) { return ir.b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, u); }
};
template <>
struct Inline<ew::Sign> {  // u > 0 ? 1 : u < 0 ? -1 : u (NaN and +-0 are kept)
  static V f32(Ir& ir, V u) {
    auto& b = ir.b;
    V s1 = b.CreateSelect(b.CreateFCmpOLT(u, ir.f(0.0)), ir.f(-1.0), u);
    return b.CreateSelect(b.CreateFCmpOGT(u, ir.f(0.0)), ir.f(1.0), s1);
  }
};
// Eigen's packet algorithms, as eigen_math_ir.h writes them (kEigen: emitted only where
// eigen_ir::kEigenMathIr says they are the functors' algorithms; else called).
template <>
struct Inline<ew::Exp> {  // pexp_value: blocks with a lane below -87 (subnormal results) or a
                          // NaN lane take the functor
  static constexpr bool kEigen = true;
  static V f32(Ir& ir, V u) {
    V y = eigen_ir::exp(ir.b, u, ir.avx512, /*clamp_below=*/false);
    return eigen_ir::if_any(ir.b, ir.b.CreateFCmpULT(u, ir.f(-87.0)), y,
                            [&] { return ir.call(&call_unary<ew::Exp>, u, nullptr); });
  }
};
template <>
struct Inline<ew::Tanh> {
  static constexpr bool kEigen = true;
  static V f32(Ir& ir, V u) { return eigen_ir::tanh(ir.b, u); }
};
template <>
struct Inline<ew::Logistic> {  // the functor's (x >= 0 ? 1 : e) / (1 + e), e = exp(-|x|);
                               // NaN lanes are x itself
  static constexpr bool kEigen = true;
  static V f32(Ir& ir, V u) {
    auto& b = ir.b;
    V e = Inline<ew::Exp>::f32(ir, b.CreateFNeg(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, u)));
    V num = b.CreateSelect(b.CreateFCmpOGE(u, ir.f(0.0)), ir.f(1.0), e);
    V y = b.CreateFDiv(num, b.CreateFAdd(ir.f(1.0), e));
    return b.CreateSelect(b.CreateFCmpUNO(u, u), u, y);
  }
};
template <typename Op>
constexpr bool kEigenAlgorithm = requires {
  Inline<Op>::kEigen;
};
// Comparisons are IEEE (ne is true on NaN), as the functors' C++.
template <>
struct Inline<ew::Eq> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFCmpOEQ(u, v); }
};
template <>
struct Inline<ew::Ne> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFCmpUNE(u, v); }
};
template <>
struct Inline<ew::Lt> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFCmpOLT(u, v); }
};
template <>
struct Inline<ew::Le> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFCmpOLE(u, v); }
};
template <>
struct Inline<ew::Gt> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFCmpOGT(u, v); }
};
template <>
struct Inline<ew::Ge> {
  static V f32(Ir& ir, V u, V v) { return ir.b.CreateFCmpOGE(u, v); }
};
template <>
struct Inline<ew::IsFinite> {
  static V f32(Ir& ir, V u) {
    return ir.b.CreateFCmpOLT(ir.b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, u),
                              llvm::ConstantFP::getInfinity(ir.vt));
  }
};
template <>
struct Inline<ew::Not> {
  static V i1(Ir& ir, V u) { return ir.b.CreateNot(u); }
};
template <>
struct Inline<ew::And> {
  static V i1(Ir& ir, V u, V v) { return ir.b.CreateAnd(u, v); }
};
template <>
struct Inline<ew::Or> {
  static V i1(Ir& ir, V u, V v) { return ir.b.CreateOr(u, v); }
};
template <>
struct Inline<ew::Xor> {
  static V i1(Ir& ir, V u, V v) { return ir.b.CreateXor(u, v); }
};

// Inline<Op>'s form for n operands on f32 (or bool) lanes, if it has one.
template <typename Op>
concept InlineF32x1 = requires(Ir& ir, V u) {
  Inline<Op>::f32(ir, u);
};
template <typename Op>
concept InlineF32x2 = requires(Ir& ir, V u) {
  Inline<Op>::f32(ir, u, u);
};
template <typename Op>
concept InlineI1x1 = requires(Ir& ir, V u) {
  Inline<Op>::i1(ir, u);
};
template <typename Op>
concept InlineI1x2 = requires(Ir& ir, V u) {
  Inline<Op>::i1(ir, u, u);
};
template <typename Op, int n>
constexpr bool kInlineF32 = n == 1 ? InlineF32x1<Op> : InlineF32x2<Op>;
template <typename Op, int n>
constexpr bool kInlineI1 = n == 1 ? InlineI1x1<Op> : InlineI1x2<Op>;

// How an elementwise step of op `id` is compiled, its operands on
// f32 lanes (`f32_in`) or bool lanes and its result on f32 lanes
// (`f32_out`) or bool ones: inline, a call, or not at all.
enum class How { kNo, kInline, kCall };
template <P id>
How how(bool f32_in, bool f32_out) {
  using Op = ew::functor_t<id>;
  constexpr int n = primitive_facts(id).kind == OpKind::kUnary ? 1 : 2;
  if (!f32_in) return kInlineI1<Op, n> ? How::kInline : How::kNo;
  if (kInlineF32<Op, n> && (!kEigenAlgorithm<Op> || eigen_ir::kEigenMathIr)) return How::kInline;
  constexpr bool f32_result = ew::kAccepts<id, float> && !primitive_facts(id).has(kBoolOut);
  return f32_result && f32_out ? How::kCall : How::kNo;
}

template <P id>
V emit_inline(Ir& ir, const std::vector<V>& a, bool f32_in) {
  using Op = ew::functor_t<id>;
  constexpr int n = primitive_facts(id).kind == OpKind::kUnary ? 1 : 2;
  if (f32_in) {
    if constexpr (kInlineF32<Op, n> && n == 1) return Inline<Op>::f32(ir, a[0]);
    if constexpr (kInlineF32<Op, n> && n == 2) return Inline<Op>::f32(ir, a[0], a[1]);
  } else {
    if constexpr (kInlineI1<Op, n> && n == 1) return Inline<Op>::i1(ir, a[0]);
    if constexpr (kInlineI1<Op, n> && n == 2) return Inline<Op>::i1(ir, a[0], a[1]);
  }
  return nullptr;  // not reached: how() said kInline
}

template <P id>
BlockFn block_fn() {
  using Op = ew::functor_t<id>;
  if constexpr (!ew::kAccepts<id, float> || primitive_facts(id).has(kBoolOut)) {
    return nullptr;  // no f32 -> f32 form: how() never says kCall
  } else if constexpr (primitive_facts(id).kind == OpKind::kUnary) {
    return &call_unary<Op>;
  } else {
    return &call_binary<Op>;
  }
}

// The tables over the list's Unary / Binary rows.
#define GRAFT_EW_CASE(name) \
  case P::k##name:          \
    return GRAFT_EW_CALL(P::k##name);
#define GRAFT_ROW(name, str, family, kind, ...) GRAFT_IF_##kind(GRAFT_EW_CASE, GRAFT_EW_CASE, name)

How how_of(P id, bool f32_in, bool f32_out) {
#define GRAFT_EW_CALL(id) how<id>(f32_in, f32_out)
  switch (id) {
    GRAFT_PRIMITIVES(GRAFT_ROW)
    default:
      return How::kNo;
  }
#undef GRAFT_EW_CALL
}
V emit_inline_of(P id, Ir& ir, const std::vector<V>& a, bool f32_in) {
#define GRAFT_EW_CALL(id) emit_inline<id>(ir, a, f32_in)
  switch (id) {
    GRAFT_PRIMITIVES(GRAFT_ROW)
    default:
      return nullptr;
  }
#undef GRAFT_EW_CALL
}
BlockFn block_fn_of(P id) {
#define GRAFT_EW_CALL(id) block_fn<id>()
  switch (id) {
    GRAFT_PRIMITIVES(GRAFT_ROW)
    default:
      return nullptr;
  }
#undef GRAFT_EW_CALL
}
#undef GRAFT_ROW
#undef GRAFT_EW_CASE

// How a step is compiled: select_n and converts between f32, bf16
// and bool are emitted inline (slots are nothing else),
// elementwise ops by how_of.
How how_step(const FusedStep& s, const std::vector<DType>& arg) {
  switch (s.prim->id()) {
    case P::kSelectN:
      return arg.size() == 3 && is_bool(arg[0]) && arg[1] == s.aval.dtype && arg[2] == s.aval.dtype
                 ? How::kInline
                 : How::kNo;
    case P::kConvertElementType:
      return How::kInline;
    default:
      return how_of(s.prim->id(), is_f32(arg[0]), is_f32(s.aval.dtype));
  }
}

bool compilable(const FusedElementwise& f) {
  std::vector<DType> slot;
  for (const Aval& a : f.in_avals()) slot.push_back(a.dtype);
  for (const FusedStep& s : f.steps()) slot.push_back(s.aval.dtype);
  for (DType d : slot) {
    if (!is_f32(d) && !is_bool(d)) return false;
  }
  for (const FusedStep& s : f.steps()) {
    std::vector<DType> arg;
    for (int a : s.args) arg.push_back(slot[a]);
    if (how_step(s, arg) == How::kNo) return false;
  }
  return true;
}

// The process's JIT; nullptr when LLVM cannot target this
// machine.
struct Jit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  bool avx512 = false;  // the target: AVX-512F, or AVX2
  // f32 lanes a loop takes per step: four vector registers.
  int64_t block() const { return avx512 ? 64 : 32; }
};

Jit* make_jit() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    llvm::consumeError(jtmb.takeError());
    return nullptr;
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  llvm::StringMap<bool> features;
  llvm::sys::getHostCPUFeatures(features);
  bool avx512 = features.lookup("avx512f");
  // GRAFT_FUSION_CODEGEN_ISA=avx2 targets AVX2 on an AVX-512
  // machine (a test covers both paths); LLVM turns off the
  // features that depend on avx512f with it.
  const char* isa = std::getenv("GRAFT_FUSION_CODEGEN_ISA");
  if (avx512 && isa != nullptr && strcasecmp(isa, "avx2") == 0) {
    jtmb->getFeatures().AddFeature("avx512f", false);
    avx512 = false;
  }
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) {
    llvm::consumeError(jit.takeError());
    return nullptr;
  }
  auto* j = new Jit;  // lives as long as the process: compiled
                      // loops may run until exit
  j->jit = std::move(*jit);
  // GRAFT_PERF_JIT=1: the loops' code and names go to a jitdump file for `perf inject --jit`
  // (after `perf record -k 1`), so perf report / annotate see into them.
  if (const char* perf = std::getenv("GRAFT_PERF_JIT");
      perf != nullptr && !env_value_is_off(perf)) {
    auto* layer =
        llvm::dyn_cast<llvm::orc::RTDyldObjectLinkingLayer>(&j->jit->getObjLinkingLayer());
    llvm::JITEventListener* listener = llvm::JITEventListener::createPerfJITEventListener();
    if (layer != nullptr && listener != nullptr) layer->registerJITEventListener(*listener);
  }
  j->avx512 = avx512;
  return j;
}

Jit* llvm_jit() {
  static Jit* j = make_jit();
  return j;
}

// Inputs read as one value for every element (as fused_kernel reads them).
std::vector<bool> scalar_inputs(const FusedElementwise& f) {
  std::vector<bool> scalar;
  for (size_t i = 0; i < f.reads().size(); ++i) scalar.push_back(f.scalar_input(i));
  return scalar;
}

std::string key_of(const FusedElementwise& f, const std::vector<bool>& scalar) {
  std::string k = absl::StrCat(f.in_avals().size(), ":");
  for (size_t i = 0; i < scalar.size(); ++i) {
    const FusedRead& r = f.reads()[i];
    if (f.broadcast_input(i)) {
      absl::StrAppend(&k, "b", r.div, "/", r.size);  // a broadcast: its read is structure
    } else {
      k += scalar[i] ? 's' : 'a';
    }
  }
  for (const Aval& a : f.in_avals()) absl::StrAppend(&k, static_cast<int>(a.dtype), ",");
  for (const FusedStep& s : f.steps()) {
    absl::StrAppend(&k, ";", static_cast<int>(s.prim->id()), ":", static_cast<int>(s.aval.dtype));
    for (int a : s.args) absl::StrAppend(&k, ",", a);
  }
  k += "|";
  for (int o : f.outputs()) absl::StrAppend(&k, o, ",");
  return k;
}

// Emits one step on block values.
class StepEmitter {
 public:
  StepEmitter(llvm::IRBuilder<>& b, llvm::VectorType* vt, llvm::AllocaInst* const* bufs,
              bool avx512)
      : ir_{b, vt, bufs, avx512} {}

  // The step's block value from its operands' (arg: their
  // dtypes).
  V emit(const FusedStep& s, const std::vector<V>& a, const std::vector<DType>& arg) {
    auto& b = ir_.b;
    switch (s.prim->id()) {
      case P::kSelectN:  // select_n(p, f, t) = p ? t : f
        return b.CreateSelect(a[0], a[2], a[1]);
      case P::kConvertElementType:                                // f32 -> bool is x != 0, bool
                                                                  // -> f32 is 0 or 1
        if (is_f32(arg[0]) && is_f32(s.aval.dtype)) return a[0];  // bf16: rounded after
        if (is_bool(s.aval.dtype)) return b.CreateFCmpUNE(a[0], ir_.f(0.0));
        return b.CreateUIToFP(a[0], ir_.vt);
      default:
        break;
    }
    const bool f32_in = is_f32(arg[0]);
    if (how_step(s, arg) == How::kInline) return emit_inline_of(s.prim->id(), ir_, a, f32_in);
    return ir_.call(block_fn_of(s.prim->id()), a[0], a.size() > 1 ? a[1] : nullptr);
  }

 private:
  Ir ir_;
};

// Vector operations per register of a step's inline form, roughly (eigen_math_ir.cc's
// algorithms; max / min's NaN and signed-zero rules; divisions and square roots count their
// latency): what pipeline_cut balances.
int step_cost(P id) {
  switch (id) {
    case P::kExp:
      return 16;
    case P::kTanh:
      return 18;
    case P::kLogistic:
      return 22;
    case P::kMax:
    case P::kMin:
      return 6;
    case P::kDiv:
    case P::kSqrt:
    case P::kRsqrt:
      return 4;
    default:
      return 1;
  }
}

// Groups cheaper than this stay one block an iteration: their loop waits on memory, and
// pipelining would add loads and double its code. (llama-small's step, alternating: 12 and
// 34 were each 1-3% slower than 24.)
constexpr int kPipelineMinCost = 24;

// Where build() cuts the steps for its software-pipelined loop: the cut that splits the
// steps' cost most evenly, or 0 (no pipelining) for a cheap group or one with a called step
// (a call clobbers every vector register, so carried blocks would go through the stack).
size_t pipeline_cut(const FusedElementwise& f) {
  std::vector<DType> dtype;
  for (const Aval& a : f.in_avals()) dtype.push_back(a.dtype);
  std::vector<int> cost;
  int total = 0;
  for (const FusedStep& s : f.steps()) {
    std::vector<DType> arg;
    for (int a : s.args) arg.push_back(dtype[a]);
    dtype.push_back(s.aval.dtype);
    if (how_step(s, arg) != How::kInline) return 0;
    cost.push_back(step_cost(s.prim->id()));
    total += cost.back();
  }
  if (total < kPipelineMinCost) return 0;
  size_t best = 0;
  int prefix = 0, best_gap = total;
  for (size_t k = 1; k < cost.size(); ++k) {
    prefix += cost[k - 1];
    const int gap = std::abs(2 * prefix - total);
    if (gap < best_gap) {
      best = k;
      best_gap = gap;
    }
  }
  return best;
}

// Builds the loop's module: void name(i8** ins, i8** outs, i64 begin, i64 end); software-
// pipelined at `cut` unless it is 0.
std::unique_ptr<llvm::Module> build(llvm::LLVMContext& ctx, const llvm::DataLayout& layout,
                                    const std::string& name, int64_t block, bool avx512,
                                    const FusedElementwise& f, const std::vector<bool>& scalar,
                                    size_t cut) {
  for (size_t k = 0; k < scalar.size(); ++k) {  // broadcast reads load_broadcast has no form for
    const FusedRead& r = f.reads()[k];
    if (f.broadcast_input(k) && r.div % block != 0 && !(r.div == 1 && r.size % block == 0)) {
      return nullptr;  // the interpreter runs the group
    }
  }
  auto mod = std::make_unique<llvm::Module>("graft_fused", ctx);
  mod->setDataLayout(layout);
  llvm::IRBuilder<> b(ctx);
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* f32p = f32->getPointerTo();
  llvm::Type* i8p = b.getInt8PtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  auto* vt = llvm::FixedVectorType::get(f32, static_cast<unsigned>(block));
  auto* fty = llvm::FunctionType::get(b.getVoidTy(),
                                      {i8p->getPointerTo(), i8p->getPointerTo(), i64, i64}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, mod.get());
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* ins = fn->getArg(0);
  llvm::Value* outs = fn->getArg(1);
  llvm::Value* begin = fn->getArg(2);
  llvm::Value* end = fn->getArg(3);

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  b.SetInsertPoint(entry);
  const int n_in = static_cast<int>(f.in_avals().size());
  // f32 data as float*, bool data as bytes (0 or 1) read into i1
  // lanes.
  std::vector<DType> dtype;
  for (const Aval& a : f.in_avals()) dtype.push_back(a.dtype);
  for (const FusedStep& s : f.steps()) dtype.push_back(s.aval.dtype);
  llvm::Type* i8 = b.getInt8Ty();
  llvm::Type* i16 = b.getInt16Ty();
  const auto lanes = static_cast<unsigned>(block);
  auto* bytes = llvm::FixedVectorType::get(i8, lanes);
  auto* halves = llvm::FixedVectorType::get(i16, lanes);
  auto* words = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  auto base = [&](llvm::Value* table, int i, DType d) {
    llvm::Value* p = b.CreateLoad(i8p, b.CreateConstGEP1_64(i8p, table, i));
    if (d == DType::kF32) return b.CreateBitCast(p, f32p);
    return d == DType::kBF16 ? b.CreateBitCast(p, i16->getPointerTo()) : p;
  };
  // bf16 bits -> f32 (exact), and f32 -> the nearest bf16 (ties
  // to even; a NaN stays a quiet NaN), as core/dtype/half.h's bf16
  // converts.
  auto widen = [&](llvm::Value* h) {
    const bool vec = h->getType()->isVectorTy();
    llvm::Type* to = vec ? static_cast<llvm::Type*>(words) : b.getInt32Ty();
    llvm::Type* as = vec ? static_cast<llvm::Type*>(vt) : f32;
    return b.CreateBitCast(b.CreateShl(b.CreateZExt(h, to), 16), as);
  };
  auto round_bf16 = [&](llvm::Value* v) {
    auto k = [&](uint32_t c) { return llvm::ConstantInt::get(words, c); };
    llvm::Value* x = b.CreateBitCast(v, words);
    llvm::Value* nan = b.CreateICmpUGT(b.CreateAnd(x, k(0x7fffffffu)), k(0x7f800000u));
    llvm::Value* odd = b.CreateAnd(b.CreateLShr(x, 16), k(1));
    llvm::Value* up = b.CreateAnd(b.CreateAdd(b.CreateAdd(x, k(0x7fffu)), odd), k(0xffff0000u));
    llvm::Value* quiet = b.CreateAnd(b.CreateOr(x, k(0x400000u)), k(0xffff0000u));
    return b.CreateBitCast(b.CreateSelect(nan, quiet, up), vt);
  };
  std::vector<llvm::Value*> in_base(n_in), out_base;
  for (int i = 0; i < n_in; ++i) {
    in_base[i] = base(ins, i, dtype[i]);
    if (!scalar[i]) continue;
    // A broadcast scalar: one splat before the loop.
    llvm::Value* one;
    if (dtype[i] == DType::kF32) {
      one = b.CreateLoad(f32, in_base[i]);
    } else if (dtype[i] == DType::kBF16) {
      one = widen(b.CreateLoad(i16, in_base[i]));
    } else {
      one = b.CreateICmpNE(b.CreateLoad(i8, in_base[i]), b.getInt8(0));
    }
    in_base[i] = b.CreateVectorSplat(vt->getNumElements(), one);
  }
  for (size_t o = 0; o < f.outputs().size(); ++o) {
    out_base.push_back(base(outs, static_cast<int>(o), dtype[f.outputs()[o]]));
  }
  llvm::AllocaInst* bufs[3];
  for (auto*& buf : bufs) {
    buf = b.CreateAlloca(vt);
    buf->setAlignment(llvm::Align(64));
  }
  // Block `at_i` of an array: f32 lanes (from f32 or bf16 data), or bool lanes from 0/1 bytes.
  auto at = [&](llvm::Value* p, llvm::Type* elem, llvm::Type* block_type, llvm::Value* at_i) {
    return b.CreateBitCast(b.CreateGEP(elem, p, at_i), block_type->getPointerTo());
  };
  auto load = [&](llvm::Value* p, DType d, llvm::Value* at_i) -> llvm::Value* {
    if (d == DType::kF32) return b.CreateAlignedLoad(vt, at(p, f32, vt, at_i), llvm::Align(4));
    if (d == DType::kBF16) {
      return widen(b.CreateAlignedLoad(halves, at(p, i16, halves, at_i), llvm::Align(2)));
    }
    return b.CreateICmpNE(b.CreateAlignedLoad(bytes, at(p, i8, bytes, at_i), llvm::Align(1)),
                          llvm::ConstantInt::get(bytes, 0));
  };
  // A broadcast input's block (FusedRead): one value splat when a block lies in one run
  // (div a multiple of the block), or the input's block at e % size when it repeats whole
  // (div 1, size a multiple of the block); other reads were refused before the loop.
  auto load_broadcast = [&](llvm::Value* p, DType d, const FusedRead& r,
                            llvm::Value* at_i) -> llvm::Value* {
    if (r.div % block == 0) {
      llvm::Value* at_e = b.CreateURem(b.CreateUDiv(at_i, b.getInt64(r.div)), b.getInt64(r.size));
      llvm::Value* one;
      if (d == DType::kF32) {
        one = b.CreateLoad(f32, b.CreateGEP(f32, p, at_e));
      } else if (d == DType::kBF16) {
        one = widen(b.CreateLoad(i16, b.CreateGEP(i16, p, at_e)));
      } else {
        one = b.CreateICmpNE(b.CreateLoad(i8, b.CreateGEP(i8, p, at_e)), b.getInt8(0));
      }
      return b.CreateVectorSplat(vt->getNumElements(), one);
    }
    return load(p, d, b.CreateURem(at_i, b.getInt64(r.size)));
  };
  auto store = [&](llvm::Value* v, llvm::Value* p, DType d, llvm::Value* at_i) {
    if (d == DType::kF32) {
      b.CreateAlignedStore(v, at(p, f32, vt, at_i), llvm::Align(4));
    } else if (d == DType::kBF16) {  // rounded here: steps carry f32 (fusion.h)
      llvm::Value* h =
          b.CreateTrunc(b.CreateLShr(b.CreateBitCast(round_bf16(v), words), 16), halves);
      b.CreateAlignedStore(h, at(p, i16, halves, at_i), llvm::Align(2));
    } else {
      b.CreateAlignedStore(b.CreateZExt(v, bytes), at(p, i8, bytes, at_i), llvm::Align(1));
    }
  };
  auto load_inputs = [&](Slots& slot, llvm::Value* at_i) {
    for (int s = 0; s < n_in; ++s) {
      if (scalar[s]) {
        slot[s] = in_base[s];
      } else if (f.broadcast_input(s)) {
        slot[s] = load_broadcast(in_base[s], dtype[s], f.reads()[s], at_i);
      } else {
        slot[s] = load(in_base[s], dtype[s], at_i);
      }
    }
  };
  StepEmitter emitter(b, vt, bufs, avx512);
  auto run_steps = [&](Slots& slot, size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      const FusedStep& s = f.steps()[k];
      std::vector<llvm::Value*> a;
      std::vector<DType> arg;
      for (int x : s.args) {
        a.push_back(slot[x]);
        arg.push_back(dtype[x]);
      }
      slot[n_in + k] = emitter.emit(s, a, arg);
      if (rounds_to_half(s.prim->id(), arg[0], s.aval.dtype)) {
        slot[n_in + k] = round_bf16(slot[n_in + k]);
      }
    }
  };
  auto store_outputs = [&](const Slots& slot, llvm::Value* at_i) {
    for (size_t o = 0; o < f.outputs().size(); ++o) {
      store(slot[f.outputs()[o]], out_base[o], dtype[f.outputs()[o]], at_i);
    }
  };
  const BlockOps ops{load_inputs, run_steps, store_outputs};
  const LoopFrame frame{b, fn, entry, loop, done, begin, end, block};
  if (cut == 0) {
    emit_plain_loop(frame, ops, f);
  } else {
    emit_pipelined_loop(frame, ops, f, cut);
  }
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  if (llvm::verifyFunction(*fn, &llvm::errs())) return nullptr;
  return mod;
}

std::unique_ptr<CompiledGroup> compile(Jit& j, const std::string& name, const FusedElementwise& f,
                                       const std::vector<bool>& scalar) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  const size_t cut = pipeline_cut(f);
  std::unique_ptr<llvm::Module> mod =
      build(*ctx, j.jit->getDataLayout(), name, j.block(), j.avx512, f, scalar, cut);
  if (mod == nullptr) return nullptr;
  if (llvm::Error e =
          j.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx)))) {
    llvm::consumeError(std::move(e));
    return nullptr;
  }
  auto sym = j.jit->lookup(name);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return nullptr;
  }
  auto c = std::make_unique<CompiledGroup>();
  c->loop = reinterpret_cast<CompiledLoop>(static_cast<uintptr_t>(sym->getAddress()));
  c->block = j.block();
  c->pipeline_cut = static_cast<int>(cut);
  return c;
}

}  // namespace

bool codegen_wanted(int64_t n) {
  switch (mode().load(std::memory_order_relaxed)) {
    case Codegen::kOff:
      return false;
    case Codegen::kAlways:
      return true;
    case Codegen::kAuto:
      return n >= kCodegenMinElements;
  }
  return false;
}

void set_codegen(Codegen m) { mode().store(m); }

namespace {

// The loop for f's structure from a process-wide cache (compiled on the first request).
const CompiledGroup* find_or_compile(const FusedElementwise& f) {
  if (!compilable(f)) return nullptr;
  // Distinct structures seen by a process are few; past
  // this many, new ones are interpreted.
  constexpr size_t kMaxLoops = 4096;
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::unique_ptr<CompiledGroup>>;
  const std::vector<bool> scalar = scalar_inputs(f);
  std::string key = key_of(f, scalar);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second.get();
  if (cache->size() >= kMaxLoops) return nullptr;
  Jit* j = llvm_jit();
  std::unique_ptr<CompiledGroup> c;
  if (j != nullptr) c = compile(*j, absl::StrCat("graft_fused_", cache->size()), f, scalar);
  return cache->emplace(std::move(key), std::move(c)).first->second.get();  // null: interpret
}

}  // namespace

const CompiledGroup* compiled_group(const FusedElementwise& f) {
  // Slot 0 of the group's backend data holds this loop (the kernel never plans the body
  // for the executor, run_body, which would use the same slot). The loop itself is owned by
  // the process-wide cache: the held pointer does not own it.
  const void* held = f.backend_data(
      0, [&] { return std::shared_ptr<const void>(find_or_compile(f), [](const void*) {}); });
  return static_cast<const CompiledGroup*>(held);
}

}  // namespace graft::cpu::fusion
