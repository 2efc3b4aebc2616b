// complex64 / complex128: JAX's promotion lattice with complex types, the values
// complex arrays hold through creation, conversion, layout ops and reading back, printing,
// the trace-time rejection of every op without complex support, grad / jit / vmap through
// complex intermediates, and complex values through scan, cond, while_loop and remat. Reference facts are JAX's (jnp.promote_types, lax.convert_element_type
// and the complex conventions of jax/_src/lax/lax.py); values are checked against std::complex.
#include <complex>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"  // expect_error
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/make_graph.h"
#include "transforms/remat.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using jnp_vectors::expect_error;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

DType P(DType a, DType b, bool wa = false, bool wb = false) {
  return promote_types({a, wa}, {b, wb}).dtype;
}

TEST(ComplexTest, PromotionFollowsJaxLattice) {
  using D = DType;
  EXPECT_EQ(P(D::kC64, D::kC128), D::kC128);
  EXPECT_EQ(P(D::kF32, D::kC64), D::kC64);
  EXPECT_EQ(P(D::kF64, D::kC64), D::kC128);  // f64 -> c128 and c64 -> c128
  EXPECT_EQ(P(D::kF16, D::kC64), D::kC64);
  EXPECT_EQ(P(D::kBF16, D::kC128), D::kC128);
  EXPECT_EQ(P(D::kI64, D::kC64), D::kC64);
  EXPECT_EQ(P(D::kBool, D::kC64), D::kC64);
  EXPECT_EQ(P(D::kU32, D::kC128), D::kC128);
  for (DType a : kAllDTypes)
    for (DType c : kComplexDTypes) EXPECT_EQ(P(a, c), P(c, a)) << a << " " << c;
  // A weak complex scalar (a C++ std::complex) takes the array's width: f32 -> c64,
  // f64 -> c128, an integer array -> (weak) c64; a weak float gives way to a strong complex.
  EXPECT_EQ(P(D::kF32, D::kC128, false, true), D::kC64);
  EXPECT_EQ(P(D::kF64, D::kC128, false, true), D::kC128);
  TypeInfo r = promote_types({D::kI32, false}, {D::kC128, true});
  EXPECT_EQ(r.dtype, D::kC64);
  EXPECT_TRUE(r.weak);
  EXPECT_EQ(P(D::kC64, D::kF64, false, true), D::kC64);
  EXPECT_EQ(dtype_size(D::kC64), 8);
  EXPECT_EQ(dtype_size(D::kC128), 16);
  EXPECT_STREQ(dtype_name(D::kC64), "c64");
  EXPECT_TRUE(is_inexact(D::kC128));
  EXPECT_FALSE(is_floating(D::kC64));
}

