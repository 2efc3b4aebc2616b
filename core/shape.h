// Shapes are dimension vectors (row-major, no strides: every buffer is dense).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graft {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);            // product of dims (1 for a scalar)
std::string shape_str(const Shape& s);    // "(2, 3)", "()"
Shape row_major_strides(const Shape& s);  // in elements

// NumPy broadcasting of two shapes; throws graft::Error("[op] ...") when incompatible.
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);

// Normalizes a possibly negative axis against `ndim`; throws "[op] axis ... out of range".
int normalize_axis(std::string_view op, int64_t axis, int ndim);
// Normalizes and sorts a list of axes, rejecting duplicates.
std::vector<int> normalize_axes(std::string_view op, const std::vector<int64_t>& axes, int ndim);

}  // namespace graft
