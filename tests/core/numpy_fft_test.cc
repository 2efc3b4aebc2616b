// graft's jnp.fft helpers (core/ops_numpy_fft.h) and jax.numpy's complex-number functions on
// real arrays (core/ops_numpy_complex.h) against JAX.
//
// How the vectors were made: tools/make_jnp_fft_vectors.py ran JAX 0.10.2 on CPU (x64 off) on
// seeded float32 standard-normal inputs and wrote tests/core/testdata/jnp_fft_vectors.txt:
// inputs, JAX's output and, where marked, jax.grad of sum(out * ct) for a stored cotangent
// ct. Compared with f32 tolerances (1e-5 absolute + 1e-5 relative); shapes and dtypes
// exactly. Also: result dtypes, jit equals eager, vmap equals a loop, and misuse throws
// graft::Error naming the op.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/jnp_array_vectors.h"
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
  };
  return *c;
}

TEST(NumpyFftTest, ValuesAndGradientsMatchJax) {
  EXPECT_EQ(cases().size(), 24u);
  EXPECT_EQ(expect_cases_match(cases()), 9);  // cases with gradients
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
