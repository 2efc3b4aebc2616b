// jax.lax.gather and the lax.scatter family with dimension numbers. core/ops.h
// includes this header; the definitions are in core/lax/gather.cc.
//
// Names and semantics as JAX 0.10.2's lax: the index vector is the last dim of the indices;
// GatherScatterMode picks what out-of-bounds start indices do (kClip clamps them so the whole
// window is in bounds; kFillOrDrop fills a gathered window that is not wholly in bounds with
// fill_value (NaN for floats, the lowest signed / highest unsigned integer, true) and drops a
// scattered window that is not; kPromiseInBounds clamps a gather and drops a scatter, as XLA
// does). The defaults are JAX's: kPromiseInBounds for gather, kFillOrDrop for the scatters.
// Negative indices are out of bounds (no wrap, unlike jnp).
//
// Each op computes the flat operand position of every element it moves and runs one
// gather / scatter primitive over the flattened operand (core/primitives/index.h), so grad,
// vmap and jit follow those primitives' rules: gather's gradient is a scatter_add; scatter
// (set) keeps the last of duplicate updates (deterministically, on CPU and CUDA) and its
// gradient flows to that one; scatter_mul differentiates with duplicate indices too (JAX only
// with unique_indices); scatter_min / max split a tie's gradient as JAX's
// _scatter_extremal_jvp. indices_are_sorted / unique_indices are accepted and ignored (hints).
// Shape and dtype errors are graft::Error at trace time, starting "[gather]", "[scatter]",
// "[scatter_add]", "[scatter_sub]", "[scatter_mul]", "[scatter_min]", "[scatter_max]" or
// "[scatter_apply]".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/array.h"
#include "core/shape.h"

namespace graft {

// jax.lax.GatherScatterMode.
enum class GatherScatterMode { kClip, kFillOrDrop, kPromiseInBounds };

// jax.lax.GatherDimensionNumbers: offset_dims are the output dims of the window (in the
// operand's dim order); collapsed_slice_dims the operand dims dropped from the window (slice
// size 1); start_index_map the operand dim each entry of an index vector starts;
// operand_batching_dims / start_indices_batching_dims pair operand and indices dims that
// index each other (slice size 1).
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
};

// jax.lax.gather: out has the indices' batch dims (all but the last) and the window dims
// (slice_sizes without the collapsed and operand batching dims) at offset_dims.
Array gather(const Array& operand, const Array& start_indices,
             const GatherDimensionNumbers& dimension_numbers, const Shape& slice_sizes,
             bool indices_are_sorted = false, bool unique_indices = false,
             GatherScatterMode mode = GatherScatterMode::kPromiseInBounds,
             std::optional<double> fill_value = std::nullopt);

// jax.lax.ScatterDimensionNumbers: update_window_dims are the updates' dims of the window;
// inserted_window_dims the operand dims the window lacks (size 1); scatter_dims_to_operand_dims
// the operand dim each entry of an index vector starts; operand_batching_dims /
// scatter_indices_batching_dims pair operand and indices dims.
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  std::vector<int64_t> operand_batching_dims, scatter_indices_batching_dims;
};

// jax.lax.scatter (set; where windows overlap the last update wins), scatter_add,
// scatter_mul, scatter_min, scatter_max. updates has the operand's dtype.
Array scatter(const Array& operand, const Array& scatter_indices, const Array& updates,
              const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted = false,
              bool unique_indices = false,
              GatherScatterMode mode = GatherScatterMode::kFillOrDrop);
Array scatter_add(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  bool indices_are_sorted = false, bool unique_indices = false,
                  GatherScatterMode mode = GatherScatterMode::kFillOrDrop);
Array scatter_mul(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  bool indices_are_sorted = false, bool unique_indices = false,
                  GatherScatterMode mode = GatherScatterMode::kFillOrDrop);
Array scatter_min(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  bool indices_are_sorted = false, bool unique_indices = false,
                  GatherScatterMode mode = GatherScatterMode::kFillOrDrop);
Array scatter_max(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  bool indices_are_sorted = false, bool unique_indices = false,
                  GatherScatterMode mode = GatherScatterMode::kFillOrDrop);
// jax.lax.scatter_sub: scatter_add of the negated updates (unsigned values wrap, as in JAX).
Array scatter_sub(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted = false,
                  bool unique_indices = false,
                  GatherScatterMode mode = GatherScatterMode::kFillOrDrop);
// jax.lax.scatter_apply: func applied to every operand element a window of update_shape (the
// shape updates would have) lands on, once per window that lands there (so twice where two
// windows overlap, as XLA does). func must be elementwise (JAX traces it on a scalar); it gets
// and returns arrays of the operand's shape and dtype. With concrete indices (outside jit, or
// closed over) it is differentiable through func, where JAX's is not; with traced indices the
// repeats run in a while_loop, which reverse mode cannot differentiate.
Array scatter_apply(const Array& operand, const Array& scatter_indices,
                    const std::function<Array(const Array&)>& func,
                    const ScatterDimensionNumbers& dimension_numbers,
                    const Shape& update_shape = {}, bool indices_are_sorted = false,
                    bool unique_indices = false,
                    GatherScatterMode mode = GatherScatterMode::kFillOrDrop);

}  // namespace graft
