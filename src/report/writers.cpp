// The output formats, by name. Writers only lay out cells; they never interpret metrics.
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/report.hpp"

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

void write_table_block(const Table& t, std::ostream& os) {
  if (!t.title.empty()) os << t.title << "\n";
  const size_t nc = t.columns.size();
  std::vector<std::vector<std::string>> text(t.rows.size(), std::vector<std::string>(nc));
  std::vector<size_t> w(nc);
  for (size_t c = 0; c < nc; ++c) w[c] = display_width(header_title(t.columns[c]));
  for (size_t r = 0; r < t.rows.size(); ++r)
    for (size_t c = 0; c < nc; ++c) {
      text[r][c] = format_cell(t.rows[r][c], t.columns[c].exact);
      w[c] = std::max(w[c], display_width(text[r][c]));
    }
  auto rule = [&] {
    size_t total = 0;
    for (size_t c = 0; c < nc; ++c) total += w[c] + (c ? 2 : 0);
    os << std::string(total, '-') << "\n";
  };
  std::string header;
  for (size_t c = 0; c < nc; ++c) {
    bool right = !t.rows.empty() && right_aligned(t.rows[0][c]);
    header += (c ? "  " : "") + pad(header_title(t.columns[c]), w[c], right);
  }
  while (!header.empty() && header.back() == ' ') header.pop_back();
  os << header << "\n";
  rule();
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (std::find(t.total_rows.begin(), t.total_rows.end(), static_cast<int>(r)) != t.total_rows.end()) rule();
    std::string line;
    for (size_t c = 0; c < nc; ++c)
      line += (c ? "  " : "") + pad(text[r][c], w[c], right_aligned(t.rows[r][c]));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

void write_fields_block(const Fields& f, std::ostream& os) {
  if (!f.title.empty()) os << f.title << "\n";
  size_t w = 0;
  for (const auto& [col, cell] : f.items) w = std::max(w, display_width(header_title(col)));
  for (const auto& [col, cell] : f.items)
    os << "  " << pad(header_title(col) + ":", w + 1, false) << "  " << format_cell(cell, col.exact) << "\n";
}

void write_text(const Document& d, std::ostream& os) {
  if (!d.title.empty()) os << d.title << "\n\n";
  bool first = true;
  for (const Block& b : d.blocks) {
    if (!first) os << "\n";
    first = false;
    if (auto t = std::get_if<Table>(&b)) write_table_block(*t, os);
    else write_fields_block(std::get<Fields>(b), os);
  }
  if (!d.notes.empty()) {
    os << "\nNotes:\n";
    for (const auto& n : d.notes) os << "  - " << n << "\n";
  }
}

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
  if (auto s = std::get_if<std::string>(&c.value)) return csv_quote(*s);
  if (auto n = std::get_if<Count>(&c.value)) return to_string(*n);
  return fmt::format("{:.9g}", std::get<double>(c.value));
}

void write_csv(const Document& d, std::ostream& os) {
  // One section per block; a section header line "# key" only when there is more than one block, so that a
  // single-table document is a plain CSV file.
  const bool several = d.blocks.size() > 1;
  bool first = true;
  for (const Block& b : d.blocks) {
    if (!first) os << "\n";
    first = false;
    if (auto t = std::get_if<Table>(&b)) {
      if (several) os << "# " << t->key << "\n";
      for (size_t c = 0; c < t->columns.size(); ++c) os << (c ? "," : "") << csv_quote(t->columns[c].key);
      os << "\n";
      for (const auto& r : t->rows) {
        for (size_t c = 0; c < r.size(); ++c) os << (c ? "," : "") << csv_value(r[c]);
        os << "\n";
      }
    } else {
      const Fields& f = std::get<Fields>(b);
      if (several) os << "# " << f.key << "\n";
      os << "key,value,unit\n";
      for (const auto& [col, cell] : f.items)
        os << csv_quote(col.key) << "," << csv_value(cell) << "," << unit_symbol(cell.unit) << "\n";
    }
  }
}

void write_json(const Document& d, std::ostream& os) { os << to_json(d).dump(2) << "\n"; }

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void write_md(const Document& d, std::ostream& os) {
  if (!d.title.empty()) os << "# " << md_escape(d.title) << "\n\n";
  for (const Block& b : d.blocks) {
    if (auto t = std::get_if<Table>(&b)) {
      if (!t->title.empty()) os << "## " << md_escape(t->title) << "\n\n";
      os << "|";
      for (const auto& c : t->columns) os << " " << md_escape(header_title(c)) << " |";
      os << "\n|";
      for (size_t c = 0; c < t->columns.size(); ++c)
        os << (!t->rows.empty() && right_aligned(t->rows[0][c]) ? "---:|" : "---|");
      os << "\n";
      for (const auto& r : t->rows) {
        os << "|";
        for (size_t c = 0; c < r.size(); ++c) os << " " << md_escape(format_cell(r[c], t->columns[c].exact)) << " |";
        os << "\n";
      }
    } else {
      const Fields& f = std::get<Fields>(b);
      if (!f.title.empty()) os << "## " << md_escape(f.title) << "\n\n";
      os << "| quantity | value |\n|---|---:|\n";
      for (const auto& [col, cell] : f.items)
        os << "| " << md_escape(header_title(col)) << " | " << md_escape(format_cell(cell, col.exact)) << " |\n";
    }
    os << "\n";
  }
  if (!d.notes.empty()) {
    os << "**Notes**\n\n";
    for (const auto& n : d.notes) os << "- " << md_escape(n) << "\n";
  }
}

const std::vector<Format> kFormats = {
    {"table", "aligned columns for the terminal, SI-scaled counts", &write_text},
    {"csv", "comma-separated, exact integers, one header row per block", &write_csv},
    {"json", "one JSON object, exact integers, stable keys", &write_json},
    {"md", "GitHub-flavoured markdown tables", &write_md},
};

}  // namespace

const std::vector<Format>& formats() { return kFormats; }

const Format& format_by_name(std::string_view name) {
  for (const Format& f : kFormats)
    if (f.name == name) return f;
  std::string names;
  for (const Format& f : kFormats) names += (names.empty() ? "" : ", ") + std::string(f.name);
  throw UsageError(fmt::format("--format: unknown format '{}' (choose one of: {})", name, names));
}

void write(const Document& d, std::string_view name, std::ostream& os) { format_by_name(name).write(d, os); }

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
