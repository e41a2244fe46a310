// Hardware performance counters through Linux perf_event_open: cycles, instructions and, on Intel CPUs that
// have them, the FP_ARITH_INST_RETIRED events from which FLOPs follow. Where the kernel or hypervisor refuses
// (no PMU in a VM, perf_event_paranoid, seccomp), a group reports itself unavailable with the reason and every
// call becomes a no-op: counters never make a measurement fail.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/count.hpp"

namespace ridge::measure {

/// One countable event: its name, the perf_event_attr type/config, and FLOPs per count (0 = not a FLOP event).
struct CounterEvent {
  std::string_view name;         ///< "cycles", "instructions", "fp_arith_512b_packed_single", ...
  uint32_t type;                 ///< PERF_TYPE_HARDWARE or PERF_TYPE_RAW
  uint64_t config;               ///< event selector (raw: umask << 8 | event)
  int flops_per_count;           ///< FLOPs one count stands for (FMA instructions count twice already)
  bool intel_only;               ///< a raw Intel event (skipped on other vendors)
};
/// Every event ridge asks for, in the order readings list them.
const std::vector<CounterEvent>& counter_events();

/// Values of one group over the time it was running. Only events that opened are listed.
struct CounterReading {
  std::vector<std::pair<std::string, Count>> values;  ///< event name -> count (scaled when multiplexed)
  bool multiplexed = false;      ///< the kernel time-shared the PMU: counts are scaled estimates
  /// Count of one event; nullopt when it was not opened.
  std::optional<Count> get(std::string_view name) const;
  /// FLOPs from the FP_ARITH events (sum of count x flops_per_count); nullopt when none were opened.
  std::optional<Count> flops() const;
};

/// The counters of the calling thread, opened together and enabled/disabled together (each event on its own fd,
/// so that the FP events never make a group unschedulable). start()/stop() bracket the work; counts accumulate
/// across start/stop pairs until reset().
class CounterGroup {
 public:
  /// Opens every event of counter_events() that this machine provides. Never throws.
  CounterGroup();
  ~CounterGroup();
  CounterGroup(const CounterGroup&) = delete;
  CounterGroup& operator=(const CounterGroup&) = delete;

  /// True when at least cycles could be opened.
  bool available() const { return !fds_.empty(); }
  /// Why counters are unavailable ("perf_event_open(cycles): No such file or directory (no PMU ...)"); empty when available.
  const std::string& unavailable_reason() const { return reason_; }
  /// Names of the events that opened.
  std::vector<std::string> opened_events() const;

  /// Starts counting (no-op when unavailable).
  void start();
  /// Stops counting (no-op when unavailable).
  void stop();
  /// Zeroes the counts.
  void reset();
  /// Current counts (empty values when unavailable).
  CounterReading read() const;

 private:
  std::vector<int> fds_;               ///< one per opened event; fds_[0] is cycles
  std::vector<const CounterEvent*> events_;
  std::string reason_;
};

/// Starts a group on construction and stops it on destruction: `{ ScopedCounting c(group); run_layer(); }`.
class ScopedCounting {
 public:
  explicit ScopedCounting(CounterGroup& g) : group_(g) { group_.start(); }
  ~ScopedCounting() { group_.stop(); }
  ScopedCounting(const ScopedCounting&) = delete;
  ScopedCounting& operator=(const ScopedCounting&) = delete;

 private:
  CounterGroup& group_;
};

/// Probes once per process whether counters work here; empty when they do, else the reason. Callers print
/// "hardware counters unavailable: <reason>" once and carry on.
const std::string& counters_unavailable_reason();

}  // namespace ridge::measure
