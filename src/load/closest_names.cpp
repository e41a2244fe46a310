// Closest known names to a mistyped one (zoo, LLM, device and interconnect names): edit distance, with names
// that contain the query (or are contained in it) first.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "ridge/load.hpp"

namespace ridge {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(const std::string& name, const std::vector<std::string>& known, size_t n,
                                       size_t max_distance) {
  if (max_distance == 0) max_distance = std::max<size_t>(3, name.size() / 2);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& k : known) {
    size_t d = edit_distance(name, k);
    // A name that contains the query (or vice versa) is a strong hint.
    if (k.find(name) != std::string::npos || name.find(k) != std::string::npos) d = std::min<size_t>(d, 1);
    scored.push_back({d, k});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, k] : scored) {
    if (out.size() >= n || d > max_distance) break;
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);  // aliases may repeat a name
  }
  return out;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  const auto near = closest_names(name, known);
  return near.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(near, ", "));
}

}  // namespace ridge
