// The JAX-recorded cases of tests/core/testdata/jnp_array_vectors.txt and
// jnp_linalg_vectors.txt (tools/make_jnp_*_vectors.py) and conv_vectors.txt
// (tools/make_conv_vectors.py), shared by einsum_test, lax_numpy_test, linalg_test
// and convolution_test: one vector
// per line, "name dtype shape values...", read once from the runfiles; expect_matches compares
// an array with a stored vector (shape and dtype exactly, values to tol absolute + tol
// relative; 1e-5 unless a test says otherwise).
#pragma once

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"

namespace graft::jnp_vectors {

struct Vec {
  std::string file;  // the testdata file it came from
  std::string dtype;
  Shape shape;
  std::vector<double> values;
};

// Reads one vectors file into `out` (a missing file adds nothing: the tests then fail on the
// first vector they look for).
inline void load_file(const std::string& path, std::map<std::string, Vec>& out) {
  std::ifstream in(path);
  if (!in) {
    const char* srcdir = std::getenv("TEST_SRCDIR");
    if (srcdir) in.open(std::string(srcdir) + "/graft/" + path);
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string name, shape;
    Vec v;
    v.file = path.substr(path.rfind('/') + 1);
    ls >> name >> v.dtype >> shape;
    if (shape != "scalar") {
      std::istringstream ss(shape);
      for (std::string d; std::getline(ss, d, ',');) v.shape.push_back(std::stoll(d));
    }
    // strtod, not >>, so that "nan" and "inf" read too.
    for (std::string tok; ls >> tok;) v.values.push_back(std::strtod(tok.c_str(), nullptr));
    out[name] = std::move(v);
  }
}

// The array cases, the jnp.linalg cases (tools/make_jnp_linalg_vectors.py), the convolution
// cases (tools/make_conv_vectors.py), the jnp.fft / complex-function cases
// (tools/make_jnp_fft_vectors.py) and the complex math cases
// (tools/make_complex_math_vectors.py), whose names do not overlap. A test reads the files
// its BUILD rule lists as data.
inline std::map<std::string, Vec> load_vectors() {
  std::map<std::string, Vec> out;
  load_file("tests/core/testdata/jnp_array_vectors.txt", out);
  load_file("tests/core/testdata/jnp_linalg_vectors.txt", out);
  load_file("tests/core/testdata/jnp_linalg_decomp_vectors.txt", out);  // only where a test has it
  load_file("tests/core/testdata/conv_vectors.txt", out);
  load_file("tests/core/testdata/jnp_fft_vectors.txt", out);
  load_file("tests/core/testdata/complex_math_vectors.txt", out);
  return out;
}

inline const std::map<std::string, Vec>& vectors() {
  static const auto* v = new std::map<std::string, Vec>(load_vectors());
  return *v;
}

inline bool has_vec(const std::string& key) { return vectors().count(key) > 0; }

inline Array to_array(const Vec& v) {
  std::vector<float> f(v.values.begin(), v.values.end());
  return array(f, v.shape);
}

inline std::vector<Array> inputs(const std::string& name) {
  std::vector<Array> xs;
  for (int k = 0; has_vec(name + ".in" + std::to_string(k)); ++k) {
    xs.push_back(to_array(vectors().at(name + ".in" + std::to_string(k))));
  }
  return xs;
}

inline const char* numpy_dtype_name(DType d) {
  switch (d) {
    case DType::kBool: return "bool";
    case DType::kU8: return "uint8";
    case DType::kU32: return "uint32";
    case DType::kI32: return "int32";
    case DType::kI64: return "int64";
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    case DType::kF32: return "float32";
    case DType::kF64: return "float64";
    case DType::kC64: return "complex64";
    case DType::kC128: return "complex128";
    case DType::kI8: return "int8";
    case DType::kI16: return "int16";
    case DType::kU16: return "uint16";
    case DType::kU64: return "uint64";
    case DType::kF8E4M3FN: return "float8_e4m3fn";
    case DType::kF8E5M2: return "float8_e5m2";
  }
  return "?";
}

// got against a recorded vector: shape and dtype exactly, values to tol absolute + rel * tol
// relative (NaN matches NaN, an infinity itself); at most five mismatches reported.
inline void expect_vec_matches(const Array& got, const Vec& want, double tol, double rel) {
  ASSERT_EQ(got.shape(), want.shape);
  EXPECT_STREQ(numpy_dtype_name(got.dtype()), want.dtype.c_str());
  std::vector<double> g = astype(got, DType::kF64).to_vector<double>();
  ASSERT_EQ(g.size(), want.values.size());
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    const double w = want.values[i];
    const bool ok = std::isnan(w)   ? std::isnan(g[i])
                    : std::isinf(w) ? g[i] == w
                                    : std::fabs(g[i] - w) <= tol + rel * tol * std::fabs(w);
    if (!ok) {
      ADD_FAILURE() << "at " << i << ": got " << g[i] << ", want " << w;
      ++bad;
    }
  }
}