TEST(ComplexTest, ValuesSurviveCreationConversionAndLayoutOps) {
  Array z = array<c64>({{1, 2}, {3, -4}, {-5, 6}, {0, 0.5}}, Shape{2, 2});
  EXPECT_EQ(z.dtype(), DType::kC64);
  EXPECT_EQ(transpose(z).to_vector<c64>(), (std::vector<c64>{{1, 2}, {-5, 6}, {3, -4}, {0, 0.5}}));
  EXPECT_EQ(reshape(z, {4}).to_vector<c64>()[3], c64(0, 0.5));
  EXPECT_EQ(concatenate({z, z}, 0).shape(), (Shape{4, 2}));
  EXPECT_EQ(slice_axis(z, 1, 1, 2).to_vector<c64>(), (std::vector<c64>{{3, -4}, {0, 0.5}}));
  EXPECT_EQ(where(array<bool>({true, false}), z, zeros_like(z)).to_vector<c64>(),
            (std::vector<c64>{{1, 2}, {0, 0}, {-5, 6}, {0, 0}}));
  // convert_element_type: real -> (x, 0); complex -> real keeps the real part; c64 <-> c128.
  EXPECT_EQ(astype(array<float>({1.5f, -2}), DType::kC128).to_vector<c128>(),
            (std::vector<c128>{{1.5, 0}, {-2, 0}}));
  EXPECT_EQ(astype(z, DType::kF32).to_vector<float>(), (std::vector<float>{1, 3, -5, 0}));
  EXPECT_EQ(astype(z, DType::kC128).to_vector<c128>()[1], c128(3, -4));
  // complex -> bool is true where either part is nonzero (JAX: astype(1j, bool) is True), in
  // the kernel, under jit and when read on the host.
  const Array parts = array<c64>({{0, 1}, {0, 0}, {2, 0}, {0, -0.0f}, {NAN, 0}});
  const std::vector<uint8_t> truth{1, 0, 1, 0, 1};
  EXPECT_EQ(astype(parts, DType::kBool).to_vector<uint8_t>(), truth);
  EXPECT_EQ(jit([](const Array& a) { return astype(a, DType::kBool); })(parts).to_vector<uint8_t>(),
            truth);
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(reshape(slice_axis(parts, 0, i, i + 1), {}).item<bool>(), truth[i] == 1) << i;
  }
  EXPECT_EQ(real(z).dtype(), DType::kF32);
  EXPECT_EQ(imag(z).to_vector<float>(), (std::vector<float>{2, -4, 6, 0.5}));
  EXPECT_EQ(conj(z).to_vector<c64>()[0], c64(1, -2));
  EXPECT_EQ(complex(array<double>({1.0}), array<double>({2.0})).dtype(), DType::kC128);
  EXPECT_EQ(complex(array<int32_t>({1}), 2.0).to_vector<c64>()[0], c64(1, 2));
  EXPECT_EQ(zeros({2}, DType::kC64).to_vector<c64>(), (std::vector<c64>{0, 0}));
  EXPECT_TRUE(iscomplexobj(z));
  EXPECT_EQ(to_string(array<c64>({{1, 2}, {0.5f, -1}})),
            "Array([1.+2.j, 0.5-1.j], dtype=c64, shape=(2,))");
}

TEST(ComplexTest, ArithmeticMatchesStdComplex) {
  const std::vector<c128> a = {{1, 2}, {-0.5, 3}, {2, -1}}, b = {{0.5, -1}, {2, 2}, {-3, 0.25}};
  Array x = array<c128>(a), y = array<c128>(b);
  auto check = [&](const Array& got, auto op) {
    std::vector<c128> g = got.to_vector<c128>();
    ASSERT_EQ(g.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      c128 want = op(a[i], b[i]);
      EXPECT_NEAR(g[i].real(), want.real(), 1e-12);
      EXPECT_NEAR(g[i].imag(), want.imag(), 1e-12);
    }
  };
  check(x + y, [](c128 p, c128 q) { return p + q; });
  check(x - y, [](c128 p, c128 q) { return p - q; });
  check(x * y, [](c128 p, c128 q) { return p * q; });
  check(x / y, [](c128 p, c128 q) { return p / q; });
  check(-x, [](c128 p, c128) { return -p; });
  check(exp(x), [](c128 p, c128) { return std::exp(p); });
  check(x * 2.0, [](c128 p, c128) { return p * 2.0; });
  check(sum(reshape(x, {3, 1}), {1}), [](c128 p, c128) { return p; });
  // matmul / dot_general through the parts: [1, 3] @ [3, 1] is the sum of the products.
  c128 dot_want = 0;
  for (size_t i = 0; i < a.size(); ++i) dot_want += a[i] * b[i];
  c128 dot_got = matmul(reshape(x, {1, 3}), reshape(y, {3, 1})).to_vector<c128>()[0];
  EXPECT_NEAR(std::abs(dot_got - dot_want), 0, 1e-12);
  EXPECT_NEAR(std::abs(einsum("i,i->", {x, y}).item<c128>() - dot_want), 0, 1e-12);
  EXPECT_NEAR(abs(x).to_vector<double>()[0], std::abs(a[0]), 1e-12);
  EXPECT_EQ(abs(x).dtype(), DType::kF64);
  // f32 array * c128 array: c128; f32 * c64: c64.
  EXPECT_EQ((ones({3}, DType::kF32) * x).dtype(), DType::kC128);
  EXPECT_EQ((ones({3}, DType::kF32) * astype(x, DType::kC64)).dtype(), DType::kC64);
}

