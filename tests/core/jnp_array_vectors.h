// The JAX-recorded cases of tests/core/testdata/jnp_array_vectors.txt and
// jnp_linalg_vectors.txt (tools/make_jnp_*_vectors.py) and conv_vectors.txt
// (tools/make_conv_vectors.py), shared by einsum_test, numpy_array_test, numpy_linalg_test
// and conv_test: one vector
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
    // strtod, unlike >> double, reads the nan / inf tokens.
    for (std::string tok; ls >> tok;) v.values.push_back(std::strtod(tok.c_str(), nullptr));
    out[name] = std::move(v);
  }
}

// The array cases, the jnp.linalg cases (tools/make_jnp_linalg_vectors.py) and the
// convolution cases (tools/make_conv_vectors.py), whose names do not overlap. A test reads
// the files its BUILD rule lists as data.
// The array cases, the jnp.linalg cases (tools/make_jnp_linalg_vectors.py) and the jnp.fft /
// complex-function cases (tools/make_jnp_fft_vectors.py), whose names do not overlap.
inline std::map<std::string, Vec> load_vectors() {
  std::map<std::string, Vec> out;
  load_file("tests/core/testdata/jnp_array_vectors.txt", out);
  load_file("tests/core/testdata/jnp_linalg_vectors.txt", out);
  load_file("tests/core/testdata/jnp_linalg_decomp_vectors.txt", out);  // only where a test has it
  load_file("tests/core/testdata/conv_vectors.txt", out);
  load_file("tests/core/testdata/jnp_fft_vectors.txt", out);
  load_file("tests/core/testdata/jnp_tail_vectors.txt", out);    // numpy_tail_test's
  load_file("tests/core/testdata/jnp_setops_vectors.txt", out);  // numpy_setops_test's
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

// The stored vector in its own dtype (float32, int32 or bool; to_array makes every one f32).
inline Array typed_array(const Vec& v) {
  if (v.dtype == "float32") return to_array(v);
  Array a = array(std::vector<int32_t>(v.values.begin(), v.values.end()), v.shape);
  return v.dtype == "bool" ? astype(a, DType::kBool) : a;
}

// A case's inputs <name>.in0, .in1, ... in their own dtypes.
inline std::vector<Array> typed_inputs(const std::string& name) {
  std::vector<Array> xs;
  for (int k = 0; has_vec(name + ".in" + std::to_string(k)); ++k) {
    xs.push_back(typed_array(vectors().at(name + ".in" + std::to_string(k))));
  }
  return xs;
}

inline std::vector<Array> inputs(const std::string& name) {
  std::vector<Array> xs;
  for (int k = 0; has_vec(name + ".in" + std::to_string(k)); ++k) {
    xs.push_back(to_array(vectors().at(name + ".in" + std::to_string(k))));
  }
  return xs;
}

inline const char* dtype_word(DType d) {
  switch (d) {
    case DType::kF32:
      return "float32";
    case DType::kI32:
      return "int32";
    case DType::kBool:
      return "bool";
    default:
      return "other";
  }
}

inline void expect_matches(const Array& got, const std::string& key, double tol = 1e-5) {
  SCOPED_TRACE(key);
  ASSERT_TRUE(has_vec(key)) << "no vector " << key;
  const Vec& want = vectors().at(key);
  ASSERT_EQ(got.shape(), want.shape);
  EXPECT_STREQ(dtype_word(got.dtype()), want.dtype.c_str());
  std::vector<double> g = astype(got, DType::kF64).to_vector<double>();
  ASSERT_EQ(g.size(), want.values.size());
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    const double w = want.values[i];
    const bool ok = std::isnan(w)   ? std::isnan(g[i])
                    : std::isinf(w) ? g[i] == w
                                    : std::fabs(g[i] - w) <= tol + tol * std::fabs(w);
    if (!ok) {
      ADD_FAILURE() << "at " << i << ": got " << g[i] << ", want " << want.values[i];
      ++bad;
    }
  }
}

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

// Cases with several outputs and typed inputs (numpy_tail_test, numpy_setops_test): each
// case's outputs against <name>.out0, .out1, ... (and no more outputs than JAX gave).
using CaseFn = std::function<std::vector<Array>(const std::vector<Array>&)>;
inline void expect_case_outputs_match(const std::map<std::string, CaseFn>& cases, double tol) {
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    std::vector<Array> out;
    ASSERT_NO_THROW(out = fn(typed_inputs(name)));
    for (size_t k = 0; k < out.size(); ++k) {
      expect_matches(out[k], name + ".out" + std::to_string(k), tol);
    }
    EXPECT_FALSE(has_vec(name + ".out" + std::to_string(out.size()))) << "JAX gave more outputs";
  }
}

// d sum(out0 * ct) / d in<k> against <name>.grad<k> for every input with a stored gradient,
// ct = 1 + 0.25 * arange(out0.size); returns how many cases had gradients.
inline int expect_case_grads_match(const std::map<std::string, CaseFn>& cases, double tol) {
  int checked = 0;
  for (const auto& [name, fn] : cases) {
    std::vector<Array> xs = typed_inputs(name);
    std::vector<size_t> floats;
    for (size_t k = 0; k < xs.size(); ++k) {
      if (has_vec(name + ".grad" + std::to_string(k))) floats.push_back(k);
    }
    if (floats.empty()) continue;
    SCOPED_TRACE(name);
    Array out0 = fn(xs)[0];
    Array ct = reshape(1.0 + 0.25 * iota(DType::kF32, {out0.size()}), out0.shape());
    auto loss = [&](const std::vector<Array>& fs) {
      std::vector<Array> all = xs;
      for (size_t i = 0; i < floats.size(); ++i) all[floats[i]] = fs[i];
      return sum(multiply(fn(all)[0], ct));
    };
    std::vector<Array> primal;
    for (size_t k : floats) primal.push_back(xs[k]);
    std::vector<Array> g = grad(loss)(primal);
    for (size_t i = 0; i < floats.size(); ++i) {
      expect_matches(g[i], name + ".grad" + std::to_string(floats[i]), tol);
    }
    ++checked;
  }
  return checked;
}

}  // namespace graft::jnp_vectors
