// Fake machine facts shared by the machine tests: sysfs cache trees written to a temporary directory.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_support.hpp"

namespace ridge::measure::test_fakes {

/// Writes `text` and a newline to `p`, creating its directories.
inline void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

/// One sysfs cache entry dir/index<index>/{level,type,size,shared_cpu_list}.
inline void fake_index(const std::filesystem::path& dir, int index, int level, const std::string& type,
                       const std::string& size, const std::string& shared) {
  const std::filesystem::path d = dir / ("index" + std::to_string(index));
  write(d / "level", std::to_string(level));
  write(d / "type", type);
  write(d / "size", size);
  write(d / "shared_cpu_list", shared);
}

/// A fresh sysfs root (the stand-in for /sys) whose cpu0 lists L1d 32K, L1i 32K, L2 1M and L3 16M shared by 8.
inline std::string fake_sysfs_with_caches() {
  const std::filesystem::path root = test::temp_dir();
  const std::filesystem::path cache = root / "devices/system/cpu/cpu0/cache";
  fake_index(cache, 0, 1, "Data", "32K", "0");
  fake_index(cache, 1, 1, "Instruction", "32K", "0");
  fake_index(cache, 2, 2, "Unified", "1024K", "0");
  fake_index(cache, 3, 3, "Unified", "16384K", "0-7");
  return root.string();
}

}  // namespace ridge::measure::test_fakes
