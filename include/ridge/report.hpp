// Self-describing results and the writers that print them. Commands build a Document of cells with units;
// writers (table, csv, json, md) never know what a metric means. Formats are chosen by name from one table
// and several can be written at once.
#pragma once
#include <nlohmann/json.hpp>
#include <iosfwd>
#include <string>
#include <utility>
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
  Flop,           ///< floating-point operations: decimal prefixes for humans ("4.09 GFLOP")
  Mac,            ///< multiply-accumulates
  Byte,           ///< bytes: binary prefixes for humans (1 MiB = 1024^2 B)
  Second,         ///< time: "1.23 ms"
  FlopPerSecond,  ///< decimal rate: "12.3 TFLOP/s"
  BytePerSecond,  ///< decimal rate: "900 GB/s"
  FlopPerByte,    ///< arithmetic intensity, never prefixed ("0.25 FLOP/B")
  Percent,        ///< a value already multiplied by 100
  Ratio,          ///< a dimensionless ratio ("0.85x")
};
/// Suffix used in tables ("FLOP", "B", "s", ...).
std::string_view unit_symbol(Unit u);

/// One result value with its unit. Empty cells print as "-" in tables and null in JSON; booleans print as
/// yes/no for humans and true/false in JSON and CSV.
struct Cell {
  std::variant<std::monostate, std::string, Count, double, bool> value;
  Unit unit = Unit::None;
  /// Machine value of a text cell ("upper_bound"), written by the JSON and CSV writers in place of the text
  /// ("upper bound (uncalibrated)"), which tables, markdown and HTML show. Empty: the text is both.
  std::string key{};

  static Cell text(std::string s) { return {std::move(s), Unit::None}; }
  /// A text cell whose machine-readable outputs carry `key` instead (see `key`).
  static Cell keyed(std::string s, std::string key) { return {std::move(s), Unit::None, std::move(key)}; }
  static Cell count(Count v, Unit u = Unit::Count) { return {v, u}; }
  static Cell real(double v, Unit u = Unit::None) { return {v, u}; }
  static Cell empty(Unit u = Unit::None) { return {std::monostate{}, u}; }
  static Cell flag(bool b) { return {b, Unit::None}; }
  bool is_empty() const { return std::holds_alternative<std::monostate>(value); }
};

