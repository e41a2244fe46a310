// Cells, units and the output formats.
#include <gtest/gtest.h>

#include <sstream>

#include "ridge/error.hpp"
#include "ridge/report.hpp"

namespace ridge::report {
namespace {

Document sample() {
  Document d;
  d.title = "t";
  Table t;
  t.key = "layers";
  t.columns = {{"name", "layer"}, {"flops", "FLOPs", Unit::Flop}, {"time_s", "time", Unit::Second}};
  t.add_row({Cell::text("conv,1 \"a\""), Cell::count(Count{4089184256}, Unit::Flop), Cell::real(0.00123, Unit::Second)});
  t.add_row({Cell::text("fc"), Cell::count(Count{1} << 70, Unit::Flop), Cell::empty()});
  d.blocks.push_back(t);
  Fields f;
  f.key = "totals.counters";
  f.add("dram_bytes", "DRAM", Cell::count(1000, Unit::Byte));
  d.blocks.push_back(f);
  d.notes.push_back("a note");
  return d;
}

std::string render(const Document& d, const char* fmt) {
  std::ostringstream os;
  write(d, fmt, os);
  return os.str();
}

TEST(Report, JsonKeepsExactIntegersAndNests) {
  auto j = nlohmann::json::parse(render(sample(), "json"));
  EXPECT_EQ(j["layers"][0]["flops"].get<int64_t>(), 4089184256);
  EXPECT_EQ(j["layers"][1]["flops"].get<std::string>(), "1180591620717411303424");  // beyond 64 bits
  EXPECT_TRUE(j["layers"][1]["time_s"].is_null());
  EXPECT_EQ(j["totals"]["counters"]["dram_bytes"].get<int>(), 1000);
  EXPECT_EQ(j["notes"][0], "a note");
}

// Names come from model files: a byte that is not UTF-8 is written as U+FFFD, not refused.
TEST(Report, JsonWritesNamesThatAreNotUtf8) {
  Document d = sample();
  d.title = "conv\xA5";
  const auto j = nlohmann::json::parse(render(d, "json"));
  EXPECT_EQ(j["title"], "conv\xEF\xBF\xBD");
}

// An exact field keeps its unit beside it: bytes with their binary size, FLOPs with their symbol.
TEST(Report, ExactFieldsCarryTheirUnit) {
  EXPECT_EQ(format_field(Cell::count(Count{13476831232}, Unit::Byte), true), "13,476,831,232 B (12.6 GiB)");
  EXPECT_EQ(format_field(Cell::count(Count{512}, Unit::Byte), true), "512 B");
  EXPECT_EQ(format_field(Cell::count(Count{329731182428160}, Unit::Flop), true), "329,731,182,428,160 FLOP");
  EXPECT_EQ(format_field(Cell::count(Count{215}), true), "215");
}

TEST(Report, CsvQuotesAndUsesExactValues) {
  std::string csv = render(sample(), "csv");
  EXPECT_EQ(csv.rfind("name,flops,time_s\n", 0), 0u) << csv;  // the main table alone: loadable as is
  EXPECT_NE(csv.find("\"conv,1 \"\"a\"\"\",4089184256,0.00123"), std::string::npos) << csv;
}

TEST(Report, TableUsesUnitsAndAligns) {
  std::string t = render(sample(), "table");
  EXPECT_NE(t.find("FLOPs [GFLOP]"), std::string::npos) << t;  // one unit per column, in the header
  EXPECT_NE(t.find("time [ms]"), std::string::npos) << t;
  EXPECT_NE(t.find("1.23"), std::string::npos) << t;
  EXPECT_NE(t.find("a note"), std::string::npos);
}

TEST(Report, MarkdownTables) {
  std::string md = render(sample(), "md");
  EXPECT_NE(md.find("| layer | FLOPs [GFLOP] | time [ms] |"), std::string::npos) << md;
  EXPECT_NE(md.find("---:|"), std::string::npos);
}

TEST(Report, UnknownFormatIsAUsageError) { EXPECT_THROW(format_by_name("xml"), UsageError); }

TEST(Report, SiFormatting) {
  EXPECT_EQ(si(4.089e9), "4.09 G");
  EXPECT_EQ(si(999.0), "999");
  EXPECT_EQ(si(0.5), "0.5");
  EXPECT_EQ(format_seconds(2.5e-6), "2.50 us");
  EXPECT_EQ(format_cell(Cell::count(21840, Unit::Param)), "21,840");
}

}  // namespace
}  // namespace ridge::report
