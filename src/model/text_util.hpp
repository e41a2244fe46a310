// Small text and data-file helpers shared by the model stage's sources (not part of the public API).
#pragma once
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/count.hpp"

#include "ridge/error.hpp"
#include "ridge/text.hpp"

namespace ridge::model_detail {

/// The first line of a (possibly multi-line) message, for one-line errors.
inline std::string first_line(std::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

/// The whole file as text; throws ridge::Error "PATH: cannot read WHAT" when it cannot be opened.
inline std::string read_text_file(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(fmt::format("{}: is a directory ({} expected)", path, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read {}", path, what));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Typed field access for the data files (devices, interconnects, calibrations): every failure is one
/// ridge::Error "ORIGIN: FIELD: why".
struct Reader {
  const std::string& origin;

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw Error(fmt::format("{}: {}: {}", origin, field, why));
  }
  double positive(const nlohmann::json& v, const std::string& field) const {
    if (!v.is_number()) fail(field, "expected a number");
    double x = v.get<double>();
    if (!std::isfinite(x) || x <= 0) fail(field, "must be a positive finite number");
    return x;
  }
  std::string text(const nlohmann::json& v, const std::string& field) const {
    if (!v.is_string()) fail(field, "expected a string");
    return v.get<std::string>();
  }
  const nlohmann::json& object(const nlohmann::json& v, const std::string& field) const {
    if (!v.is_object()) fail(field, "expected an object");
    return v;
  }
  Count whole(const nlohmann::json& v, const std::string& field) const {
    double x = positive(v, field);
    if (x != std::floor(x) || x > 9.0e18) fail(field, "expected a whole number");
    return static_cast<Count>(static_cast<int64_t>(x));
  }
};

/// Every numeric field of `j` as a dotted path (top-level "sources" skipped), so that each can be checked for a source.
inline void numeric_paths(const nlohmann::json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    if (prefix.empty() && key == "sources") continue;
    std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_number()) out.push_back(path);
    else if (value.is_object()) numeric_paths(value, path, out);
  }
}

/// The *.json files of a data folder, sorted; throws ridge::Error "DIR: WHAT does not exist" when it is missing.
inline std::vector<std::string> json_files(const std::string& dir, std::string_view what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(fmt::format("{}: {} {}", dir, what, fs::exists(dir, ec) ? "is not a directory" : "does not exist"));
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  if (ec) throw Error(fmt::format("{}: cannot list {}: {}", dir, what, ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

/// What a JSON parse error says, for a one-line message: its first line without nlohmann's "[json.exception...] "
/// tag ("parse error at line 1, column 1: syntax error while parsing value - unexpected end of input; ...").
inline std::string json_error_text(const nlohmann::json::exception& e) {
  std::string s = first_line(e.what());
  if (s.starts_with("[json.exception.")) {
    const size_t end = s.find("] ");
    if (end != std::string::npos) s.erase(0, end + 2);
  }
  return s;
}

/// Parses JSON text; throws ridge::Error "ORIGIN: not valid JSON: ..." on a syntax error.
inline nlohmann::json parse_json(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not valid JSON: {}", origin, json_error_text(e)));
  }
}

}  // namespace ridge::model_detail
