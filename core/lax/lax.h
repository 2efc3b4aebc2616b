// graft's lax-level ops, with jax.numpy / jax.lax semantics and names: what graft's own layers
// (primitives' rules, interpreters, jax.random, nn, ...) build on. jax.numpy's breadth is
// core/numpy/ (core/numpy/numpy.h); core/ops.h is the users' umbrella over both. The ops of
// this header are defined in core/lax/*.cc; the headers it includes at its end are lax's
// other areas (complex parts, factorizations, convolution, scan, gather, ...).
//
// Every op builds a node and returns at once; nothing is computed until eval() or a read.
// Binary ops promote dtypes like JAX (C++ scalars are weakly typed) and broadcast like
// NumPy. Misuse throws graft::Error at the call: "[op] what is wrong: shapes/dtypes".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/array.h"
#include "core/sharding/axis.h"
#include "core/dtype/dtype.h"
#include "core/primitives/list.h"
#include "core/shape.h"

namespace graft {

using Axes = std::vector<int64_t>;

// ---------------------------------------------------------------- creation (core/lax/creation.cc)
// From host data, row-major. `shape` defaults to {data.size()}.
template <typename T>
Array array(const std::vector<T>& data, std::optional<Shape> shape = std::nullopt);
template <typename T>
Array array(std::initializer_list<T> data, std::optional<Shape> shape = std::nullopt) {
  return array(std::vector<T>(data), std::move(shape));
}
// A strongly typed scalar (unlike the weak C++ scalars Array(2.0) makes).
Array scalar(double value, DType dtype);
Array zeros(const Shape& shape, DType dtype = DType::kF32);
Array ones(const Shape& shape, DType dtype = DType::kF32);
Array full(const Shape& shape, double value, DType dtype = DType::kF32);
Array zeros_like(const Array& x);
Array ones_like(const Array& x);
Array full_like(const Array& x, double value);
// [start, stop) by step, like jnp.arange. The default dtype comes from the arguments' C++
// types: i32 when all are integers, f32 when any is floating (arange(0.0, 3.0) is f32).
namespace detail {
Array arange(double start, double stop, double step, DType dtype);
template <typename... T>
DType arange_dtype(std::optional<DType> d) {
  return d.value_or((std::is_floating_point_v<T> || ...) ? DType::kF32 : DType::kI32);
}
}  // namespace detail
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Array arange(T stop, std::optional<DType> dtype = std::nullopt) {
  return detail::arange(0, static_cast<double>(stop), 1, detail::arange_dtype<T>(dtype));
}
template <
    typename A, typename B, typename C = int,
    std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && std::is_arithmetic_v<C>,
                     int> = 0>
Array arange(A start, B stop, C step = 1, std::optional<DType> dtype = std::nullopt) {
  return detail::arange(static_cast<double>(start), static_cast<double>(stop),
                        static_cast<double>(step), detail::arange_dtype<A, B, C>(dtype));
}
Array linspace(double start, double stop, int64_t num, bool endpoint = true,
               DType dtype = DType::kF32);
Array eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
          DType dtype = DType::kF32);
// lax.iota: 0, 1, 2... along `dimension` of `shape`.
Array iota(DType dtype, const Shape& shape, int dimension = 0);

