// graft's jnp.fft (core/numpy/fft/fft.h), jax.numpy's complex-number functions
// (core/numpy/complex.h) and eig / eigvals / poly / roots (core/numpy/linalg/eig.h) against
// JAX. Complex results are compared as stack([real, imag], -1) and complex inputs built from
// two real ones (complex(a, b)); eigenvalues sorted with sort_complex (their order is LAPACK's).
//
// How the vectors were made: tools/make_jnp_fft_vectors.py ran JAX 0.10.2 on CPU (x64 off) on
// seeded float32 standard-normal inputs and wrote tests/core/testdata/jnp_fft_vectors.txt:
// inputs, JAX's output and, where marked, jax.grad of sum(out * ct) for a stored cotangent
// ct (through complex values: JAX's convention). Compared with f32 tolerances (1e-5 absolute
// + 1e-5 relative); shapes and dtypes
// exactly. Also: result dtypes, jit equals eager, vmap equals a loop, and misuse throws
// graft::Error naming the op.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace jnp_vectors;
using Fn = std::function<Array(const std::vector<Array>&)>;


// The cases of tools/make_jnp_fft_vectors.py, by name.
const std::map<std::string, Fn>& cases() {
  static const auto* c = new std::map<std::string, Fn>{
      {"fftfreq_8", [](auto&) { return fft::fftfreq(8); }},
      {"fftfreq_7_d", [](auto&) { return fft::fftfreq(7, 0.3); }},
      {"fftfreq_1", [](auto&) { return fft::fftfreq(1); }},
      {"fftfreq_0", [](auto&) { return fft::fftfreq(0); }},
      {"rfftfreq_8", [](auto&) { return fft::rfftfreq(8); }},
      {"rfftfreq_9_d", [](auto&) { return fft::rfftfreq(9, 2.5); }},
      {"rfftfreq_1", [](auto&) { return fft::rfftfreq(1); }},
      {"fftshift_all", [](auto& x) { return fft::fftshift(x[0]); }},
      {"fftshift_axis", [](auto& x) { return fft::fftshift(x[0], Axes{-1}); }},
      {"fftshift_axes", [](auto& x) { return fft::fftshift(x[0], Axes{0, 2}); }},
      {"ifftshift_all", [](auto& x) { return fft::ifftshift(x[0]); }},
      {"ifftshift_axis0", [](auto& x) { return fft::ifftshift(x[0], Axes{0}); }},
      {"shift_roundtrip", [](auto& x) { return fft::ifftshift(fft::fftshift(x[0])); }},
      {"real", [](auto& x) { return real(x[0]); }},
      {"imag", [](auto& x) { return imag(x[0]); }},
      {"conj", [](auto& x) { return conj(x[0]); }},
      {"conjugate", [](auto& x) { return conjugate(x[0]); }},
      {"angle", [](auto& x) { return angle(x[0]); }},
      {"angle_deg", [](auto& x) { return angle(x[0], true); }},
      {"angle_int", [](auto& x) { return angle(astype(x[0] * 3.0, DType::kI32)); }},
      {"angle_zeros",
       [](auto& x) {
         Array z = array<float>({0.0f, -2.0f, INFINITY, -INFINITY, 1e30f});
         return angle(z + 0.0 * slice_axis(x[0], 0, 0, 1));
       }},
      {"iscomplex", [](auto& x) { return iscomplex(x[0]); }},
      {"isreal", [](auto& x) { return isreal(x[0]); }},
      {"isreal_int", [](auto& x) { return isreal(astype(x[0], DType::kI32)); }},
      // complex + fft
      {"fft_real", [](auto& x) { return ri(fft::fft(x[0])); }},
      {"fft_c", [](auto& x) { return ri(fft::fft(cx(x))); }},
      {"fft_pad_axis0", [](auto& x) { return ri(fft::fft(cx(x), 5, 0)); }},
      {"fft_crop", [](auto& x) { return ri(fft::fft(x[0], 3)); }},
      {"fft_ortho", [](auto& x) { return ri(fft::fft(cx(x), std::nullopt, -1, "ortho")); }},
      {"ifft_axis0", [](auto& x) { return ri(fft::ifft(cx(x), std::nullopt, 0)); }},
      {"ifft_forward",
       [](auto& x) { return ri(fft::ifft(cx(x), std::nullopt, -1, "forward")); }},
      {"rfft_even", [](auto& x) { return ri(fft::rfft(x[0])); }},
      {"rfft_n_axis0", [](auto& x) { return ri(fft::rfft(x[0], 7, 0)); }},
      {"irfft", [](auto& x) { return fft::irfft(cx(x)); }},
      {"irfft_n_odd", [](auto& x) { return fft::irfft(cx(x), 7); }},
      {"irfft_ortho", [](auto& x) { return fft::irfft(cx(x), std::nullopt, -1, "ortho"); }},
      {"fft2", [](auto& x) { return ri(fft::fft2(cx(x))); }},
      {"ifft2_s", [](auto& x) { return ri(fft::ifft2(cx(x), Shape{3, 6})); }},
      {"fftn_axes", [](auto& x) { return ri(fft::fftn(cx(x), std::nullopt, Axes{0, 2})); }},
      {"fftn_rank4", [](auto& x) { return ri(fft::fftn(x[0])); }},
      {"ifftn_s", [](auto& x) { return ri(fft::ifftn(cx(x), Shape{2, 3})); }},
      {"rfft2", [](auto& x) { return ri(fft::rfft2(x[0])); }},
      {"irfft2", [](auto& x) { return fft::irfft2(cx(x)); }},
      {"rfftn_axes_ortho",
       [](auto& x) { return ri(fft::rfftn(x[0], std::nullopt, Axes{0, 2}, "ortho")); }},
      {"irfftn_s", [](auto& x) { return fft::irfftn(cx(x), Shape{4, 6}); }},
      {"hfft", [](auto& x) { return fft::hfft(cx(x)); }},
      {"hfft_n_ortho", [](auto& x) { return fft::hfft(cx(x), 7, -1, "ortho"); }},
      {"ihfft", [](auto& x) { return ri(fft::ihfft(x[0])); }},
      {"ihfft_n_forward", [](auto& x) { return ri(fft::ihfft(x[0], 5, -1, "forward")); }},
      {"abs_fft_power", [](auto& x) { return sum(square(abs(fft::fft(x[0])))); }},
      {"sort_complex",
       [](auto& x) { return ri(sort_complex(complex(round(x[0]), round(x[1])))); }},
      {"sort_complex_real", [](auto& x) { return ri(sort_complex(x[0])); }},
      {"complex_arith",
       [](auto& x) {
         Array z = cx(x), w = cx(x, 2);
         return ri(z * w / (w + 3.0) - complex(x[0], x[3]));
       }},
      {"complex_exp_abs", [](auto& x) { return abs(exp(cx(x))) + angle(cx(x)); }},
      {"complex_parts",
       [](auto& x) {
         Array z = cx(x);
         return ri(conj(z)) + stack({real(z), imag(z)}, -1);
       }},
      {"eigvals_sorted", [](auto& x) { return ri(sort_complex(linalg::eigvals(x[0]))); }},
      {"eigvals_batch", [](auto& x) { return ri(sort_complex(linalg::eigvals(x[0]))); }},
      {"eig_values", [](auto& x) { return ri(sort_complex(linalg::eig(x[0]).eigenvalues)); }},
      {"poly_real", [](auto& x) { return poly(x[0]); }},
      {"poly_complex", [](auto& x) { return ri(poly(cx(x))); }},
      {"poly_matrix", [](auto& x) { return ri(poly(x[0])); }},
      {"roots", [](auto& x) { return ri(sort_complex(roots(x[0]))); }},
      {"eigvals_grad", [](auto& x) { return sum(abs(linalg::eigvals(x[0]))); }},
      {"roots_leading_zero",
       [](auto& x) { return ri(sort_complex(roots(concatenate({zeros({1}), x[0]}, 0)))); }},
      {"eigvals_complex", [](auto& x) { return ri(sort_complex(linalg::eigvals(cx(x)))); }},
      {"eigvals_complex_grad", [](auto& x) { return sum(abs(linalg::eigvals(cx(x)))); }},
      {"roots_complex", [](auto& x) { return ri(sort_complex(roots(cx(x)))); }},
  };
  return *c;
}

