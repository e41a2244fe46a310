// The output formats, by name. Writers only lay out cells; they never interpret metrics.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/report.hpp"
#include "ridge/text.hpp"

namespace ridge::report {
namespace {

bool right_aligned(const Cell& c) { return !std::holds_alternative<std::string>(c.value); }

std::string header_title(const Column& c) { return c.title.empty() ? c.key : c.title; }

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char ch : s)
    if ((ch & 0xC0) != 0x80) ++w;  // count UTF-8 code points, not bytes
  return w;
}

std::string pad(const std::string& s, size_t w, bool right) {
  size_t n = display_width(s);
  if (n >= w) return s;
  return right ? std::string(w - n, ' ') + s : s + std::string(w - n, ' ');
}

bool is_total(const Table& t, size_t r) {
  return std::find(t.total_rows.begin(), t.total_rows.end(), static_cast<int>(r)) != t.total_rows.end();
}

// Shortens `s` to `w` display columns with an ellipsis in the middle, keeping both ends of a module path.
std::string abbreviate(const std::string& s, size_t w) {
  if (display_width(s) <= w || w < 5) return s;
  const size_t keep = w - 1, head = keep / 2, tail = keep - head;
  return s.substr(0, head) + "…" + s.substr(s.size() - tail);  // module paths are ASCII
}

void write_table_block(const Table& t, std::ostream& os, const TextOptions& opts) {
  if (!t.title.empty()) os << t.title << "\n";
  const size_t nc = t.columns.size();
  std::vector<ColumnText> cols;
  std::vector<size_t> w(nc);
  std::vector<bool> right(nc);
  for (size_t c = 0; c < nc; ++c) {
    cols.push_back(format_column(t, c));
    w[c] = display_width(cols[c].header);
    for (const auto& s : cols[c].cells) w[c] = std::max(w[c], display_width(s));
    right[c] = !t.rows.empty() && right_aligned(t.rows[0][c]);
  }
  // Fit the terminal: drop ranked columns (highest rank first), then unranked ones from the right (never the
  // first), then shorten the first column.
  std::vector<size_t> shown(nc);
  for (size_t c = 0; c < nc; ++c) shown[c] = c;
  auto total = [&] {
    size_t sum = 0;
    for (size_t k = 0; k < shown.size(); ++k) sum += w[shown[k]] + (k ? 2 : 0);
    return sum;
  };
  std::vector<std::string> dropped;
  const size_t width = opts.width > 0 ? static_cast<size_t>(opts.width) : 0;
  while (width && total() > width && shown.size() > 1) {
    size_t pick = 0;  // index into shown
    int best = 0;
    for (size_t k = 1; k < shown.size(); ++k)
      if (t.columns[shown[k]].drop_rank > best) best = t.columns[shown[k]].drop_rank, pick = k;
    if (best == 0) {
      const size_t first_w = w[shown[0]];
      if (total() - first_w + std::min<size_t>(first_w, 16) <= width) break;  // shortening the names is enough
      pick = shown.size() - 1;
    }
    dropped.push_back(header_title(t.columns[shown[pick]]));
    shown.erase(shown.begin() + static_cast<long>(pick));
  }
  if (width && total() > width) {
    const size_t c0 = shown[0];
    w[c0] = std::max<size_t>(8, w[c0] - std::min(w[c0], total() - width));
    cols[c0].header = abbreviate(cols[c0].header, w[c0]);
    for (auto& s : cols[c0].cells) s = abbreviate(s, w[c0]);
  }
  auto line_of = [&](auto&& text_of) {
    std::string line;
    for (size_t k = 0; k < shown.size(); ++k) line += (k ? "  " : "") + text_of(shown[k]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  const std::string rule = std::string(total(), '-') + "\n";
  os << line_of([&](size_t c) { return pad(cols[c].header, w[c], right[c]); }) << rule;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (is_total(t, r)) os << rule;
    os << line_of([&](size_t c) { return pad(cols[c].cells[r], w[c], right_aligned(t.rows[r][c])); });
  }
  if (!dropped.empty()) {  // one line, itself within the width: as many names as fit, then "+N more"
    for (size_t shown_names = dropped.size();; --shown_names) {
      std::string names = fmt::format("{}", fmt::join(dropped.begin(), dropped.begin() + static_cast<long>(shown_names), ", "));
      if (shown_names < dropped.size()) names += fmt::format(" +{} more", dropped.size() - shown_names);
      std::string note = fmt::format("({} columns left out: {}; --wide shows all)", dropped.size(), names);
      if (display_width(note) <= width || shown_names <= 1) {
        os << note << "\n";
        break;
      }
    }
  }
}

void write_fields_block(const Fields& f, std::ostream& os) {
  if (!f.title.empty()) os << f.title << "\n";
  size_t w = 0;
  for (const auto& [col, cell] : f.items) w = std::max(w, display_width(header_title(col)));
  for (const auto& [col, cell] : f.items)
    os << "  " << pad(header_title(col) + ":", w + 1, false) << "  " << format_field(cell, col.exact) << "\n";
}

void write_text_unlimited(const Document& d, std::ostream& os) { write_text(d, os, TextOptions{}); }

}  // namespace

