#include "tests/util/test_vectors.h"

#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/error.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace graft::testing {
namespace {

absl::StatusOr<DType> dtype_from_numpy(const std::string& name) {
  static const std::map<std::string, DType> kNames = {
      {"float32", DType::kF32}, {"float64", DType::kF64}, {"bfloat16", DType::kBF16},
      {"float16", DType::kF16}, {"int32", DType::kI32},   {"int64", DType::kI64},
      {"uint32", DType::kU32},  {"uint8", DType::kU8},    {"bool", DType::kBool}};
  auto it = kNames.find(name);
  if (it == kNames.end()) return absl::InvalidArgumentError("unknown dtype " + name);
  return it->second;
}

}  // namespace

const TestVectors& TestVectors::Cached(const std::string& path) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, TestVectors>;  // never freed: tests read it
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded->find(path);
  if (it != loaded->end()) return it->second;
  absl::StatusOr<TestVectors> r = Load(path);
  if (!r.ok()) throw Error(std::string(r.status().message()));
  return loaded->emplace(path, *std::move(r)).first->second;
}

absl::StatusOr<TestVectors> TestVectors::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot open test vectors " + path);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(path + ": " + e.what());
  }
  TestVectors tv;
  tv.path_ = path;
  tv.meta_ = j.contains("meta") ? j["meta"].dump() : "{}";
  if (!j.contains("arrays")) return absl::InvalidArgumentError(path + ": no \"arrays\"");
  for (auto& [name, a] : j["arrays"].items()) {
    auto dt = dtype_from_numpy(a.at("dtype").get<std::string>());
    if (!dt.ok())
      return absl::InvalidArgumentError(path + ": " + name + ": " +
                                        std::string(dt.status().message()));
    Shape shape = a.at("shape").get<std::vector<int64_t>>();
    std::vector<double> data;
    for (const auto& v : a.at("data"))
      data.push_back(v.is_boolean() ? double(v.get<bool>()) : v.get<double>());
    if (static_cast<int64_t>(data.size()) != numel(shape)) {
      return absl::InvalidArgumentError(path + ": " + name + ": data size does not match shape");
    }
    // f64 holds every recorded value exactly (integers up to 2^53); cast to the stored dtype.
    Array arr = astype(array(data, shape), *dt);
    eval({arr});
    tv.arrays_.emplace(name, arr);
  }
  return tv;
}

Array TestVectors::get(const std::string& name) const {
  auto it = arrays_.find(name);
  if (it == arrays_.end()) fail("TestVectors", path_, " has no array named ", name);
  return it->second;
}

void expect_allclose(const Array& got, const Array& want, double rtol, double atol,
                     const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape())
      << what << ": shape " << shape_str(got.shape()) << " vs " << shape_str(want.shape());
  std::vector<double> g = astype(got, DType::kF64).to_vector<double>();
  std::vector<double> w = astype(want, DType::kF64).to_vector<double>();
  double worst = 0;
  size_t worst_i = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    // Equal values (infinities included) and NaN against NaN match.
    if (g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) continue;
    double err = std::abs(g[i] - w[i]) / (atol + rtol * std::abs(w[i]));
    if (!(err <= worst)) {  // also catches NaN
      worst = std::isnan(err) ? INFINITY : err;
      worst_i = i;
    }
  }
  EXPECT_LE(worst, 1.0) << what << ": worst at flat index " << worst_i << ": got " << g[worst_i]
                        << ", want " << w[worst_i] << " (rtol " << rtol << ", atol " << atol << ")";
}

}  // namespace graft::testing
