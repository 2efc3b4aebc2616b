// jax.numpy array construction: index helpers (tril / triu / diag indices,
// indices), geomspace / logspace / vander, empty, diagflat, frombuffer and the window
// functions.
// Written after JAX 0.10.2's lax_numpy.py, array_creation.py and window_functions.py; index
// arrays are i32 (JAX's default int with x64 off). Included at the end of core/ops.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

// (rows, cols) of the elements of an n x m (m defaults to n) matrix on or below (tril) / on
// or above (triu) the k-th diagonal, row-major; the _from forms take the last two dims of arr.
std::pair<Array, Array> tril_indices(int64_t n, int64_t k = 0,
                                     std::optional<int64_t> m = std::nullopt);
std::pair<Array, Array> triu_indices(int64_t n, int64_t k = 0,
                                     std::optional<int64_t> m = std::nullopt);
std::pair<Array, Array> tril_indices_from(const Array& arr, int64_t k = 0);
std::pair<Array, Array> triu_indices_from(const Array& arr, int64_t k = 0);
// ndim copies of arange(n): the main diagonal of an n x ... x n array.
std::vector<Array> diag_indices(int64_t n, int64_t ndim = 2);
std::vector<Array> diag_indices_from(const Array& arr);  // all dims equal, rank >= 2
// The grid of indices: shape [len(dimensions), dimensions...], out[i] varying along dim i.
Array indices(const Shape& dimensions, DType dtype = DType::kI32);

// base ** linspace(start, stop, num) (f32).
Array logspace(double start, double stop, int64_t num = 50, bool endpoint = true,
               double base = 10.0);
// Geometric progression from start to stop (same sign, nonzero), as sign * logspace(log10..).
Array geomspace(double start, double stop, int64_t num = 50, bool endpoint = true);
// Columns are powers of the 1-D x: x^(N-1) ... x^0 (increasing: x^0 ... x^(N-1)); N defaults
// to len(x).
Array vander(const Array& x, std::optional<int64_t> N = std::nullopt, bool increasing = false);

// jnp.empty / empty_like: XLA has no uninitialized arrays, so zeros.
Array empty(const Shape& shape, DType dtype = DType::kF32);
Array empty_like(const Array& x);
// The 2-D array with ravel(v) on the k-th diagonal.
Array diagflat(const Array& v, int64_t k = 0);

// Window functions of length M (f32; ones for M <= 1).
Array bartlett(int64_t M);
Array blackman(int64_t M);
Array hamming(int64_t M);
Array hanning(int64_t M);

// jnp.frombuffer(buffer, dtype, count=-1, offset=0): a 1-D array of `count` items (-1: all
// that follow offset) read from the bytes (little-endian, as on every host graft runs on).
// Errors when the bytes after offset are not a whole number of items or fewer than count.
// (jnp.save / jnp.load are in core/numpy/npy_io.h.)
Array frombuffer(std::string_view buffer, DType dtype = DType::kF32, int64_t count = -1,
                 int64_t offset = 0);

}  // namespace graft
