// Test vectors recorded from a reference library (JAX, Optax, ...) by a script in tools/.
//
// File format (JSON, written with Python's json.dump):
//   {"meta": {...free-form: generator, versions...},
//    "arrays": {"name": {"dtype": "float32", "shape": [2, 3], "data": [flat row-major]}}}
// dtype is a numpy name (float32, float64, int32, int64, uint32, bool). bf16/f16 values are
// stored as float data with "dtype": "bfloat16"/"float16".
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "core/array.h"

namespace graft::testing {

class TestVectors {
 public:
  // path is relative to the runfiles root, e.g. "tests/nn/testdata/llama_tiny.json".
  static absl::StatusOr<TestVectors> Load(const std::string& path);
  // The file loaded once per process (later calls return the same object); a file that does
  // not load is a graft::Error with Load's message.
  static const TestVectors& Cached(const std::string& path);

  bool has(const std::string& name) const { return arrays_.count(name) > 0; }
  // The named array, evaluated; throws graft::Error naming the file if it is absent.
  Array get(const std::string& name) const;
  const std::map<std::string, Array>& arrays() const { return arrays_; }
  const std::string& meta() const { return meta_; }  // the "meta" object as JSON text

 private:
  std::string path_;
  std::string meta_;
  std::map<std::string, Array> arrays_;
};

// Max |got - want| / (atol + rtol |want|) <= 1 elementwise after casting both to f64, equal
// values (infinities included) and NaN against NaN matching; on failure the gtest message
// names `what`, the worst index and both values.
void expect_allclose(const Array& got, const Array& want, double rtol, double atol,
                     const std::string& what);

}  // namespace graft::testing