TEST(ComplexTest, OpsWithoutComplexSupportFailAtTraceTime) {
  Array z = zeros({3}, DType::kC64);
  // (sin, comparisons, max, cumsum and the rest of core/lax/complex_math.cc have complex
  // cases now: tests/core/lax:complex_math_test.)
  expect_error([&] { erf(z); }, "[erf]");
  expect_error([&] { floor(z); }, "[floor]");
  expect_error([&] { argmax(z); }, "[argmax]");
  expect_error([&] { cummax(z); }, "[cummax]");
  expect_error([&] { complex(z, z); }, "[complex]");
  expect_error([&] { fft::rfft(z); }, "[rfft]");
  expect_error([&] { fft::fft(zeros({2, 3}, DType::kC64), std::nullopt, -1, "bad"); }, "[fft]");
  expect_error([&] { fft::fftn(zeros({2, 3}, DType::kC64), Shape{2}, Axes{0, 1}); }, "[fftn]");
  expect_error([&] { fft::fft2(zeros({3}, DType::kC64)); }, "[fft2]");
  expect_error([&] { fft::fft(zeros({3}, DType::kC64), -1); }, "[fft]");
  expect_error([&] { fft::fftn(zeros({2, 2}, DType::kC64), std::nullopt, Axes{1, 1}); }, "[fftn]");
}

// grad of a real function of a real input through complex values, JAX's convention: the power
// spectrum sum |fft(x)|^2 = n * sum x^2 (Parseval), so its gradient is 2 n x.
TEST(ComplexTest, GradThroughFftIsParseval) {
  Array x = array<float>({0.5f, -1, 2, 0.25f, 3, -0.75f});
  auto power = [](const Array& v) { return sum(square(abs(fft::fft(v)))); };
  EXPECT_NEAR(power(x).item<float>(), 6 * sum(x * x).item<float>(), 1e-3);
  std::vector<float> g = grad(power)(x).to_vector<float>(), xv = x.to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], 12 * xv[i], 1e-3) << i;
  // The same through rfft / irfft round trip: d/dx sum(irfft(rfft(x)) * w) = w.
  Array w = array<float>({1, 2, 3, 4, 5, 6});
  auto round = [&](const Array& v) { return sum(fft::irfft(fft::rfft(v), 6) * w); };
  std::vector<float> gr = grad(round)(x).to_vector<float>();
  for (size_t i = 0; i < gr.size(); ++i) EXPECT_NEAR(gr[i], float(i + 1), 1e-4) << i;
}

// The printed program names the new primitives with JAX's parameters, and a complex
// constant in NumPy's form.
TEST(ComplexTest, PrintedProgramShowsComplexValues) {
  auto f = [](const Array& x) {
    Array c = reshape(array<c64>({{1.5f, -2}}), {});  // a 0-d constant: printed as a literal
    return real(pad(fft::fft(x), {{1, 0}}, c));
  };
  EXPECT_EQ(f(ones({4})).to_vector<float>(), (std::vector<float>{1.5f, 4, 0, 0, 0}));
  std::string g = make_graph(f)(zeros({4})).str();
  EXPECT_NE(g.find("fft[fft_type=FFT fft_lengths=(4,)]"), std::string::npos) << g;
  EXPECT_NE(g.find("(1.5-2j):c64[]"), std::string::npos) << g;
  EXPECT_NE(g.find("real"), std::string::npos) << g;
}

TEST(ComplexTest, JitAndVmapOfComplexOpsMatchEager) {
  Array a = reshape(arange(12, DType::kF32), {3, 4}) * 0.25, b = cos(a);
  auto f = [](const Array& p, const Array& q) {
    Array z = fft::fft(complex(p, q));
    return real(z * conj(z)) + imag(fft::ifft(z));
  };
  std::vector<float> eager = f(a, b).to_vector<float>();
  std::vector<float> jitted = jit(f)(a, b).to_vector<float>();
  ASSERT_EQ(eager.size(), jitted.size());
  for (size_t i = 0; i < eager.size(); ++i) EXPECT_NEAR(eager[i], jitted[i], 1e-4) << i;
  Array batched = vmap(f)(a, b);
  for (int64_t r = 0; r < 3; ++r) {
    Array row =
        f(squeeze(slice_axis(a, 0, r, r + 1), {0}), squeeze(slice_axis(b, 0, r, r + 1), {0}));
    std::vector<float> want = row.to_vector<float>();
    std::vector<float> got = squeeze(slice_axis(batched, 0, r, r + 1), {0}).to_vector<float>();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4);
  }
}

