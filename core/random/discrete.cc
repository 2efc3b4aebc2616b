// Discrete samplers of jax.random built on the basic draws: rademacher, geometric, choice;
// and key_data / wrap_key_data (graft keys are raw u32 data, as JAX's legacy keys).
#include <algorithm>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "core/random/internal.h"

namespace graft::random {

using namespace internal;  // NOLINT: the family's own helpers

Array rademacher(const Array& key, const Shape& shape, DType dtype) {
  check_key("rademacher", key);
  check_shape("rademacher", shape);
  if (dtype == DType::kBool) fail("rademacher", "dtype must be numeric, got bool");
  Array b = astype(bernoulli(key, 0.5, shape), dtype);
  return astype(scalar(2, dtype) * b - scalar(1, dtype), dtype);
}

Array geometric(const Array& key, const Array& p, OptShape shape, DType dtype) {
  check_key("geometric", key);
  if (!is_integral(dtype)) fail("geometric", "dtype must be an integer type, got ", dtype_name(dtype));
  Shape s = param_shape("geometric", shape, {&p});
  // JAX promotes p to inexact (a C++ double is a weak f32) and draws u in that dtype.
  DType fd = is_floating(p.dtype()) && !(p.aval().weak) ? p.dtype() : DType::kF32;
  Array pp = astype(p, fd);
  Array u = unit_float(key, s, fd);
  u = where(u == scalar(0, fd), scalar(1, fd), u);  // JAX maps u = 0 to 1
  Array g = floor(log(u) / broadcast_to(log1p(-pp), s)) + scalar(1, fd);
  return astype(g, dtype);
}

namespace {

// JAX's choice on indices 0..n-1: `shape` draws, as i32.
Array choice_indices(const Array& key, int64_t n, const Shape& shape, bool replace,
                     const std::optional<Array>& p) {
  int64_t draws = numel(shape);
  if (n <= 0) fail("choice", "a must be greater than 0 unless no samples are taken");
  if (!replace && draws > n) {
    fail("choice", "cannot take a larger sample (size ", draws, ") than population (size ", n,
         ") when replace=false");
  }
  if (!p) {
    if (replace) return randint(key, shape, 0, n);
    return reshape(slice(permutation(key, n), {0}, {draws}), shape);
  }
  if (!p->valid()) fail("choice", "got an empty Array handle as p");
  if (p->shape() != Shape{n}) {
    fail("choice", "p must be a 1-D vector as long as the population (", n, "), got ",
         p->aval().str());
  }
  DType fd = is_floating(p->dtype()) ? p->dtype() : DType::kF32;
  Array pa = astype(*p, fd);
  if (replace) {
    Array cuml = cumsum(pa);
    Array total = reshape(slice(cuml, {n - 1}, {n}), {});
    Array r = total * (scalar(1, fd) - unit_float(key, shape, fd));
    // searchsorted(cuml, r) (side left): how many cumulative sums lie below r.
    Array below = cuml < expand_dims(r, {static_cast<int64_t>(shape.size())});
    return sum(astype(below, DType::kI32), {-1});
  }
  // The Gumbel top-k trick: the `draws` largest of gumbel + log p, largest first, ties to
  // the lower index (lax.top_k), which a stable ascending sort of the negation gives.
  Array g = gumbel(key, {n}, fd) + log(pa);
  Array order = argsort(-g);
  return reshape(slice(order, {0}, {draws}), shape);
}

}  // namespace

Array choice(const Array& key, int64_t n, const Shape& shape, bool replace,
             const std::optional<Array>& p) {
  check_key("choice", key);
  check_shape("choice", shape);
  if (numel(shape) == 0) return zeros(shape, DType::kI32);
  return choice_indices(key, n, shape, replace, p);
}

Array choice(const Array& key, const Array& x, const Shape& shape, bool replace,
             const std::optional<Array>& p, int64_t axis) {
  check_key("choice", key);
  check_shape("choice", shape);
  if (!x.valid()) fail("choice", "got an empty Array handle as x");
  if (x.ndim() == 0) fail("choice", "x must have at least one dimension (for a range, call choice(key, n))");
  int ax = normalize_axis("choice", axis, x.ndim());
  Shape out = x.shape();
  out.erase(out.begin() + ax);
  out.insert(out.begin() + ax, shape.begin(), shape.end());
  if (numel(shape) == 0) return zeros(out, x.dtype());
  Array ind;
  if (!p && !replace) {
    // JAX permutes x itself along the axis (same key use as permuting arange(n)).
    Array perm = permutation(key, x, ax);
    ind = arange(numel(shape));
    return reshape(take(perm, ind, ax), out);
  }
  ind = choice_indices(key, x.shape()[ax], shape, replace, p);
  return reshape(take(x, reshape(ind, {numel(shape)}), ax), out);
}

namespace {

// Raw keys: u32 arrays of shape (..., 2).
const Array& checked_key_data(std::string_view op, const Array& keys) {
  if (!keys.valid() || keys.dtype() != DType::kU32 || keys.ndim() < 1 ||
      keys.shape().back() != 2) {
    fail(op, "key data must be a u32 array of shape (..., 2), got ",
         keys.valid() ? keys.aval().str() : std::string("an empty handle"));
  }
  return keys;
}

}  // namespace

Array key_data(const Array& keys) { return checked_key_data("key_data", keys); }

Array wrap_key_data(const Array& key_bits) { return checked_key_data("wrap_key_data", key_bits); }

}  // namespace graft::random
