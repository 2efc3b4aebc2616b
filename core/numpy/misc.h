// Later jax.numpy functions: take with JAX's modes and axis=None, repeat with an
// array of repeats (and a static total_repeat_length), the one-argument where, block,
// histogram2d / histogramdd, polydiv, polyfit and frombuffer. Written after JAX 0.10.2's lax_numpy.py,
// indexing.py and polynomial.py over core/ops.h ops, so grad / vmap / jit work through them.
// Included at the end of core/ops.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

// jnp.take's modes: kFill (out-of-range -> fill_value, by default NaN for inexact, the
// dtype's min for signed ints, max for unsigned, true for bool; negative indices wrap once),
// kClip (clamped) and kWrap (indices mod the axis size). JAX 0.10.2's jnp.take has no other
// ("raise" is not implemented there; promise_in_bounds is only x.at[i].get's).
enum class TakeMode { kFill, kClip, kWrap };
// axis nullopt: x is raveled first (jnp.take's default).
Array take(const Array& x, const Array& indices, std::optional<int64_t> axis, TakeMode mode,
           std::optional<double> fill_value = std::nullopt);

// jnp.repeat with one repeat count per element along axis (a scalar or [1] array broadcasts).
// total_repeat_length is the static output length: extra positions repeat the last element,
// excess repeats are cut. Without it the repeats must be concrete (not under jit / vmap).
Array repeat(const Array& x, const Array& repeats, std::optional<int64_t> axis,
             std::optional<int64_t> total_repeat_length = std::nullopt);

// jnp.where(condition, size=, fill_value=): nonzero(condition, size, fill_value).
std::vector<Array> where(const Array& condition, int64_t size, int64_t fill_value = 0);

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

// Bins per dimension: a count (evenly spaced over the range) or a 1-D array of edges; one
// entry is used for every dimension.
using HistBins = std::vector<std::variant<int64_t, Array>>;
// jnp.histogramdd(sample [N, D], bins, range, weights [N], density): the counts
// [nbins_0, ..., nbins_{D-1}] (i32; weights' dtype when weighted; inexact with density) and
// the D edge arrays. range: one (min, max) per dimension (none: the sample's min and max).
std::pair<Array, std::vector<Array>> histogramdd(
    const Array& sample, const HistBins& bins = {int64_t{10}},
    const std::optional<std::vector<std::pair<double, double>>>& range = std::nullopt,
    const std::optional<Array>& weights = std::nullopt, bool density = false);
// jnp.histogram2d(x, y, ...) = histogramdd(stack([x, y], 1), ...): (counts, x_edges, y_edges).
std::tuple<Array, Array, Array> histogram2d(
    const Array& x, const Array& y, const HistBins& bins = {int64_t{10}},
    const std::optional<std::vector<std::pair<double, double>>>& range = std::nullopt,
    const std::optional<Array>& weights = std::nullopt, bool density = false);

// jnp.polydiv(u, v): (quotient, remainder) by long division (inexact; the remainder keeps
// u's length). trim_leading_zeros drops leading |r| < sqrt(eps) (eager only: data-dependent
// shape).
std::pair<Array, Array> polydiv(const Array& u, const Array& v, bool trim_leading_zeros = false);

// jnp.polyfit(x [n], y [n] or [n, k], deg, rcond, w): least-squares coefficients [deg+1]
// (or [deg+1, k]), highest power first, through jnp.linalg.lstsq on the column-scaled
// Vandermonde matrix. rcond defaults to n * eps.
Array polyfit(const Array& x, const Array& y, int64_t deg,
              std::optional<double> rcond = std::nullopt,
              const std::optional<Array>& w = std::nullopt);
// polyfit(..., full=True): the coefficients, the squared residuals, the rank, the singular
// values of the scaled Vandermonde matrix and rcond.
struct PolyfitFull {
  Array coef, residuals, rank, singular_values, rcond;
};
PolyfitFull polyfit_full(const Array& x, const Array& y, int64_t deg,
                         std::optional<double> rcond = std::nullopt,
                         const std::optional<Array>& w = std::nullopt);

// jnp.frombuffer(buffer, dtype, count=-1, offset=0): a 1-D array of `count` items (-1: all
// that follow offset) read from the bytes (little-endian, as on every host graft runs on).
// Errors when the bytes after offset are not a whole number of items or fewer than count.
// (jnp.save / jnp.load are in core/numpy/npy_io.h.)
Array frombuffer(std::string_view buffer, DType dtype = DType::kF32, int64_t count = -1,
                 int64_t offset = 0);

}  // namespace graft
