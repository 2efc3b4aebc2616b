// The one list of primitives. Adding a primitive means adding it here and defining it in its
// family file (core/primitives/<family>.{h,cc}) with its CPU kernel in
// core/backend/cpu/<family>_kernels.cc. Everything else (kernel table, tests, printers,
// transforms) iterates this list; nothing keeps a list of its own.
//
// X(CppName, "lax_name", family)
#pragma once

#define GRAFT_PRIMITIVES(X)                                  \
  /* elementwise: unary */                                   \
  X(Neg, "neg", elementwise)                                 \
  X(Abs, "abs", elementwise)                                 \
  X(Sign, "sign", elementwise)                               \
  X(Exp, "exp", elementwise)                                 \
  X(Expm1, "expm1", elementwise)                             \
  X(Log, "log", elementwise)                                 \
  X(Log1p, "log1p", elementwise)                             \
  X(Sqrt, "sqrt", elementwise)                               \
  X(Rsqrt, "rsqrt", elementwise)                             \
  X(Square, "square", elementwise)                           \
  X(Sin, "sin", elementwise)                                 \
  X(Cos, "cos", elementwise)                                 \
  X(Tanh, "tanh", elementwise)                               \
  X(Logistic, "logistic", elementwise)                       \
  X(Erf, "erf", elementwise)                                 \
  X(ErfInv, "erf_inv", elementwise)                          \
  X(Floor, "floor", elementwise)                             \
  X(Ceil, "ceil", elementwise)                               \
  X(Round, "round", elementwise)                             \
  X(IsFinite, "is_finite", elementwise)                      \
  X(Not, "not", elementwise)                                 \
  /* elementwise: binary */                                  \
  X(Add, "add", elementwise)                                 \
  X(Sub, "sub", elementwise)                                 \
  X(Mul, "mul", elementwise)                                 \
  X(Div, "div", elementwise)                                 \
  X(Rem, "rem", elementwise)                                 \
  X(Pow, "pow", elementwise)                                 \
  X(Max, "max", elementwise)                                 \
  X(Min, "min", elementwise)                                 \
  X(Eq, "eq", elementwise)                                   \
  X(Ne, "ne", elementwise)                                   \
  X(Lt, "lt", elementwise)                                   \
  X(Le, "le", elementwise)                                   \
  X(Gt, "gt", elementwise)                                   \
  X(Ge, "ge", elementwise)                                   \
  X(And, "and", elementwise)                                 \
  X(Or, "or", elementwise)                                   \
  X(Xor, "xor", elementwise)                                 \
  X(ShiftLeft, "shift_left", elementwise)                    \
  X(ShiftRightLogical, "shift_right_logical", elementwise)   \
  /* elementwise: other */                                   \
  X(SelectN, "select_n", elementwise)                        \
  X(ConvertElementType, "convert_element_type", elementwise) \
  X(BitcastConvertType, "bitcast_convert_type", elementwise) \
  X(StopGradient, "stop_gradient", elementwise) \
  /* reductions */                                           \
  X(ReduceSum, "reduce_sum", reduce)                         \
  X(ReduceProd, "reduce_prod", reduce)                       \
  X(ReduceMax, "reduce_max", reduce)                         \
  X(ReduceMin, "reduce_min", reduce)                         \
  X(ReduceAnd, "reduce_and", reduce)                         \
  X(ReduceOr, "reduce_or", reduce)                           \
  X(Argmax, "argmax", reduce)                                \
  X(Argmin, "argmin", reduce)                                \
  X(Cumsum, "cumsum", reduce)                                \
  /* shape */                                                \
  X(Reshape, "reshape", shape)                               \
  X(Transpose, "transpose", shape)                           \
  X(BroadcastInDim, "broadcast_in_dim", shape)               \
  X(Slice, "slice", shape)                                   \
  X(DynamicSlice, "dynamic_slice", shape)                    \
  X(DynamicUpdateSlice, "dynamic_update_slice", shape)       \
  X(Concatenate, "concatenate", shape)                       \
  X(Pad, "pad", shape)                                       \
  X(Rev, "rev", shape)                                       \
  X(Iota, "iota", shape)                                     \
  /* indexing */                                             \
  X(Gather, "gather", index)                                 \
  X(ScatterAdd, "scatter_add", index)                        \
  X(Sort, "sort", index)                                     \
  /* linear algebra */                                       \
  X(DotGeneral, "dot_general", linalg)                       \
  X(RaggedDot, "ragged_dot", linalg)                         \
  /* random */                                               \
  X(Threefry2x32, "threefry2x32", random)                \
  /* calls of user functions with custom derivatives */   \
  X(CustomJvpCall, "custom_jvp_call", call)              \
  X(CustomVjpCall, "custom_vjp_call", call)              \
  X(Remat, "remat", call)                                \
  X(CheckpointName, "checkpoint_name", call)             \
  /* control flow with traced sub-functions */           \
  X(Scan, "scan", control)                               \
  X(Cond, "cond", control)                               \
  X(WhileLoop, "while_loop", control)                    \
  /* jit: elementwise chains fused into one loop */      \
  X(FusedElementwise, "fused_elementwise", fusion)       \
  /* side effects */                                     \
  X(DebugPrint, "debug_print", debug)

namespace graft {

enum class PrimitiveId : int {
#define GRAFT_ENUM(name, str, family) k##name,
  GRAFT_PRIMITIVES(GRAFT_ENUM)
#undef GRAFT_ENUM
};

#define GRAFT_COUNT(name, str, family) +1
inline constexpr int kNumPrimitives = 0 GRAFT_PRIMITIVES(GRAFT_COUNT);
#undef GRAFT_COUNT
// Bump deliberately when the list changes: the op-spec table and kernel table follow it.
static_assert(kNumPrimitives == 78, "primitive list changed: update specs, kernels and this count");

inline constexpr const char* kPrimitiveNames[] = {
#define GRAFT_NAME(name, str, family) str,
    GRAFT_PRIMITIVES(GRAFT_NAME)
#undef GRAFT_NAME
};

inline constexpr const char* kPrimitiveFamilies[] = {
#define GRAFT_FAMILY(name, str, family) #family,
    GRAFT_PRIMITIVES(GRAFT_FAMILY)
#undef GRAFT_FAMILY
};

}  // namespace graft
