// The ceilings of a device on a roofline chart.
#include "roofs.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include "ridge/text.hpp"

namespace ridge::report {
namespace {

// Where a memory level sits after the first: DRAM, then caches outermost first, then anything else by name.
int level_rank(std::string_view level) {
  constexpr std::string_view kOrder[] = {"dram", "l3", "l2", "l1"};
  auto it = std::find(std::begin(kOrder), std::end(kOrder), level);
  return it == std::end(kOrder) ? static_cast<int>(std::size(kOrder)) : static_cast<int>(it - std::begin(kOrder));
}

}  // namespace

std::string precision_label(Precision p) { return ascii_upper(precision_info(p).name); }

chart::RoofDevice roof_device(const Device& d, Precision headline, bool caches, std::string_view first_level) {
  chart::RoofDevice rd;
  rd.name = d.id;
  const double fp32 = d.peak(Precision::FP32).value_or(0);
  auto label = [&](Precision p, double rate) {
    std::string n = precision_label(p);
    return fp32 > 0 && rate >= 4 * fp32 ? n + " tensor" : n;
  };
  if (auto h = d.peak(headline)) rd.compute_flops_per_s.push_back({label(headline, *h), *h});
  for (const auto& [p, rate] : d.peak_flops)
    if (p != headline) rd.compute_flops_per_s.push_back({label(p, rate), rate});

  std::vector<std::pair<std::string, double>> levels(d.bandwidth_bytes_per_s.begin(), d.bandwidth_bytes_per_s.end());
  std::stable_sort(levels.begin(), levels.end(), [&](const auto& a, const auto& b) {
    auto key = [&](const std::string& l) { return l == first_level ? -1 : level_rank(l); };
    return key(a.first) < key(b.first);
  });
  for (const auto& [level, bw] : levels)
    if (caches || level == first_level || level == "dram") rd.memory_bytes_per_s.push_back({ascii_upper(level), bw});
  // Measured ceilings (the device file's "achieved"): the headline precision's and DRAM's, after the peaks.
  if (auto it = d.achieved_flops.find(headline); it != d.achieved_flops.end())
    rd.compute_flops_per_s.push_back({label(headline, it->second) + " measured", it->second});
  if (auto it = d.achieved_bandwidth_bytes_per_s.find("dram"); it != d.achieved_bandwidth_bytes_per_s.end())
    rd.memory_bytes_per_s.push_back({"DRAM measured", it->second});
  return rd;
}

}  // namespace ridge::report