// eig: A v_j = w_j v_j for each column, with unit-norm columns (the eigenvector phase is
// LAPACK's choice, so the decomposition's defining property is what is checked); a rotation
// block gives a conjugate pair. eigvals equals eig's eigenvalues; vmap equals a loop; grad
// of the eigenvalues is JAX's; through the eigenvectors it is an error naming eig.
TEST(ComplexTest, EigSatisfiesTheEigenEquation) {
  Array a = array<double>({0, -2, 1, 2, 0, 0.5, 0.25, -1, 3}, Shape{3, 3});
  auto [w, v] = linalg::eig(a);
  EXPECT_EQ(w.dtype(), DType::kC128);
  EXPECT_EQ(v.shape(), (Shape{3, 3}));
  std::vector<double> av = a.to_vector<double>();
  std::vector<c128> wv = w.to_vector<c128>(), vv = v.to_vector<c128>();
  int complex_pairs = 0;
  for (int j = 0; j < 3; ++j) {
    complex_pairs += wv[j].imag() > 1e-6;
    double norm = 0;
    for (int i = 0; i < 3; ++i) {
      c128 av_ij = 0;
      for (int k = 0; k < 3; ++k) av_ij += av[i * 3 + k] * vv[k * 3 + j];
      EXPECT_NEAR(std::abs(av_ij - wv[j] * vv[i * 3 + j]), 0, 1e-10) << i << " " << j;
      norm += std::norm(vv[i * 3 + j]);
    }
    EXPECT_NEAR(norm, 1, 1e-10);
  }
  EXPECT_EQ(complex_pairs, 1);
  EXPECT_EQ(linalg::eigvals(a).to_vector<c128>(), wv);
  Array batch = stack({a, a * 2.0}, 0);
  Array bw = vmap([](const Array& m) { return linalg::eigvals(m); })(batch);
  EXPECT_EQ(squeeze(slice_axis(bw, 0, 1, 2), {0}).to_vector<c128>(),
            linalg::eigvals(a * 2.0).to_vector<c128>());
  // eigvals is differentiable (the trace's gradient is the identity); eig's eigenvectors not.
  std::vector<double> gt =
      grad([](const Array& m) { return sum(real(linalg::eigvals(m))); })(a).to_vector<double>();
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(gt[i], i % 4 == 0 ? 1.0 : 0.0, 1e-9) << i;
  expect_error(
      [&] { grad([](const Array& m) { return sum(real(linalg::eig(m).eigenvectors)); })(a); },
      "[eig]");
  expect_error([] { linalg::eig(ones({2, 3})); }, "[eig]");
  expect_error([] { roots(ones({2, 2})); }, "[roots]");
  expect_error([] { poly(ones({2, 3})); }, "[poly]");
  // A complex input (zgeev): A v = w v again.
  Array ac = array<c128>({{1, 2}, {0, -1}, {3, 0.5}, {-2, 1}}, Shape{2, 2});
  auto [wc, vc] = linalg::eig(ac);
  std::vector<c128> acv = ac.to_vector<c128>(), wcv = wc.to_vector<c128>(),
                    vcv = vc.to_vector<c128>();
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 2; ++i) {
      c128 lhs = acv[i * 2] * vcv[j] + acv[i * 2 + 1] * vcv[2 + j];
      EXPECT_NEAR(std::abs(lhs - wcv[j] * vcv[i * 2 + j]), 0, 1e-10) << i << " " << j;
    }
  }
  EXPECT_EQ(roots(array<float>({2.0f})).shape(), (Shape{0}));
  EXPECT_EQ(roots(array<float>({2.0f})).dtype(), DType::kC64);
}

