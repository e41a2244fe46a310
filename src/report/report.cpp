// Units and cell formatting: the one place that knows how numbers look.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ridge/report.hpp"

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

std::string si(double v, int sig) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  static const char* kPrefix[] = {"", " k", " M", " G", " T", " P", " E", " Z", " Y"};
  static const char* kSmall[] = {"", " m", " u", " n", " p"};
  double a = std::fabs(v);
  std::string prefix;
  if (a >= 1000.0) {
    int i = 0;
    while (a >= 999.5 && i < 8) { a /= 1000.0; v /= 1000.0; ++i; }
    prefix = kPrefix[i];
  } else if (a > 0 && a < 1.0) {
    int i = 0;
    while (a < 0.9995 && i < 4) { a *= 1000.0; v *= 1000.0; ++i; }
    prefix = kSmall[i];
  }
  int digits_before = a >= 100 ? 3 : a >= 10 ? 2 : 1;
  int decimals = std::max(0, sig - digits_before);
  return fmt::format("{:.{}f}{}", v, decimals, prefix);
}

std::string format_seconds(double s) {
  if (std::isnan(s)) return "nan";
  double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a >= 1) return fmt::format("{:.3g} s", s);
  if (a >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3g} us", s * 1e6);
  return fmt::format("{:.3g} ns", s * 1e9);
}

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

}  // namespace

std::string format_cell(const Cell& c, bool exact) {
  if (c.is_empty()) return "-";
  if (auto s = std::get_if<std::string>(&c.value)) return *s;
  if (auto n = std::get_if<Count>(&c.value)) {
    if (exact || c.unit == Unit::Count || c.unit == Unit::Param || c.unit == Unit::None) return with_commas(*n);
    if (*n > -1000 && *n < 1000) return with_unit(to_string(*n), c.unit);
    return with_unit(si(to_double(*n)), c.unit);
  }
  double d = std::get<double>(c.value);
  switch (c.unit) {
    case Unit::Second: return format_seconds(d);
    case Unit::Percent: return fmt::format("{:.1f}%", d);
    case Unit::Ratio: return fmt::format("{:.3g}x", d);
    case Unit::None: case Unit::Count: case Unit::Param: return fmt::format("{:.4g}", d);
    default: return with_unit(si(d), c.unit);
  }
}

nlohmann::json to_json(const Cell& c) {
  if (c.is_empty()) return nullptr;
  if (auto s = std::get_if<std::string>(&c.value)) return *s;
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
