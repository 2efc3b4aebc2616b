// Emits a fused_elementwise group's CUDA source (see the header). Every step is one line,
// `const <lane> v<slot> = <expr>;`, with <expr> a call of the prelude's g_<op> overload for
// the operands' lanes (device_exact.cuh, device_math.cuh), wrapped in g_round_f16 / bf16 where
// core/primitives/fusion.h's rounds_to_half says (16-bit values are carried in f32 between
// steps and rounded on store): the same order of f32 operations as the CPU's tile
// interpreter and compiled loops, and NVRTC does not contract them into FMAs (--fmad=false), so exact ops give its bits.
#include "core/backend/cuda/fusion/cuda_source.h"

#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/fusion.h"

namespace graft::cuda::fusion {
namespace {

using P = PrimitiveId;

// The kernel's first lines: what device_exact.cuh expects from its includer.
constexpr char kEnvironment[] =
    R"(// graft fused_elementwise kernel (core/backend/cuda/fusion/cuda_source.cc)
#define GRAFT_FN static __forceinline__
GRAFT_FN unsigned int g_f2u(float x) { return __float_as_uint(x); }
GRAFT_FN float g_u2f(unsigned int u) { return __uint_as_float(u); }
GRAFT_FN unsigned long long g_d2u(double x) { return (unsigned long long)__double_as_longlong(x); }
GRAFT_FN double g_u2d(unsigned long long u) { return __longlong_as_double((long long)u); }
)";

// The preludes' text, as string literals made by BUILD.bazel's genrules.
constexpr char kExact[] =
#include "core/backend/cuda/fusion/device_exact.inc"
    ;
constexpr char kMath[] =
#include "core/backend/cuda/fusion/device_math.inc"
    ;

template <typename... Parts>
[[noreturn]] void fail_group(const Parts&... parts) {
  throw Error(str_cat("[cuda] fused_elementwise: ", parts...));
}

const char* op_name(P op) { return kPrimitiveNames[static_cast<int>(op)]; }

// The elementwise ops with a CUDA source: the prelude's g_<lax name> (device_exact.cuh,
// device_math.cuh). Listed by hand: a new fusible primitive has none until it is added here and
// to the prelude (the tests walk core/primitives/list.h's kFuse rows and fail on one without).
constexpr P kDeviceOps[] = {
    P::kNeg,    P::kAbs,    P::kSign,  P::kExp,   P::kExpm1,    P::kLog,  P::kLog1p,    P::kSqrt,
    P::kRsqrt,  P::kSquare, P::kSin,   P::kCos,   P::kTan,      P::kAtan, P::kAsin,     P::kAcos,
    P::kSinh,   P::kCosh,   P::kAsinh, P::kAcosh, P::kAtanh,    P::kTanh, P::kLogistic, P::kErf,
    P::kErfInv, P::kFloor,  P::kCeil,  P::kRound, P::kIsFinite, P::kNot,  P::kAdd,      P::kSub,
    P::kMul,    P::kDiv,    P::kRem,   P::kPow,   P::kMax,      P::kMin,  P::kEq,       P::kNe,
    P::kLt,     P::kLe,     P::kGt,    P::kGe,    P::kAnd,      P::kOr,   P::kXor};

std::optional<std::string> device_fn(P op) {
  for (P d : kDeviceOps) {
    if (d == op) return std::string("g_") + op_name(op);
  }
  return std::nullopt;
}

// The type a slot is held in.
const char* lane(DType d) {
  switch (d) {
    case DType::kBool:
      return "bool";
    case DType::kU8:
      return "unsigned char";
    case DType::kU16:
      return "unsigned short";
    case DType::kU64:
      return "unsigned long long";
    case DType::kI8:
      return "signed char";
    case DType::kI16:
      return "short";
    case DType::kC64:
    case DType::kC128:
    case DType::kF8E4M3FN:  // complex and fp8 values never enter a fused group
    case DType::kF8E5M2:
      return "?";
    case DType::kU32:
      return "unsigned int";
    case DType::kI32:
      return "int";
    case DType::kI64:
      return "long long";
    case DType::kF16:
    case DType::kBF16:
    case DType::kF32:
      return "float";
    case DType::kF64:
      return "double";
  }
  return "?";
}

// The element type of a buffer of dtype d.
const char* memory(DType d) {
  switch (d) {
    case DType::kBool:
      return "unsigned char";
    case DType::kF16:
    case DType::kBF16:
      return "unsigned short";
    default:
      return lane(d);
  }
}

std::string load(DType d, const std::string& element) {
  switch (d) {
    case DType::kBool:
      return "(" + element + " != 0)";
    case DType::kF16:
      return "g_from_f16(" + element + ")";
    case DType::kBF16:
      return "g_from_bf16(" + element + ")";
    default:
      return element;
  }
}

std::string store(DType d, const std::string& value) {
  switch (d) {
    case DType::kBool:
      return "(unsigned char)" + value;
    case DType::kF16:
      return "g_to_f16(" + value + ")";
    case DType::kBF16:  // slots carry f32 (core/primitives/fusion.h): round as stored
      return "g_bf16_bits(g_round_bf16(" + value + "))";
    default:
      return value;
  }
}

std::string slot(int s) { return "v" + std::to_string(s); }

// convert_element_type between lanes, as core/dtype/convert.h (the target's rounding to f16 / bf16
// follows, as for every step).
std::string convert(DType from, DType to, const std::string& x) {
  if (to == DType::kBool) return "g_to_bool(" + x + ")";
  if (is_floating(from) && is_integral(to)) {
    return std::string("g_saturate<") + lane(to) + ">(" + x + ")";
  }
  if (std::string(lane(from)) == lane(to)) return x;
  return std::string("(") + lane(to) + ")(" + x + ")";
}

// The step's expression on its operands' slots (earlier ones: the caller checked); checks
// arity and dtypes first.
std::string expression(const GroupSpec::Step& s, const std::vector<DType>& dtype, int k) {
  auto where = [&] { return str_cat("step ", k, " (", op_name(s.op), ")"); };
  const size_t arity = s.args.size();
  std::vector<DType> in;
  for (int a : s.args) in.push_back(dtype[a]);
  if (s.op == P::kConvertElementType) {
    if (arity != 1) fail_group(where(), ": takes 1 operand, got ", arity);
    return convert(in[0], s.dtype, slot(s.args[0]));
  }
  if (s.op == P::kSelectN) {  // select_n(pred, on_false, on_true)
    if (arity != 3 || in[0] != DType::kBool || in[1] != s.dtype || in[2] != s.dtype) {
      fail_group(where(), ": needs a bool predicate and two cases of its dtype ",
                 dtype_name(s.dtype));
    }
    return "(" + slot(s.args[0]) + " ? " + slot(s.args[2]) + " : " + slot(s.args[1]) + ")";
  }
  const std::optional<std::string> fn = device_fn(s.op);
  if (!fn) fail_group("no CUDA source for ", op_name(s.op));
  const PrimitiveFacts& facts = primitive_facts(s.op);
  const size_t want = facts.kind == OpKind::kUnary ? 1 : 2;
  if (arity != want) fail_group(where(), ": takes ", want, " operands, got ", arity);
  if (arity == 2 && in[0] != in[1]) {
    fail_group(where(), ": operands of different dtypes, ", dtype_name(in[0]), " and ",
               dtype_name(in[1]));
  }
  if (!accepts(dtype_class(s.op), in[0])) {
    fail_group("no CUDA source for ", op_name(s.op), " on ", dtype_name(in[0]));
  }
  const DType out = facts.has(kBoolOut) ? DType::kBool : in[0];
  if (s.dtype != out) {
    fail_group(where(), ": on ", dtype_name(in[0]), " gives ", dtype_name(out), ", not ",
               dtype_name(s.dtype));
  }
  std::string e = *fn + "(" + slot(s.args[0]);
  if (arity == 2) e += ", " + slot(s.args[1]);
  return e + ")";
}

}  // namespace