inline void expect_matches(const Array& got, const std::string& key, double tol = 1e-5) {
  SCOPED_TRACE(key);
  ASSERT_TRUE(has_vec(key)) << "no vector " << key;
  expect_vec_matches(got, vectors().at(key), tol, 1.0);
}

// Complex values in the real-only vector format, as the scripts' ri() and cx(): a complex
// result as stack([real, imag], -1) (a real one as it is), a complex input from inputs i, i + 1.
inline Array ri(const Array& y) {
  return is_complex(y.dtype()) ? stack({real(y), imag(y)}, -1) : y;
}
inline Array cx(const std::vector<Array>& x, int i = 0) { return complex(x[i], x[i + 1]); }

// Expects f to throw a graft::Error whose message starts with `prefix` ("[op]").
inline void expect_error(const std::function<void()>& f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "expected an error starting " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

// Checks each case's output against <name>.out0 and, where a cotangent <name>.ct is stored,
// d sum(out0 * ct) / d in<k> against <name>.grad<k>; returns how many cases had gradients.
template <typename Fn>
int expect_cases_match(const std::map<std::string, Fn>& cases) {
  int with_grads = 0;
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    std::vector<Array> xs = inputs(name);  // none for a creation function (fftfreq)
    expect_matches(fn(xs), name + ".out0");  // fails if <name>.out0 was not recorded
    if (!has_vec(name + ".ct")) continue;
    ++with_grads;
    const Array ct = to_array(vectors().at(name + ".ct"));
    for (size_t k = 0; k < xs.size(); ++k) {
      auto f = [&, k](const Array& xk) {
        std::vector<Array> a = xs;
        a[k] = xk;
        return sum(fn(a) * ct);
      };
      expect_matches(grad(f)(xs[k]), name + ".grad" + std::to_string(k));
    }
  }
  return with_grads;
}

// For cases that return several outputs (tail_test, bits_test): jax.grad of
// sum(out0 * ct), ct = 1 + 0.25 * arange(out0.size) in out0's dtype, with respect to each input
// k with a recorded gradient (has("<name>.grad<k>")); check(got, "<name>.grad<k>") compares.
// Returns how many cases had gradients.
template <typename Fn, typename Inputs, typename Has, typename Check>
int check_recorded_gradients(const std::map<std::string, Fn>& cases, Inputs inputs, Has has,
                             Check check) {
  int checked = 0;
  for (const auto& [name, fn] : cases) {
    std::vector<Array> xs = inputs(name);
    std::vector<size_t> floats;
    for (size_t k = 0; k < xs.size(); ++k) {
      if (has(name + ".grad" + std::to_string(k))) floats.push_back(k);
    }
    if (floats.empty()) continue;
    SCOPED_TRACE(name);
    Array out0 = fn(xs)[0];
    Array ct = reshape(1.0 + 0.25 * iota(out0.dtype(), {out0.size()}), out0.shape());
    auto loss = [&](const std::vector<Array>& fs) {
      std::vector<Array> all = xs;
      for (size_t i = 0; i < floats.size(); ++i) all[floats[i]] = fs[i];
      return sum(multiply(fn(all)[0], ct));
    };
    std::vector<Array> primal;
    for (size_t k : floats) primal.push_back(xs[k]);
    std::vector<Array> g = grad(loss)(primal);
    for (size_t i = 0; i < floats.size(); ++i) {
      check(g[i], name + ".grad" + std::to_string(floats[i]));
    }
    ++checked;
  }
  return checked;
}

