// A fixed team of pinned threads that run the same job together, and page-aligned buffers for kernels.
#pragma once
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace ridge::measure {

/// `size` threads (the caller is thread 0), each pinned to one allowed CPU, started once and reused, so short
/// timed runs are not dominated by thread start-up. Between runs the workers spin for `hot_window_s` before they
/// sleep: a sleeping worker's CPU may halt, and in a VM waking a halted vCPU took 0.5-1.7 ms, so a sleeping
/// team started up to 1.7 ms late in runs of 1 ms and all-thread peaks read near zero.
class ThreadTeam {
 public:
  explicit ThreadTeam(int size, double hot_window_s = 0.2);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  /// Number of threads, the caller included.
  int size() const { return size_; }
  /// Runs job(thread_index) on every thread at once and returns when all have finished.
  void run(const std::function<void(int)>& job);

 private:
  void worker(int index);
  /// Waits until generation_ moves past `seen` (spinning, then sleeping) and returns the new generation.
  uint64_t await_generation(uint64_t seen) const;

  int size_;
  double hot_window_s_;
  std::atomic<uint64_t> generation_{0};  ///< bumped once per run (and once to stop)
  std::atomic<int> pending_{0};          ///< workers still in the current job
  std::atomic<bool> stopping_{false};
  const std::function<void(int)>* job_ = nullptr;  ///< published by the release bump of generation_
  std::vector<std::thread> workers_;
};

/// Wall time of one team run from per-thread kernel start and end times: the last end minus the first start.
/// Waking the team before the first start is not counted; threads that start late are (the slowest thread's
/// own time would let a late thread's work look free and overstate all-thread rates).
double team_span_s(const std::vector<double>& starts_s, const std::vector<double>& ends_s);

/// Pins the calling thread to the `index`-th CPU this process may use (best effort; ignored on failure).
void pin_to_allowed_cpu(int index);

/// Restores the calling thread's CPU affinity on destruction: a caller pinned for a benchmark gets its mask back,
/// so threads it starts later (oneDNN's OpenMP team) and later CPU detection see every allowed CPU again.
class AffinityRestorer {
 public:
  AffinityRestorer();
  ~AffinityRestorer();
  AffinityRestorer(const AffinityRestorer&) = delete;
  AffinityRestorer& operator=(const AffinityRestorer&) = delete;

 private:
  cpu_set_t saved_;
  bool valid_ = false;
};

/// A zero-filled, 2 MiB-aligned anonymous mapping, unmapped on destruction; with `huge_pages` transparent huge
/// pages are requested (MADV_HUGEPAGE), else it gets the system's page policy.
class PageBuffer {
 public:
  PageBuffer(size_t bytes, bool huge_pages);
  ~PageBuffer();
  PageBuffer(PageBuffer&& other) noexcept;
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  PageBuffer& operator=(PageBuffer&&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t mapped_ = 0;
};

}  // namespace ridge::measure
