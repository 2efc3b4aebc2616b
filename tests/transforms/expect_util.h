// Assertions the transform tests share: values as doubles, closeness, f32 bits, and graft::Error
// messages (prefix "[op]" and a part).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/error.h"
#include "core/primitives/debug.h"
#include "core/shape.h"
#include "gtest/gtest.h"

namespace graft::testing_util {

inline std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

// Equal f32 bits (any NaN equals any NaN).
inline bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

// got and want (f32) hold the same bits, element by element (the first 5 differences named).
inline void expect_bitwise(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  auto g = got.to_vector<float>(), w = want.to_vector<float>();
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    if (!same_bits(g[i], w[i])) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " got " << g[i] << " want " << w[i];
    }
  }
}

inline void expect_near(const Array& a, const std::vector<double>& want, double tol = 1e-9) {
  std::vector<double> got = vals(a);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// Same shape and values.
inline void expect_same(const Array& a, const Array& b, double tol = 1e-10) {
  ASSERT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  expect_near(a, vals(b), tol);
}

template <typename F>
void expect_error(F f, const std::string& prefix, const std::string& part) {
  try {
    f();
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind(prefix, 0), 0u) << m;
    EXPECT_NE(m.find(part), std::string::npos) << m;
  }
}

// Collects debug_print's lines while it lives (then restores the previous sink).
class DebugPrintCapture {
 public:
  DebugPrintCapture()
      : prev_(set_debug_print_sink([this](const std::string& s) { lines.push_back(s); })) {}
  ~DebugPrintCapture() { set_debug_print_sink(prev_); }
  DebugPrintCapture(const DebugPrintCapture&) = delete;
  DebugPrintCapture& operator=(const DebugPrintCapture&) = delete;
  std::vector<std::string> lines;

 private:
  DebugSink prev_;
};

}  // namespace graft::testing_util
