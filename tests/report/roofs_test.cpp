// The ceilings every roofline chart draws from a device record: order, labels, caches on request.
#include <gtest/gtest.h>

#include "report/api/roofs.hpp"

namespace ridge::report {
namespace {

Device gpu() {
  Device d;
  d.id = "gpu";
  d.peak_flops = {{Precision::FP32, 1e13}, {Precision::FP16, 1e14}, {Precision::FP64, 5e12}};
  d.bandwidth_bytes_per_s = {{"l1", 2e13}, {"dram", 1e12}, {"l2", 5e12}};
  return d;
}

std::vector<std::string> names(const std::vector<std::pair<std::string, double>>& roofs) {
  std::vector<std::string> out;
  for (const auto& r : roofs) out.push_back(r.first);
  return out;
}

TEST(Roofs, HeadlineFirstTensorRatesNamedAndLevelsOutermostFirst) {
  const auto r = roof_device(gpu(), Precision::FP16);
  EXPECT_EQ(r.name, "gpu");
  EXPECT_EQ(names(r.compute_flops_per_s), (std::vector<std::string>{"FP16 tensor", "FP64", "FP32"}));
  EXPECT_EQ(names(r.memory_bytes_per_s), (std::vector<std::string>{"DRAM", "L2", "L1"}));
  EXPECT_DOUBLE_EQ(r.memory_bytes_per_s[1].second, 5e12);
}

TEST(Roofs, ChosenLevelLeadsAndCachesCanBeLeftOut) {
  EXPECT_EQ(names(roof_device(gpu(), Precision::FP32, true, "l2").memory_bytes_per_s),
            (std::vector<std::string>{"L2", "DRAM", "L1"}));
  EXPECT_EQ(names(roof_device(gpu(), Precision::FP32, false).memory_bytes_per_s), (std::vector<std::string>{"DRAM"}));
  const auto r = roof_device(gpu(), Precision::FP32, false);
  EXPECT_EQ(r.compute_flops_per_s.front().first, "FP32");
}

// A device file's measured ceilings ("achieved") follow the peaks: the headline precision's and DRAM's only.
TEST(Roofs, MeasuredCeilingsFollowThePeaks) {
  Device d = gpu();
  d.achieved_flops = {{Precision::FP16, 8e13}, {Precision::FP32, 9e12}};
  d.achieved_bandwidth_bytes_per_s = {{"dram", 9e11}};
  const auto r = roof_device(d, Precision::FP16, false);
  EXPECT_EQ(names(r.compute_flops_per_s), (std::vector<std::string>{"FP16 tensor", "FP64", "FP32", "FP16 tensor measured"}));
  EXPECT_DOUBLE_EQ(r.compute_flops_per_s.back().second, 8e13);
  EXPECT_EQ(names(r.memory_bytes_per_s), (std::vector<std::string>{"DRAM", "DRAM measured"}));
  EXPECT_DOUBLE_EQ(r.memory_bytes_per_s.back().second, 9e11);
  EXPECT_EQ(names(roof_device(gpu(), Precision::FP16).compute_flops_per_s).size(), 3u);  // none measured: none drawn
}

}  // namespace
}  // namespace ridge::report