// Complex carries, xs, ys and operands in control flow (scan, cond, while_loop, remat): a
// phasor rotated by each angle of a scan, under jit, vmap and grad, against std::complex.
TEST(ComplexTest, ControlFlowCarriesComplexValues) {
  const std::vector<double> th = {0.3, -1.1, 0.7, 2.0};
  const std::vector<c128> z0v = {{0.5, 1.5}, {-2.0, 0.25}};
  Array thetas = array<float>({0.3f, -1.1f, 0.7f, 2.0f});
  Array z0 = array<c64>({{0.5f, 1.5f}, {-2.0f, 0.25f}});
  auto rotate = [](const Array& z, const Array& angles) {
    return scan(
        [](const Array& c, const Array& t) {
          Array n = c * exp(complex(zeros_like(t), t));
          return std::pair{n, n};  // complex ys too
        },
        z, angles);
  };
  // The reference: z_k = z_{k-1} e^{i t_k}, in double.
  std::vector<c128> z = z0v, ys;
  for (double t : th) {
    for (c128& v : z) {
      v *= std::polar(1.0, t);
      ys.push_back(v);
    }
  }
  auto expect_c = [](const Array& got, const std::vector<c128>& want) {
    std::vector<c64> g = got.to_vector<c64>();
    ASSERT_EQ(g.size(), want.size());
    for (size_t i = 0; i < g.size(); ++i) EXPECT_LT(std::abs(c128(g[i]) - want[i]), 1e-5) << i;
  };
  auto [final_z, all_z] = rotate(z0, thetas);
  EXPECT_EQ(final_z.dtype(), DType::kC64);
  expect_c(final_z, z);
  expect_c(all_z, ys);
  auto jitted = jit([&](const Array& a, const Array& t) { return rotate(a, t).first; });
  expect_c(jitted(z0, thetas), z);
  // vmap over the phasors (each a scalar carry) equals the whole-array scan.
  expect_c(vmap([&](const Array& a) { return rotate(a, thetas).first; })(z0), z);
  // d/dt_k sum(real(z_final)) = sum_j -Re(z0_j) sin S - Im(z0_j) cos S, S = sum t.
  double S = 0;
  for (double t : th) S += t;
  double want_g = 0;
  for (const c128& v : z0v) want_g += -v.real() * std::sin(S) - v.imag() * std::cos(S);
  auto loss = [&](const Array& t) { return sum(real(rotate(z0, t).first)); };
  for (float g : grad(loss)(thetas).to_vector<float>()) EXPECT_NEAR(g, want_g, 1e-4);
  // Under remat the gradient is the same.
  auto loss_remat = [&](const Array& t) {
    return sum(real(checkpoint([&](const Array& u) { return rotate(z0, u).first; })(t)));
  };
  for (float g : grad(loss_remat)(thetas).to_vector<float>()) EXPECT_NEAR(g, want_g, 1e-4);
  // cond with complex operands and results.
  auto pick = [](const Array& p, const Array& a) {
    return cond(
        p, [](const Array& v) { return v * conj(v); }, [](const Array& v) { return -v; }, a);
  };
  std::vector<c128> sq, neg;
  for (const c128& v : z0v) {
    sq.push_back(v * std::conj(v));
    neg.push_back(-v);
  }
  expect_c(pick(Array(true), z0), sq);
  expect_c(jit(pick)(Array(false), z0), neg);
  // grad through a cond's complex branch: d/dt sum(real(z0 e^{it})) at t = 0.4.
  auto turn = [&](const Array& t) {
    return sum(real(cond(
        Array(true),
        [](const Array& v, const Array& u) { return v * exp(complex(zeros_like(u), u)); },
        [](const Array& v, const Array&) { return v; }, z0, t)));
  };
  double want_t = 0;
  for (const c128& v : z0v) want_t += -v.real() * std::sin(0.4) - v.imag() * std::cos(0.4);
  EXPECT_NEAR(grad(turn)(Array(0.4f)).item<float>(), want_t, 1e-4);
  // while_loop: multiply by i three times: z0 * i^3 = -i z0.
  auto [zw, n] = while_loop([](const std::pair<Array, Array>& c) { return c.second < 3; },
                            [](const std::pair<Array, Array>& c) {
                              return std::pair{c.first * complex(Array(0.0f), Array(1.0f)),
                                               c.second + 1};
                            },
                            std::pair{z0, Array(0)});
  std::vector<c128> turned;
  for (const c128& v : z0v) turned.push_back(v * c128(0, -1));
  expect_c(zw, turned);
  EXPECT_EQ(n.item<int32_t>(), 3);
}

}  // namespace
}  // namespace graft
