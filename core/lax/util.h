// Helpers shared by the public-op files (not part of the public API).
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "core/array.h"
#include "core/lax/lax.h"

namespace graft::detail {

// Converts x to dtype (no node when it already has it); the result is strongly typed
// unless `weak`.
Array convert(const Array& x, DType dtype, bool weak = false);

// JAX promotion of the operands' types; weak iff all are weak.
TypeInfo result_type(const std::vector<Array>& xs);

// Promotes all operands to their common type and broadcasts them to a common shape
// (NumPy rules); errors name `op`.
std::vector<Array> promote_and_broadcast(std::string_view op, const std::vector<Array>& xs);

// Broadcasts x to `shape` (NumPy rules; no node when already that shape).
Array broadcast_to_shape(std::string_view op, const Array& x, const Shape& shape);

// "[op] does not support complex values" for a complex x: the ops JAX defines on real values
// only (and those without a complex case yet).
void refuse_complex(std::string_view op, const Array& x);

// Reduction axes: normalized and sorted; empty `axes` means all axes.
std::vector<int> reduction_axes(std::string_view op, const Array& x, const Axes& axes);

// a + b, where an empty (invalid) Array stands for zeros: accumulating tangents and
// cotangents, some of which are symbolically zero.
Array add_any(const Array& a, const Array& b);

// x with `updates` combined in at the flat `positions` by the scatter primitive `id` (scatter,
// scatter_mul / min / max; complex x: scatter only, through the parts). core/lax/indexing.cc.
Array scatter_combine(const Array& x, const Array& positions, const Array& updates, PrimitiveId id);

// The default inexact dtype for x: x's dtype if floating or complex, else f32 (weak if x is
// weak). Complex stays complex: a real dtype here would drop the imaginary part.
DType float_dtype_for(const Array& x);

// jnp's promote_dtypes: every operand converted to their common type (weak iff all are weak),
// shapes untouched.
std::vector<Array> promote_dtypes(const std::vector<Array>& xs);

// jnp's promote_args_inexact for one operand: integers and bool become the default float
// (f32), weak if x is weak. Complex operands are an error unless complex_ok.
Array inexact(const char* op, const Array& x, bool complex_ok = false);
// The same for two: the common type (then f32 if not inexact), broadcast.
std::pair<Array, Array> inexact2(const char* op, const Array& a, const Array& b,
                                 bool complex_ok = false);

}  // namespace graft::detail