void write_text(const Document& d, std::ostream& os, const TextOptions& opts) {
  if (!d.alert.empty()) os << d.alert << "\n";
  if (!d.title.empty()) os << d.title << "\n\n";
  bool first = true;
  for (const Block& b : d.blocks) {
    if (!first) os << "\n";
    first = false;
    if (auto t = std::get_if<Table>(&b)) write_table_block(*t, os, opts);
    else write_fields_block(std::get<Fields>(b), os);
  }
  if (!d.notes.empty()) {
    os << "\nNotes:\n";
    for (const auto& n : d.notes) os << "  - " << n << "\n";
  }
}

namespace {

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_value(const Cell& c) {
  if (c.is_empty()) return "";
  if (!c.key.empty()) return csv_quote(printable(c.key));
  if (auto s = std::get_if<std::string>(&c.value)) return csv_quote(printable(*s));
  if (auto b = std::get_if<bool>(&c.value)) return *b ? "true" : "false";
  if (auto n = std::get_if<Count>(&c.value)) return to_string(*n);
  const double v = std::get<double>(c.value);
  if (!std::isfinite(v)) return "";
  char buf[400];  // shortest round-trip digits, fixed notation (never 1e-05), so any CSV reader takes it as is
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, res.ptr);
}

void write_csv(const Document& d, std::ostream& os) {
  if (const Table* t = main_table(d)) os << csv_table(*t);
  else os << csv_totals(d);
}

// Names come from model files: bytes that are not UTF-8 are written as U+FFFD, not refused.
void write_json(const Document& d, std::ostream& os) {
  os << to_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void write_md(const Document& d, std::ostream& os) {
  if (!d.alert.empty()) os << "**" << md_escape(d.alert) << "**\n\n";
  if (!d.title.empty()) os << "# " << md_escape(d.title) << "\n\n";
  for (const Block& b : d.blocks) {
    if (auto t = std::get_if<Table>(&b)) {
      if (!t->title.empty()) os << "## " << md_escape(t->title) << "\n\n";
      std::vector<ColumnText> cols;
      for (size_t c = 0; c < t->columns.size(); ++c) cols.push_back(format_column(*t, c));
      os << "|";
      for (const auto& c : cols) os << " " << md_escape(c.header) << " |";
      os << "\n|";
      for (size_t c = 0; c < t->columns.size(); ++c)
        os << (!t->rows.empty() && right_aligned(t->rows[0][c]) ? "---:|" : "---|");
      os << "\n";
      for (size_t r = 0; r < t->rows.size(); ++r) {
        os << "|";
        for (const auto& c : cols) os << " " << md_escape(c.cells[r]) << " |";
        os << "\n";
      }
    } else {
      const Fields& f = std::get<Fields>(b);
      if (!f.title.empty()) os << "## " << md_escape(f.title) << "\n\n";
      os << "| quantity | value |\n|---|---:|\n";
      for (const auto& [col, cell] : f.items)
        os << "| " << md_escape(header_title(col)) << " | " << md_escape(format_field(cell, col.exact)) << " |\n";
    }
    os << "\n";
  }
  if (!d.notes.empty()) {
    os << "**Notes**\n\n";
    for (const auto& n : d.notes) os << "- " << md_escape(n) << "\n";
  }
}

const std::vector<Format> kFormats = {
    {"table", "aligned columns for the terminal, one unit per column", &write_text_unlimited},
    {"csv", "the main table as comma-separated values, exact integers (--csv DIR/ for every table)", &write_csv},
    {"json", "one JSON object, exact integers, stable keys", &write_json},
    {"md", "GitHub-flavoured markdown tables", &write_md},
};

}  // namespace

