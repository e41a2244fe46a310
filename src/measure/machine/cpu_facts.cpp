// What ridge knows about the CPU without measuring: ISA support (cpuid), caches (cache_facts.cpp), topology
// (sysfs), model, flags and nominal clock (/proc/cpuinfo, cpufreq), each read from an injectable CpuSources.
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/machine.hpp"
#include "ridge/text.hpp"

namespace ridge::measure {
namespace {

namespace fs = std::filesystem;

/// First line of a small text file, trimmed; nullopt when it cannot be read.
std::optional<std::string> read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return std::string(trim(line));
}

/// Values of the first "key : value" lines of a /proc/cpuinfo file for the given keys.
std::map<std::string, std::string> cpuinfo_fields(const std::string& path, const std::vector<std::string>& keys) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line) && out.size() < keys.size()) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key(trim(std::string_view(line).substr(0, colon)));
    if (std::find(keys.begin(), keys.end(), key) != keys.end() && !out.count(key))
      out[key] = std::string(trim(std::string_view(line).substr(colon + 1)));
  }
  return out;
}

std::string fnv1a_hex(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

/// CPUs this process may run on.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

/// Distinct (package, core) pairs among `cpus`; `cpus.size()` when sysfs topology is missing.
int physical_cores(const std::string& sysfs_root, const std::vector<int>& cpus) {
  std::set<std::pair<std::string, std::string>> cores;
  for (int c : cpus) {
    const fs::path topo = fmt::format("{}/devices/system/cpu/cpu{}/topology", sysfs_root, c);
    auto package = read_line(topo / "physical_package_id");
    auto core = read_line(topo / "core_id");
    if (!package || !core) return static_cast<int>(cpus.size());
    cores.insert({*package, *core});
  }
  return static_cast<int>(cores.size());
}

}  // namespace

const std::vector<IsaInfo>& isa_table() {
  static const std::vector<IsaInfo> kIsas = {
      {Isa::Scalar, "scalar", 64, false},
      {Isa::Sse, "sse", 128, false},
      {Isa::Avx2, "avx2", 256, true},
      {Isa::Avx512, "avx512", 512, true},
  };
  return kIsas;
}

const IsaInfo& isa_info(Isa isa) {
  for (const IsaInfo& i : isa_table())
    if (i.isa == isa) return i;
  RIDGE_ASSERT(false, "ISA missing from isa_table");
  return isa_table().front();
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (const IsaInfo& i : isa_table())
    if (i.name == name) return i.isa;
  return std::nullopt;
}

bool isa_supported(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Sse: return __builtin_cpu_supports("sse2");
    case Isa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512: return __builtin_cpu_supports("avx512f");
  }
  return false;
}

int lanes(Isa isa, DType dtype) {
  if (isa == Isa::Scalar) return 1;
  return isa_info(isa).vector_bits / static_cast<int>(8 * dtype_bytes(dtype));
}

int64_t parse_cache_size(const std::string& text, const std::string& what) {
  const std::string t(trim(text));
  size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  if (digits == 0 || digits > 12) throw Error(fmt::format("{}: cannot read size '{}'", what, text));
  int64_t value = std::stoll(t.substr(0, digits));
  const std::string suffix = t.substr(digits);
  if (suffix.empty() || suffix == "B") return value;
  if (suffix == "K" || suffix == "KiB" || suffix == "KB") return value << 10;
  if (suffix == "M" || suffix == "MiB" || suffix == "MB") return value << 20;
  if (suffix == "G" || suffix == "GiB" || suffix == "GB") return value << 30;
  throw Error(fmt::format("{}: cannot read size '{}' (unknown suffix '{}')", what, text, suffix));
}

