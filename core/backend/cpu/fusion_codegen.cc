// fused_elementwise groups compiled to native loops with LLVM's ORC JIT (see the header).
//
// The loop works on blocks of 4 vector registers (64 f32 with AVX-512, 32 with AVX2) as one
// LLVM vector value, which instruction selection splits into registers: per block it loads
// each input once, applies the steps in order and stores the outputs. Steps emitted inline are
// exact IEEE operations written as the interpreter's Eigen packets compute them (max/min
// propagate a NaN first operand and order -0 below +0, sign of NaN or +-0 is the operand, sqrt
// and 1 / sqrt correctly rounded: core/backend/cpu/ieee_math.h; comparisons and logic as the
// C++ of the interpreter), and LLVM does not contract a mul and an add into an FMA without
// fast-math flags, so compiled and interpreted groups give the same bits; the rest call
// run_step_f32 on the block. Bool lanes are i1 vectors, loaded from and stored to 0/1 bytes.
#include "core/backend/cpu/fusion_codegen.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
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
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "core/backend/cpu/fusion_kernels.h"
#include "core/env.h"
#include "core/primitives/elementwise.h"

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

// Slots held in f32 lanes: f32, and bf16 (widened on load, rounded after each step as the
// unfused op rounds when it stores, narrowed on store), as the interpreter holds them.
bool is_f32(DType d) { return d == DType::kF32 || d == DType::kBF16; }
bool is_bool(DType d) { return d == DType::kBool; }

// An arithmetic step on f32 lanes (operands and result f32 or bf16), as run_step_f32 computes
// it; every other step has a bool operand or result, or converts.
bool is_f32_step(const FusedStep& s, const std::vector<DType>& arg) {
  bool f32 = is_f32(s.aval.dtype) && s.prim->id() != P::kConvertElementType;
  for (DType d : arg) f32 = f32 && is_f32(d);
  return f32;
}

// Steps on bool values (comparisons, select_n, logic, converts, is_finite), emitted inline
// with the interpreter's C++ semantics.
bool bool_step_supported(const FusedStep& s, const std::vector<DType>& arg) {
  const DType out = s.aval.dtype;
  switch (s.prim->id()) {
    case P::kEq:
    case P::kNe:
    case P::kLt:
    case P::kLe:
    case P::kGt:
    case P::kGe:
      return is_f32(arg[0]) && is_f32(arg[1]) && is_bool(out);
    case P::kSelectN:
      return arg.size() == 3 && is_bool(arg[0]) && arg[1] == out && arg[2] == out;
    case P::kNot:
      return is_bool(arg[0]) && is_bool(out);
    case P::kAnd:
    case P::kOr:
    case P::kXor:
    case P::kMax:
    case P::kMin:
      return is_bool(arg[0]) && is_bool(arg[1]) && is_bool(out);
    case P::kIsFinite:
      return is_f32(arg[0]) && is_bool(out);
    case P::kConvertElementType:
      return true;  // between f32, bf16 and bool (slots are nothing else)
    default:
      return false;
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
    bool ok = is_f32_step(s, arg)
                  ? f32_step_supported(s.prim->id(), static_cast<int>(s.args.size()))
                  : bool_step_supported(s, arg);
    if (!ok) return false;
  }
  return true;
}

thread_local std::exception_ptr step_error;

// What a compiled loop calls for a step it does not emit inline. Never throws into the loop.
void call_step(const void* step, const float* a, const float* b, float* y, int64_t n) noexcept {
  try {
    run_step_f32(*static_cast<const FusedStep*>(step), a, b, y, n);
  } catch (...) {
    if (!step_error) step_error = std::current_exception();
  }
}

// The process's JIT; nullptr when LLVM cannot target this machine.
struct Jit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  int64_t block = 0;
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
  // GRAFT_FUSION_CODEGEN_ISA=avx2 targets AVX2 on an AVX-512 machine (a test covers both
  // paths); LLVM turns off the features that depend on avx512f with it.
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
  auto* j = new Jit;  // lives as long as the process: compiled loops may run until exit
  j->jit = std::move(*jit);
  j->block = avx512 ? 64 : 32;
  return j;
}

Jit* llvm_jit() {
  static Jit* j = make_jit();
  return j;
}

