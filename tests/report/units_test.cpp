// Units: binary sizes, decimal rates, no milli/micro on ratios, no scientific notation, noise-level intercepts,
// one unit per column, tables that fit a width, CSV one table per file, JSON metadata and booleans.
#include <gtest/gtest.h>

#include <sstream>

#include "ridge/report.hpp"

namespace ridge::report {
namespace {

size_t width_of(const std::string& line) {
  size_t w = 0;
  for (unsigned char ch : line) w += (ch & 0xC0) != 0x80;
  return w;
}

TEST(Units, BytesAreBinary) {
  EXPECT_EQ(format_bytes(102760448), "98.0 MiB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_cell(Cell::count(Count{3} << 30, Unit::Byte)), "3.00 GiB");
  EXPECT_EQ(format_cell(Cell::count(1000, Unit::Byte)), "1,000 B");
}

TEST(Units, RatesAreDecimal) {
  EXPECT_EQ(format_cell(Cell::real(1.23e13, Unit::FlopPerSecond)), "12.3 TFLOP/s");
  EXPECT_EQ(format_cell(Cell::real(9e11, Unit::BytePerSecond)), "900 GB/s");
  EXPECT_EQ(format_cell(Cell::count(4089184256, Unit::Flop)), "4.09 GFLOP");
}

TEST(Units, DimensionlessRatiosHaveNoMilliOrMicro) {
  EXPECT_EQ(format_cell(Cell::real(0.25, Unit::FlopPerByte)), "0.25 FLOP/B");
  EXPECT_EQ(format_cell(Cell::real(5461.3, Unit::FlopPerByte)), "5,461 FLOP/B");
  EXPECT_EQ(format_cell(Cell::real(0.85, Unit::Ratio)), "0.85x");
  EXPECT_EQ(format_cell(Cell::real(0.5, Unit::Flop)), "0.5 FLOP");
  EXPECT_EQ(si(0.5), "0.5");
  EXPECT_EQ(si(4.089e9), "4.09 G");
  // Times keep their own units: ms, us and ns are not prefixes on a ratio.
  EXPECT_EQ(format_seconds(0.00123), "1.23 ms");
  EXPECT_EQ(format_seconds(2.5e-6), "2.50 us");
}

TEST(Units, NoScientificNotation) {
  for (double v : {1.5e-7, 3.2e12, 1e21, -4.4e-5, 123456.789}) {
    for (Unit u : {Unit::None, Unit::Flop, Unit::Byte, Unit::Second, Unit::FlopPerSecond, Unit::FlopPerByte,
                   Unit::Ratio, Unit::Percent}) {
      std::string s = format_cell(Cell::real(v, u));
      EXPECT_EQ(s.find("e+"), std::string::npos) << v << " -> " << s;
      EXPECT_EQ(s.find("e-"), std::string::npos) << v << " -> " << s;
    }
  }
  EXPECT_EQ(plain(3.2e12), "3,200,000,000,000");
  EXPECT_EQ(plain(0.000123), "0.000123");
  EXPECT_EQ(plain(1e-12), "0");
  EXPECT_EQ(format_seconds(12345), "12,345 s");
}

TEST(Units, NoiseLevelInterceptsAreZero) {
  // A line through exact FLOP counts (up to 1e12) fitted in doubles leaves an intercept of a few ulps.
  EXPECT_EQ(zero_if_noise(-3.8e-6, 1.2e12), 0.0);
  EXPECT_EQ(zero_if_noise(1e3, 1.2e12), 0.0);
  EXPECT_EQ(zero_if_noise(5e4, 1.2e12), 5e4);  // 4e-8 of the data: a real fixed cost
  EXPECT_EQ(zero_if_noise(0.002, 0.01), 0.002);
}

Table flops_table() {
  Table t;
  t.key = "layers";
  t.columns = {{"name", "layer"},
               {"flops", "FLOPs", Unit::Flop},
               {"out_bytes", "out", Unit::Byte},
               {"time_s", "time", Unit::Second},
               {"descriptor", "descriptor", Unit::None, false, 2},
               {"shape", "shape", Unit::None, false, 1}};
  t.add_row({Cell::text("layer1.0.conv1"), Cell::count(4089184256, Unit::Flop), Cell::count(3211264, Unit::Byte),
             Cell::real(0.0021, Unit::Second), Cell::text("mb1ic64ih56oc64oh56kh3ph1 with a long tail of text"),
             Cell::text("1x64x56x56")});
  t.add_row({Cell::text("layer4.2.downsample.0"), Cell::count(118013952, Unit::Flop), Cell::count(802816, Unit::Byte),
             Cell::real(0.00045, Unit::Second), Cell::text("mb1ic512"), Cell::text("1x2048x7x7")});
  t.add_row({Cell::text("fc"), Cell::count(2000000000, Unit::Flop), Cell::count(4000, Unit::Byte),
             Cell::real(0.0012, Unit::Second), Cell::text("mb1"), Cell::text("1x1000")});
  return t;
}

TEST(Units, AUnitLetterInsideATitleStillGetsItsUnit) {
  Table t;
  t.columns = {{"request_latency_s", "request latency", Unit::Second}};
  t.add_row({Cell::real(3.29, Unit::Second)});
  EXPECT_EQ(format_column(t, 0).header, "request latency [s]");
  Table titled;
  titled.columns = {{"time_ms", "time (ms)", Unit::Second}};
  titled.add_row({Cell::real(0.002, Unit::Second)});
  EXPECT_EQ(format_column(titled, 0).header, "time (ms)");
}

TEST(Units, TheTimeColumnsOfATableShareOneUnit) {
  // A roofline row: compute and memory time side by side must read in the same unit to be compared.
  Table t;
  t.columns = {{"compute_s", "compute", Unit::Second}, {"memory_s", "memory", Unit::Second},
               {"bytes", "bytes", Unit::Byte}};
  t.add_row({Cell::real(387e-6, Unit::Second), Cell::real(628e-6, Unit::Second), Cell::real(2048, Unit::Byte)});
  t.add_row({Cell::real(2.6e-9, Unit::Second), Cell::real(1057e-6, Unit::Second), Cell::real(4096, Unit::Byte)});
  t.add_row({Cell::real(1.3e-9, Unit::Second), Cell::real(1057e-6, Unit::Second), Cell::real(4096, Unit::Byte)});
  const ColumnText compute = format_column(t, 0), memory = format_column(t, 1);
  EXPECT_EQ(compute.header, "compute [us]");  // alone, its median (2.6 ns) would make it [ns]
  EXPECT_EQ(memory.header, "memory [us]");
  EXPECT_EQ(compute.cells[0], "387");
  EXPECT_EQ(memory.cells[0], "628");
  EXPECT_EQ(format_column(t, 2).header, "bytes [KiB]");  // other units keep their own choice
}

TEST(Units, OneUnitPerColumn) {
  Table t = flops_table();
  ColumnText flops = format_column(t, 1);
  EXPECT_EQ(flops.header, "FLOPs [GFLOP]");
  EXPECT_EQ(flops.cells, (std::vector<std::string>{"4.09", "0.118", "2.00"}));
  ColumnText bytes = format_column(t, 2);
  EXPECT_EQ(bytes.header, "out [KiB]");
  EXPECT_EQ(bytes.cells[0], "3,136");
  ColumnText time = format_column(t, 3);
  EXPECT_EQ(time.header, "time [ms]");
  EXPECT_EQ(time.cells[1], "0.45");
  for (const auto& c : {flops, bytes, time})
    for (const auto& s : c.cells) EXPECT_EQ(s.find_first_of("GMKkBs"), std::string::npos) << s;
}

TEST(Table, FitsTheWidthAndSaysWhatWasLeftOut) {
  Document d;
  d.blocks.push_back(flops_table());
  std::ostringstream wide, narrow;
  write_text(d, wide, TextOptions{0});
  write_text(d, narrow, TextOptions{60});
  EXPECT_NE(wide.str().find("descriptor"), std::string::npos);
  EXPECT_EQ(wide.str().find("left out"), std::string::npos);
  std::istringstream lines(narrow.str());
  std::string line, last;
  while (std::getline(lines, line)) {
    EXPECT_LE(width_of(line), 60u) << line;  // the note too
    if (line.find("left out") != std::string::npos) last = line;
  }
  EXPECT_NE(last.find("descriptor"), std::string::npos) << narrow.str();  // dropped first (highest rank)
  EXPECT_NE(last.find("--wide"), std::string::npos);
  EXPECT_NE(narrow.str().find("FLOPs [GFLOP]"), std::string::npos);  // an unranked column stays
  // Very narrow: the names are shortened with an ellipsis rather than overflowing.
  std::ostringstream tiny;
  write_text(d, tiny, TextOptions{35});
  EXPECT_NE(tiny.str().find("…"), std::string::npos) << tiny.str();
}

TEST(Table, NoScientificNotationInHumanFormats) {
  Document d;
  Table t;
  t.key = "x";
  t.columns = {{"a", "a"}, {"b", "b", Unit::FlopPerByte}, {"c", "c", Unit::Ratio}};
  t.add_row({Cell::real(1.5e-7), Cell::real(2.5e-4, Unit::FlopPerByte), Cell::real(1e9, Unit::Ratio)});
  t.add_row({Cell::real(3e15), Cell::real(0.25, Unit::FlopPerByte), Cell::real(0.001, Unit::Ratio)});
  d.blocks.push_back(t);
  for (const char* f : {"table", "md"}) {
    std::ostringstream os;
    write(d, f, os);
    EXPECT_EQ(os.str().find("e-0"), std::string::npos) << os.str();
    EXPECT_EQ(os.str().find("e+"), std::string::npos) << os.str();
    EXPECT_EQ(os.str().find(" m"), std::string::npos) << os.str();  // no milli prefix anywhere
  }
}

Document two_tables() {
  Document d;
  d.title = "t";
  d.command = "summary";
  d.inputs = {{"model", "resnet50"}, {"batch", 8}};
  d.blocks.push_back(flops_table());
  Table other;
  other.key = "fits";
  other.columns = {{"quantity", "quantity"}, {"slope", "slope", Unit::Flop}};
  other.add_row({Cell::text("flops"), Cell::real(1.5e-7, Unit::Flop)});
  d.blocks.push_back(other);
  Fields f;
  f.key = "totals";
  f.add("params", "params", Cell::count(25557032, Unit::Param)).add("complete", "complete", Cell::flag(true));
  d.blocks.push_back(f);
  return d;
}

TEST(Csv, OneTablePerFile) {
  Document d = two_tables();
  std::ostringstream os;
  write(d, "csv", os);
  EXPECT_EQ(os.str(), csv_table(std::get<Table>(d.blocks[0])));  // stdout: the main table only
  EXPECT_EQ(os.str().find('#'), std::string::npos);
  d.main_table = "fits";
  EXPECT_EQ(main_table(d)->key, "fits");
  auto files = csv_files(d);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].first, "layers");
  EXPECT_EQ(files[1].first, "fits");
  EXPECT_EQ(files[2].first, "totals");
  EXPECT_EQ(files[2].second, "key,value,unit\ntotals.params,25557032,\ntotals.complete,true,\n");
  EXPECT_EQ(files[1].second, "quantity,slope\nflops,0.00000015\n");  // plain, never 1.5e-07
}

TEST(Json, CarriesVersionsInputsAndBooleans) {
  auto j = to_json(two_tables());
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
  EXPECT_EQ(j["ridge_version"], std::string(ridge_version()));
  EXPECT_EQ(j["command"], "summary");
  EXPECT_EQ(j["inputs"]["batch"], 8);
  EXPECT_TRUE(j["totals"]["complete"].is_boolean());
  EXPECT_EQ(format_cell(Cell::flag(false)), "no");
}

}  // namespace
}  // namespace ridge::report
