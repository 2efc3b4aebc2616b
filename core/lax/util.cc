#include "core/lax/util.h"

#include "core/error.h"
#include "core/primitives/elementwise.h"

namespace graft::detail {

Array convert(const Array& x, DType dtype, bool weak) {
  if (x.dtype() == dtype && x.weak_type() == weak) return x;
  return apply<ConvertElementType>({x}, dtype, weak);
}

TypeInfo result_type(const std::vector<Array>& xs) {
  TypeInfo t{xs[0].dtype(), xs[0].weak_type()};
  for (size_t i = 1; i < xs.size(); ++i) t = promote_types(t, {xs[i].dtype(), xs[i].weak_type()});
  return t;
}

Array broadcast_to_shape(std::string_view op, const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  Shape b = broadcast_shapes(op, x.shape(), shape);
  if (b != shape) {
    fail(op, "cannot broadcast ", shape_str(x.shape()), " to ", shape_str(shape));
  }
  std::vector<int> dims(x.ndim());
  int off = static_cast<int>(shape.size()) - x.ndim();
  for (int i = 0; i < x.ndim(); ++i) dims[i] = off + i;
  // Size-1 dims that stretch are dropped first so broadcast_in_dim maps dims one to one.
  std::vector<int> keep_dims;
  Shape kept;
  for (int i = 0; i < x.ndim(); ++i) {
    if (x.shape()[i] == shape[off + i]) {
      keep_dims.push_back(off + i);
      kept.push_back(x.shape()[i]);
    }
  }
  Array src = kept.size() == static_cast<size_t>(x.ndim()) ? x : reshape(x, kept);
  return broadcast_in_dim(src, shape, keep_dims);
}

std::vector<Array> promote_and_broadcast(std::string_view op, const std::vector<Array>& xs) {
  for (const Array& x : xs) check_valid(op, x);
  TypeInfo t{xs[0].dtype(), xs[0].weak_type()};
  for (size_t i = 1; i < xs.size(); ++i) {
    t = promote_types(t, {xs[i].dtype(), xs[i].weak_type()}, op);
  }
  Shape shape = xs[0].shape();
  for (size_t i = 1; i < xs.size(); ++i) shape = broadcast_shapes(op, shape, xs[i].shape());
  std::vector<Array> out;
  out.reserve(xs.size());
  for (const Array& x : xs)
    out.push_back(broadcast_to_shape(op, convert(x, t.dtype, t.weak), shape));
  return out;
}

std::vector<int> reduction_axes(std::string_view op, const Array& x, const Axes& axes) {
  if (axes.empty()) {
    std::vector<int> all(x.ndim());
    for (int i = 0; i < x.ndim(); ++i) all[i] = i;
    return all;
  }
  return normalize_axes(op, axes, x.ndim());
}

std::vector<Array> promote_dtypes(const std::vector<Array>& xs) {
  TypeInfo t = result_type(xs);
  std::vector<Array> out;
  for (const Array& x : xs) out.push_back(convert(x, t.dtype, t.weak));
  return out;
}

void refuse_complex(std::string_view op, const Array& x) {
  if (is_complex(x.dtype())) fail(op, "does not support complex values (got ", x.aval().str(), ")");
}

DType float_dtype_for(const Array& x) { return is_inexact(x.dtype()) ? x.dtype() : DType::kF32; }

Array add_any(const Array& a, const Array& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  if (is_float8(a.dtype())) {  // fp8 cotangents: the f32 sum (exact) rounded once, as XLA's
    return convert(add(convert(a, DType::kF32, false), convert(b, DType::kF32, false)), a.dtype(),
                   false);
  }
  return add(a, b);
}

Array inexact(const char* op, const Array& x, bool complex_ok) {
  check_valid(op, x);
  if (!complex_ok) refuse_complex(op, x);
  return is_inexact(x.dtype()) ? x : convert(x, DType::kF32, x.weak_type());
}

std::pair<Array, Array> inexact2(const char* op, const Array& a, const Array& b,
                                 bool complex_ok) {
  std::vector<Array> xs = promote_and_broadcast(op, {a, b});
  if (!complex_ok) refuse_complex(op, xs[0]);
  if (!is_inexact(xs[0].dtype())) {
    bool weak = xs[0].weak_type();
    xs[0] = convert(xs[0], DType::kF32, weak);
    xs[1] = convert(xs[1], DType::kF32, weak);
  }
  return {xs[0], xs[1]};
}

}  // namespace graft::detail
