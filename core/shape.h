// Shapes are dimension vectors (row-major, no strides: every buffer is dense).
//
// Every Array's shape passes check_shape: dims are >= 0 and the element count times the
// dtype's size fits in int64 (checked where an Array is made: at bind for every primitive's
// outputs, and for leaves), so numel, strides and byte sizes of an Array never overflow.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype/dtype.h"

namespace graft {

using Shape = std::vector<int64_t>;

// Product of dims (1 for a scalar). Throws graft::Error("[numel] ...") when it overflows
// int64 (only for a shape no Array has: those were checked).
int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);    // "(2, 3)", "()"
Shape row_major_strides(const Shape& s);  // in elements

// Throws graft::Error("[op] ...") for a negative dim, or when the element count does not fit
// in int64; with a dtype, also when the byte size does not. Both count the product of the
// nonzero dims, as NumPy does: (0, 2^62, 2^62) is rejected too.
void check_shape(std::string_view op, const Shape& s);
void check_shape(std::string_view op, const Shape& s, DType dtype);

// a * b and a + b for dims and sizes; throw "[op] ..." naming `what` on int64 overflow.
int64_t checked_mul(std::string_view op, int64_t a, int64_t b, std::string_view what = "size");
int64_t checked_add(std::string_view op, int64_t a, int64_t b, std::string_view what = "size");

// NumPy broadcasting of two shapes; throws graft::Error("[op] ...") when incompatible (or
// when the result has more elements than int64 holds).
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);

// Normalizes a possibly negative axis against `ndim`; throws "[op] axis ... out of range".
int normalize_axis(std::string_view op, int64_t axis, int ndim);
// Normalizes and sorts a list of axes, rejecting duplicates.
std::vector<int> normalize_axes(std::string_view op, const std::vector<int64_t>& axes, int ndim);

}  // namespace graft
