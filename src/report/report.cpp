// Units and cell formatting: the one place that knows how numbers look.
#include <fmt/format.h>

#include <cmath>
#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include "ridge/report.hpp"
#include "ridge/text.hpp"

namespace ridge::report {

std::string_view unit_symbol(Unit u) {
  switch (u) {
    case Unit::None: case Unit::Count: case Unit::Param: return "";
    case Unit::Flop: return "FLOP";
    case Unit::Mac: return "MAC";
    case Unit::Byte: return "B";
    case Unit::Second: return "s";
    case Unit::FlopPerSecond: return "FLOP/s";
    case Unit::BytePerSecond: return "B/s";
    case Unit::FlopPerByte: return "FLOP/B";
    case Unit::Percent: return "%";
    case Unit::Ratio: return "x";
  }
  return "";
}

void Table::add_row(std::vector<Cell> row) {
  row.resize(columns.size());
  rows.push_back(std::move(row));
}

int Table::column(std::string_view k) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].key == k) return static_cast<int>(i);
  return -1;
}

Fields& Fields::add(std::string k, std::string t, Cell cell, bool exact) {
  items.push_back({Column{std::move(k), std::move(t), cell.unit, exact}, std::move(cell)});
  return *this;
}

std::string_view ridge_version() { return RIDGE_VERSION; }

namespace {

// "1234567.5" -> "1,234,567.5"
std::string group_digits(const std::string& s) {
  const size_t start = s[0] == '-' ? 1 : 0;
  const size_t dot = std::min(s.find('.'), s.size());
  std::string out = s;
  for (size_t i = dot; i > start + 3; i -= 3) out.insert(i - 3, ",");
  return out;
}

}  // namespace

std::string plain(double v, int sig) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));  // 1234 -> 3, 0.0123 -> -2
  const int decimals = std::clamp(sig - 1 - magnitude, 0, 9);
  std::string s = fmt::format("{:.{}f}", a, decimals);
  if (s.find_first_not_of("0.") == std::string::npos) return "0";  // below 9 decimals
  if (magnitude < 0 && s[0] != '0') s = fmt::format("{:.{}f}", a, sig - 1);  // 0.9999 rounded up to 1.00
  size_t dot = s.find('.');
  if (magnitude < 0 && s[0] == '0' && dot != std::string::npos) {  // 0.250 -> 0.25 (fractions only; 1.50 keeps its digits)
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return (v < 0 ? "-" : "") + group_digits(s);
}

namespace {

// Scales `v` by `base` (1000 or 1024) to the largest prefix keeping it >= 1; returns the prefix index.
int prefix_index(double a, double base) {
  int i = 0;
  while (a >= base * 0.9995 && i < 6) a /= base, ++i;
  return i;
}

constexpr const char* kDecimal[] = {"", "k", "M", "G", "T", "P", "E"};
constexpr const char* kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

}  // namespace

std::string si(double v, int sig) {
  if (!std::isfinite(v) || std::fabs(v) < 999.5) return plain(v, sig);
  const int i = prefix_index(std::fabs(v), 1000.0);
  const double x = v / std::pow(1000.0, i);
  const double a = std::fabs(x);
  const int decimals = std::max(0, sig - (a >= 99.95 ? 3 : a >= 9.995 ? 2 : 1));
  return fmt::format("{:.{}f} {}", x, decimals, kDecimal[i]);
}

std::pair<double, std::string> binary_byte_unit(double bytes) {
  const int i = std::isfinite(bytes) ? prefix_index(std::fabs(bytes), 1024.0) : 0;
  return {std::pow(1024.0, i), std::string(kBinary[i]) + "B"};
}

std::string format_bytes(double b) {
  if (!std::isfinite(b) || std::fabs(b) < 1023.5) return plain(b, 3) + " B";
  const auto [size, unit] = binary_byte_unit(b);
  const double x = b / size;
  const double a = std::fabs(x);
  const int decimals = a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2;
  return fmt::format("{:.{}f} {}", x, decimals, unit);
}

std::string format_seconds(double s) {
  if (std::isnan(s)) return "nan";
  double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a >= 1) return plain(s, 3) + " s";
  if (a >= 1e-3) return plain(s * 1e3, 3) + " ms";
  if (a >= 1e-6) return plain(s * 1e6, 3) + " us";
  return plain(s * 1e9, 3) + " ns";
}

