// Small text helpers shared by the model stage's sources (not part of the public API).
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "ridge/error.hpp"

namespace ridge::model_detail {

/// ASCII lower-case copy.
inline std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

/// The first line of a (possibly multi-line) message, for one-line errors.
inline std::string first_line(std::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

/// The whole file as text; throws ridge::Error "PATH: cannot read WHAT" when it cannot be opened.
inline std::string read_text_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read {}", path, what));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ridge::model_detail
