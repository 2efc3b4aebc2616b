// Specs for real, imag, complex, conj and fft (complex + fft). Complex values go in
// and out of a case through real arrays (complex(a, b) of two real inputs; results as real
// parts, stack([real, imag], -1)), so the table's transform checks (finite differences, vmap,
// jit) run on them unchanged. References are plain loops in double: the parts themselves, and
// the naive DFT sum_k x[k] exp(-+2 pi i j k / n) over the transformed dims, and for eig the
// characteristic polynomial (order-free: poly of the eigenvalues) from traces and minors.
#include <cmath>
#include <complex>

#include "core/primitives/eig.h"
#include "core/primitives/fft.h"
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

using C = std::complex<double>;

Array ri(const Array& y) { return stack({real(y), imag(y)}, -1); }

// Interleaves parts: [..., 2] real / imag as the cases return them.
Expected interleaved(const std::vector<C>& v, Shape shape, DType part) {
  shape.push_back(2);
  Expected e{shape, part, {}};
  for (const C& z : v) {
    e.values.push_back(round_to(z.real(), part));
    e.values.push_back(round_to(z.imag(), part));
  }
  return e;
}

// The naive DFT of x (row-major, shape `s`) over its trailing len(lengths) dims, which have
// those lengths; sign -1 forward, +1 inverse (scaled by 1 / N).
std::vector<C> dft(const std::vector<C>& x, const Shape& s, size_t k, int sign) {
  const int64_t n = numel(s);
  const Shape inner(s.end() - k, s.end());
  const int64_t block = numel(inner);
  std::vector<C> out(n);
  for (int64_t b = 0; b < n / block; ++b) {
    for (int64_t j = 0; j < block; ++j) {
      std::vector<int64_t> jj = unravel(j, inner);
      C acc = 0;
      for (int64_t m = 0; m < block; ++m) {
        std::vector<int64_t> mm = unravel(m, inner);
        double ph = 0;
        for (size_t d = 0; d < k; ++d) ph += double(jj[d] * mm[d]) / double(inner[d]);
        acc += x[b * block + m] * std::polar(1.0, sign * 2 * M_PI * ph);
      }
      out[b * block + j] = sign > 0 ? acc / double(block) : acc;
    }
  }
  return out;
}

std::vector<C> zip(const Array& a, const Array& b) {
  std::vector<double> re = values_of(a), im = values_of(b);
  std::vector<C> z;
  for (size_t i = 0; i < re.size(); ++i) z.emplace_back(re[i], im[i]);
  return z;
}

Case parts_case(const std::string& name, DType d, std::function<Array(const Array&)> f,
                std::function<double(C)> ref) {
  Array a = random_array({2, 3}, d, 11), b = random_array({2, 3}, d, 12);
  Expected e{{2, 3}, d, {}};
  for (const C& z : zip(a, b)) e.values.push_back(round_to(ref(z), d));
  return {
      name, {a, b},          [f](const std::vector<Array>& x) { return f(complex(x[0], x[1])); },
      e,    default_rtol(d), 1e-6};
}

}  // namespace

GRAFT_SPEC(Real) {
  Spec s{PrimitiveId::kReal};
  for (DType d : {DType::kF32, DType::kF64}) {
    s.cases.push_back(parts_case(
        str_cat("real_", dtype_name(d)), d, [](const Array& z) { return real(z); },
        [](C z) { return z.real(); }));
  }
  return s;
}

GRAFT_SPEC(Imag) {
  Spec s{PrimitiveId::kImag};
  for (DType d : {DType::kF32, DType::kF64}) {
    s.cases.push_back(parts_case(
        str_cat("imag_", dtype_name(d)), d, [](const Array& z) { return imag(z); },
        [](C z) { return z.imag(); }));
  }
  return s;
}

GRAFT_SPEC(Complex) {
  Spec s{PrimitiveId::kComplex};
  // |a + ib| through the parts, and the real part of z * z (a^2 - b^2).
  s.cases.push_back(parts_case(
      "abs", DType::kF32, [](const Array& z) { return abs(z); }, [](C z) { return std::abs(z); }));
  s.cases.push_back(parts_case(
      "square_re", DType::kF64, [](const Array& z) { return real(z * z); },
      [](C z) { return (z * z).real(); }));
  return s;
}

GRAFT_SPEC(Conj) {
  Spec s{PrimitiveId::kConj};
  s.cases.push_back(parts_case(
      "conj_im", DType::kF32, [](const Array& z) { return imag(conj(z)) * 2.0; },
      [](C z) { return -2 * z.imag(); }));
  return s;
}

