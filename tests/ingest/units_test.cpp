// Numbers, locales and the unit table.
#include <gtest/gtest.h>

#include "ingest/internal.hpp"

namespace ridge::ingest::detail {
namespace {

Count exact(std::string_view text, std::string_view unit, NumberLocale loc = NumberLocale::Dot) {
  auto v = parse_in_unit(text, unit, loc);
  EXPECT_TRUE(v && v->exact) << text << " " << unit;
  return v && v->exact ? *v->exact : -1;
}

TEST(IngestUnits, ScaledBytesAndTimesBecomeBaseUnits) {
  EXPECT_EQ(exact("32.13", "Kbyte"), 32130);
  EXPECT_EQ(exact("8.47", "Mbyte"), 8470000);
  EXPECT_EQ(exact("19.75", "Gbyte"), Count(19750000000));
  EXPECT_EQ(exact("1", "Tbyte"), Count(1000000000000));
  EXPECT_EQ(exact("5.98", "usecond"), 5980);
  EXPECT_EQ(exact("13.26", "msecond"), 13260000);
  EXPECT_EQ(exact("2", "second"), 2000000000);
  EXPECT_EQ(exact("5.66", "us"), 5660);
  EXPECT_EQ(exact("764.14", "cycle/usecond"), 764140000);
  EXPECT_EQ(exact("1.21", "cycle/nsecond"), 1210000000);
  EXPECT_EQ(exact("576.84", "Mhz"), 576840000);
  EXPECT_EQ(exact("4.88", "Ghz"), 4880000000);
  EXPECT_EQ(exact("21.83", "Gbyte/second"), Count(21830000000));
  EXPECT_EQ(exact("6759.799", "MBps"), Count(6759799000));
  EXPECT_EQ(parse_in_unit("5", "sector", NumberLocale::Dot)->unit, "sector");
  EXPECT_EQ(parse_in_unit("1", "Mbyte", NumberLocale::Dot)->unit, "byte");
  EXPECT_EQ(parse_in_unit("1", "furlong", NumberLocale::Dot)->unit, "furlong");  // unknown: kept as printed
}

TEST(IngestUnits, AttachedSuffixes) {
  EXPECT_NEAR(parse_with_unit("1.6543ms", NumberLocale::Dot)->real, 1654300, 1e-6);
  EXPECT_EQ(*parse_with_unit("793ns", NumberLocale::Dot)->exact, 793);
  EXPECT_EQ(*parse_with_unit("280.19GB/s", NumberLocale::Dot)->exact, Count(280190000000));
  EXPECT_EQ(parse_with_unit("100.00%", NumberLocale::Dot)->unit, "%");
  EXPECT_FALSE(parse_with_unit("Idle", NumberLocale::Dot).has_value());
}

TEST(IngestUnits, SeparatorsAndLocales) {
  EXPECT_EQ(exact("10,135,802", "cycle"), 10135802);
  EXPECT_EQ(exact("13.490.336", "cycle", NumberLocale::Comma), 13490336);
  EXPECT_NEAR(parse_in_unit("9.420.231,80", "cycle", NumberLocale::Comma)->real, 9420231.8, 1e-6);
  EXPECT_NEAR(parse_in_unit("6,72", "cycle/nsecond", NumberLocale::Comma)->real, 6.72e9, 1);
  EXPECT_NEAR(parse_in_unit("9,834,924.98", "cycle", NumberLocale::Dot)->real, 9834924.98, 1e-6);
  EXPECT_EQ(exact("-221", ""), -221);
  EXPECT_EQ(*parse_decimal("3.3255e+10", NumberLocale::Dot)->exact(), Count(33255000000));
  EXPECT_FALSE(parse_decimal("(!) n/a", NumberLocale::Dot).has_value());
  EXPECT_FALSE(parse_decimal("", NumberLocale::Dot).has_value());
  EXPECT_FALSE(parse_decimal("1.2.x", NumberLocale::Dot).has_value());
  EXPECT_FALSE(parse_decimal("99999999999999999999999999999999999999999", NumberLocale::Dot).has_value());
}

TEST(IngestUnits, LocaleDetection) {
  EXPECT_EQ(detect_locale("Elapsed Cycles  cycle  13.490.336\nDuration  msecond  9,97\n"), NumberLocale::Comma);
  EXPECT_EQ(detect_locale("Elapsed Cycles  cycle  10,135,802\nSM Active Cycles  cycle  9,834,924.98\n"), NumberLocale::Dot);
  EXPECT_EQ(detect_locale("\"6,400\",\"5,387.52\"\n"), NumberLocale::Dot);
  EXPECT_EQ(detect_locale("no numbers at all"), NumberLocale::Dot);
}

TEST(IngestUnits, RatesAndRatiosAreNotSummed) {
  EXPECT_TRUE(additive("dram__sectors_read.sum", "sector"));
  EXPECT_TRUE(additive("gpu__time_duration.sum", "nsecond"));
  EXPECT_FALSE(additive("dram__bytes_read.sum.per_second", "byte/second"));
  EXPECT_FALSE(additive("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"));
  EXPECT_FALSE(additive("inst_per_warp", ""));
  EXPECT_FALSE(additive("Block Size", ""));
}

TEST(IngestUnits, TitlesCarryUnits) {
  EXPECT_EQ(split_title_unit("Duration (ns)"), std::make_pair(std::string("Duration"), std::string("ns")));
  EXPECT_EQ(split_title_unit("Bytes (MB)"), std::make_pair(std::string("Bytes"), std::string("MB")));
  EXPECT_EQ(split_title_unit("Name"), std::make_pair(std::string("Name"), std::string("")));
}

TEST(IngestText, CsvQuotingAndFixedColumns) {
  auto row = split_csv(R"("a,b","say ""hi""",,3)");
  ASSERT_EQ(row.size(), 4u);
  EXPECT_EQ(row[0], "a,b");
  EXPECT_EQ(row[1], "say \"hi\"");
  EXPECT_EQ(row[2], "");
  bool complete = true;
  split_csv("\"unterminated,", &complete);
  EXPECT_FALSE(complete);
  auto spans = dash_spans("  ----  -----  ---");
  ASSERT_EQ(spans.size(), 3u);
  auto cells = fixed_cells("    12    345  name with spaces", spans);
  EXPECT_EQ(cells[0], "12");
  EXPECT_EQ(cells[1], "345");
  EXPECT_EQ(cells[2], "name with spaces");
  Lines l("a\r\n\rprogress 1\rprogress 2\nlast");
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[1], "progress 2");
}

}  // namespace
}  // namespace ridge::ingest::detail
