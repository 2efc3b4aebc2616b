#include "tests/api/api_vectors.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/ops.h"

namespace graft::api {

std::map<std::string, Recorded> load_recorded(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const char* srcdir = std::getenv("TEST_SRCDIR");
    if (srcdir) in.open(std::string(srcdir) + "/graft/" + path);
  }
  std::map<std::string, Recorded> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string key, shape;
    Recorded r;
    ls >> key >> r.dtype >> shape;
    if (shape != "scalar") {
      std::istringstream ss(shape);
      for (std::string d; std::getline(ss, d, ',');) r.shape.push_back(std::stoll(d));
    }
    // strtod, not >>, so that "nan" and "inf" read too.
    for (std::string tok; ls >> tok;) r.values.push_back(std::strtod(tok.c_str(), nullptr));
    out[key] = std::move(r);
  }
  return out;
}

std::string numpy_name(DType d) {
  switch (d) {
    case DType::kBool: return "bool";
    case DType::kU8: return "uint8";
    case DType::kU16: return "uint16";
    case DType::kU32: return "uint32";
    case DType::kU64: return "uint64";
    case DType::kI8: return "int8";
    case DType::kI16: return "int16";
    case DType::kI32: return "int32";
    case DType::kI64: return "int64";
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    case DType::kF32: return "float32";
    case DType::kF64: return "float64";
    case DType::kC64: return "complex64";
    case DType::kC128: return "complex128";
    case DType::kF8E4M3FN: return "float8_e4m3fn";
    case DType::kF8E5M2: return "float8_e5m2";
  }
  return "?";
}

std::string compare(const Array& got, const Recorded& want, double tol) {
  std::ostringstream why;
  if (numpy_name(got.dtype()) != want.dtype) {
    why << "dtype " << numpy_name(got.dtype()) << ", JAX's " << want.dtype;
    return why.str();
  }
  if (got.shape() != want.shape) {
    why << "shape " << shape_str(got.shape()) << ", JAX's " << shape_str(want.shape);
    return why.str();
  }
  std::vector<double> g;
  if (is_complex(got.dtype())) {
    std::vector<double> re = astype(real(got), DType::kF64).to_vector<double>();
    std::vector<double> im = astype(imag(got), DType::kF64).to_vector<double>();
    for (size_t i = 0; i < re.size(); ++i) {
      g.push_back(re[i]);
      g.push_back(im[i]);
    }
  } else {
    g = astype(got, DType::kF64).to_vector<double>();
  }
  if (g.size() != want.values.size()) {
    why << g.size() << " values, JAX's file has " << want.values.size();
    return why.str();
  }
  const bool exact = !is_inexact(got.dtype());
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want.values[i];
    const bool ok = std::isnan(w)   ? std::isnan(g[i])
                    : exact         ? g[i] == w
                    : std::isinf(w) ? g[i] == w
                                    : std::fabs(g[i] - w) <= tol * (1 + std::fabs(w));
    if (!ok) {
      why << "value " << i << ": " << g[i] << ", JAX's " << w;
      return why.str();
    }
  }
  return "";
}

}  // namespace graft::api
