// jax.numpy set operations: unique and its array-API forms (unique_all,
// unique_counts, unique_inverse, unique_values), intersect1d, union1d, setdiff1d, setxor1d.
// Compositions of core/ops.h ops (argsort / lexsort, cumsum, nonzero, take, scatter) written
// after JAX 0.10.2's setops.py. Included at the end of core/ops.h.
//
// Output shapes depend on the values, so, as in JAX, each takes a static `size`: the result
// has exactly `size` entries, cut or padded with fill_value (by default with the smallest
// value found, as JAX does), and then traces under jit / vmap. Without size the count is
// read from the input (it evaluates), as JAX's concrete path: inside jit that is
// graft::Error "[unique] ... pass size=". Sorting orders floats as jnp.sort does (NaN last).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

// jnp.unique's keyword arguments. axis: unique slices along it (lexicographic order);
// none: of the flattened array. equal_nan: NaNs count as one value.
struct UniqueOptions {
  bool return_index = false;    // the first index of each unique value in ar (along axis)
  bool return_inverse = false;  // ar's indices into the unique values (ar's shape if no axis)
  bool return_counts = false;   // how often each unique value occurs (0 in the padding)
  std::optional<int64_t> axis;
  bool equal_nan = true;
  std::optional<int64_t> size;
  std::optional<double> fill_value;
};
// The sorted unique values.
Array unique(const Array& ar, std::optional<int64_t> size = std::nullopt,
             std::optional<double> fill_value = std::nullopt);
// The values, then the requested extras in JAX's order: index, inverse, counts (i32).
std::vector<Array> unique(const Array& ar, const UniqueOptions& options);

// The array-API forms: as unique with equal_nan false (every NaN is its own value).
struct UniqueAllResult {
  Array values, indices, inverse_indices, counts;
};
struct UniqueCountsResult {
  Array values, counts;
};
struct UniqueInverseResult {
  Array values, inverse_indices;
};
UniqueAllResult unique_all(const Array& x, std::optional<int64_t> size = std::nullopt,
                           std::optional<double> fill_value = std::nullopt);
UniqueCountsResult unique_counts(const Array& x, std::optional<int64_t> size = std::nullopt,
                                 std::optional<double> fill_value = std::nullopt);
UniqueInverseResult unique_inverse(const Array& x, std::optional<int64_t> size = std::nullopt,
                                   std::optional<double> fill_value = std::nullopt);
Array unique_values(const Array& x, std::optional<int64_t> size = std::nullopt,
                    std::optional<double> fill_value = std::nullopt);

// The sorted values in both (flattened, dtypes promoted) arrays. assume_unique: each input
// holds no repeats (skips their unique()).
Array intersect1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
                  std::optional<int64_t> size = std::nullopt,
                  std::optional<double> fill_value = std::nullopt);
// intersect1d(..., return_indices=True): also the index of each value in ar1 and in ar2
// (the first occurrence; padding entries give ar1.size / ar2.size).
struct Intersect1dResult {
  Array values, ar1_indices, ar2_indices;
};
Intersect1dResult intersect1d_with_indices(const Array& ar1, const Array& ar2,
                                           bool assume_unique = false,
                                           std::optional<int64_t> size = std::nullopt,
                                           std::optional<double> fill_value = std::nullopt);
// The sorted values in either.
Array union1d(const Array& ar1, const Array& ar2, std::optional<int64_t> size = std::nullopt,
              std::optional<double> fill_value = std::nullopt);
// The sorted unique values of ar1 not in ar2 (ar1's dtype; fill_value defaults to 0 here).
Array setdiff1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
                std::optional<int64_t> size = std::nullopt,
                std::optional<double> fill_value = std::nullopt);
// The sorted values in exactly one of them.
Array setxor1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
               std::optional<int64_t> size = std::nullopt,
               std::optional<double> fill_value = std::nullopt);

namespace detail {
// How many elements of the bool mask are true, read now (the no-size path of the ops above
// and of compress): graft::Error "[op] ..." when the mask is traced.
int64_t concrete_count(const char* op, const Array& mask);
// x[mask] along axis 0 for a concrete 1-D mask (boolean indexing, evaluated count).
Array boolean_select(const char* op, const Array& x, const Array& mask);
}  // namespace detail

}  // namespace graft
