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
}  // namespace ridge