// ------------------------------------------------------------- elementwise (core/lax/elementwise_ops.cc)
// The unary op of row `id` of core/primitives/list.h, with jnp's promotion for the row's dtype
// class: integer and bool operands of a float-only op become the default float first (like
// jnp.exp(int_array)); numeric ops reject bool; other classes take what the row accepts.
// Errors name the op: "[tan] ...".
Array elementwise_unary(PrimitiveId id, const Array& x);
inline Array neg(const Array& x) { return elementwise_unary(PrimitiveId::kNeg, x); }
inline Array abs(const Array& x) { return elementwise_unary(PrimitiveId::kAbs, x); }
inline Array sign(const Array& x) { return elementwise_unary(PrimitiveId::kSign, x); }
inline Array square(const Array& x) { return elementwise_unary(PrimitiveId::kSquare, x); }
inline Array exp(const Array& x) { return elementwise_unary(PrimitiveId::kExp, x); }
inline Array expm1(const Array& x) { return elementwise_unary(PrimitiveId::kExpm1, x); }
inline Array log(const Array& x) { return elementwise_unary(PrimitiveId::kLog, x); }
inline Array log1p(const Array& x) { return elementwise_unary(PrimitiveId::kLog1p, x); }
inline Array sqrt(const Array& x) { return elementwise_unary(PrimitiveId::kSqrt, x); }
inline Array rsqrt(const Array& x) { return elementwise_unary(PrimitiveId::kRsqrt, x); }
inline Array sin(const Array& x) { return elementwise_unary(PrimitiveId::kSin, x); }
inline Array cos(const Array& x) { return elementwise_unary(PrimitiveId::kCos, x); }
inline Array tan(const Array& x) { return elementwise_unary(PrimitiveId::kTan, x); }
inline Array atan(const Array& x) { return elementwise_unary(PrimitiveId::kAtan, x); }
inline Array asin(const Array& x) { return elementwise_unary(PrimitiveId::kAsin, x); }
inline Array acos(const Array& x) { return elementwise_unary(PrimitiveId::kAcos, x); }
inline Array sinh(const Array& x) { return elementwise_unary(PrimitiveId::kSinh, x); }
inline Array cosh(const Array& x) { return elementwise_unary(PrimitiveId::kCosh, x); }
inline Array asinh(const Array& x) { return elementwise_unary(PrimitiveId::kAsinh, x); }
inline Array acosh(const Array& x) { return elementwise_unary(PrimitiveId::kAcosh, x); }
inline Array atanh(const Array& x) { return elementwise_unary(PrimitiveId::kAtanh, x); }
inline Array tanh(const Array& x) { return elementwise_unary(PrimitiveId::kTanh, x); }
inline Array erf(const Array& x) { return elementwise_unary(PrimitiveId::kErf, x); }
inline Array erf_inv(const Array& x) { return elementwise_unary(PrimitiveId::kErfInv, x); }
Array sigmoid(const Array& x);  // lax.logistic
Array reciprocal(const Array& x);
Array floor(const Array& x);
Array ceil(const Array& x);
Array round(const Array& x);  // half to even, like jnp.round
Array isnan(const Array& x);
Array isfinite(const Array& x);
Array isinf(const Array& x);
Array logical_not(const Array& x);
Array bitwise_not(const Array& x);

Array add(const Array& a, const Array& b);
Array subtract(const Array& a, const Array& b);
Array multiply(const Array& a, const Array& b);
Array divide(const Array& a, const Array& b);  // true division: ints promote to float
Array floor_divide(const Array& a, const Array& b);
Array remainder(const Array& a, const Array& b);  // sign of the divisor, like jnp
Array power(const Array& a, const Array& b);
Array maximum(const Array& a, const Array& b);
Array minimum(const Array& a, const Array& b);
Array equal(const Array& a, const Array& b);
Array not_equal(const Array& a, const Array& b);
Array less(const Array& a, const Array& b);
Array less_equal(const Array& a, const Array& b);
Array greater(const Array& a, const Array& b);
Array greater_equal(const Array& a, const Array& b);
Array logical_and(const Array& a, const Array& b);
Array logical_or(const Array& a, const Array& b);
Array logical_xor(const Array& a, const Array& b);
Array bitwise_and(const Array& a, const Array& b);
Array bitwise_or(const Array& a, const Array& b);
Array bitwise_xor(const Array& a, const Array& b);
Array shift_left(const Array& a, const Array& b);
Array shift_right_logical(const Array& a, const Array& b);
Array where(const Array& cond, const Array& x, const Array& y);
Array clip(const Array& x, const Array& lo, const Array& hi);
Array astype(const Array& x, DType dtype);
// Reinterprets the bits of x (same element width) as `dtype`.
Array bitcast_convert_type(const Array& x, DType dtype);

