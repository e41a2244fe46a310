// Self-describing results and the writers that print them. Commands build a Document of cells with units;
// writers (table, csv, json, md) never know what a metric means. Formats are chosen by name from one table
// and several can be written at once.
#pragma once
#include <nlohmann/json.hpp>
#include <iosfwd>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ridge/count.hpp"

namespace ridge::report {

/// Unit of a cell. Counts of FLOPs, MACs, bytes and params are exact integers; times and rates are doubles.
enum class Unit : uint8_t {
  None,           ///< plain text or dimensionless number
  Count,          ///< an item count (kernels, layers): printed with separators
  Param,          ///< parameter count: printed with separators
  Flop,           ///< floating-point operations: SI-scaled in tables ("4.11 G")
  Mac,            ///< multiply-accumulates
  Byte,           ///< bytes (decimal SI: 1 MB = 1e6 B)
  Second,         ///< time: "1.23 ms"
  FlopPerSecond,  ///< "12.3 TFLOP/s"
  BytePerSecond,  ///< "900 GB/s"
  FlopPerByte,    ///< arithmetic intensity
  Percent,        ///< a value already multiplied by 100
  Ratio,          ///< a dimensionless ratio ("0.85x")
};
/// Suffix used in tables ("FLOP", "B", "s", ...).
std::string_view unit_symbol(Unit u);

/// One result value with its unit. Empty cells print as "-" in tables and null in JSON.
struct Cell {
  std::variant<std::monostate, std::string, Count, double> value;
  Unit unit = Unit::None;

  static Cell text(std::string s) { return {std::move(s), Unit::None}; }
  static Cell count(Count v, Unit u = Unit::Count) { return {v, u}; }
  static Cell real(double v, Unit u = Unit::None) { return {v, u}; }
  static Cell empty(Unit u = Unit::None) { return {std::monostate{}, u}; }
  bool is_empty() const { return std::holds_alternative<std::monostate>(value); }
};

/// A column: a stable machine key (with its unit in the name, e.g. "time_s"), a human title and a unit.
struct Column {
  std::string key;
  std::string title;
  Unit unit = Unit::None;
  bool exact = false;  ///< print counts exactly (with separators) in tables instead of SI-scaled
};

/// Rows of cells under columns. JSON: an array of objects keyed by column key.
struct Table {
  std::string key;    ///< JSON key / CSV section ("layers")
  std::string title;  ///< heading in table and md output
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  std::vector<int> total_rows;  ///< indices of rows to set apart as totals (rule above them in tables)

  void add_row(std::vector<Cell> row);
  /// Index of a column by key, or -1.
  int column(std::string_view key) const;
};

/// Named scalar results. JSON: an object (a dotted key such as "totals.counters" nests).
struct Fields {
  std::string key;
  std::string title;
  std::vector<std::pair<Column, Cell>> items;

  Fields& add(std::string key, std::string title, Cell cell, bool exact = false);
};

using Block = std::variant<Table, Fields>;

/// Everything one command reports.
struct Document {
  std::string title;
  std::vector<Block> blocks;
  std::vector<std::string> notes;     ///< warnings and explanations; printed after the blocks, JSON "notes"
  nlohmann::json extra = nlohmann::json::object();  ///< merged into JSON output only (structured extras)
};

/// Formats a cell for humans (SI prefixes, separators, units).
std::string format_cell(const Cell& c, bool exact = false);
/// SI-scaled number with up to `sig` significant digits: 4.089e9 -> "4.09 G".
std::string si(double v, int sig = 3);
/// Seconds with a fitting unit: 0.00123 -> "1.23 ms".
std::string format_seconds(double s);
/// Converts a cell to JSON (exact integers; counts beyond 64 bits become decimal strings).
nlohmann::json to_json(const Cell& c);
/// Whole document as JSON.
nlohmann::json to_json(const Document& d);

/// An output format: name, one-line description and the writer.
struct Format {
  std::string_view name;
  std::string_view description;
  void (*write)(const Document&, std::ostream&);
};
/// All formats: table, csv, json, md.
const std::vector<Format>& formats();
/// Looks a format up by name; throws ridge::UsageError listing the valid names.
const Format& format_by_name(std::string_view name);
/// Writes `d` in format `name`.
void write(const Document& d, std::string_view name, std::ostream& os);
/// Writes `text` to `path` atomically: a temp file in the same folder, flushed to disk, renamed into place, so
/// that a reader never sees a half-written file. Throws ridge::Error naming the file.
void write_text_file(const std::string& path, const std::string& text);
/// Writes `d` in format `name` to a file (atomically: temp file + rename). Throws ridge::Error naming the file.
void write_file(const Document& d, std::string_view name, const std::string& path);

}  // namespace ridge::report
