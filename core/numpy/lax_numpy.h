// jax.numpy array-manipulation and contraction breadth: einsum, tensordot, kron,
// triangles and diagonals, roll / rot90, stacking helpers and block, meshgrid, diff, average,
// cross.
//
// Every op here is composed from the public ops of core/ops.h (dot_general, transpose,
// reshape, slice, concatenate, where, iota, ...), with no primitive of its own, so grad, vmap
// and jit work through them. Semantics follow JAX 0.10.2's jax.numpy; misuse throws
// graft::Error starting with the op: "[einsum] ...". Included at the end of core/ops.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

// ------------------------------------------------------------------- einsum (core/numpy/einsum.cc)
// jnp.einsum with string subscripts: letters a-z / A-Z, optional "->output" (without it the
// output is the labels used exactly once, sorted, after the broadcast '...' dims), '...' for
// broadcast leading dims, repeated labels within an operand (the diagonal), labels missing
// from the output summed out. Size-1 dims broadcast against the same label's other sizes.
// Operands are promoted to their common dtype (weak iff all weak), like jnp.einsum.
// Contraction order: greedy, each step contracts the pair of operands whose result (its
// labels that the output or another remaining operand still need) has the fewest elements,
// ties to the lowest pair of positions; each pairwise step is one dot_general with the
// shared kept labels as batch dims; the result is transposed to the requested order.
// (JAX asks opt_einsum for the path; the value is the same up to f32 rounding.)
Array einsum(const std::string& subscripts, const std::vector<Array>& operands);
template <typename... A>
Array einsum(const std::string& subscripts, const Array& first, const A&... rest) {
  return einsum(subscripts, std::vector<Array>{first, Array(rest)...});
}
// The pairs of positions (into the list of operands remaining at each step, the result
// appended last, as numpy.einsum_path) that einsum contracts, in order.
std::vector<std::pair<int, int>> einsum_path(const std::string& subscripts,
                                             const std::vector<Array>& operands);

// ------------------------------------------------------- contractions (core/numpy/lax_numpy.cc)
// jnp.tensordot: the last `axes` dims of a with the first `axes` of b, or the listed pairs.
Array tensordot(const Array& a, const Array& b, int64_t axes = 2);
Array tensordot(const Array& a, const Array& b, const Axes& a_axes, const Axes& b_axes);
// Over the last axis of each (a scalar operand multiplies).
Array inner(const Array& a, const Array& b);
// Both flattened, then dot (real dtypes: no conjugation to do).
Array vdot(const Array& a, const Array& b);
Array kron(const Array& a, const Array& b);

// ------------------------------------------------------------ triangles and diagonals
// tri, tril, triu and diagonal are lax-level: core/lax/triangles.h.
// 1-D v: the square matrix with v on the k-th diagonal; 2-D v: its k-th diagonal.
Array diag(const Array& v, int64_t k = 0);
Array trace(const Array& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);

// ------------------------------------------------------------------- rearranging
// Elements shifted by `shift` along `axis` (wrapping); no axis: of the flattened array.
Array roll(const Array& a, int64_t shift, std::optional<int64_t> axis = std::nullopt);
// One shift per axis (a single shift applies to every axis, a single axis takes every shift).
Array roll(const Array& a, const std::vector<int64_t>& shifts, const Axes& axes);
Array fliplr(const Array& m);  // flip axis 1 (rank >= 2)
Array flipud(const Array& m);  // flip axis 0 (rank >= 1)
// Rotated by 90 degrees k times, from axes.first towards axes.second.
Array rot90(const Array& m, int64_t k = 1, std::pair<int64_t, int64_t> axes = {0, 1});

// ------------------------------------------------------------------- stacking
Array atleast_1d(const Array& x);  // scalar -> [1]
Array atleast_2d(const Array& x);  // [n] -> [1, n]
Array atleast_3d(const Array& x);  // [n] -> [1, n, 1], [n, m] -> [n, m, 1]
Array hstack(const std::vector<Array>& xs);        // along axis 1 (axis 0 for 1-D)
Array vstack(const std::vector<Array>& xs);        // atleast_2d, along axis 0
Array dstack(const std::vector<Array>& xs);        // atleast_3d, along axis 2
Array column_stack(const std::vector<Array>& xs);  // 1-D arrays become columns
// Coordinate grids of 1-D arrays; "xy" (the default) swaps the first two output dims.
std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing = "xy");

// ------------------------------------------------------------------- differences and stats
// n-th discrete difference along axis (bool: not_equal).
Array diff(const Array& a, int64_t n = 1, int64_t axis = -1);
// Differences of the flattened array, with to_begin / to_end (cast, flattened) around them.
Array ediff1d(const Array& a, const std::optional<Array>& to_end = std::nullopt,
              const std::optional<Array>& to_begin = std::nullopt);
// max - min over axes (empty: all).
Array ptp(const Array& a, const Axes& axes = {}, bool keepdims = false);
// Weighted mean over axes (empty: all). Weights have a's shape, or (with axes) the shape of
// a's dims along axes. Integer inputs promote to the default float.
Array average(const Array& a, const Axes& axes = {},
              const std::optional<Array>& weights = std::nullopt, bool keepdims = false);
// Cross product of 2- or 3-vectors along axisa / axisb (broadcast), the result's vector dim
// at axisc (dropped when both are 2-vectors).
Array cross(const Array& a, const Array& b, int64_t axisa = -1, int64_t axisb = -1,
            int64_t axisc = -1);

// jnp.block's nested lists: an Array, or a list of BlockArgs (all items at the same depth;
// not named Block, the name user code gives its own layer structs).
class BlockArg {
 public:
  BlockArg(const Array& a) : item_(a) {}                                    // NOLINT
  BlockArg(std::initializer_list<BlockArg> items) : item_(std::vector<BlockArg>(items)) {}  // NOLINT
  explicit BlockArg(std::vector<BlockArg> items) : item_(std::move(items)) {}
  const std::variant<Array, std::vector<BlockArg>>& item() const { return item_; }

 private:
  std::variant<Array, std::vector<BlockArg>> item_;
};
// jnp.block: the innermost lists concatenate along the last axis, the next ones along the
// second last, ...; arrays are first promoted to the rank max(depth, their ranks).
Array block(const BlockArg& arrays);

}  // namespace graft