int count_cpu_list(const std::string& text, const std::string& what) {
  int count = 0;
  std::stringstream ss{std::string(trim(text))};
  std::string item;
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c); }))
      throw Error(fmt::format("{}: cannot read CPU list '{}'", what, text));
    return std::stoi(s);
  };
  while (std::getline(ss, item, ',')) {
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      number(item);
      ++count;
    } else {
      const int lo = number(item.substr(0, dash)), hi = number(item.substr(dash + 1));
      if (hi < lo) throw Error(fmt::format("{}: descending range in CPU list '{}'", what, text));
      count += hi - lo + 1;
    }
  }
  if (count == 0) throw Error(fmt::format("{}: empty CPU list", what));
  return count;
}

std::vector<CacheLevel> read_cache_levels(const std::string& sysfs_cache_dir) {
  std::vector<CacheLevel> levels;
  std::error_code ec;
  if (!fs::is_directory(sysfs_cache_dir, ec)) return levels;
  for (const auto& entry : fs::directory_iterator(sysfs_cache_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0 || !entry.is_directory()) continue;
    auto field = [&](const char* file) {
      auto v = read_line(entry.path() / file);
      if (!v) throw Error(fmt::format("{}: cannot read", (entry.path() / file).string()));
      return *v;
    };
    CacheLevel c;
    c.type = field("type");
    if (c.type == "Instruction") continue;
    const std::string level_file = (entry.path() / "level").string();
    const std::string level = field("level");
    if (level.empty() || level.size() > 2 || !std::isdigit(static_cast<unsigned char>(level[0])))
      throw Error(fmt::format("{}: cannot read cache level '{}'", level_file, level));
    c.level = std::stoi(level);
    c.size_bytes = parse_cache_size(field("size"), (entry.path() / "size").string());
    c.shared_cpus = fs::exists(entry.path() / "shared_cpu_list")
                        ? count_cpu_list(field("shared_cpu_list"), (entry.path() / "shared_cpu_list").string())
                        : 1;
    levels.push_back(c);
  }
  std::sort(levels.begin(), levels.end(), [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
  return levels;
}

CpuFacts detect_cpu(const CpuSources& sources) {
  CpuFacts f;
  auto info = cpuinfo_fields(sources.cpuinfo_path, {"model name", "vendor_id", "cpu MHz", "flags"});
  f.model = info.count("model name") ? info["model name"] : "unknown CPU";
  f.vendor = info.count("vendor_id") ? info["vendor_id"] : "unknown";
  f.flags_digest = fnv1a_hex(info["flags"]);
  const std::vector<int> cpus = allowed_cpus();
  f.logical_cpus = static_cast<int>(cpus.size());
  f.cores = physical_cores(sources.sysfs_root, cpus);
  for (const IsaInfo& i : isa_table())
    if (isa_supported(i.isa)) f.isas.push_back(i.isa);
  f.best_isa = f.isas.back();
  if (auto khz = read_line(sources.sysfs_root + "/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")) {
    f.nominal_clock_ghz = std::atof(khz->c_str()) / 1e6;
    f.clock_source = "cpufreq cpuinfo_max_freq";
  } else if (info.count("cpu MHz")) {
    f.nominal_clock_ghz = std::atof(info["cpu MHz"].c_str()) / 1e3;
    f.clock_source = "/proc/cpuinfo cpu MHz";
  } else {
    f.clock_source = "unknown";
  }
  CacheFacts caches = detect_caches(sources, f.logical_cpus);
  f.caches = std::move(caches.levels);
  f.cache_source = caches.source;
  f.cache_source_detail = std::move(caches.detail);
  std::string key = fmt::format("{}|{}|{}|{}|{}", f.model, f.vendor, f.logical_cpus, f.cores, f.flags_digest);
  key += fmt::format("|{}", cache_source_name(f.cache_source));
  for (const CacheLevel& c : f.caches) key += fmt::format("|L{}:{}:{}", c.level, c.size_bytes, c.shared_cpus);
  f.fingerprint = fnv1a_hex(key);
  return f;
}

}  // namespace ridge::measure
