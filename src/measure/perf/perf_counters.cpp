// perf_event_open groups. Every failure turns into a reason string; nothing here throws or aborts.
#include "ridge/perf_counters.hpp"

#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace ridge::measure {
namespace {

/// Raw Intel event: FP_ARITH_INST_RETIRED (event 0xC7) with a umask selecting width and precision.
constexpr uint64_t fp_arith(uint64_t umask) { return (umask << 8) | 0xC7; }

bool cpu_is_intel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("vendor_id", 0) == 0) return line.find("GenuineIntel") != std::string::npos;
  return false;
}

int open_event(const CounterEvent& e) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = e.type;
  attr.config = e.config;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

std::string explain(int err) {
  std::string hint;
  if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV) hint = " (no hardware PMU exposed, typical in a VM)";
  else if (err == EACCES || err == EPERM) hint = " (see /proc/sys/kernel/perf_event_paranoid)";
  else if (err == ENOSYS) hint = " (kernel without perf events)";
  return std::strerror(err) + hint;
}

}  // namespace

const std::vector<CounterEvent>& counter_events() {
  static const std::vector<CounterEvent> kEvents = {
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, false},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, false},
      {"fp_arith_scalar_double", PERF_TYPE_RAW, fp_arith(0x01), 1, true},
      {"fp_arith_scalar_single", PERF_TYPE_RAW, fp_arith(0x02), 1, true},
      {"fp_arith_128b_packed_double", PERF_TYPE_RAW, fp_arith(0x04), 2, true},
      {"fp_arith_128b_packed_single", PERF_TYPE_RAW, fp_arith(0x08), 4, true},
      {"fp_arith_256b_packed_double", PERF_TYPE_RAW, fp_arith(0x10), 4, true},
      {"fp_arith_256b_packed_single", PERF_TYPE_RAW, fp_arith(0x20), 8, true},
      {"fp_arith_512b_packed_double", PERF_TYPE_RAW, fp_arith(0x40), 8, true},
      {"fp_arith_512b_packed_single", PERF_TYPE_RAW, fp_arith(0x80), 16, true},
  };
  return kEvents;
}

std::optional<Count> CounterReading::get(std::string_view name) const {
  for (const auto& [n, v] : values)
    if (n == name) return v;
  return std::nullopt;
}

std::optional<Count> CounterReading::flops() const {
  std::optional<Count> total;
  for (const CounterEvent& e : counter_events()) {
    if (e.flops_per_count == 0) continue;
    if (auto v = get(e.name)) total = total.value_or(0) + *v * e.flops_per_count;
  }
  return total;
}

CounterGroup::CounterGroup() {
  const bool intel = cpu_is_intel();
  for (const CounterEvent& e : counter_events()) {
    if (e.intel_only && !intel) continue;
    const int fd = open_event(e);
    if (fd < 0) {
      if (fds_.empty()) {  // cycles failed: nothing else can work
        reason_ = fmt::format("perf_event_open({}): {}", e.name, explain(errno));
        return;
      }
      continue;  // an optional event this CPU or hypervisor does not provide
    }
    fds_.push_back(fd);
    events_.push_back(&e);
  }
}

CounterGroup::~CounterGroup() {
  for (int fd : fds_) close(fd);
}

std::vector<std::string> CounterGroup::opened_events() const {
  std::vector<std::string> names;
  for (const CounterEvent* e : events_) names.emplace_back(e->name);
  return names;
}

void CounterGroup::start() {
  for (int fd : fds_) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

void CounterGroup::stop() {
  for (int fd : fds_) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

void CounterGroup::reset() {
  for (int fd : fds_) ioctl(fd, PERF_EVENT_IOC_RESET, 0);
}

CounterReading CounterGroup::read() const {
  CounterReading r;
  for (size_t i = 0; i < fds_.size(); ++i) {
    uint64_t buf[3] = {};  // value, time_enabled, time_running
    if (::read(fds_[i], buf, sizeof buf) != static_cast<ssize_t>(sizeof buf)) continue;
    Count v = buf[0];
    if (buf[2] > 0 && buf[2] < buf[1]) {  // the PMU was time-shared: scale to the enabled time
      r.multiplexed = true;
      v = static_cast<Count>(static_cast<long double>(buf[0]) * buf[1] / buf[2]);
    }
    r.values.emplace_back(std::string(events_[i]->name), v);
  }
  return r;
}

const std::string& counters_unavailable_reason() {
  static const std::string reason = [] {
    CounterGroup probe;
    return probe.unavailable_reason();
  }();
  return reason;
}

}  // namespace ridge::measure
