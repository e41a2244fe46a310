// Working-set sweep planning and per-level summaries.
#include "measure/machine/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ridge::measure::sweep {
namespace {

std::string level_name(const CacheLevel& c) { return fmt::format("L{}", c.level); }

}  // namespace

int64_t capacity_per_thread(const CacheLevel& c, int threads) {
  const int sharers = std::max(1, std::min(c.shared_cpus, threads));
  return c.size_bytes / sharers;
}

std::string classify(const std::vector<CacheLevel>& caches, int64_t bytes_per_thread, int threads) {
  std::string previous;
  int64_t previous_capacity = 0;
  for (const CacheLevel& c : caches) {
    const std::string name = level_name(c);
    const int64_t capacity = capacity_per_thread(c, threads);
    if (bytes_per_thread <= capacity / 2) {
      if (previous.empty() || bytes_per_thread > 2 * previous_capacity) return name;
      return previous + "-" + name;
    }
    previous = name;
    previous_capacity = capacity;
  }
  if (previous.empty() || bytes_per_thread >= 4 * previous_capacity) return "DRAM";
  return previous + "-DRAM";
}

int64_t dram_working_set(const std::vector<CacheLevel>& caches, int threads, int64_t max_bytes_per_thread) {
  int64_t target = int64_t{64} << 20;
  if (!caches.empty()) target = std::max(target, 4 * capacity_per_thread(caches.back(), threads));
  int64_t ws = kFirstWorkingSet;
  while (ws < target) ws *= 2;
  while (ws > max_bytes_per_thread && ws > kFirstWorkingSet) ws /= 2;
  return ws;
}

std::vector<int64_t> working_sets(int64_t last) {
  std::vector<int64_t> out;
  for (int64_t ws = kFirstWorkingSet; ws <= last; ws *= ws < kFineSweepEnd ? 2 : 4) out.push_back(ws);
  if (out.empty() || out.back() != last) out.push_back(last);
  return out;
}

std::vector<LevelBandwidth> summarize_levels(const std::vector<CacheLevel>& caches,
                                             const std::vector<SweepPoint>& points, int all_threads) {
  std::vector<LevelBandwidth> levels;
  auto add_level = [&](std::string name, int64_t capacity) {
    levels.emplace_back();
    levels.back().level = std::move(name);
    levels.back().capacity_bytes = capacity;
  };
  for (const CacheLevel& c : caches) add_level(level_name(c), c.size_bytes);
  add_level("DRAM", 0);
  for (LevelBandwidth& l : levels) {
    for (const SweepPoint& p : points) {
      if (p.level != l.level) continue;
      const bool one = p.threads == 1;
      const bool all = p.threads == all_threads;
      auto best = [&](std::optional<double>& slot) { slot = std::max(slot.value_or(0.0), p.gbs); };
      if (p.kernel == "read") {
        if (one) best(l.read_gbs_one);
        if (all) best(l.read_gbs_all);
      } else if (p.kernel == "triad") {
        if (one) best(l.triad_gbs_one);
        if (all) best(l.triad_gbs_all);
      }
    }
  }
  return levels;
}

}  // namespace ridge::measure::sweep
