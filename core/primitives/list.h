// The one list of primitives, with each one's facts. Adding a primitive means adding its row
// here and defining it in its family file (core/primitives/<family>.{h,cc}) with its CPU kernel
// in core/backend/cpu/<family>_kernels.cc. Everything else (kernel table, fusion, in-place
// reuse, dtype checks, derivative tables, tests, printers) iterates this list; nothing keeps a
// list of its own.
//
// X(CppName, "lax_name", family, kind, dtypes, flags)
//   kind    Unary / Binary: an elementwise op defined once by its functor ew::CppName
//           (core/primitives/elementwise_unary_ops.h, elementwise_binary_ops.h): its math on a
//           scalar and a SIMD packet, and its derivative. Its primitive class (Unary, Binary),
//           eager kernel, fused-tile step, compiled-loop fallback and jvp / vjp tables are
//           generated from the row. Other: defined by hand in its family file.
//   dtypes  the operand dtypes it accepts (DTypeClass; checked by the Unary / Binary infer).
//   flags   kFuse: fused_elementwise may hold it (on floating and bool values);
//           kInPlace: its kernel may write an output into an input's buffer (output element k
//             depends only on input elements k);
//           kBoolOut: its result is bool (comparisons, is_finite);
//           kDiff: differentiable, its functor gives d(out) / d(operand); without it the
//             derivative is zero (piecewise constant, or bool / integer valued);
//           kComplex: takes or makes complex64 / complex128 values;
//           kFloat8: takes or makes float8_e4m3fn / float8_e5m2 values (bind() rejects complex
//             and fp8 operands and results of every primitive without the flag, at trace time).
//
// A new unary op is this row, its functor (with derivative), its public op in core/ops.h and a
// spec row in tests/core/primitives/specs/elementwise_specs.cc.
#pragma once

