// Character classes of data/unicode_table.inc (checked on every code point against tokenizers
// by the generating script; spot checks here) and strict UTF-8 decoding.
#include "data/unicode_classes.h"

#include <gtest/gtest.h>

namespace graft::data::unicode {
namespace {

TEST(UnicodeClasses, SpotChecks) {
  EXPECT_EQ(classes('a'), kLetter | kWord);
  EXPECT_EQ(classes('7'), kNumber | kWord);
  EXPECT_EQ(classes('_'), kWord);
  EXPECT_EQ(classes('!'), 0);
  EXPECT_EQ(classes(' '), kSpace);
  EXPECT_EQ(classes('\t'), kSpace);
  EXPECT_EQ(classes(0x1C), 0);  // a separator control: not \s in Oniguruma or Rust
  EXPECT_EQ(classes(0x85), kSpace);
  EXPECT_EQ(classes(0xA0), kSpace);
  EXPECT_EQ(classes(0x3000), kSpace);
  EXPECT_EQ(classes(0x200B), 0);                // ZERO WIDTH SPACE is Cf
  EXPECT_EQ(classes(0x200D), kWord);            // ZWJ: Join_Control
  EXPECT_EQ(classes(0x0301), kWord);            // combining acute: a mark
  EXPECT_EQ(classes(0x00BD), kNumber);          // ½ is No, not \w
  EXPECT_EQ(classes(0x0663), kNumber | kWord);  // Arabic-Indic three: Nd
  EXPECT_EQ(classes(0x216B), kNumber | kWord);  // Ⅻ: Nl, Alphabetic
  EXPECT_EQ(classes(0x65E5), kLetter | kWord);  // 日
  EXPECT_EQ(classes(0x24B6), kWord);            // Ⓐ: So but Alphabetic
  EXPECT_EQ(classes(0x1F44D), 0);               // 👍
  EXPECT_EQ(classes(0x1C89), kLetter | kWord);  // new in Unicode 16.0
  EXPECT_EQ(classes(0xD800), 0);
  EXPECT_EQ(classes(0x10FFFF), 0);
  EXPECT_EQ(classes(0x110000), 0);
}

TEST(UnicodeClasses, DecodesOnlyWellFormedUtf8) {
  auto dec = [](std::string_view s) { return decode_utf8(s, 0); };
  EXPECT_EQ(dec("a").cp, 'a');
  EXPECT_EQ(dec("\xC3\xA9").cp, 0xE9u);
  EXPECT_EQ(dec("\xC3\xA9").len, 2u);
  EXPECT_EQ(dec("\xE6\x97\xA5").cp, 0x65E5u);
  EXPECT_EQ(dec("\xF0\x9F\x91\x8D").cp, 0x1F44Du);
  EXPECT_EQ(dec("\xF0\x9F\x91\x8D").len, 4u);
  for (std::string_view bad :
       {"\x80", "\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80",
        "\xF5\x80\x80\x80", "\xC3", "\xE6\x97", "\xC3\x41", "\xFF"}) {
    EXPECT_EQ(dec(bad).cp, kInvalid) << testing::PrintToString(std::string(bad));
    EXPECT_EQ(dec(bad).len, 1u);
  }
  EXPECT_EQ(last_char("ab\xC3\xA9").cp, 0xE9u);
  EXPECT_EQ(last_char("ab\xC3\xA9").len, 2u);
  EXPECT_EQ(last_char("a\xA9").cp, kInvalid);
  EXPECT_EQ(last_char("\xE6\x97").cp, kInvalid);
  EXPECT_EQ(last_char("x\xF0\x9F\x91\x8D").cp, 0x1F44Du);
}

}  // namespace
}  // namespace graft::data::unicode