bool has_cuda_source(PrimitiveId op) {
  return op == P::kSelectN || op == P::kConvertElementType || device_fn(op).has_value();
}

GroupSpec spec_of(const FusedElementwise& f) {
  GroupSpec g;
  for (size_t i = 0; i < f.in_avals().size(); ++i) {
    g.inputs.push_back(f.in_avals()[i].dtype);
    g.scalar.push_back(f.scalar_input(i));
    g.broadcast.push_back(f.broadcast_input(i) ? f.reads()[i] : FusedRead{1, 0});
  }
  for (const FusedStep& s : f.steps()) g.steps.push_back({s.prim->id(), s.args, s.aval.dtype});
  g.outputs = f.outputs();
  return g;
}

std::string structure_key(const GroupSpec& g) {
  std::string k;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    k += g.scalar[i] ? 's' : 'a';
    if (i < g.broadcast.size() && g.broadcast[i].size > 0) {
      k += std::to_string(g.broadcast[i].div) + '/' + std::to_string(g.broadcast[i].size);
    }
    k += std::to_string(static_cast<int>(g.inputs[i]));
  }
  for (const GroupSpec::Step& s : g.steps) {
    k += ';' + std::to_string(static_cast<int>(s.op)) + ':' +
         std::to_string(static_cast<int>(s.dtype));
    for (int a : s.args) k += ',' + std::to_string(a);
  }
  k += '|';
  for (int o : g.outputs) k += std::to_string(o) + ',';
  return k;
}