const std::vector<Format>& formats() { return kFormats; }

std::string csv_table(const Table& t) {
  std::ostringstream os;
  for (size_t c = 0; c < t.columns.size(); ++c) os << (c ? "," : "") << csv_quote(t.columns[c].key);
  os << "\n";
  for (const auto& r : t.rows) {
    for (size_t c = 0; c < r.size(); ++c) os << (c ? "," : "") << csv_value(r[c]);
    os << "\n";
  }
  return os.str();
}

std::string csv_totals(const Document& d) {
  std::ostringstream os;
  os << "key,value,unit\n";
  for (const Block& b : d.blocks)
    if (auto f = std::get_if<Fields>(&b))
      for (const auto& [col, cell] : f->items)
        os << csv_quote(f->key.empty() ? col.key : f->key + "." + col.key) << "," << csv_value(cell) << ","
           << unit_symbol(cell.unit) << "\n";
  return os.str();
}

const Table* main_table(const Document& d) {
  const Table* first = nullptr;
  for (const Block& b : d.blocks)
    if (auto t = std::get_if<Table>(&b)) {
      if (t->key == d.main_table) return t;
      if (!first) first = t;
    }
  return first;
}

std::vector<std::pair<std::string, std::string>> csv_files(const Document& d) {
  std::vector<std::pair<std::string, std::string>> out;
  bool fields = false;
  for (const Block& b : d.blocks) {
    if (auto t = std::get_if<Table>(&b)) {
      std::string name = t->key;
      std::replace(name.begin(), name.end(), '.', '_');
      out.emplace_back(name, csv_table(*t));
    } else {
      fields = true;
    }
  }
  if (fields) out.emplace_back("totals", csv_totals(d));
  return out;
}

const Format& format_by_name(std::string_view name) {
  for (const Format& f : kFormats)
    if (f.name == name) return f;
  std::string names;
  for (const Format& f : kFormats) names += (names.empty() ? "" : ", ") + std::string(f.name);
  throw UsageError(fmt::format("--format: unknown format '{}' (choose one of: {})", name, names));
}

void write(const Document& d, std::string_view name, std::ostream& os) { format_by_name(name).write(d, os); }

void check_writable(std::string_view flag, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path file(path);
  const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  std::string why;
  if (path.empty()) why = "no file name";
  else if (fs::is_directory(file, ec)) why = "is a folder";
  else if (!fs::is_directory(folder, ec)) why = fmt::format("folder '{}' does not exist", folder.string());
  else if (::access(folder.c_str(), W_OK) != 0) why = fmt::format("folder '{}' is not writable", folder.string());
  if (!why.empty()) throw Error(fmt::format("{} {}: cannot write there: {}", flag, path, why));
}

void write_text_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error(fmt::format("{}: cannot write ({})", path, std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(fmt::format("{}: write failed ({})", path, std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("{}: cannot write ({})", path, std::strerror(err)));
  }
}

void write_file(const Document& d, std::string_view name, const std::string& path) {
  std::ostringstream os;
  format_by_name(name).write(d, os);
  write_text_file(path, os.str());
}

}  // namespace ridge::report
