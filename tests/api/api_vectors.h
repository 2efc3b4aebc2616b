// JAX's results for the coverage test's calls (testdata/api_coverage_vectors.txt, written by
// tools/make_api_coverage_vectors.py): one line per result, "<key> <dtype> <shape|scalar>
// <values...>", complex values as real and imaginary parts in turn. compare() checks a graft
// result against one.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/array.h"

namespace graft::api {

struct Recorded {
  std::string dtype;  // numpy's name: "float32", "int32", "bool", "complex64", ...
  Shape shape;
  std::vector<double> values;  // complex: real, imaginary, real, ...
};

// The results by key; empty when the file cannot be read.
std::map<std::string, Recorded> load_recorded(const std::string& path);

// numpy's name for a graft dtype.
std::string numpy_name(DType d);

// "" when got equals want: the same dtype and shape, integers and bools exactly, floats and
// complex parts within tol * (1 + |want|) (NaN matches NaN); else what differs.
std::string compare(const Array& got, const Recorded& want, double tol);

}  // namespace graft::api
