// CRC-32C (checkpoint/crc32c.h), used by checkpoint metadata and TensorBoard's TFRecord framing,
// against published check values and a bit-at-a-time reference straight from the polynomial.
#include "checkpoint/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tests/util/crc32c_reference.h"

namespace graft::checkpoint {
namespace {

uint32_t crc_of(const std::string& s) { return crc32c(s.data(), s.size()); }

using graft::testing::crc32c_bitwise;

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc_of("123456789"), 0xE3069283u);
  EXPECT_EQ(crc_of(""), 0u);
  // RFC 3720 (iSCSI) appendix B.4.
  EXPECT_EQ(crc_of(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc_of(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(crc_of(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc_of(descending), 0x113FDB5Cu);
  EXPECT_EQ(crc32c_bitwise("123456789"), 0xE3069283u);  // the reference itself
}

TEST(Crc32c, MatchesBitwiseAndExtends) {
  std::mt19937 rng(3);
  for (int len : {1, 7, 8, 9, 64, 1000}) {
    std::string s(len, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    EXPECT_EQ(crc_of(s), crc32c_bitwise(s)) << len;
    size_t half = s.size() / 2;
    EXPECT_EQ(crc32c(s.data() + half, s.size() - half, crc32c(s.data(), half)), crc_of(s)) << len;
  }
}

}  // namespace
}  // namespace graft::checkpoint
