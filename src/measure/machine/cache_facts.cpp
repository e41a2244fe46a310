// Cache sizes from a chain of sources, most trusted first: sysfs, CPUID (leaf 4 on Intel, 0x8000001D on AMD),
// glibc's sysconf(_SC_LEVEL*_CACHE_SIZE), then a documented assumption. Each source is a plain function of
// injectable inputs (a sysfs root, a CPUID callable, a sysconf callable) so tests replay other machines.
#include <cpuid.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "ridge/machine.hpp"

namespace ridge::measure {
namespace {

constexpr uint32_t kIntelCacheLeaf = 4;
constexpr uint32_t kAmdCacheLeaf = 0x8000001D;
constexpr int kMaxCacheSubleaves = 16;  // real CPUs list 4-6; a bound against a hypervisor that never says "null"

uint32_t bits(uint32_t v, int lo, int hi) { return (v >> lo) & ((uint32_t{1} << (hi - lo + 1)) - 1); }

void sort_levels(std::vector<CacheLevel>& levels) {
  std::stable_sort(levels.begin(), levels.end(),
                   [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
}

std::string sysfs_cache_dir(const std::string& sysfs_root) { return sysfs_root + "/devices/system/cpu/cpu0/cache"; }

std::string hex(uint32_t v) { return fmt::format("{:#x}", v); }

}  // namespace

std::string_view cache_source_name(CacheSource s) {
  switch (s) {
    case CacheSource::Sysfs: return "sysfs";
    case CacheSource::Cpuid: return "cpuid";
    case CacheSource::Sysconf: return "sysconf";
    case CacheSource::Assumed: return "assumed";
  }
  return "assumed";
}

std::optional<CacheSource> parse_cache_source(std::string_view name) {
  for (CacheSource s : {CacheSource::Sysfs, CacheSource::Cpuid, CacheSource::Sysconf, CacheSource::Assumed})
    if (cache_source_name(s) == name) return s;
  return std::nullopt;
}

CpuidRegs host_cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs r;
  // __get_cpuid_count checks the leaf against the maximum first and leaves the registers alone when it is not
  // supported: zeros, which every decoder reads as "nothing here".
  __get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx);
  return r;
}

std::string cpuid_vendor(const CpuidFn& cpuid) {
  const CpuidRegs r = cpuid(0, 0);
  std::string v;
  for (uint32_t reg : {r.ebx, r.edx, r.ecx})
    for (int i = 0; i < 4; ++i) v += static_cast<char>((reg >> (8 * i)) & 0xff);
  return v;
}

uint32_t cpuid_cache_leaf(std::string_view vendor) {
  return vendor == "AuthenticAMD" || vendor == "HygonGenuine" ? kAmdCacheLeaf : kIntelCacheLeaf;
}

std::optional<CacheLevel> decode_cpuid_cache(const CpuidRegs& r) {
  const uint32_t type = bits(r.eax, 0, 4);
  if (type == 0) return std::nullopt;  // the null entry ends the list
  CacheLevel c;
  c.level = static_cast<int>(bits(r.eax, 5, 7));
  c.type = type == 1 ? "Data" : type == 2 ? "Instruction" : "Unified";
  const int64_t line = bits(r.ebx, 0, 11) + 1, partitions = bits(r.ebx, 12, 21) + 1, ways = bits(r.ebx, 22, 31) + 1;
  const int64_t sets = int64_t{r.ecx} + 1;
  c.size_bytes = ways * partitions * line * sets;
  c.shared_cpus = static_cast<int>(bits(r.eax, 14, 25)) + 1;
  return c;
}

std::vector<CacheLevel> read_cpuid_caches(const CpuidFn& cpuid, uint32_t leaf) {
  std::vector<CacheLevel> levels;
  const uint32_t max_leaf = cpuid(leaf & 0x80000000u, 0).eax;  // leaf 0 or 0x80000000: the highest supported
  if (max_leaf < leaf) return levels;
  for (uint32_t sub = 0; sub < kMaxCacheSubleaves; ++sub) {
    const auto c = decode_cpuid_cache(cpuid(leaf, sub));
    if (!c) break;
    if (c->type != "Instruction" && c->level > 0) levels.push_back(*c);
  }
  sort_levels(levels);
  return levels;
}

std::vector<CacheLevel> read_sysconf_caches(const SysconfFn& query, int logical_cpus) {
  std::vector<CacheLevel> levels;
  const std::pair<int, int> names[] = {{1, _SC_LEVEL1_DCACHE_SIZE},
                                       {2, _SC_LEVEL2_CACHE_SIZE},
                                       {3, _SC_LEVEL3_CACHE_SIZE},
                                       {4, _SC_LEVEL4_CACHE_SIZE}};
  for (const auto& [level, name] : names) {
    const long size = query(name);
    if (size <= 0) continue;
    // sysconf says nothing about sharing: L1 and L2 are private on every x86 CPU ridge targets; a last level is
    // taken as shared by every CPU this process may use (the smaller share per thread, the safer "fits" test).
    levels.push_back({level, level == 1 ? "Data" : "Unified", size, level <= 2 ? 1 : std::max(1, logical_cpus)});
  }
  return levels;
}

std::vector<CacheLevel> assumed_caches() {
  return {{1, "Data", int64_t{32} << 10, 1}, {2, "Unified", int64_t{256} << 10, 1}};
}

std::string default_sysfs_root() {
  const char* env = std::getenv("RIDGE_SYSFS_ROOT");
  return env && *env ? std::string(env) : std::string("/sys");
}

CpuSources CpuSources::host() {
  CpuSources s;
  s.sysfs_root = default_sysfs_root();
  s.cpuid = host_cpuid;
  s.sysconf = [](int name) { return ::sysconf(name); };
  return s;
}

CacheFacts detect_caches(const CpuSources& sources, int logical_cpus) {
  CacheFacts f;
  std::vector<std::string> tried;
  const std::string dir = sysfs_cache_dir(sources.sysfs_root);
  f.levels = read_cache_levels(dir);
  if (!f.levels.empty()) {
    f.source = CacheSource::Sysfs;
    f.detail = dir;
    return f;
  }
  tried.push_back(fmt::format("{} has none", dir));
  if (sources.cpuid) {
    const uint32_t leaf = cpuid_cache_leaf(cpuid_vendor(sources.cpuid));
    f.levels = read_cpuid_caches(sources.cpuid, leaf);
    if (!f.levels.empty()) {
      f.source = CacheSource::Cpuid;
      f.detail = fmt::format("CPUID leaf {} ({})", hex(leaf), fmt::join(tried, "; "));
      return f;
    }
    tried.push_back(fmt::format("CPUID leaf {} reports none", hex(leaf)));
  }
  if (sources.sysconf) {
    f.levels = read_sysconf_caches(sources.sysconf, logical_cpus);
    if (!f.levels.empty()) {
      f.source = CacheSource::Sysconf;
      f.detail = fmt::format("sysconf(_SC_LEVEL*_CACHE_SIZE), sharing assumed ({})", fmt::join(tried, "; "));
      return f;
    }
    tried.push_back("sysconf reports none");
  }
  f.levels = assumed_caches();
  f.source = CacheSource::Assumed;
  f.detail = fmt::format("assumed L1d 32 KiB and L2 256 KiB, last-level cache unknown ({})", fmt::join(tried, "; "));
  return f;
}

}  // namespace ridge::measure
