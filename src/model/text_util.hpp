// Small text helpers shared by the model stage's sources (not part of the public API).
#pragma once
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace ridge::model_detail {

/// ASCII lower-case copy.
inline std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

/// The first line of a (possibly multi-line) message, for one-line errors.
inline std::string first_line(std::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

}  // namespace ridge::model_detail
