// One entry of the API coverage test (api_coverage_test.cc): a call of graft's version of a
// JAX name on fixed inputs. The entry compiles only while the function exists; the test runs
// it (it must not throw) and, where tools/make_api_coverage_vectors.py recorded JAX's result
// for the same call under key_of(entry), compares the two.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ops.h"

namespace graft::api {

struct Entry {
  std::string module;  // "jnp", "jnp.linalg", "jnp.fft", "optax", "jax.nn"
  std::string name;    // as JAX spells it ("linalg.qr" for jnp.linalg.qr)
  std::function<Array()> call;
  // Floats compare within tol * (1 + |JAX's value|); integers and bools exactly.
  double tol = 1e-5;
};

// A name whose graft version covers less than JAX's (a documented limitation). probe, where
// set, is a call JAX accepts that graft refuses: it must throw graft::Error, so that the entry
// goes once the limitation does.
struct Limitation {
  std::string module, name, what;
  std::function<void()> probe = nullptr;
};

inline std::string key_of(const std::string& module, const std::string& name) {
  return module + ":" + name;
}

// The inputs, as tools/make_api_coverage_vectors.py: v = arange(1, 7) * 0.25 (f32[6]),
// m = arange(1, 7) as f32[2, 3], sq a symmetric positive-definite f32[3, 3] with distinct
// eigenvalues.
inline Array v() { return arange(1.0, 7.0, 1.0) * 0.25; }
inline Array m() { return reshape(arange(1.0, 7.0, 1.0), {2, 3}); }
inline Array sq() {
  return array<float>({4.0f, 1.0f, 0.5f, 1.0f, 3.0f, 0.2f, 0.5f, 0.2f, 2.0f}, Shape{3, 3});
}
inline Array f32s(std::vector<float> x) { return array<float>(x); }
inline Array i32s(std::vector<int32_t> x) { return array<int32_t>(x); }
// A C++ bool answer (iscomplexobj, can_cast, ...) as a bool scalar, so it is compared too.
inline Array flag(bool b) { return Array(b); }

// The entries, by area (jnp_entries.cc, linalg_fft_entries.cc, optax_nn_entries.cc), and the
// documented limitations (limitations.cc).
std::vector<Entry> jnp_entries();
std::vector<Entry> linalg_fft_entries();
std::vector<Entry> optax_nn_entries();
std::vector<Limitation> limitations();

}  // namespace graft::api

// An entry whose value is the expression (an Array, or what converts to one).
#define API(module, name, ...) \
  ::graft::api::Entry { module, name, [] { return ::graft::Array(__VA_ARGS__); } }
// The same with its own tolerance (the reason next to it).
#define API_TOL(tol, module, name, ...) \
  ::graft::api::Entry { module, name, [] { return ::graft::Array(__VA_ARGS__); }, tol }