// Inputs of rank 0 in a group of higher rank: broadcast scalars (as fused_kernel reads them).
std::vector<bool> scalar_inputs(const FusedElementwise& f) {
  std::vector<bool> scalar;
  for (const Aval& a : f.in_avals()) scalar.push_back(a.shape.empty() && !f.shape().empty());
  return scalar;
}

std::string key_of(const FusedElementwise& f, const std::vector<bool>& scalar) {
  std::string k = absl::StrCat(f.in_avals().size(), ":");
  for (bool s : scalar) k += s ? 's' : 'a';
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
  StepEmitter(llvm::IRBuilder<>& b, llvm::VectorType* vt, llvm::Value* steps,
              llvm::AllocaInst* const* bufs)
      : b_(b), vt_(vt), steps_(steps), bufs_(bufs) {}

  // Step k's block value from its operands' (arg: their dtypes).
  llvm::Value* emit(const FusedStep& s, int k, const std::vector<llvm::Value*>& a,
                    const std::vector<DType>& arg) {
    if (!is_f32_step(s, arg)) return emit_bool(s, a, arg);
    llvm::Value* u = a[0];
    llvm::Value* v = a.size() > 1 ? a[1] : nullptr;
    // Exact ops inline; the rest (transcendentals) call run_step_f32.
    switch (s.prim->id()) {
      case P::kAdd:
        return b_.CreateFAdd(u, v);
      case P::kSub:
        return b_.CreateFSub(u, v);
      case P::kMul:
        return b_.CreateFMul(u, v);
      case P::kDiv:
        return b_.CreateFDiv(u, v);
      case P::kMax:  // u == v ? u & v : isnan(u) || v < u ? u : v
        return equal_bits(
            u, v, false,
            b_.CreateSelect(b_.CreateOr(b_.CreateFCmpOLT(v, u), b_.CreateFCmpUNO(u, u)), u, v));
      case P::kMin:  // u == v ? u | v : isnan(u) || u < v ? u : v
        return equal_bits(
            u, v, true,
            b_.CreateSelect(b_.CreateOr(b_.CreateFCmpOLT(u, v), b_.CreateFCmpUNO(u, u)), u, v));
      case P::kSqrt:  // llvm.sqrt: the IEEE (correctly rounded) instruction
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, u);
      case P::kRsqrt:  // 1 / sqrt(u), two IEEE operations (no fast-math: not vrsqrt)
        return b_.CreateFDiv(llvm::ConstantFP::get(vt_, 1.0),
                             b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, u));
      case P::kNeg:
        return b_.CreateFNeg(u);
      case P::kSquare:
        return b_.CreateFMul(u, u);
      case P::kAbs:
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, u);
      case P::kFloor:
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, u);
      case P::kCeil:
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, u);
      case P::kRound:  // to nearest even, as rint
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, u);
      case P::kSign: {  // u > 0 ? 1 : u < 0 ? -1 : u (NaN and +-0 are kept)
        llvm::Value* zero = llvm::ConstantFP::get(vt_, 0.0);
        llvm::Value* s1 =
            b_.CreateSelect(b_.CreateFCmpOLT(u, zero), llvm::ConstantFP::get(vt_, -1.0), u);
        return b_.CreateSelect(b_.CreateFCmpOGT(u, zero), llvm::ConstantFP::get(vt_, 1.0), s1);
      }
      default:
        return call(k, u, v);
    }
  }

 private:
  // u == v ? (bits of u & v, or u | v when `use_or`) : otherwise: max / min of equal values
  // (+0 and -0 compare equal) as max_value / min_value give them.
  llvm::Value* equal_bits(llvm::Value* u, llvm::Value* v, bool use_or, llvm::Value* otherwise) {
    auto* it = llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(vt_));
    llvm::Value* ui = b_.CreateBitCast(u, it);
    llvm::Value* vi = b_.CreateBitCast(v, it);
    llvm::Value* bits = b_.CreateBitCast(use_or ? b_.CreateOr(ui, vi) : b_.CreateAnd(ui, vi), vt_);
    return b_.CreateSelect(b_.CreateFCmpOEQ(u, v), bits, otherwise);
  }

  // Steps with a bool operand or result, as the interpreter's C++ computes them: comparisons
  // are IEEE (ne is true on NaN), select_n(p, f, t) = p ? t : f, bool max / min are or / and,
  // f32 -> bool is x != 0, bool -> f32 is 0 or 1.
  llvm::Value* emit_bool(const FusedStep& s, const std::vector<llvm::Value*>& a,
                         const std::vector<DType>& arg) {
    switch (s.prim->id()) {
      case P::kEq:
        return b_.CreateFCmpOEQ(a[0], a[1]);
      case P::kNe:
        return b_.CreateFCmpUNE(a[0], a[1]);
      case P::kLt:
        return b_.CreateFCmpOLT(a[0], a[1]);
      case P::kLe:
        return b_.CreateFCmpOLE(a[0], a[1]);
      case P::kGt:
        return b_.CreateFCmpOGT(a[0], a[1]);
      case P::kGe:
        return b_.CreateFCmpOGE(a[0], a[1]);
      case P::kSelectN:
        return b_.CreateSelect(a[0], a[2], a[1]);
      case P::kNot:
        return b_.CreateNot(a[0]);
      case P::kAnd:
      case P::kMin:
        return b_.CreateAnd(a[0], a[1]);
      case P::kOr:
      case P::kMax:
        return b_.CreateOr(a[0], a[1]);
      case P::kXor:
        return b_.CreateXor(a[0], a[1]);
      case P::kIsFinite:
        return b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]),
                                llvm::ConstantFP::getInfinity(vt_));
      case P::kConvertElementType:
        if (is_f32(arg[0]) && is_f32(s.aval.dtype)) return a[0];  // bf16: rounded after
        if (is_bool(s.aval.dtype)) return b_.CreateFCmpUNE(a[0], llvm::ConstantFP::get(vt_, 0.0));
        return b_.CreateUIToFP(a[0], vt_);
      default:
        return nullptr;  // not reached: compilable() admits only the cases above
    }
  }

  // Stores the operands to stack blocks, calls call_step on step k, loads its result.
  llvm::Value* call(int k, llvm::Value* u, llvm::Value* v) {
    llvm::Type* f32p = b_.getFloatTy()->getPointerTo();
    llvm::Type* i8p = b_.getInt8PtrTy();
    auto* fty =
        llvm::FunctionType::get(b_.getVoidTy(), {i8p, f32p, f32p, f32p, b_.getInt64Ty()}, false);
    llvm::Value* fn =
        b_.CreateIntToPtr(b_.getInt64(reinterpret_cast<uint64_t>(&call_step)), fty->getPointerTo());
    const llvm::Align align(64);
    b_.CreateAlignedStore(u, bufs_[0], align);
    if (v != nullptr) b_.CreateAlignedStore(v, bufs_[1], align);
    llvm::Value* step = b_.CreateConstGEP1_64(b_.getInt8Ty(), steps_, k * sizeof(FusedStep));
    auto ptr = [&](int i) { return b_.CreateBitCast(bufs_[i], f32p); };
    const auto lanes =
        static_cast<uint64_t>(llvm::cast<llvm::FixedVectorType>(vt_)->getNumElements());
    b_.CreateCall(fty, fn, {step, ptr(0), ptr(1), ptr(2), b_.getInt64(lanes)});
    return b_.CreateAlignedLoad(vt_, bufs_[2], align);
  }

  llvm::IRBuilder<>& b_;
  llvm::VectorType* vt_;
  llvm::Value* steps_;
  llvm::AllocaInst* const* bufs_;
};