double zero_if_noise(double v, double scale) { return std::fabs(v) <= 1e-9 * std::fabs(scale) ? 0.0 : v; }

namespace {

std::string with_unit(const std::string& num, Unit u) {
  std::string_view sym = unit_symbol(u);
  if (sym.empty()) return num;
  if (u == Unit::Percent) return num + "%";
  if (u == Unit::Ratio) return num + "x";
  // si() leaves a space before a prefix ("4.09 G"); join the symbol to the prefix: "4.09 GFLOP".
  bool has_prefix = num.find(' ') != std::string::npos;
  return has_prefix ? num + std::string(sym) : num + " " + std::string(sym);
}

std::optional<double> numeric(const Cell& c) {
  if (auto n = std::get_if<Count>(&c.value)) return to_double(*n);
  if (auto d = std::get_if<double>(&c.value)) return *d;
  return std::nullopt;
}

// Human form of a value already divided by its column's scale: 3 significant digits, at least the integer part.
std::string scaled(double v) { return std::fabs(v) >= 99.5 ? group_digits(fmt::format("{:.0f}", v)) : plain(v, 3); }

}  // namespace

std::string format_cell(const Cell& c, bool exact) {
  if (c.is_empty()) return "-";
  if (auto s = std::get_if<std::string>(&c.value)) return printable(*s);
  if (auto b = std::get_if<bool>(&c.value)) return *b ? "yes" : "no";
  if (auto n = std::get_if<Count>(&c.value)) {
    if (exact || c.unit == Unit::Count || c.unit == Unit::Param || c.unit == Unit::None) return with_commas(*n);
    if (c.unit == Unit::Byte) return format_bytes(to_double(*n));
    if (*n > -1000 && *n < 1000) return with_unit(to_string(*n), c.unit);
    return with_unit(si(to_double(*n)), c.unit);
  }
  double d = std::get<double>(c.value);
  switch (c.unit) {
    case Unit::Second: return format_seconds(d);
    case Unit::Byte: return format_bytes(d);
    case Unit::Percent: return fmt::format("{:.1f}%", d);
    case Unit::Ratio: return plain(d, 3) + "x";
    case Unit::FlopPerByte: return plain(d, 3) + " FLOP/B";
    case Unit::None: case Unit::Count: case Unit::Param: return plain(d, 4);
    default: return with_unit(si(d), c.unit);
  }
}

std::string format_field(const Cell& c, bool exact) {
  std::string s = format_cell(c, exact);
  const Count* n = std::get_if<Count>(&c.value);
  if (!exact || !n || c.unit == Unit::Count || c.unit == Unit::Param || c.unit == Unit::None) return s;
  if (c.unit == Unit::Byte) return *n >= 1024 ? fmt::format("{} B ({})", s, format_bytes(to_double(*n))) : s + " B";
  const std::string_view sym = unit_symbol(c.unit);
  return sym.empty() ? s : s + " " + std::string(sym);
}

