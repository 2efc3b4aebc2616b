// Shape / dtype rules and transform rules of real, imag, complex and conj (see complex.h).
#include "core/primitives/complex.h"

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

namespace {

const Aval& one_complex(std::string_view op, const std::vector<Aval>& in) {
  if (in.size() != 1) fail(op, "takes 1 operand, got ", in.size());
  if (!is_complex(in[0].dtype))
    fail(op, "needs a complex operand (c64 or c128), got ", in[0].str());
  return in[0];
}

template <typename P>
Batched batch_front(const std::vector<Array>& args, const std::vector<int>& dims) {
  const int64_t b = shape_rules::batch_size(args, dims);
  std::vector<Array> front;
  for (size_t i = 0; i < args.size(); ++i) {
    front.push_back(shape_rules::batch_to_front(args[i], dims[i], b));
  }
  return {graft::bind(std::make_shared<const P>(), front), {0}};
}

}  // namespace

std::vector<Aval> Real::infer(const std::vector<Aval>& in) const {
  const Aval& a = one_complex(name(), in);
  return {Aval{a.shape, complex_part_dtype(a.dtype), a.weak}};
}

std::vector<Aval> Imag::infer(const std::vector<Aval>& in) const {
  const Aval& a = one_complex(name(), in);
  return {Aval{a.shape, complex_part_dtype(a.dtype), a.weak}};
}

std::vector<Aval> Conj::infer(const std::vector<Aval>& in) const {
  return {one_complex(name(), in)};
}

std::vector<Aval> Complex::infer(const std::vector<Aval>& in) const {
  if (in.size() != 2) fail(name(), "takes 2 operands, got ", in.size());
  const Aval &x = in[0], &y = in[1];
  if ((x.dtype != DType::kF32 && x.dtype != DType::kF64) || x.dtype != y.dtype) {
    fail(name(), "needs two f32 or two f64 operands, got ", x.str(), " and ", y.str());
  }
  if (x.shape != y.shape) {
    fail(name(), "operand shapes differ: ", x.str(), " and ", y.str());
  }
  return {Aval{x.shape, complex_dtype_for(x.dtype), x.weak && y.weak}};
}

// ---- rules. Each primitive is linear: the jvp applies it to the tangents.
std::vector<Array> Real::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                             const std::vector<Array>&) const {
  return {t[0].valid() ? real(t[0]) : Array()};
}
std::vector<Array> Real::vjp(const std::vector<Array>&, const std::vector<Array>&,
                             const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array()};
  return {complex(ct[0], zeros_like(ct[0]))};
}
Batched Real::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front<Real>(args, dims);
}

std::vector<Array> Imag::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                             const std::vector<Array>&) const {
  return {t[0].valid() ? imag(t[0]) : Array()};
}
std::vector<Array> Imag::vjp(const std::vector<Array>&, const std::vector<Array>&,
                             const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array()};
  return {complex(zeros_like(ct[0]), neg(ct[0]))};
}
Batched Imag::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front<Imag>(args, dims);
}

std::vector<Array> Complex::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                                const std::vector<Array>&) const {
  if (!t[0].valid() && !t[1].valid()) return {Array()};
  Array tx = t[0].valid() ? t[0] : zeros_like(primals[0]);
  Array ty = t[1].valid() ? t[1] : zeros_like(primals[1]);
  return {complex(tx, ty)};
}
std::vector<Array> Complex::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array(), Array()};
  return {real(ct[0]), neg(imag(ct[0]))};
}
Batched Complex::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front<Complex>(args, dims);
}

std::vector<Array> Conj::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                             const std::vector<Array>&) const {
  return {t[0].valid() ? conj(t[0]) : Array()};
}
std::vector<Array> Conj::vjp(const std::vector<Array>&, const std::vector<Array>&,
                             const std::vector<Array>& ct) const {
  return {ct[0].valid() ? conj(ct[0]) : Array()};
}
Batched Conj::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front<Conj>(args, dims);
}

}  // namespace graft