// ---- One test's own vectors file (tail_test, misc_test): the same line format,
// with "nan" / "inf" tokens, outputs of several dtypes, and the shared case checks. ----

using CaseFn = std::function<std::vector<Array>(const std::vector<Array>&)>;


class VectorFile {
 public:
  explicit VectorFile(const std::string& path) {
    std::ifstream in(path);
    const char* srcdir = std::getenv("TEST_SRCDIR");
    if (!in && srcdir) in.open(std::string(srcdir) + "/graft/" + path);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      std::string name, shape;
      Vec v;
      ls >> name >> v.dtype >> shape;
      if (shape != "scalar") {
        std::istringstream ss(shape);
        for (std::string d; std::getline(ss, d, ',');) v.shape.push_back(std::stoll(d));
      }
      for (std::string tok; ls >> tok;) v.values.push_back(std::strtod(tok.c_str(), nullptr));
      vecs_[name] = std::move(v);
    }
  }
  const std::map<std::string, Vec>& all() const { return vecs_; }
  bool has(const std::string& key) const { return vecs_.count(key) > 0; }

  // A recorded input: float32, int32 / bool, or another dtype numpy names (its values
  // converted exactly, from double).
  Array array_of(const std::string& key) const {
    const Vec& v = vecs_.at(key);
    if (v.dtype == "float32") return array(std::vector<float>(v.values.begin(), v.values.end()), v.shape);
    if (v.dtype == "int32" || v.dtype == "bool") {
      Array a = array(std::vector<int32_t>(v.values.begin(), v.values.end()), v.shape);
      return v.dtype == "bool" ? astype(a, DType::kBool) : a;
    }
    for (DType d : kAllDTypes) {
      if (v.dtype == numpy_dtype_name(d)) return astype(array(v.values, v.shape), d);
    }
    ADD_FAILURE() << key << ": unknown dtype " << v.dtype;
    return array(v.values, v.shape);
  }
  std::vector<Array> inputs(const std::string& name) const {
    std::vector<Array> xs;
    for (int k = 0; has(name + ".in" + std::to_string(k)); ++k) {
      xs.push_back(array_of(name + ".in" + std::to_string(k)));
    }
    return xs;
  }

  // Shape and dtype exactly; values to tol absolute + 2 tol relative (NaN matches NaN, an
  // infinity itself).
  void expect_matches(const Array& got, const std::string& key, double tol = 1e-5) const {
    SCOPED_TRACE(key);
    ASSERT_TRUE(has(key)) << "no vector " << key;
    expect_vec_matches(got, vecs_.at(key), tol, 2.0);
  }


  // Each case's outputs against <name>.out<k>, and no output fewer than JAX gave.
  void expect_outputs_match(const std::map<std::string, CaseFn>& cases,
                            const std::function<double(const std::string&)>& tol) const {
    for (const auto& [name, fn] : cases) {
      SCOPED_TRACE(name);
      std::vector<Array> out;
      ASSERT_NO_THROW(out = fn(inputs(name)));
      for (size_t k = 0; k < out.size(); ++k) {
        expect_matches(out[k], name + ".out" + std::to_string(k), tol(name));
      }
      EXPECT_FALSE(has(name + ".out" + std::to_string(out.size()))) << "JAX gave more outputs";
    }
  }

  // d sum(out0 * ct) / d in<k> against <name>.grad<k> (check_recorded_gradients); returns
  // how many cases had gradients.
  int expect_gradients_match(const std::map<std::string, CaseFn>& cases,
                             const std::function<double(const std::string&)>& tol) const {
    return check_recorded_gradients(
        cases, [this](const std::string& name) { return inputs(name); },
        [this](const std::string& key) { return has(key); },
        [&](const Array& g, const std::string& key) {
          expect_matches(g, key, tol(key.substr(0, key.rfind(".grad"))));
        });
  }

 private:
  std::map<std::string, Vec> vecs_;
};

}  // namespace graft::jnp_vectors