/// A column: a stable machine key (with its unit in the name, e.g. "time_s"), a human title and a unit.
struct Column {
  std::string key;
  std::string title;
  Unit unit = Unit::None;
  bool exact = false;  ///< print counts exactly (with separators) in tables instead of SI-scaled
  int drop_rank = 0;   ///< >0: may be dropped from a narrow terminal table, highest rank first; 0: kept
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

/// Version of the JSON documents' layout (`schema_version`); bumped when a key changes meaning or goes away.
inline constexpr int kSchemaVersion = 1;
/// ridge's version ("0.1.0"), from the CMake project.
std::string_view ridge_version();

/// Everything one command reports.
struct Document {
  std::string title;
  std::string command;                ///< subcommand that made it (JSON "command")
  nlohmann::json inputs = nlohmann::json::object();  ///< what it was asked (model, batch, dtype, device, ...)
  std::string main_table;             ///< key of the table `--csv FILE` writes ("" = the first table)
  std::vector<Block> blocks;
  std::string alert;                  ///< printed as the FIRST line of table and md output (e.g. "INCOMPLETE: ...")
  std::vector<std::string> notes;     ///< warnings and explanations; printed after the blocks, JSON "notes"
  nlohmann::json extra = nlohmann::json::object();  ///< merged into JSON output only (structured extras)
};

/// Formats a cell for humans (decimal prefixes for counts and rates, binary for bytes, separators, units; never
/// scientific notation, never milli/micro prefixes except on seconds).
std::string format_cell(const Cell& c, bool exact = false);
/// A field's value (Fields: one quantity per line): format_cell, and an exact count keeps its unit beside it
/// ("13,476,831,232 B (12.6 GiB)", "329,731,182,428,160 FLOP").
std::string format_field(const Cell& c, bool exact);
/// A number with `sig` significant digits in plain notation, thousands separated: 1234567 -> "1,234,567",
/// 0.000123 -> "0.000123" (at most 9 decimals; smaller magnitudes print as 0).
std::string plain(double v, int sig = 3);
/// Decimal-prefixed number with up to `sig` significant digits: 4.089e9 -> "4.09 G"; below 1000 plain ("0.25").
std::string si(double v, int sig = 3);
/// Binary-prefixed bytes: 102760448 -> "98.0 MiB", 512 -> "512 B".
std::string format_bytes(double bytes);
/// The binary unit that format_bytes would print `bytes` in, and its size: 102760448 -> {1048576, "MiB"}.
std::pair<double, std::string> binary_byte_unit(double bytes);
/// Seconds with a fitting unit: 0.00123 -> "1.23 ms".
std::string format_seconds(double s);
/// Least-squares results at floating-point noise level print as 0: returns 0 when |v| <= 1e-9 * scale (scale =
/// the largest |y| the fit saw), else v. A line through exact counts has an intercept of a few ulps of the data;
/// anything a real fixed cost adds is many orders above 1e-9 of the data.
double zero_if_noise(double v, double scale);

/// One column as a human reads it: the header with the column's single unit ("FLOPs [GFLOP]") and each cell's
/// number in that unit. Shared by the table and md writers so that every cell of a column uses one unit.
struct ColumnText {
  std::string header;
  std::vector<std::string> cells;
};
/// Formats column `c` of `t` with one unit chosen from the median magnitude of its values.
ColumnText format_column(const Table& t, size_t c);
/// Converts a cell to JSON (exact integers; counts beyond 64 bits become decimal strings).
nlohmann::json to_json(const Cell& c);
/// Whole document as JSON.
nlohmann::json to_json(const Document& d);

/// Layout of the table writer. width 0 = no limit; otherwise columns with a drop_rank are dropped (highest
/// first), then other columns from the right, then the first column is shortened, until a line fits; a line under
/// the table names what was dropped.
struct TextOptions {
  int width = 0;
};
/// The table format with options.
void write_text(const Document& d, std::ostream& os, const TextOptions& opts);

/// CSV of one table (header row of column keys with units in their names, one row per row; numbers plain).
std::string csv_table(const Table& t);
/// CSV of every Fields block as one table key,value,unit (keys dotted: "totals.params", "memory.param_bytes").
std::string csv_totals(const Document& d);
/// The table `--csv FILE` writes: `main_table`, else the first table; nullptr when the document has none.
const Table* main_table(const Document& d);
/// One CSV file per table (named by its key) plus "totals" for the Fields blocks: (name, content) pairs.
std::vector<std::pair<std::string, std::string>> csv_files(const Document& d);

/// An output format: name, one-line description and the writer.
struct Format {
  std::string_view name;
  std::string_view description;
  void (*write)(const Document&, std::ostream&);
};
/// All formats: table, csv (the main table only, or the totals when there is none), json, md.
const std::vector<Format>& formats();
/// Looks a format up by name; throws ridge::UsageError listing the valid names.
const Format& format_by_name(std::string_view name);
/// Writes `d` in format `name`.
void write(const Document& d, std::string_view name, std::ostream& os);
/// Checks an output flag's file before a long run: throws ridge::Error "FLAG PATH: cannot write there: folder 'out'
/// does not exist" (or "is a folder", "folder ... is not writable"). Not a promise that the write will succeed.
void check_writable(std::string_view flag, const std::string& path);
/// Writes `text` to `path` atomically: a temp file in the same folder, flushed to disk, renamed into place, so
/// that a reader never sees a half-written file. Throws ridge::Error naming the file.
void write_text_file(const std::string& path, const std::string& text);
/// Writes `d` in format `name` to a file (atomically: temp file + rename). Throws ridge::Error naming the file.
void write_file(const Document& d, std::string_view name, const std::string& path);

}  // namespace ridge::report
