// Shared pieces of the ingest readers: numbers with locale separators, the unit table, line and table
// splitting, and one entry point per format family.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/ingest.hpp"
#include "ridge/text.hpp"

namespace ridge::ingest::detail {

// ---- numbers and units (units.cpp) ---------------------------------------------------------------------

/// How a file groups digits: 1,234.5 (C/en), 1.234,5 (es/de).
enum class NumberLocale : uint8_t { Dot, Comma };
/// Looks for values that are only valid with a decimal comma (1.234.567, 9.420.231,80, 6,72) or a decimal point;
/// the first 4,096 such values decide.
NumberLocale detect_locale(std::string_view text);

/// A printed decimal: mantissa * 10^exp10, exact.
struct Decimal {
  Count mantissa = 0;
  int exp10 = 0;
  double to_double() const;
  /// The integer value when it is whole.
  std::optional<Count> exact() const;
};
/// Parses "1,234", "9.420.231,80", "-221", "3.3255e+10", "5.98". nullopt for anything else.
std::optional<Decimal> parse_decimal(std::string_view s, NumberLocale loc);

/// Converts a value printed with `unit` to base units. Unknown units are kept as printed.
Value to_base(const Decimal& d, std::string_view unit);
/// Splits "280.19GB/s", "100.00%", "793ns" into number and unit suffix.
std::pair<std::string_view, std::string_view> split_number_unit(std::string_view s);
/// Parses a value with an attached unit suffix ("1.6543ms") into base units.
std::optional<Value> parse_with_unit(std::string_view s, NumberLocale loc);
/// Parses a bare number in a column whose unit is known.
std::optional<Value> parse_in_unit(std::string_view s, std::string_view unit, NumberLocale loc);
/// True when values of this metric/unit may be summed over kernels (not rates, ratios or percentages).
bool additive(std::string_view metric, std::string_view base_unit);
/// Unit in a column title: "Duration (ns)" -> {"Duration", "ns"}; no parentheses -> {title, ""}.
std::pair<std::string, std::string> split_title_unit(std::string_view title);

// ---- text (text.cpp) ----------------------------------------------------------------------------------

/// A file's lines (without '\r' or '\n'), with 1-based numbers.
struct Lines {
  std::vector<std::string_view> lines;
  explicit Lines(std::string_view text);
  size_t size() const { return lines.size(); }
  std::string_view operator[](size_t i) const { return lines[i]; }
};
bool starts_with(std::string_view s, std::string_view p);
bool contains(std::string_view s, std::string_view p);
/// Leading spaces.
size_t indent(std::string_view s);
/// Splits one CSV record (RFC 4180 quoting, doubled quotes). `complete` is false when a quote is unterminated.
std::vector<std::string> split_csv(std::string_view line, bool* complete = nullptr);
/// Whitespace-separated tokens.
std::vector<std::string_view> tokens(std::string_view s);
/// Column spans [begin, end) of a dashed rule line ("----  -----  --").
std::vector<std::pair<size_t, size_t>> dash_spans(std::string_view rule);
/// True when the line is a dashed rule (dashes and spaces only, at least one run of 3 dashes).
bool is_dash_rule(std::string_view s);
/// Cells of a fixed-width row, cut midway in the gaps between spans; the last cell takes the rest of the line.
std::vector<std::string> fixed_cells(std::string_view row, const std::vector<std::pair<size_t, size_t>>& spans);

// ---- reading context -----------------------------------------------------------------------------------

/// What a parser reads from and writes into.
struct Source {
  std::string file;
  std::string_view text;
  Lines lines;
  NumberLocale locale;
  std::string label;
  Source(std::string f, std::string_view t, std::string l)
      : file(std::move(f)), text(t), lines(t), locale(detect_locale(t)), label(std::move(l)) {}
};
/// Appends a warning naming the file and line.
void warn(Profile& p, const Source& s, int line, std::string message);
/// A record with the file, line and label filled in.
KernelRecord new_record(const Source& s, int line);
/// Declares that a new profiling run starts at `line` of the file (parse_text assigns records to runs by line and
/// drops boundaries with no records before them).
void run_boundary(Profile& p, const Source& s, int line, std::string why);
/// Adds `v` to a counter (exact when both are exact).
void add_counter(KernelRecord& r, const std::string& metric, const Value& v);

/// A generic table (trace or summary) to records: which column plays which role.
struct TableRows {
  std::vector<std::string> titles;               ///< column titles without unit
  std::vector<std::string> units;                ///< unit per column ("" = none)
  std::vector<std::vector<std::string>> rows;
  std::vector<int> row_lines;                    ///< line number of each row
};
/// Turns table rows into records: name/duration/count/device/id columns found by title; every numeric column
/// becomes a counter named by its title (total over the row's invocations when the table is a summary).
void records_from_table(const TableRows& t, const Source& s, Profile& out, bool summary);

// ---- one parser per format family ---------------------------------------------------------------------

void parse_ncu_text(const Source& s, Profile& out);
void parse_ncu_csv(const Source& s, Profile& out);
void parse_nvprof(const Source& s, Format f, Profile& out);
void parse_nsys(const Source& s, Format f, Profile& out);
void parse_torch_table(const Source& s, Profile& out);
void parse_torch_trace(const Source& s, Profile& out);

}  // namespace ridge::ingest::detail