// Builds the loop's module: void name(i8** ins, i8** outs, i64 begin, i64 end, i8* steps).
std::unique_ptr<llvm::Module> build(llvm::LLVMContext& ctx, const llvm::DataLayout& layout,
                                    const std::string& name, int64_t block,
                                    const FusedElementwise& f, const std::vector<bool>& scalar) {
  auto mod = std::make_unique<llvm::Module>("graft_fused", ctx);
  mod->setDataLayout(layout);
  llvm::IRBuilder<> b(ctx);
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* f32p = f32->getPointerTo();
  llvm::Type* i8p = b.getInt8PtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  auto* vt = llvm::FixedVectorType::get(f32, static_cast<unsigned>(block));
  auto* fty = llvm::FunctionType::get(
      b.getVoidTy(), {i8p->getPointerTo(), i8p->getPointerTo(), i64, i64, i8p}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, mod.get());
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* ins = fn->getArg(0);
  llvm::Value* outs = fn->getArg(1);
  llvm::Value* begin = fn->getArg(2);
  llvm::Value* end = fn->getArg(3);
  llvm::Value* steps = fn->getArg(4);

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  b.SetInsertPoint(entry);
  const int n_in = static_cast<int>(f.in_avals().size());
  // f32 data as float*, bool data as bytes (0 or 1) read into i1 lanes.
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
  // bf16 bits -> f32 (exact), and f32 -> the nearest bf16 (ties to even; a NaN stays a quiet
  // NaN), as core/half.h's bf16 converts.
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
  b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, done);

  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  i->addIncoming(begin, entry);
  // Block i of an array: f32 lanes (from f32 or bf16 data), or bool lanes from 0/1 bytes.
  auto at = [&](llvm::Value* p, llvm::Type* elem, llvm::Type* block_type) {
    return b.CreateBitCast(b.CreateGEP(elem, p, i), block_type->getPointerTo());
  };
  auto load = [&](llvm::Value* p, DType d) -> llvm::Value* {
    if (d == DType::kF32) return b.CreateAlignedLoad(vt, at(p, f32, vt), llvm::Align(4));
    if (d == DType::kBF16) {
      return widen(b.CreateAlignedLoad(halves, at(p, i16, halves), llvm::Align(2)));
    }
    return b.CreateICmpNE(b.CreateAlignedLoad(bytes, at(p, i8, bytes), llvm::Align(1)),
                          llvm::ConstantInt::get(bytes, 0));
  };
  auto store = [&](llvm::Value* v, llvm::Value* p, DType d) {
    if (d == DType::kF32) {
      b.CreateAlignedStore(v, at(p, f32, vt), llvm::Align(4));
    } else if (d == DType::kBF16) {  // v is already rounded: keep its top half
      llvm::Value* h = b.CreateTrunc(b.CreateLShr(b.CreateBitCast(v, words), 16), halves);
      b.CreateAlignedStore(h, at(p, i16, halves), llvm::Align(2));
    } else {
      b.CreateAlignedStore(b.CreateZExt(v, bytes), at(p, i8, bytes), llvm::Align(1));
    }
  };
  std::vector<llvm::Value*> slot(n_in + f.steps().size());
  for (int s = 0; s < n_in; ++s) {  // every load before any store: outputs may alias inputs
    slot[s] = scalar[s] ? in_base[s] : load(in_base[s], dtype[s]);
  }
  StepEmitter emitter(b, vt, steps, bufs);
  for (size_t k = 0; k < f.steps().size(); ++k) {
    const FusedStep& s = f.steps()[k];
    std::vector<llvm::Value*> a;
    std::vector<DType> arg;
    for (int x : s.args) {
      a.push_back(slot[x]);
      arg.push_back(dtype[x]);
    }
    slot[n_in + k] = emitter.emit(s, static_cast<int>(k), a, arg);
    if (s.aval.dtype == DType::kBF16) slot[n_in + k] = round_bf16(slot[n_in + k]);
  }
  for (size_t o = 0; o < f.outputs().size(); ++o) {
    store(slot[f.outputs()[o]], out_base[o], dtype[f.outputs()[o]]);
  }
  llvm::Value* next = b.CreateAdd(i, b.getInt64(block));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  if (llvm::verifyFunction(*fn, &llvm::errs())) return nullptr;
  return mod;
}

std::unique_ptr<CompiledGroup> compile(Jit& j, const std::string& name, const FusedElementwise& f,
                                       const std::vector<bool>& scalar) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> mod = build(*ctx, j.jit->getDataLayout(), name, j.block, f, scalar);
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
  c->block = j.block;
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

const CompiledGroup* compiled_group(const FusedElementwise& f) {
  return static_cast<const CompiledGroup*>(f.backend_data([&]() -> const void* {
    if (!compilable(f)) return nullptr;
    // Distinct structures seen by a process are few; past this many, new ones are interpreted.
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
  }));
}

void rethrow_step_error() {
  if (step_error) std::rethrow_exception(std::exchange(step_error, nullptr));
}

}  // namespace graft::cpu::fusion
