// Working-set sweep planning and per-level summaries.
#include "measure/machine/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ridge::measure::sweep {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

std::string level_name(const CacheLevel& c) { return fmt::format("L{}", c.level); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t capacity_per_thread(const CacheLevel& c, int threads) {
  const int sharers = std::max(1, std::min(c.shared_cpus, threads));
  return c.size_bytes / sharers;
}

std::string classify(const std::vector<CacheLevel>& caches, int64_t bytes_per_thread, int threads, bool llc_known) {
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
  if (!llc_known && !previous.empty()) return previous + "+";
  if (previous.empty() || bytes_per_thread >= 4 * previous_capacity) return "DRAM";
  return previous + "-DRAM";
}

DramPlan plan_dram(const std::vector<CacheLevel>& caches, bool llc_known, int threads, int64_t max_total_bytes) {
  DramPlan d;
  d.threads = std::max(1, threads);
  if (llc_known && !caches.empty()) {
    const CacheLevel& llc = caches.back();
    d.llc_bytes = llc.size_bytes * ceil_div(d.threads, std::max(1, llc.shared_cpus));  // instances reached
    d.target_bytes = std::max(kDramLlcMultiple * d.llc_bytes, kMinDramBytes);
  } else {
    d.target_bytes = kUnknownLlcDramBytes;
  }
  d.bytes_per_thread = ceil_div(ceil_div(d.target_bytes, d.threads), kMiB) * kMiB;
  if (d.bytes_per_thread * d.threads > max_total_bytes) {
    d.capped = true;
    d.bytes_per_thread = std::max(kFirstWorkingSet, max_total_bytes / d.threads / kMiB * kMiB);
  }
  return d;
}

std::vector<int64_t> working_sets(int64_t last) {
  std::vector<int64_t> out;
  for (int64_t ws = kFirstWorkingSet; ws <= last; ws *= ws < kFineSweepEnd ? 2 : 4) out.push_back(ws);
  if (out.empty() || out.back() != last) out.push_back(last);
  return out;
}

Plan plan_sweep(const CpuFacts& cpu, int all_threads, bool quick, int64_t memory_budget_bytes) {
  Plan plan;
  const auto& caches = cpu.caches;
  const bool llc_known = cpu.llc_known();
  auto add = [&](int threads, int64_t cache_end, const std::optional<DramPlan>& dram) {
    for (int64_t ws : working_sets(cache_end)) {
      if (dram && ws >= dram->bytes_per_thread) break;
      plan.points.push_back({threads, ws, classify(caches, ws, threads, llc_known)});
    }
    if (dram) plan.points.push_back({threads, dram->bytes_per_thread, "DRAM"});
  };
  auto cache_end = [&](int threads) {
    if (quick) {
      // L1 and L2 only: up to half of L2's share per thread (1 MiB without an L2), at most 1 MiB.
      int64_t limit = kMiB;
      for (const CacheLevel& c : caches)
        if (c.level <= 2) limit = std::min(kMiB, capacity_per_thread(c, threads) / 2);
      return std::max(kFirstWorkingSet, limit);
    }
    return llc_known ? std::max(kFirstWorkingSet, capacity_per_thread(caches.back(), threads)) : kUnknownLlcSweepEnd;
  };
  auto dram = [&](int threads) -> std::optional<DramPlan> {
    if (quick) return std::nullopt;
    return plan_dram(caches, llc_known, threads, memory_budget_bytes / 2);
  };
  plan.dram_one = dram(1);
  add(1, cache_end(1), plan.dram_one);
  if (all_threads > 1) {
    plan.dram_all = dram(all_threads);
    add(all_threads, cache_end(all_threads), plan.dram_all);
  }
  for (const PlannedPoint& p : plan.points) {
    int64_t& slot = p.threads == 1 ? plan.buffer_bytes_first : plan.buffer_bytes_other;
    slot = std::max(slot, p.working_set_bytes);
  }
  plan.buffer_bytes_first = std::max(plan.buffer_bytes_first, plan.buffer_bytes_other);
  return plan;
}

double point_time_s(double median_s, double mean_s, std::string_view level) {
  return level == "DRAM" ? mean_s : median_s;
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
    const bool dram = l.level == "DRAM";
    for (const std::string kernel : {"read", "triad"}) {
      for (const bool one : {true, false}) {
        const int threads = one ? 1 : all_threads;
        // A cache level: its best point. DRAM: its largest working set, the one planned far above the caches.
        const SweepPoint* chosen = nullptr;
        for (const SweepPoint& p : points) {
          if (p.level != l.level || p.kernel != kernel || p.threads != threads) continue;
          if (!chosen || (dram ? p.working_set_bytes > chosen->working_set_bytes : p.gbs > chosen->gbs)) chosen = &p;
        }
        if (!chosen) continue;
        auto& slot = kernel == "read" ? (one ? l.read_gbs_one : l.read_gbs_all) : (one ? l.triad_gbs_one : l.triad_gbs_all);
        slot = chosen->gbs;
      }
    }
  }
  return levels;
}

}  // namespace ridge::measure::sweep
