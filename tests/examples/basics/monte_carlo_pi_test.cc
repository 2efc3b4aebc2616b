// examples/basics' Monte Carlo estimate of pi (examples/monte_carlo_pi.h) against JAX's.
//
// How the values were made: tools/make_basics_pi_vectors.py ran the same computation with
// JAX 0.10.2 on CPU (x64 off; jax.random.PRNGKey(0), split into 4, the first subkey's uniform
// f32 [n, 2] points) and wrote testdata/pi_vectors.txt: per n, the count inside the circle and
// pi's f32 bits. graft's must be the same bits (the count is exact in f32, so this is the
// count). The README quotes the example's value (n = 2^22), rounded to 5 decimals.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "examples/monte_carlo_pi.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

struct Recorded {
  int64_t n = 0, inside = 0;
  uint32_t bits = 0;
};

std::ifstream open_runfile(const std::string& path) {
  std::ifstream in(path);
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (!in && srcdir) in.open(std::string(srcdir) + "/graft/" + path);
  return in;
}

std::vector<Recorded> recorded() {
  std::ifstream in = open_runfile("tests/examples/basics/testdata/pi_vectors.txt");
  std::vector<Recorded> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    Recorded r;
    std::string bits;
    ls >> r.n >> r.inside >> bits;
    r.bits = static_cast<uint32_t>(std::stoul(bits, nullptr, 16));
    out.push_back(r);
  }
  return out;
}

float float_of(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

TEST(MonteCarloPi, EqualsJaxForTheSameKey) {
  const std::vector<Recorded> want = recorded();
  ASSERT_EQ(want.size(), 2u) << "testdata/pi_vectors.txt not read";
  for (const Recorded& r : want) {
    SCOPED_TRACE("n = " + std::to_string(r.n));
    const float pi = examples::monte_carlo_pi(random::key(0), r.n).item<float>();
    uint32_t bits;
    std::memcpy(&bits, &pi, sizeof bits);
    EXPECT_EQ(bits, r.bits) << "graft " << pi << ", JAX " << float_of(r.bits);
    EXPECT_EQ(std::lround(static_cast<double>(pi) * r.n / 4), r.inside);
    std::printf("n = %lld: pi ~= %.5f (JAX %.5f)\n", static_cast<long long>(r.n), pi,
                float_of(r.bits));
  }
}

// The README ("More examples") quotes the example's value: "... equals JAX's for the same key:
// 3.14166" (line breaks read as spaces).
TEST(MonteCarloPi, TheReadmeQuotesJaxsValue) {
  std::ifstream in = open_runfile("README.md");
  ASSERT_TRUE(in) << "README.md not found";
  std::string text, word;
  while (in >> word) text += word + " ";
  const std::vector<Recorded> want = recorded();
  ASSERT_FALSE(want.empty());
  char quoted[64];
  std::snprintf(quoted, sizeof quoted, "equals JAX's for the same key: %.5f",
                float_of(want[0].bits));
  EXPECT_NE(text.find(quoted), std::string::npos) << "README.md does not say \"" << quoted << "\"";
}

}  // namespace
}  // namespace graft
