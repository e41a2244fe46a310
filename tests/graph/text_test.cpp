#include <gtest/gtest.h>

#include "ridge/text.hpp"

namespace ridge {
namespace {

TEST(Text, LowerAndUpperMapAsciiLettersOnly) {
  EXPECT_EQ(ascii_lower("A100-SXM4_80GB"), "a100-sxm4_80gb");
  EXPECT_EQ(ascii_upper("fp16 tensor"), "FP16 TENSOR");
  // Bytes outside A-Z / a-z (UTF-8 included) pass through unchanged, whatever the locale.
  EXPECT_EQ(ascii_lower("Ünïcode Ä"), "Ünïcode Ä");
  EXPECT_EQ(ascii_upper(""), "");
}

TEST(Text, TrimDropsAsciiWhitespaceAtBothEndsOnly) {
  EXPECT_EQ(trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(trim("\v\fx"), "x");
  EXPECT_EQ(trim(" \t\n "), "");
  EXPECT_EQ(trim(""), "");
  const std::string s = " keep ";
  EXPECT_EQ(trim(s).data(), s.data() + 1);  // a view into the argument, no copy
}

}  // namespace
// A node name from a file reaches the terminal, CSV files and error lines: escape sequences and broken UTF-8 must
// not (an ESC would recolour the terminal), well-formed UTF-8 names stay as they are.
TEST(Text, PrintableEscapesControlsAndBrokenUtf8AndKeepsUtf8) {
  EXPECT_EQ(printable("a\x1b[31mRED\x07"), "a?[31mRED?");
  EXPECT_EQ(printable("tab\tkept, del\x7f, newline\n"), "tab\tkept, del?, newline?");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80");
  EXPECT_EQ(printable("b\xff\xc3"), "b\xef\xbf\xbd\xef\xbf\xbd");       // a stray byte, a cut sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");         // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
}

TEST(Text, AllDigitsIsOneOrMoreAsciiDigits) {
  EXPECT_TRUE(all_digits("0"));
  EXPECT_TRUE(all_digits("0123456789"));
  EXPECT_FALSE(all_digits(""));
  EXPECT_FALSE(all_digits("-1"));
  EXPECT_FALSE(all_digits("1.5"));
  EXPECT_FALSE(all_digits("12a"));
  EXPECT_FALSE(all_digits("\xd9\xa3"));  // ARABIC-INDIC DIGIT THREE: not ASCII
}

}  // namespace ridge