GRAFT_SPEC(Fft) {
  Spec s{PrimitiveId::kFft};
  // fft / ifft of complex(a, b) over the trailing 1 and 2 dims.
  for (auto [name, type, shape, k] :
       {std::tuple{"fft_1d", FftType::kFft, Shape{2, 5}, size_t(1)},
        std::tuple{"ifft_2d", FftType::kIfft, Shape{2, 3, 4}, size_t(2)}}) {
    Array a = random_array(shape, DType::kF32, 21), b = random_array(shape, DType::kF32, 22);
    const FftType ty = type;
    Shape lengths(shape.end() - k, shape.end());
    std::vector<C> ref = dft(zip(a, b), shape, k, type == FftType::kFft ? -1 : 1);
    s.cases.push_back({name,
                       {a, b},
                       [ty, lengths](const std::vector<Array>& x) {
                         return ri(lax_fft(complex(x[0], x[1]), ty, lengths));
                       },
                       interleaved(ref, shape, DType::kF32),
                       1e-5,
                       1e-5});
  }
  // rfft of a real [2, 6]: the first 4 of the full DFT.
  {
    Array a = random_array({2, 6}, DType::kF32, 23);
    std::vector<double> av = values_of(a);
    std::vector<C> full = dft(std::vector<C>(av.begin(), av.end()), {2, 6}, 1, -1), half;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j < 4; ++j) half.push_back(full[r * 6 + j]);
    s.cases.push_back(
        {"rfft",
         {a},
         [](const std::vector<Array>& x) { return ri(lax_fft(x[0], FftType::kRfft, {6})); },
         interleaved(half, {2, 4}, DType::kF32),
         1e-5,
         1e-5});
  }
  // irfft to length 7 of complex(a, b) [2, 4]: the inverse DFT of the Hermitian extension
  // (imaginary part of the zero frequency ignored), real part.
  {
    Array a = random_array({2, 4}, DType::kF64, 24), b = random_array({2, 4}, DType::kF64, 25);
    std::vector<C> z = zip(a, b), ext;
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t j = 0; j < 7; ++j) {
        C v = j < 4 ? z[r * 4 + j] : std::conj(z[r * 4 + (7 - j)]);
        if (j == 0) v = v.real();
        ext.push_back(v);
      }
    }
    std::vector<C> inv = dft(ext, {2, 7}, 1, 1);
    Expected e{{2, 7}, DType::kF64, {}};
    for (const C& v : inv) e.values.push_back(v.real());
    s.cases.push_back({"irfft_odd",
                       {a, b},
                       [](const std::vector<Array>& x) {
                         return lax_fft(complex(x[0], x[1]), FftType::kIrfft, {7});
                       },
                       e,
                       1e-10,
                       1e-10});
  }
  return s;
}

GRAFT_SPEC(Eig) {
  Spec s{PrimitiveId::kEig};
  // poly(eigvals(x)) = [1, -trace, sum of the principal 2x2 minors, -det] for 3x3 matrices
  // (a batch of two), whatever order geev gives the eigenvalues in.
  for (DType d : {DType::kF32, DType::kF64}) {
    Array x = random_array({2, 3, 3}, d, 31);
    std::vector<double> v = values_of(x);
    std::vector<C> coef;
    for (int b = 0; b < 2; ++b) {
      const double* m = v.data() + b * 9;
      auto at = [&](int i, int j) { return m[i * 3 + j]; };
      double tr = at(0, 0) + at(1, 1) + at(2, 2);
      double minors = at(0, 0) * at(1, 1) - at(0, 1) * at(1, 0) + at(0, 0) * at(2, 2) -
                      at(0, 2) * at(2, 0) + at(1, 1) * at(2, 2) - at(1, 2) * at(2, 1);
      double det = at(0, 0) * (at(1, 1) * at(2, 2) - at(1, 2) * at(2, 1)) -
                   at(0, 1) * (at(1, 0) * at(2, 2) - at(1, 2) * at(2, 0)) +
                   at(0, 2) * (at(1, 0) * at(2, 1) - at(1, 1) * at(2, 0));
      for (double c : {1.0, -tr, minors, -det}) coef.push_back(c);
    }
    Case c{str_cat("charpoly_", dtype_name(d)),
           {x},
           [](const std::vector<Array>& in) {
             Array w = graft::bind(std::make_shared<const Eig>(false), {in[0]})[0];
             Array r0 = poly(squeeze(slice_axis(w, 0, 0, 1), {0}));
             Array r1 = poly(squeeze(slice_axis(w, 0, 1, 2), {0}));
             return ri(stack({r0, r1}, 0));
           },
           interleaved(coef, {2, 4}, d),
           d == DType::kF32 ? 1e-4 : 1e-10,
           d == DType::kF32 ? 1e-4 : 1e-10};
    c.skip_grad =
        "the table's checks include second order, which needs eigenvector "
        "derivatives (not implemented, as in JAX); the first-order gradient of "
        "eigvals is checked against JAX in fft_test (eigvals_grad) and "
        "complex_test";
    s.cases.push_back(c);
  }
  // A complex input (complex(a, b), 2x2, a batch of two): poly = [1, -trace, det].
  {
    Array a = random_array({2, 2, 2}, DType::kF64, 32),
          b = random_array({2, 2, 2}, DType::kF64, 33);
    std::vector<C> z = zip(a, b), coef;
    for (int k = 0; k < 2; ++k) {
      const C* m = z.data() + k * 4;
      for (C c : {C(1), -(m[0] + m[3]), m[0] * m[3] - m[1] * m[2]}) coef.push_back(c);
    }
    Case c{"charpoly_c128",
           {a, b},
           [](const std::vector<Array>& in) {
             Array w = graft::bind(std::make_shared<const Eig>(false), {complex(in[0], in[1])})[0];
             return ri(stack({poly(squeeze(slice_axis(w, 0, 0, 1), {0})),
                              poly(squeeze(slice_axis(w, 0, 1, 2), {0}))},
                             0));
           },
           interleaved(coef, {2, 3}, DType::kF64),
           1e-10,
           1e-10};
    c.skip_grad = "second order needs eigenvector derivatives (as the real cases above)";
    s.cases.push_back(c);
  }
  return s;
}

}  // namespace graft::spec
