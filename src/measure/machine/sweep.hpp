// Planning the working-set sweep (pure functions of the cache facts, tested on fake caches) and summarising
// sweep points into per-level bandwidths.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/machine.hpp"

namespace ridge::measure::sweep {

/// Smallest working set of the sweep (bytes per thread).
inline constexpr int64_t kFirstWorkingSet = int64_t{8} << 10;
/// Up to this working set the sweep doubles; beyond it (large, slow, inside L3 or DRAM) it quadruples.
inline constexpr int64_t kFineSweepEnd = int64_t{4} << 20;
/// The DRAM working set of all threads together is at least this multiple of the last-level cache they reach...
inline constexpr int64_t kDramLlcMultiple = 8;
/// ...and at least this many bytes.
inline constexpr int64_t kMinDramBytes = int64_t{256} << 20;
/// The DRAM working set of all threads together when the last-level cache is unknown (assumed facts).
inline constexpr int64_t kUnknownLlcDramBytes = int64_t{1} << 30;
/// Where the cache part of the sweep ends (per thread) when the last-level cache is unknown.
inline constexpr int64_t kUnknownLlcSweepEnd = int64_t{32} << 20;

/// Capacity of one cache level available to each of `threads` threads (a shared cache is split between them).
int64_t capacity_per_thread(const CacheLevel& c, int threads);

/// Memory level a working set of `bytes_per_thread` falls in when `threads` threads run: "L1".."L3" when it
/// fits in half of that level and exceeds twice the level above, "DRAM" beyond 4x the last cache, otherwise a
/// transition such as "L1-L2" or "L3-DRAM" (not used for level bandwidths). When the last-level cache is not
/// known (`llc_known` false), anything beyond the last listed level is "L2+" (beyond L2, level unknown).
std::string classify(const std::vector<CacheLevel>& caches, int64_t bytes_per_thread, int threads,
                     bool llc_known = true);

/// The DRAM working set of one thread count.
struct DramPlan {
  int threads = 1;                ///< threads, each with its own working set
  int64_t bytes_per_thread = 0;   ///< each thread's working set
  int64_t target_bytes = 0;       ///< wanted, all threads together: max(8 x llc_bytes, 256 MiB), or 1 GiB
  int64_t llc_bytes = 0;          ///< last-level cache the threads reach (size x instances); 0 when unknown
  bool capped = false;            ///< the memory budget allowed less than target_bytes
};
/// DRAM working set for `threads` threads, all of them together at most `max_total_bytes`, in whole MiB.
DramPlan plan_dram(const std::vector<CacheLevel>& caches, bool llc_known, int threads, int64_t max_total_bytes);

/// kFirstWorkingSet doubling up to kFineSweepEnd, then quadrupling, up to `last`, always ending with `last`.
std::vector<int64_t> working_sets(int64_t last);

/// One point of a planned sweep (the read and the triad kernel both run it).
struct PlannedPoint {
  int threads = 1;                ///< threads, each with its own working set
  int64_t working_set_bytes = 0;  ///< bytes per thread
  std::string level;              ///< classify() of the working set; "DRAM" for the DRAM point
};
/// A whole sweep: cache points, then the DRAM point, for one thread and then for all threads.
struct Plan {
  std::vector<PlannedPoint> points;   ///< in measuring order
  std::optional<DramPlan> dram_one;   ///< nullopt in quick mode
  std::optional<DramPlan> dram_all;   ///< nullopt in quick mode or with one thread
  int64_t buffer_bytes_first = 0;     ///< working-set bytes thread 0's buffer must hold
  int64_t buffer_bytes_other = 0;     ///< working-set bytes every other thread's buffer must hold
};
/// Plans the sweep from cache facts. Full mode: working sets up to the last-level cache per thread (32 MiB when
/// unknown), then the DRAM point from plan_dram() with half of `memory_budget_bytes` for each thread count.
/// Quick mode: up to half of L2's share per thread (at most 1 MiB), no DRAM point.
Plan plan_sweep(const CpuFacts& cpu, int all_threads, bool quick, int64_t memory_budget_bytes);

/// Time of one pass of a sweep point at memory `level`, from the median and the mean of its timed passes.
/// "DRAM": the mean, i.e. bytes of every timed pass over their total time, the sustained rate likwid-bench
/// reports and a layer streaming from memory sees (DRAM passes vary with other traffic on the memory bus: on a
/// shared 2-vCPU VM their median ran ~10% above the mean). A cache level: the median pass (descheduling and
/// interrupts are not a property of the cache).
double point_time_s(double median_s, double mean_s, std::string_view level);

/// Level bandwidths from sweep points: for each cache level present, the best point classified into it; for
/// DRAM, the "DRAM" point with the largest working set (never the best of several); per kernel and thread count
/// ("one" = 1 thread, "all" = `all_threads`).
std::vector<LevelBandwidth> summarize_levels(const std::vector<CacheLevel>& caches,
                                             const std::vector<SweepPoint>& points, int all_threads);

}  // namespace ridge::measure::sweep