std::string structure_key(const FusedElementwise& f) { return structure_key(spec_of(f)); }

std::string cuda_source(const GroupSpec& g) {
  const int n_in = static_cast<int>(g.inputs.size());
  if (g.scalar.size() != g.inputs.size()) fail_group("a scalar flag per input is needed");
  if (!g.broadcast.empty() && g.broadcast.size() != g.inputs.size()) {
    fail_group("a broadcast read per input, or none, is needed");
  }
  if (g.outputs.empty()) fail_group("a group without outputs");
  std::vector<DType> dtype = g.inputs;
  for (const GroupSpec::Step& s : g.steps) dtype.push_back(s.dtype);
  for (int o : g.outputs) {
    if (o < n_in || o >= static_cast<int>(dtype.size())) {
      fail_group("output slot ", o, " is no step's result");
    }
  }
  std::ostringstream os;
  os << kEnvironment << kExact << kMath;
  os << "\nextern \"C\" __global__ void " << kKernelName << "(long long n";
  for (int i = 0; i < n_in; ++i) os << ", const " << memory(g.inputs[i]) << "* in" << i;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    os << ", " << memory(dtype[g.outputs[o]]) << "* out" << o;
  }
  os << ") {\n";
  for (int i = 0; i < n_in; ++i) {  // broadcast scalars: read once
    if (!g.scalar[i]) continue;
    os << "  const " << lane(g.inputs[i]) << " s" << i << " = "
       << load(g.inputs[i], "in" + std::to_string(i) + "[0]") << ";\n";
  }
  os << "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
     << "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; "
        "i += stride) {\n";
  for (int i = 0; i < n_in; ++i) {  // every load before any store: outputs may alias inputs
    std::string at = "i";           // a broadcast input: the element it spreads to i
    if (i < static_cast<int>(g.broadcast.size()) && g.broadcast[i].size > 0) {
      at = "(i / " + std::to_string(g.broadcast[i].div) + "LL) % " +
           std::to_string(g.broadcast[i].size) + "LL";
    }
    const std::string v = g.scalar[i]
                              ? "s" + std::to_string(i)
                              : load(g.inputs[i], "in" + std::to_string(i) + "[" + at + "]");
    os << "    const " << lane(g.inputs[i]) << " " << slot(i) << " = " << v << ";\n";
  }
  for (size_t k = 0; k < g.steps.size(); ++k) {
    const GroupSpec::Step& s = g.steps[k];
    const int at = n_in + static_cast<int>(k);
    for (int a : s.args) {
      if (a < 0 || a >= at) fail_group("step ", k, " (", op_name(s.op), ") reads slot ", a);
    }
    std::string e = expression(s, dtype, static_cast<int>(k));
    if (rounds_to_half(s.op, dtype[s.args.at(0)], s.dtype)) {  // else carried in f32
      if (s.dtype == DType::kF16) e = "g_round_f16(" + e + ")";
      if (s.dtype == DType::kBF16) e = "g_round_bf16(" + e + ")";
    }
    os << "    const " << lane(s.dtype) << " " << slot(at) << " = " << e << ";  // "
       << op_name(s.op) << " " << dtype_name(s.dtype) << "\n";
  }
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const int s = g.outputs[o];
    os << "    out" << o << "[i] = " << store(dtype[s], slot(s)) << ";\n";
  }
  os << "  }\n}\n";
  return os.str();
}

std::string cuda_source(const FusedElementwise& f) { return cuda_source(spec_of(f)); }

}  // namespace graft::cuda::fusion
