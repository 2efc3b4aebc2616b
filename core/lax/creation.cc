// Creation ops: constants computed on the host, held by leaf nodes.
#include <cmath>

#include "core/dtype/convert.h"
#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"

namespace graft {

namespace {

// A leaf of `dtype` whose element i is value(i) (computed in double, converted like astype).
// The shape is checked first, so an overflowing one is an error naming `op` (not a
// wrapped-around size).
template <typename F>
Array host_array(std::string_view op, const Shape& shape, DType dtype, F value) {
  check_shape(op, shape, dtype);
  const int64_t n = numel(shape);
  const auto bytes = static_cast<size_t>(n * dtype_size(dtype));
  std::shared_ptr<Buffer> buf;
  try {
    buf = Buffer::make(bytes);
  } catch (const AllocError&) {  // name the op (the string only on failure)
    throw AllocError(bytes, str_cat(op, " ", Aval{shape, dtype}.str()));
  }
  if (is_complex(dtype)) {  // (value, 0)
    dispatch_complex(dtype, [&]<typename C>() {
      C* out = buf->as<C>();
      for (int64_t i = 0; i < n; ++i) out[i] = C(static_cast<typename C::value_type>(value(i)));
    });
  } else {
    dispatch_real_or_float8(dtype, [&]<typename T>() {
      T* out = buf->as<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = convert_value<double, T>(value(i));
    });
  }
  return Array::from_buffer(std::move(buf), shape, dtype);
}

// arange's length, checked as a double first: converting one beyond int64 is undefined.
int64_t arange_count(double start, double stop, double step) {
  double count = std::ceil((stop - start) / step);
  if (!(count < 0x1p63)) {
    fail("arange", "range (", start, ", ", stop, ", ", step,
         ") has more elements than int64 holds");
  }
  return std::max<int64_t>(0, static_cast<int64_t>(count));
}

}  // namespace

template <typename T>
Array array(const std::vector<T>& data, std::optional<Shape> shape) {
  Shape s = shape ? *shape : Shape{static_cast<int64_t>(data.size())};
  check_shape("array", s, dtype_of<T>::value);
  if (numel(s) != static_cast<int64_t>(data.size())) {
    fail("array", "got ", data.size(), " values for shape ", shape_str(s));
  }
  auto buf = Buffer::make(data.size() * sizeof(T));
  T* dst = static_cast<T*>(buf->data());
  for (size_t i = 0; i < data.size(); ++i) dst[i] = data[i];
  return Array::from_buffer(std::move(buf), std::move(s), dtype_of<T>::value);
}

template Array array<bool>(const std::vector<bool>&, std::optional<Shape>);
template Array array<uint8_t>(const std::vector<uint8_t>&, std::optional<Shape>);
template Array array<uint16_t>(const std::vector<uint16_t>&, std::optional<Shape>);
template Array array<uint64_t>(const std::vector<uint64_t>&, std::optional<Shape>);
template Array array<int8_t>(const std::vector<int8_t>&, std::optional<Shape>);
template Array array<int16_t>(const std::vector<int16_t>&, std::optional<Shape>);
template Array array<uint32_t>(const std::vector<uint32_t>&, std::optional<Shape>);
template Array array<int32_t>(const std::vector<int32_t>&, std::optional<Shape>);
template Array array<int64_t>(const std::vector<int64_t>&, std::optional<Shape>);
template Array array<f16>(const std::vector<f16>&, std::optional<Shape>);
template Array array<bf16>(const std::vector<bf16>&, std::optional<Shape>);
template Array array<float>(const std::vector<float>&, std::optional<Shape>);
template Array array<double>(const std::vector<double>&, std::optional<Shape>);
template Array array<std::complex<float>>(const std::vector<std::complex<float>>&,
                                          std::optional<Shape>);
template Array array<std::complex<double>>(const std::vector<std::complex<double>>&,
                                           std::optional<Shape>);

namespace {
Array full_named(std::string_view op, const Shape& shape, double value, DType dtype) {
  return host_array(op, shape, dtype, [&](int64_t) { return value; });
}
}  // namespace

Array scalar(double value, DType dtype) { return full_named("scalar", {}, value, dtype); }

Array full(const Shape& shape, double value, DType dtype) {
  return full_named("full", shape, value, dtype);
}
Array zeros(const Shape& shape, DType dtype) { return full_named("zeros", shape, 0.0, dtype); }
Array ones(const Shape& shape, DType dtype) { return full_named("ones", shape, 1.0, dtype); }
Array zeros_like(const Array& x) {
  detail::check_valid("zeros_like", x);
  return full(x.shape(), 0.0, x.dtype());
}
Array ones_like(const Array& x) {
  detail::check_valid("ones_like", x);
  return full(x.shape(), 1.0, x.dtype());
}
Array full_like(const Array& x, double value) {
  detail::check_valid("full_like", x);
  return full(x.shape(), value, x.dtype());
}

// As jnp.arange computes it: start + step * i in the working type (f32 for f16 / bf16 / f32,
// f64 for f64, the dtype itself for integers, so a fractional step truncates as jnp's does),
// the product rounded before the sum (no fma, as XLA does), then converted to the dtype.
Array detail::arange(double start, double stop, double step, DType d) {
  if (step == 0) fail("arange", "step must not be zero");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
    fail("arange", "needs finite start, stop and step");
  }
  int64_t n = arange_count(start, stop, step);
  if (d == DType::kF64) {
    return host_array("arange", {n}, d, [&](int64_t i) {
      volatile double p = step * static_cast<double>(i);  // volatile: no contraction to fma
      return start + p;
    });
  }
  if (is_floating(d)) {
    const float s0 = static_cast<float>(start), st = static_cast<float>(step);
    return host_array("arange", {n}, d, [&](int64_t i) {
      volatile float p = st * static_cast<float>(i);
      return static_cast<double>(s0 + p);
    });
  }
  const int64_t s0 = convert_value<double, int64_t>(start);
  const int64_t st = convert_value<double, int64_t>(step);
  return host_array("arange", {n}, d, [&](int64_t i) { return static_cast<double>(s0 + st * i); });
}

Array linspace(double start, double stop, int64_t num, bool endpoint, DType dtype) {
  if (num < 0) fail("linspace", "num must be non-negative, got ", num);
  int64_t div = endpoint ? num - 1 : num;
  double step = div > 0 ? (stop - start) / static_cast<double>(div) : 0.0;
  return host_array("linspace", {num}, dtype, [&](int64_t i) {
    if (endpoint && num > 1 && i == num - 1) return stop;
    return start + static_cast<double>(i) * step;
  });
}

Array eye(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype) {
  int64_t cols = m.value_or(n);
  return host_array("eye", {n, cols}, dtype,
                    [&](int64_t i) { return i % cols - i / cols == k ? 1.0 : 0.0; });
}

}  // namespace graft