ColumnText format_column(const Table& t, size_t c) {
  const Column& col = t.columns[c];
  ColumnText out;
  out.header = col.title.empty() ? col.key : col.title;
  const Unit u = col.unit;
  std::vector<double> mags;
  bool all_counts = true;
  for (const auto& r : t.rows) all_counts &= !std::holds_alternative<double>(r[c].value);
  // The time columns of one table share one unit (compute, memory and total time side by side read in the same
  // unit), chosen from all their cells; other columns from their own.
  for (size_t k = 0; k < t.columns.size(); ++k) {
    if (k != c && (u != Unit::Second || t.columns[k].unit != Unit::Second)) continue;
    for (const auto& r : t.rows)
      if (auto v = numeric(r[k]); v && *v != 0 && std::isfinite(*v)) mags.push_back(std::fabs(*v));
  }
  const bool integral = all_counts && (col.exact || u == Unit::Count || u == Unit::Param || u == Unit::None);
  // The column's one unit: the prefix of its median magnitude (so that most cells read 1..999 and the rare
  // large one gets separators); fractions are never prefixed, except times (ms, us, ns are units of their own).
  std::string unit_label;
  double div = 1;
  if (!integral && !mags.empty()) {
    const size_t mid = (mags.size() - 1) / 2;  // the lower median
    std::nth_element(mags.begin(), mags.begin() + static_cast<long>(mid), mags.end());
    const double med = mags[mid];
    switch (u) {
      case Unit::Byte: {
        std::tie(div, unit_label) = binary_byte_unit(med);
        break;
      }
      case Unit::Flop: case Unit::Mac: case Unit::FlopPerSecond: case Unit::BytePerSecond: {
        const int i = prefix_index(med, 1000.0);
        div = std::pow(1000.0, i), unit_label = std::string(kDecimal[i]) + std::string(unit_symbol(u));
        break;
      }
      case Unit::Second: {
        static const std::pair<double, const char*> kTime[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
        div = 1e-9, unit_label = "ns";
        for (auto [scale, name] : kTime)
          if (med >= scale * 0.9995) {
            div = scale, unit_label = name;
            break;
          }
        break;
      }
      default: unit_label = std::string(unit_symbol(u));
    }
  } else if (!integral || u == Unit::Byte || u == Unit::Flop || u == Unit::Mac) {
    // Exact integers keep their unit in the header too: "bytes moved [B]" over 1,234,567.
    unit_label = std::string(unit_symbol(u));
  }
  // A title may already name its unit ("time (ms)"); a bare substring test would also match "s" in "request".
  const bool titled = out.header.find("[" + unit_label + "]") != std::string::npos ||
                      out.header.find("(" + unit_label + ")") != std::string::npos;
  if (!unit_label.empty() && !titled)
    out.header += " [" + unit_label + "]";
  for (const auto& r : t.rows) {
    const Cell& cell = r[c];
    if (auto v = numeric(cell); v && !integral) {
      out.cells.push_back(u == Unit::Percent ? fmt::format("{:.1f}", *v) : scaled(*v / div));
    } else if (integral && std::holds_alternative<Count>(cell.value)) {
      out.cells.push_back(with_commas(std::get<Count>(cell.value)));
    } else {
      out.cells.push_back(format_cell(cell, col.exact));
    }
  }
  return out;
}

nlohmann::json to_json(const Cell& c) {
  if (c.is_empty()) return nullptr;
  if (!c.key.empty()) return c.key;
  if (auto s = std::get_if<std::string>(&c.value)) return *s;
  if (auto b = std::get_if<bool>(&c.value)) return *b;
  if (auto n = std::get_if<Count>(&c.value)) {
    if (*n >= std::numeric_limits<int64_t>::min() && *n <= std::numeric_limits<int64_t>::max())
      return static_cast<int64_t>(*n);
    if (*n > 0 && *n <= static_cast<Count>(std::numeric_limits<uint64_t>::max())) return static_cast<uint64_t>(*n);
    return to_string(*n);  // beyond 64 bits: exact decimal string
  }
  double d = std::get<double>(c.value);
  if (!std::isfinite(d)) return nullptr;
  return d;
}

namespace {

nlohmann::json& at_dotted(nlohmann::json& root, const std::string& key) {
  nlohmann::json* cur = &root;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    cur = &(*cur)[part];
    if (dot == std::string::npos) return *cur;
    start = dot + 1;
  }
}

}  // namespace

nlohmann::json to_json(const Document& d) {
  nlohmann::json out = nlohmann::json::object();
  out["schema_version"] = kSchemaVersion;
  out["ridge_version"] = ridge_version();
  if (!d.command.empty()) out["command"] = d.command;
  out["inputs"] = d.inputs;
  out["title"] = d.title;
  for (const Block& b : d.blocks) {
    if (auto t = std::get_if<Table>(&b)) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : t->rows) {
        nlohmann::json o = nlohmann::json::object();
        for (size_t i = 0; i < t->columns.size(); ++i) o[t->columns[i].key] = to_json(r[i]);
        rows.push_back(std::move(o));
      }
      at_dotted(out, t->key) = std::move(rows);
    } else {
      const Fields& f = std::get<Fields>(b);
      nlohmann::json& obj = at_dotted(out, f.key);
      if (!obj.is_object()) obj = nlohmann::json::object();
      for (const auto& [col, cell] : f.items) at_dotted(obj, col.key) = to_json(cell);
    }
  }
  out["notes"] = d.notes;
  out.merge_patch(d.extra);
  return out;
}

}  // namespace ridge::report
