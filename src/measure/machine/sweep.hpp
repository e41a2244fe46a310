// Planning the working-set sweep (pure functions of the cache facts, tested on fake caches) and summarising
// sweep points into per-level bandwidths.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ridge/machine.hpp"

namespace ridge::measure::sweep {

/// Smallest working set of the sweep (bytes per thread).
inline constexpr int64_t kFirstWorkingSet = int64_t{8} << 10;

/// Capacity of one cache level available to each of `threads` threads (a shared cache is split between them).
int64_t capacity_per_thread(const CacheLevel& c, int threads);

/// Memory level a working set of `bytes_per_thread` falls in when `threads` threads run: "L1".."L3" when it
/// fits in half of that level and exceeds twice the level above, "DRAM" beyond 4x the last cache, otherwise a
/// transition such as "L1-L2" or "L3-DRAM" (not used for level bandwidths).
std::string classify(const std::vector<CacheLevel>& caches, int64_t bytes_per_thread, int threads);

/// Working set per thread that is surely DRAM for `threads` threads: the power of two (from kFirstWorkingSet)
/// at or above 4x the last cache's capacity per thread, at least 64 MiB, at most `max_bytes_per_thread`.
int64_t dram_working_set(const std::vector<CacheLevel>& caches, int threads, int64_t max_bytes_per_thread);

/// Up to this working set the sweep doubles; beyond it (large, slow, inside L3 or DRAM) it quadruples.
inline constexpr int64_t kFineSweepEnd = int64_t{4} << 20;

/// The sweep's working sets per thread: from kFirstWorkingSet doubling up to kFineSweepEnd, then quadrupling,
/// always ending with `last`.
std::vector<int64_t> working_sets(int64_t last);

/// Level bandwidths from sweep points: for each cache level present and DRAM, the best point classified into
/// that level per kernel and thread count ("one" = 1 thread, "all" = `all_threads`).
std::vector<LevelBandwidth> summarize_levels(const std::vector<CacheLevel>& caches,
                                             const std::vector<SweepPoint>& points, int all_threads);

}  // namespace ridge::measure::sweep
