// jax.numpy searching and counting: searchsorted, digitize, bincount, isin,
// nonzero / flatnonzero / argwhere / the one-argument where with JAX's static size= (so
// they trace), lexsort and histograms (1-D, 2-D, N-D). Compositions of core/ops.h ops written after
// JAX 0.10.2's lax_numpy.py; misuse throws graft::Error starting with the op. Included at the end
// of core/ops.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

// Insertion indices (i32, v's shape) into the sorted 1-D `a` keeping it sorted: side "left"
// counts the elements < v, "right" those <= v, with NaN ordered last (as lax.sort).
Array searchsorted(const Array& a, const Array& v, const std::string& side = "left");
// The bin of each x among monotonic 1-D bins (i32), as numpy.digitize (right: bins include
// their right edge).
Array digitize(const Array& x, const Array& bins, bool right = false);
// Counts (or summed weights) of each value 0 .. length-1 of the 1-D integer x; negative
// values count as 0 and values >= length are dropped (JAX's static length=).
Array bincount(const Array& x, int64_t length,
               const std::optional<Array>& weights = std::nullopt);
// Whether each element of `element` occurs in test_elements (bool, element's shape).
Array isin(const Array& element, const Array& test_elements, bool invert = false);

// The indices (i32, one array per dim) of the first `size` nonzero elements in row-major
// order, padded with fill_value when fewer (JAX's static size= and fill_value).
std::vector<Array> nonzero(const Array& a, int64_t size, int64_t fill_value = 0);
Array flatnonzero(const Array& a, int64_t size, int64_t fill_value = 0);  // of ravel(a)
// nonzero stacked as [size, ndim] (a scalar counts as 1-D).
Array argwhere(const Array& a, int64_t size, int64_t fill_value = 0);

// The permutation (i32) sorting by the keys along axis, the last key primary (stable).
Array lexsort(const std::vector<Array>& keys, int64_t axis = -1);

// bins + 1 evenly spaced edges over range (default: a's min and max; a zero-width range
// widens by 0.5 each side). Inexact.
Array histogram_bin_edges(const Array& a, int64_t bins = 10,
                          std::optional<std::pair<double, double>> range = std::nullopt);
// (counts, bin_edges): counts of ravel(a) per bin (the last bin includes its right edge;
// values outside the range are dropped), weighted by `weights`, or a density.
std::pair<Array, Array> histogram(const Array& a, int64_t bins = 10,
                                  std::optional<std::pair<double, double>> range = std::nullopt,
                                  const std::optional<Array>& weights = std::nullopt,
                                  bool density = false);

// jnp.where(condition, size=, fill_value=), the one-argument form: nonzero(condition, size,
// fill_value). Its size travels in a struct, `where(c, NonzeroSize{.size = 6})`, so that a
// three-argument call with literals, `where(c, 1, 2.5)`, can only be the select (lax.h).
struct NonzeroSize {
  int64_t size;
  int64_t fill_value = 0;
};
std::vector<Array> where(const Array& condition, NonzeroSize size);

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

}  // namespace graft