TEST(NumpyFftTest, ValuesAndGradientsMatchJax) {
  EXPECT_EQ(cases().size(), 67u);
  EXPECT_EQ(expect_cases_match(cases()), 42);  // cases with gradients
}

TEST(NumpyFftTest, ResultDtypes) {
  EXPECT_EQ(fft::fftfreq(6, 1.0, DType::kF64).dtype(), DType::kF64);
  EXPECT_EQ(fft::rfftfreq(6, 1.0, DType::kBF16).dtype(), DType::kBF16);
  EXPECT_EQ(fft::fftfreq(6, 0.5, DType::kF64).to_vector<double>(),
            (std::vector<double>{0, 1.0 / 3, 2.0 / 3, -1, -2.0 / 3, -1.0 / 3}));
  const Array i = array<int32_t>({-3, 0, 5});
  EXPECT_EQ(real(i).dtype(), DType::kI32);
  EXPECT_EQ(imag(i).dtype(), DType::kI32);
  EXPECT_EQ(imag(i).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(conj(i).to_vector<int32_t>(), (std::vector<int32_t>{-3, 0, 5}));
  EXPECT_EQ(angle(i).dtype(), DType::kF32);
  // A floating 1-D input keeps its dtype; a 0-d one becomes f32, as in jnp.angle.
  EXPECT_EQ(angle(astype(i, DType::kBF16)).dtype(), DType::kBF16);
  EXPECT_EQ(angle(scalar(-1.0, DType::kF64)).dtype(), DType::kF32);
  EXPECT_FALSE(iscomplexobj(i));
  EXPECT_TRUE(isrealobj(i));
  EXPECT_EQ(iscomplex(i).dtype(), DType::kBool);
  EXPECT_EQ(fft::fftshift(scalar(3.0, DType::kF32)).item<float>(), 3.0f);
}

TEST(NumpyFftTest, JitAndVmapMatchEager) {
  for (const char* name : {"fftshift_axes", "ifftshift_all", "angle_deg"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> xs = inputs(name);
    auto jitted = jit([&](const std::vector<Array>& a) { return fn(a); });
    EXPECT_EQ(jitted(xs).to_vector<float>(), fn(xs).to_vector<float>());
  }
  // vmap over the leading dim of fftshift along the last axis equals shifting each row.
  const Array x = inputs("fftshift_axis")[0];
  Array batched = vmap([](const Array& r) { return fft::fftshift(r); })(x);
  for (int64_t b = 0; b < x.shape()[0]; ++b) {
    Array row = squeeze(slice_axis(x, 0, b, b + 1), {0});
    EXPECT_EQ(squeeze(slice_axis(batched, 0, b, b + 1), {0}).to_vector<float>(),
              fft::fftshift(row).to_vector<float>());
  }
  expect_matches(batched, "fftshift_axis.out0");
}

TEST(NumpyFftTest, MisuseIsAnError) {
  expect_error([] { fft::fftfreq(-1); }, "[fftfreq]");
  expect_error([] { fft::fftfreq(4, 1.0, DType::kI32); }, "[fftfreq]");
  expect_error([] { fft::rfftfreq(-2); }, "[rfftfreq]");
  expect_error([] { fft::fftshift(ones({2, 3}), Axes{2}); }, "[fftshift]");
  expect_error([] { fft::ifftshift(ones({2, 3}), Axes{-3}); }, "[ifftshift]");
  expect_error([] { fft::fftshift(Array()); }, "[fftshift]");
  expect_error([] { real(Array()); }, "[real]");
  expect_error([] { angle(Array()); }, "[angle]");
}

}  // namespace
}  // namespace graft