#define GRAFT_PRIMITIVES(X)                                                                 \
  /* elementwise: unary */                                                                  \
  X(Neg, "neg", elementwise, Unary, kNumeric, kFuse | kInPlace | kDiff)                     \
  X(Abs, "abs", elementwise, Unary, kNumeric, kFuse | kInPlace | kDiff)                     \
  X(Sign, "sign", elementwise, Unary, kNumeric, kFuse | kInPlace)                           \
  X(Exp, "exp", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                    \
  X(Expm1, "expm1", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                \
  X(Log, "log", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                    \
  X(Log1p, "log1p", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                \
  X(Sqrt, "sqrt", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                  \
  X(Rsqrt, "rsqrt", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                \
  X(Square, "square", elementwise, Unary, kNumeric, kFuse | kInPlace | kDiff)               \
  X(Sin, "sin", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                    \
  X(Cos, "cos", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                    \
  X(Tan, "tan", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                    \
  X(Atan, "atan", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                  \
  X(Asin, "asin", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                  \
  X(Acos, "acos", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                  \
  X(Sinh, "sinh", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                  \
  X(Cosh, "cosh", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                  \
  X(Asinh, "asinh", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                \
  X(Acosh, "acosh", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                \
  X(Atanh, "atanh", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                \
  X(Tanh, "tanh", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                  \
  X(Logistic, "logistic", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)          \
  X(Erf, "erf", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)                    \
  X(ErfInv, "erf_inv", elementwise, Unary, kFloating, kFuse | kInPlace | kDiff)             \
  X(Floor, "floor", elementwise, Unary, kFloating, kFuse | kInPlace)                        \
  X(Ceil, "ceil", elementwise, Unary, kFloating, kFuse | kInPlace)                          \
  X(Round, "round", elementwise, Unary, kFloating, kFuse | kInPlace)                        \
  X(IsFinite, "is_finite", elementwise, Unary, kFloating, kFuse | kInPlace | kBoolOut)      \
  X(Not, "not", elementwise, Unary, kBoolOrIntegral, kFuse | kInPlace)                      \
  /* elementwise: binary */                                                                 \
  X(Add, "add", elementwise, Binary, kNumeric, kFuse | kInPlace | kDiff)                    \
  X(Sub, "sub", elementwise, Binary, kNumeric, kFuse | kInPlace | kDiff)                    \
  X(Mul, "mul", elementwise, Binary, kNumeric, kFuse | kInPlace | kDiff)                    \
  X(Div, "div", elementwise, Binary, kNumeric, kFuse | kInPlace | kDiff)                    \
  X(Rem, "rem", elementwise, Binary, kNumeric, kFuse | kInPlace | kDiff)                    \
  X(Pow, "pow", elementwise, Binary, kNumeric, kFuse | kInPlace | kDiff)                    \
  X(Max, "max", elementwise, Binary, kAny, kFuse | kInPlace | kDiff)                        \
  X(Min, "min", elementwise, Binary, kAny, kFuse | kInPlace | kDiff)                        \
  X(Eq, "eq", elementwise, Binary, kAny, kFuse | kInPlace | kBoolOut)                       \
  X(Ne, "ne", elementwise, Binary, kAny, kFuse | kInPlace | kBoolOut)                       \
  X(Lt, "lt", elementwise, Binary, kAny, kFuse | kInPlace | kBoolOut)                       \
  X(Le, "le", elementwise, Binary, kAny, kFuse | kInPlace | kBoolOut)                       \
  X(Gt, "gt", elementwise, Binary, kAny, kFuse | kInPlace | kBoolOut)                       \
  X(Ge, "ge", elementwise, Binary, kAny, kFuse | kInPlace | kBoolOut)                       \
  X(And, "and", elementwise, Binary, kBoolOrIntegral, kFuse | kInPlace)                     \
  X(Or, "or", elementwise, Binary, kBoolOrIntegral, kFuse | kInPlace)                       \
  X(Xor, "xor", elementwise, Binary, kBoolOrIntegral, kFuse | kInPlace)                     \
  X(ShiftLeft, "shift_left", elementwise, Binary, kIntegral, kInPlace)                      \
  X(ShiftRightLogical, "shift_right_logical", elementwise, Binary, kIntegral, kInPlace)     \
  /* elementwise: other */                                                                  \
  X(SelectN, "select_n", elementwise, Other, kAny, kFuse | kInPlace | kComplex | kFloat8)   \
  X(ConvertElementType, "convert_element_type", elementwise, Other, kAny, kFuse | kInPlace | kComplex | kFloat8) \
  X(BitcastConvertType, "bitcast_convert_type", elementwise, Other, kAny, kInPlace | kFloat8) \
  X(StopGradient, "stop_gradient", elementwise, Other, kAny, kInPlace | kComplex | kFloat8) \
  /* reductions */                                                                          \
  X(ReduceSum, "reduce_sum", reduce, Other, kAny, 0)                                        \
  X(ReduceProd, "reduce_prod", reduce, Other, kAny, 0)                                      \
  X(ReduceMax, "reduce_max", reduce, Other, kAny, 0)                                        \
  X(ReduceMin, "reduce_min", reduce, Other, kAny, 0)                                        \
  X(ReduceAnd, "reduce_and", reduce, Other, kAny, 0)                                        \
  X(ReduceOr, "reduce_or", reduce, Other, kAny, 0)                                          \
  X(Argmax, "argmax", reduce, Other, kAny, 0)                                               \
  X(Argmin, "argmin", reduce, Other, kAny, 0)                                               \
  X(Cumsum, "cumsum", reduce, Other, kAny, 0)                                               \
  /* shape */                                                                               \
  X(Reshape, "reshape", shape, Other, kAny, kComplex | kFloat8)                             \
  X(Transpose, "transpose", shape, Other, kAny, kComplex | kFloat8)                         \
  X(BroadcastInDim, "broadcast_in_dim", shape, Other, kAny, kComplex | kFloat8)             \
  X(Slice, "slice", shape, Other, kAny, kComplex | kFloat8)                                 \
  X(DynamicSlice, "dynamic_slice", shape, Other, kAny, kComplex | kFloat8)                  \
  X(DynamicUpdateSlice, "dynamic_update_slice", shape, Other, kAny, kComplex | kFloat8)     \
  X(Concatenate, "concatenate", shape, Other, kAny, kComplex | kFloat8)                     \
  X(Pad, "pad", shape, Other, kAny, kComplex | kFloat8)                                     \
  X(Rev, "rev", shape, Other, kAny, kComplex | kFloat8)                                     \
  X(Iota, "iota", shape, Other, kAny, 0)                                                    \
  /* indexing */                                                                            \
  X(Gather, "gather", index, Other, kAny, 0)                                                \
  X(ScatterAdd, "scatter_add", index, Other, kAny, 0)                                       \
  X(Sort, "sort", index, Other, kAny, 0)                                                    \
  /* linear algebra */                                                                      \
  X(DotGeneral, "dot_general", linalg, Other, kAny, kFloat8)                                \
  X(RaggedDot, "ragged_dot", linalg, Other, kAny, 0)                                        \
  /* matrix factorizations through LAPACK (core/primitives/decomp.h) */                     \
  X(Cholesky, "cholesky", decomp, Other, kAny, 0)                                           \
  X(Qr, "qr", decomp, Other, kAny, 0)                                                       \
  X(Svd, "svd", decomp, Other, kAny, 0)                                                     \
  X(Eigh, "eigh", decomp, Other, kAny, 0)                                                   \
  X(Lu, "lu", decomp, Other, kAny, 0)                                                       \
  X(TriangularSolve, "triangular_solve", decomp, Other, kAny, 0)                            \
  /* convolution (lax.conv_general_dilated; core/primitives/conv.h) */                      \
  X(ConvGeneralDilated, "conv_general_dilated", conv, Other, kAny, 0)                       \
  /* fused attention */                                                                     \
  X(FlashAttention, "flash_attention", attention, Other, kAny, 0)                           \
  X(FlashAttentionGrad, "flash_attention_grad", attention, Other, kAny, 0)                  \
  /* random */                                                                              \
  X(Threefry2x32, "threefry2x32", random, Other, kAny, 0)                                   \
  /* calls of user functions with custom derivatives */                                     \
  X(CustomJvpCall, "custom_jvp_call", call, Other, kAny, kComplex)                          \
  X(CustomVjpCall, "custom_vjp_call", call, Other, kAny, kComplex)                          \
  X(Remat, "remat", call, Other, kAny, kComplex)                                            \
  X(CheckpointName, "checkpoint_name", call, Other, kAny, kComplex)                         \
  /* control flow with traced sub-functions */                                              \
  X(Scan, "scan", control, Other, kAny, kComplex)                                           \
  X(Cond, "cond", control, Other, kAny, kComplex)                                           \
  X(WhileLoop, "while_loop", control, Other, kAny, kComplex)                                \
  /* jit: fused elementwise loops (+ a row reduction) */                                    \
  X(FusedElementwise, "fused_elementwise", fusion, Other, kAny, kInPlace)                   \
  X(FusedReduce, "fused_reduce", fusion, Other, kAny, kInPlace)                             \
  /* side effects */                                                                        \
  X(DebugPrint, "debug_print", debug, Other, kAny, 0)                                       \
  /* host callbacks (jax.pure_callback) */                                                  \
  X(PureCallback, "pure_callback", callback, Other, kAny, kComplex | kFloat8)               \
  /* collectives over named axes; shard_map, a body run on the devices of a mesh */         \
  X(Psum, "psum", collective, Other, kAny, 0)                                               \
  X(Pmax, "pmax", collective, Other, kAny, 0)                                               \
  X(Pmin, "pmin", collective, Other, kAny, 0)                                               \
  X(AllGather, "all_gather", collective, Other, kAny, 0)                                    \
  X(PsumScatter, "psum_scatter", collective, Other, kAny, 0)                                \
  X(AllToAll, "all_to_all", collective, Other, kAny, 0)                                     \
  X(Ppermute, "ppermute", collective, Other, kAny, 0)                                       \
  X(AxisIndex, "axis_index", collective, Other, kAny, 0)                                    \
  X(Pvary, "pvary", collective, Other, kAny, 0)                                             \
  X(ShardingConstraint, "sharding_constraint", collective, Other, kAny, 0)                  \
  X(ShardMap, "shard_map", collective, Other, kAny, 0)                                      \
  /* complex numbers, FFT, eig (core/primitives/complex.h, fft.h, eig.h) */                 \
  X(Real, "real", complex, Other, kAny, kComplex)                                           \
  X(Imag, "imag", complex, Other, kAny, kComplex)                                           \
  X(Complex, "complex", complex, Other, kAny, kComplex)                                     \
  X(Conj, "conj", complex, Other, kAny, kComplex)                                           \
  X(Fft, "fft", fft, Other, kAny, kComplex)                                                \
  X(Eig, "eig", decomp, Other, kAny, kComplex)                                           \
  /* scatter with set / mul / min / max combiners (core/primitives/index.h) */              \
  X(Scatter, "scatter", index, Other, kAny, 0)                                              \
  X(ScatterMul, "scatter_mul", index, Other, kAny, 0)                                       \
  X(ScatterMin, "scatter_min", index, Other, kAny, 0)                                       \
  X(ScatterMax, "scatter_max", index, Other, kAny, 0)

namespace graft {

// Which dtypes an elementwise primitive accepts.
enum class DTypeClass { kAny, kNumeric, kFloating, kIntegral, kBoolOrIntegral };
enum class OpKind { kUnary, kBinary, kOther };
enum PrimitiveFlag : unsigned {
  kFuse = 1,
  kInPlace = 2,
  kBoolOut = 4,
  kDiff = 8,
  kComplex = 16,
  kFloat8 = 32
};

struct PrimitiveFacts {
  OpKind kind;
  DTypeClass dtypes;
  unsigned flags;
  constexpr bool has(PrimitiveFlag f) const { return (flags & f) != 0; }
};

enum class PrimitiveId : int {
#define GRAFT_ENUM(name, str, family, kind, dtypes, flags) k##name,
  GRAFT_PRIMITIVES(GRAFT_ENUM)
#undef GRAFT_ENUM
};

#define GRAFT_COUNT(name, ...) +1
inline constexpr int kNumPrimitives = 0 GRAFT_PRIMITIVES(GRAFT_COUNT);
#undef GRAFT_COUNT
// Bump deliberately when the list changes: the op-spec table and kernel table follow it.
static_assert(kNumPrimitives == 119, "primitive list changed: update specs, kernels and this count");

inline constexpr const char* kPrimitiveNames[] = {
#define GRAFT_NAME(name, str, ...) str,
    GRAFT_PRIMITIVES(GRAFT_NAME)
#undef GRAFT_NAME
};

inline constexpr const char* kPrimitiveFamilies[] = {
#define GRAFT_FAMILY(name, str, family, ...) #family,
    GRAFT_PRIMITIVES(GRAFT_FAMILY)
#undef GRAFT_FAMILY
};

inline constexpr PrimitiveFacts kPrimitiveFacts[] = {
#define GRAFT_FACTS(name, str, family, kind, dtypes, flags) \
  {OpKind::k##kind, DTypeClass::dtypes, static_cast<unsigned>(flags)},
    GRAFT_PRIMITIVES(GRAFT_FACTS)
#undef GRAFT_FACTS
};

constexpr const PrimitiveFacts& primitive_facts(PrimitiveId id) {
  return kPrimitiveFacts[static_cast<int>(id)];
}

}  // namespace graft

// Tables over the elementwise functors: inside an X macro given to GRAFT_PRIMITIVES,
// GRAFT_IF_##kind(U, B, name) expands to U(name) for a Unary row, B(name) for a Binary row and
// to nothing otherwise.
#define GRAFT_IF_Unary(U, B, name) U(name)
#define GRAFT_IF_Binary(U, B, name) B(name)
#define GRAFT_IF_Other(U, B, name)
