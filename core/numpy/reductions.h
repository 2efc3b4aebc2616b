// jax.numpy statistics: std, the NaN-ignoring reductions, count_nonzero, quantile /
// percentile / median (and their nan* forms), cov and corrcoef. Compositions of core/ops.h
// ops written after JAX 0.10.2's reductions.py, so grad / vmap / jit work through them.
// Integer and bool inputs promote to the default float (f32) where JAX's do. Misuse throws
// graft::Error starting with the op: "[quantile] ...". Included at the end of core/ops.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/lax/lax.h"

namespace graft {

// sqrt(var(x, ddof)), x promoted to inexact.
Array std(const Array& x, const Axes& axes = {}, bool keepdims = false, int64_t ddof = 0);

// ---- NaN-ignoring reductions (integers and bool: as the plain reduction) ----
Array nansum(const Array& x, const Axes& axes = {}, bool keepdims = false);   // NaN -> 0
Array nanprod(const Array& x, const Axes& axes = {}, bool keepdims = false);  // NaN -> 1
// NaN only where every element of the slice is NaN.
Array nanmax(const Array& x, const Axes& axes = {}, bool keepdims = false);
Array nanmin(const Array& x, const Axes& axes = {}, bool keepdims = false);
// sum of the non-NaN / their count (NaN for an all-NaN slice); inexact.
Array nanmean(const Array& x, const Axes& axes = {}, bool keepdims = false);
// Over the non-NaN elements; NaN where their count minus ddof is <= 0.
Array nanvar(const Array& x, const Axes& axes = {}, bool keepdims = false, int64_t ddof = 0);
Array nanstd(const Array& x, const Axes& axes = {}, bool keepdims = false, int64_t ddof = 0);
// argmax / argmin ignoring NaN (i32); -1 for an all-NaN slice.
Array nanargmax(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Array nanargmin(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);

// The number of nonzero (true) elements, i32.
Array count_nonzero(const Array& x, const Axes& axes = {}, bool keepdims = false);

// ---- order statistics ----
// q: a scalar or 1-D array of quantiles in [0, 1] (percentile: in [0, 100]); the result's
// shape is q's shape followed by the reduced shape. axis: one axis, or none (flattened).
// method: "linear" (default), "lower", "higher", "midpoint", "nearest" (as JAX: the lower
// value when the fraction is <= 0.5). Any NaN in a slice makes that slice's result NaN; the
// nan* forms ignore NaNs instead (NaN for an all-NaN slice). Values promote to inexact.
Array quantile(const Array& a, const Array& q, std::optional<int64_t> axis = std::nullopt,
               const std::string& method = "linear", bool keepdims = false);
Array nanquantile(const Array& a, const Array& q, std::optional<int64_t> axis = std::nullopt,
                  const std::string& method = "linear", bool keepdims = false);
Array percentile(const Array& a, const Array& q, std::optional<int64_t> axis = std::nullopt,
                 const std::string& method = "linear", bool keepdims = false);
Array nanpercentile(const Array& a, const Array& q, std::optional<int64_t> axis = std::nullopt,
                    const std::string& method = "linear", bool keepdims = false);
// quantile(a, 0.5, method="midpoint"), as jnp.median.
Array median(const Array& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Array nanmedian(const Array& a, std::optional<int64_t> axis = std::nullopt,
                bool keepdims = false);

// ---- covariance ----
// Rows are variables (rowvar) or columns are; y adds more variables. ddof defaults to 1
// (0 with bias). Scalar for one variable. Inexact.
Array cov(const Array& m, const std::optional<Array>& y = std::nullopt, bool rowvar = true,
          bool bias = false, std::optional<int64_t> ddof = std::nullopt);
// cov normalized by the standard deviations, clipped to [-1, 1].
Array corrcoef(const Array& x, const std::optional<Array>& y = std::nullopt, bool rowvar = true);

}  // namespace graft
