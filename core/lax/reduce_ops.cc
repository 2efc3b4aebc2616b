// Public reductions with jax.numpy semantics, over the lax-like primitives of
// core/primitives/reduce.h. Dtype rules follow jnp (with jax's default 32-bit ints):
// sum/prod promote bool, i8, i16 to i32 and u8, u16 to u32, cumsum bool to i32 (u8 stays u8),
// mean/var/logsumexp/softmax compute in a float type (f16/bf16 inputs are computed in f32 and
// rounded once), max/min keep the dtype, all/any reduce bool.
#include <algorithm>
#include <string_view>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/reduce.h"

namespace graft {

namespace {

using detail::check_valid;
using detail::convert;

// jnp's promote_integers: bool and narrow integers accumulate in the default int / uint
// (32-bit, JAX's default without x64; u64 and i64 stay).
DType sum_dtype(DType d) {
  switch (d) {
    case DType::kBool:
    case DType::kI8:
    case DType::kI16:
      return DType::kI32;
    case DType::kU8:
    case DType::kU16:
      return DType::kU32;
    default:
      return d;
  }
}

// Converts x only if its dtype differs (keeping a weak type when it does not).
Array to_dtype(const Array& x, DType d) { return x.dtype() == d ? x : convert(x, d); }

// f16/bf16 are computed in f32 (jnp's _upcast_f16).
DType compute_dtype(DType d) { return d == DType::kF16 || d == DType::kBF16 ? DType::kF32 : d; }

// The shape of x with the reduced axes set to 1.
Shape kept_shape(const Shape& s, const std::vector<int>& axes) {
  Shape k = s;
  for (int a : axes) k[a] = 1;
  return k;
}

int64_t count_of(const Shape& s, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= s[a];
  return n;
}

// Binds the reduction (nothing to do for no axes, i.e. a scalar) and applies keepdims.
Array reduce_keep(PrimitiveId id, const Array& x, const std::vector<int>& axes, bool keepdims) {
  if (axes.empty()) return x;
  Array r = reduce(id, x, axes);
  return keepdims ? reshape(r, kept_shape(x.shape(), axes)) : r;
}

Array reduce_public(std::string_view op, PrimitiveId id, const Array& x, const Axes& axes,
                    bool keepdims, DType dtype) {
  check_valid(op, x);
  std::vector<int> ax = detail::reduction_axes(op, x, axes);
  return reduce_keep(id, to_dtype(x, dtype), ax, keepdims);
}

Array max_min(std::string_view op, PrimitiveId id, const Array& x, const Axes& axes,
              bool keepdims) {
  check_valid(op, x);
  std::vector<int> ax = detail::reduction_axes(op, x, axes);
  for (int a : ax) {
    if (x.shape()[a] == 0) {
      fail(op, "zero-size array to reduction operation ", op, " which has no identity: shape ",
           shape_str(x.shape()), " along axis ", a);
    }
  }
  if (is_complex(x.dtype())) return detail::complex_reduce(id, x, ax, keepdims);
  return reduce_keep(id, x, ax, keepdims);
}

Array arg_public(std::string_view op, PrimitiveId id, const Array& x, std::optional<int64_t> axis,
                 bool keepdims) {
  check_valid(op, x);
  if (!axis) {
    if (x.size() == 0) fail(op, "attempt to get ", op, " of an empty sequence");
    Array r = arg_reduce(id, reshape(x, {x.size()}), 0);
    return keepdims ? reshape(r, Shape(x.ndim(), 1)) : r;
  }
  int a = normalize_axis(op, *axis, x.ndim());
  if (x.shape()[a] == 0) {
    fail(op, "attempt to get ", op, " of an empty sequence: shape ", shape_str(x.shape()),
         " along axis ", a);
  }
  Array r = arg_reduce(id, x, a);
  return keepdims ? reshape(r, kept_shape(x.shape(), {a})) : r;
}

// The max over `axes` (keeping dims) to shift by before exp. Unlike the public max, the
// primitive gives -inf for an empty slice, as jax's max(initial=-inf) does. Its gradient is
// stopped, as in jax.nn.logsumexp / softmax: the shift cancels out of the value, so its exact
// derivative is zero, and reverse mode then skips max's pass over x (the mask of the maxima).
Array stable_shift(const Array& xf, const std::vector<int>& axes) {
  return bind1(std::make_shared<const StopGradient>(),
               {reduce_keep(PrimitiveId::kReduceMax, xf, axes, /*keepdims=*/true)});
}

}  // namespace

Array sum(const Array& x, const Axes& axes, bool keepdims) {
  check_valid("sum", x);
  if (is_complex(x.dtype())) {  // the parts summed apart (reduce_sum takes real values)
    return complex(sum(real(x), axes, keepdims), sum(imag(x), axes, keepdims));
  }
  return reduce_public("sum", PrimitiveId::kReduceSum, x, axes, keepdims, sum_dtype(x.dtype()));
}

Array prod(const Array& x, const Axes& axes, bool keepdims) {
  check_valid("prod", x);
  if (is_complex(x.dtype())) {
    return detail::complex_reduce(PrimitiveId::kReduceProd, x,
                                  detail::reduction_axes("prod", x, axes), keepdims);
  }
  return reduce_public("prod", PrimitiveId::kReduceProd, x, axes, keepdims, sum_dtype(x.dtype()));
}

Array max(const Array& x, const Axes& axes, bool keepdims) {
  return max_min("max", PrimitiveId::kReduceMax, x, axes, keepdims);
}

Array min(const Array& x, const Axes& axes, bool keepdims) {
  return max_min("min", PrimitiveId::kReduceMin, x, axes, keepdims);
}

Array all(const Array& x, const Axes& axes, bool keepdims) {
  return reduce_public("all", PrimitiveId::kReduceAnd, x, axes, keepdims, DType::kBool);
}

Array any(const Array& x, const Axes& axes, bool keepdims) {
  return reduce_public("any", PrimitiveId::kReduceOr, x, axes, keepdims, DType::kBool);
}

Array mean(const Array& x, const Axes& axes, bool keepdims) {
  check_valid("mean", x);
  std::vector<int> ax = detail::reduction_axes("mean", x, axes);
  if (is_complex(x.dtype())) {
    return sum(x, Axes(ax.begin(), ax.end()), keepdims) /
           scalar(static_cast<double>(count_of(x.shape(), ax)), complex_part_dtype(x.dtype()));
  }
  const DType out = detail::float_dtype_for(x), comp = compute_dtype(out);
  Array s = reduce_keep(PrimitiveId::kReduceSum, to_dtype(x, comp), ax, keepdims);
  return to_dtype(s / scalar(static_cast<double>(count_of(x.shape(), ax)), comp), out);
}

Array var(const Array& x, const Axes& axes, bool keepdims, int64_t ddof) {
  check_valid("var", x);
  std::vector<int> ax = detail::reduction_axes("var", x, axes);
  const int64_t n = count_of(x.shape(), ax);
  if (is_complex(x.dtype())) {  // real, as jnp.var: the mean of |x - mean|^2
    const Axes a(ax.begin(), ax.end());
    Array c = x - mean(x, a, /*keepdims=*/true);
    Array s = sum(square(real(c)) + square(imag(c)), a, keepdims);
    return s / scalar(static_cast<double>(n - ddof), s.dtype());
  }
  const DType out = detail::float_dtype_for(x), comp = compute_dtype(out);
  Array xc = to_dtype(x, comp);
  Array m = reduce_keep(PrimitiveId::kReduceSum, xc, ax, /*keepdims=*/true) /
            scalar(static_cast<double>(n), comp);
  Array s = reduce_keep(PrimitiveId::kReduceSum, square(xc - m), ax, keepdims);
  return to_dtype(s / scalar(static_cast<double>(n - ddof), comp), out);
}

Array logsumexp(const Array& x, const Axes& axes, bool keepdims) {
  check_valid("logsumexp", x);
  std::vector<int> ax = detail::reduction_axes("logsumexp", x, axes);
  Array xf = to_dtype(x, detail::float_dtype_for(x));
  // Shift by the max where it is finite (an all -inf or empty slice shifts by 0, so it
  // gives log(0) = -inf rather than NaN), like jax.nn.logsumexp; complex values by the max of
  // their real parts, summed through the parts and taken the complex log of, as JAX.
  const bool cplx = is_complex(xf.dtype());
  Array m = stable_shift(cplx ? real(xf) : xf, ax);
  m = where(isfinite(m), m, zeros_like(m));
  Array s = cplx ? sum(exp(xf - m), Axes(ax.begin(), ax.end()), /*keepdims=*/true)
                 : reduce_keep(PrimitiveId::kReduceSum, exp(xf - m), ax, /*keepdims=*/true);
  Array r = log(s) + m;
  if (keepdims || ax.empty()) return r;
  Shape out;
  for (int i = 0; i < x.ndim(); ++i) {
    if (!std::binary_search(ax.begin(), ax.end(), i)) out.push_back(x.shape()[i]);
  }
  return reshape(r, out);
}

Array softmax(const Array& x, int64_t axis) {
  check_valid("softmax", x);
  std::vector<int> ax{normalize_axis("softmax", axis, x.ndim())};
  Array xf = to_dtype(x, detail::float_dtype_for(x));
  Array e = exp(xf - stable_shift(xf, ax));
  return e / reduce_keep(PrimitiveId::kReduceSum, e, ax, /*keepdims=*/true);
}

Array log_softmax(const Array& x, int64_t axis) {
  check_valid("log_softmax", x);
  std::vector<int> ax{normalize_axis("log_softmax", axis, x.ndim())};
  Array xf = to_dtype(x, detail::float_dtype_for(x));
  Array shifted = xf - stable_shift(xf, ax);
  return shifted - log(reduce_keep(PrimitiveId::kReduceSum, exp(shifted), ax, true));
}

Array argmax(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_public("argmax", PrimitiveId::kArgmax, x, axis, keepdims);
}

Array argmin(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_public("argmin", PrimitiveId::kArgmin, x, axis, keepdims);
}

Array cumsum(const Array& x, std::optional<int64_t> axis, bool reverse) {
  check_valid("cumsum", x);
  if (is_complex(x.dtype())) {
    return detail::through_parts(x, [&](const Array& p) { return cumsum(p, axis, reverse); });
  }
  // jnp.cumsum promotes only bool (to the default int); u8 stays u8 and wraps, unlike sum.
  Array y = to_dtype(x, x.dtype() == DType::kBool ? DType::kI32 : x.dtype());
  int a = 0;
  if (axis) {
    a = normalize_axis("cumsum", *axis, x.ndim());
  } else {
    y = reshape(y, {x.size()});
  }
  return cumsum_along(y, a, reverse);
}

}  // namespace graft