Array operator-(const Array& x);
Array operator+(const Array& a, const Array& b);
Array operator-(const Array& a, const Array& b);
Array operator*(const Array& a, const Array& b);
Array operator/(const Array& a, const Array& b);
Array operator%(const Array& a, const Array& b);
Array operator<(const Array& a, const Array& b);
Array operator<=(const Array& a, const Array& b);
Array operator>(const Array& a, const Array& b);
Array operator>=(const Array& a, const Array& b);
Array operator==(const Array& a, const Array& b);
Array operator!=(const Array& a, const Array& b);
Array operator&(const Array& a, const Array& b);
Array operator|(const Array& a, const Array& b);
Array operator^(const Array& a, const Array& b);
Array operator!(const Array& x);
Array operator~(const Array& x);

// ------------------------------------------------------------------ reductions (core/lax/reduce_ops.cc)
// `axes` empty (the default) reduces over all axes. Negative axes count from the end.
Array sum(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array mean(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array max(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array min(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array prod(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array all(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array any(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array logsumexp(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array var(const Array& x, const Axes& axes = {}, bool keepdims = false, int64_t ddof = 0);
// Index (i32) of the first max / min along `axis`; with no axis, of the flattened array.
Array argmax(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
// Cumulative sum along `axis` (flattened if none), optionally from the end.
Array cumsum(const Array& x, std::optional<int64_t> axis = std::nullopt, bool reverse = false);
Array softmax(const Array& x, int64_t axis = -1);
Array log_softmax(const Array& x, int64_t axis = -1);

// ------------------------------------------------------------------- shape ops (core/lax/shape_ops.cc)
// One dimension may be -1 (inferred).
Array reshape(const Array& x, const Shape& shape);
Array ravel(const Array& x);
// No permutation reverses the axes.
Array transpose(const Array& x, std::optional<std::vector<int>> perm = std::nullopt);
Array swapaxes(const Array& x, int64_t a, int64_t b);
Array moveaxis(const Array& x, int64_t source, int64_t destination);
Array broadcast_to(const Array& x, const Shape& shape);
// lax.broadcast_in_dim: operand dim i becomes output dim broadcast_dimensions[i].
Array broadcast_in_dim(const Array& x, const Shape& shape,
                       const std::vector<int>& broadcast_dimensions);
Array expand_dims(const Array& x, const Axes& axes);
Array squeeze(const Array& x, const Axes& axes = {});  // no axes: all size-1 dims
// lax.slice: start/limit per dim, optional strides (>= 1).
Array slice(const Array& x, const Shape& start, const Shape& limit, const Shape& strides = {});
// Python-style x[start:stop:step] along one axis (negative and out-of-range values clamp).
Array slice_axis(const Array& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step = 1);
// lax.dynamic_slice: starts are scalar integer arrays (or C++ ints); a negative start counts
// from the end (plus the dim, once), then every start is clamped so the block fits.
Array dynamic_slice(const Array& x, const std::vector<Array>& starts, const Shape& sizes);
Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts);
Array concatenate(const std::vector<Array>& xs, int64_t axis = 0);
Array stack(const std::vector<Array>& xs, int64_t axis = 0);
// Into `sections` equal parts, or at the given indices, like jnp.split.
std::vector<Array> split(const Array& x, int64_t sections, int64_t axis = 0);
std::vector<Array> split(const Array& x, const std::vector<int64_t>& indices, int64_t axis = 0);
// Constant padding: (low, high) per dim; lax.pad also allows interior padding and negative
// low/high (which crop).
Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& widths,
          const Array& value = Array(0));
Array lax_pad(const Array& x, const Array& value,
              const std::vector<std::array<int64_t, 3>>& low_high_interior);
Array flip(const Array& x, const Axes& axes = {});  // no axes: all
Array tile(const Array& x, const Shape& reps);
Array repeat(const Array& x, int64_t repeats, std::optional<int64_t> axis = std::nullopt);

// -------------------------------------------------------------------- indexing (core/lax/indexing.cc)
// jnp.take: out = x.shape[:axis] + indices.shape + x.shape[axis+1:]. Negative indices wrap;
// out-of-range indices give a fill value (NaN for floats; like jnp's default mode="fill"),
// or are clamped with mode kClip (which, like jnp.take, clamps negative indices to 0).
enum class GatherMode { kFill, kClip };
Array take(const Array& x, const Array& indices, int64_t axis = 0,
           GatherMode mode = GatherMode::kFill);
// jnp.take_along_axis: indices has x's rank; out[..i..] = x[..indices[..i..]..] along axis.
// Other dims broadcast; negative indices wrap in both modes.
Array take_along_axis(const Array& x, const Array& indices, int64_t axis,
                      GatherMode mode = GatherMode::kFill);
// x with updates added at indices along axis (the transpose of take). Out-of-range indices
// are dropped; negative ones wrap. updates has take(x, indices, axis)'s shape.
Array scatter_add(const Array& x, const Array& indices, const Array& updates, int64_t axis = 0);
Array one_hot(const Array& indices, int64_t num_classes, DType dtype = DType::kF32,
              int64_t axis = -1);
// Sorts along `axis` (stable; as jnp.sort, -0 and +0 tie and NaNs go last). sort_key_val
// sorts `values` by `keys`.
Array sort(const Array& x, int64_t axis = -1);
std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int64_t axis = -1);
Array argsort(const Array& x, int64_t axis = -1);
// lax.top_k: the k largest entries along the last axis, largest first, and their indices
// (i32). Floats order as XLA's CPU top_k does, by their bits: -NaN < -inf < ... < -0 < +0 < ...
// < inf < NaN; tied entries come lower index first. Differentiable in x (the tangent is
// gathered at the indices), vmappable. k in [0, x.shape[-1]].
std::pair<Array, Array> top_k(const Array& x, int64_t k);

// -------------------------------------------------------------------- linalg (core/lax/dot.cc)
// lax.dot_general: contracting and batch dimension pairs (lhs dims, rhs dims). Output is
// batch dims, then lhs free dims, then rhs free dims. Integer inputs accumulate in their type,
// f16/bf16 in f32. `preferred` sets the output dtype (default: the promoted input dtype).
struct DotDims {
  std::vector<int> lhs_contract, rhs_contract;
  std::vector<int> lhs_batch, rhs_batch;
};
Array dot_general(const Array& lhs, const Array& rhs, const DotDims& dims,
                  std::optional<DType> preferred = std::nullopt);
// jnp.matmul: 1-D operands are promoted, leading batch dims broadcast.
Array matmul(const Array& a, const Array& b);
Array dot(const Array& a, const Array& b);  // jnp.dot for 1-D / 2-D
Array outer(const Array& a, const Array& b);
// lax.ragged_dot (grouped matmul, the MoE expert matmul): lhs [m, k], rhs [g, k, n],
// group_sizes i32 [g] -> [m, n]. Consecutive row groups of lhs (group i: group_sizes[i] rows)
// are multiplied by rhs[i]; rows past the last group give 0. Float operands (promoted to one
// dtype). Sizes are read at run time and clamped (negative -> 0, groups cut at row m).
Array ragged_dot(const Array& lhs, const Array& rhs, const Array& group_sizes);
// The ragged-contraction form (lax.ragged_dot_general with the ragged dim contracted; the
// rhs gradient of ragged_dot): lhs [m, k], rhs [m, n] -> [g, k, n], out[i] = lhs_i^T @ rhs_i
// over group i's rows; a group with no rows gives zeros. Same clamping.
Array ragged_dot_transposed(const Array& lhs, const Array& rhs, const Array& group_sizes);

// ------------------------------------------------------------ attention (core/lax/attention_ops.cc)
// Fused causal attention (the flash_attention primitive, core/primitives/attention.h):
// q [B, T, H, D], k, v [B, S, KV, D], H a multiple of KV, T <= S (query t at position
// S - T + t sees keys 0 .. S - T + t). q, k, v of one dtype (f64, f32, bf16 or f16) compute in
// it (halves with f32 statistics); mixed floating inputs in f64 if any is f64, else in f32.
// o [B, T, H, D] in the compute dtype and lse [B, T, H] (the log-sum-exp of each row's scaled
// scores) in it too, but f32 for bf16 / f16. Differentiable to any order, vmappable.
struct FlashAttentionOptions {
  double scale = 0;      // 0: 1 / sqrt(D)
  int64_t block_q = 64;  // kernel tile sizes: query positions, keys
  int64_t block_k = 64;
};
struct FlashAttentionOut {
  Array o, lse;
};
FlashAttentionOut flash_attention(const Array& q, const Array& k, const Array& v,
                                  const FlashAttentionOptions& options = {});
// Its backward pass (the flash_attention_grad primitive): cotangents of o and lse in,
// {dq, dk, dv} out, in flash_attention's compute dtype (lse and its cotangent f32 for halves).
std::vector<Array> flash_attention_grad(const Array& q, const Array& k, const Array& v,
                                        const Array& o, const Array& lse, const Array& d_o,
                                        const Array& d_lse,
                                        const FlashAttentionOptions& options = {});

// ---- collectives (jax.lax) ----
// Inside pmap, shard_map or vmap(..., {.axis_name = "i"}), over the members of named axes;
// outside one, "[psum] unbound axis name 'i'". See core/primitives/collective.h for what each
// computes and how it differentiates (JAX's shard_map semantics). Negative dimension
// arguments count from the end.
Array psum(const Array& x, const AxisNames& axes);
Array pmean(const Array& x, const AxisNames& axes);
Array pmax(const Array& x, const AxisNames& axes);
Array pmin(const Array& x, const AxisNames& axes);
Array all_gather(const Array& x, const std::string& axis, int64_t gather_axis = 0,
                 bool tiled = false);
Array psum_scatter(const Array& x, const std::string& axis, int64_t scatter_dimension = 0,
                   bool tiled = false);
Array all_to_all(const Array& x, const std::string& axis, int64_t split_axis, int64_t concat_axis,
                 bool tiled = false);
// perm: (source, destination) member pairs; a member no pair sends to gets zeros.
Array ppermute(const Array& x, const std::string& axis,
               const std::vector<std::pair<int, int>>& perm);
Array axis_index(const std::string& axis);
// The axis size (jax.lax.axis_size), from the enclosing pmap / shard_map / named vmap.
int64_t axis_size(const std::string& axis);
// x, now varying over `axes` (jax.lax.pvary): no-op on values; its transpose is psum.
Array pvary(const Array& x, const AxisNames& axes);

// ---- debugging ----
// jax.debug.print: prints fmt with each "{}" replaced by the next array's values (to stderr,
// or the sink of set_debug_print_sink in core/primitives/debug.h) and returns the arrays
// unchanged. Eagerly it prints at once; inside jit it prints on every call of the compiled
// function (kept even when its results are unused); under vmap it prints the batched values;
// derivatives pass through it without printing.
std::vector<Array> debug_print(const std::string& fmt, const std::vector<Array>& arrays = {});
template <typename... A>
std::vector<Array> debug_print(const std::string& fmt, const Array& first, const A&... rest) {
  return debug_print(fmt, std::vector<Array>{first, Array(rest)...});
}

}  // namespace graft
#include "core/lax/complex.h"
#include "core/lax/linalg.h"
#include "core/lax/convolution.h"
#include "core/lax/scan.h"
#include "core/lax/index_update.h"
#include "core/dtype/dtype_info.h"
#include "core/lax/select.h"
#include "core/lax/gather.h"
#include "core/lax/special.h"
#include "core/lax/math.h"
#include "core/lax/triangles.h"
#include "core/lax/callback.h"
