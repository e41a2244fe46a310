// The empirical roofline of this CPU: CPU facts (ISA, cores, caches, clock), sustained peak GFLOP/s measured
// with FMA micro-kernels, read/triad bandwidth per memory level from a working-set sweep, theoretical peaks
// and their ratios. A profile is cached as JSON ($XDG_CACHE_HOME/ridge/machine.json) and reused by other
// commands; a fingerprint of the CPU invalidates it on a different machine.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/dtype.hpp"

namespace ridge::measure {

/// Instruction sets ridge has compute and bandwidth kernels for, weakest first.
enum class Isa : uint8_t { Scalar, Sse, Avx2, Avx512 };

/// Facts about one instruction set (the table is data, see isa_table()).
struct IsaInfo {
  Isa isa;
  std::string_view name;  ///< "avx512", "avx2", "sse", "scalar"
  int vector_bits;        ///< register width used by the kernels (64 for scalar: one double)
  bool fma;               ///< fused multiply-add available (counts 2 FLOPs per lane per instruction)
};
/// Every ISA, weakest first.
const std::vector<IsaInfo>& isa_table();
/// Facts for one ISA.
const IsaInfo& isa_info(Isa isa);
/// Looks an ISA up by name ("avx512", ...); nullopt when unknown.
std::optional<Isa> parse_isa(std::string_view name);
/// True when this CPU (and OS) can run kernels of `isa` (cpuid via __builtin_cpu_supports).
bool isa_supported(Isa isa);
/// Number of `dtype` lanes in one vector of `isa` (scalar: 1).
int lanes(Isa isa, DType dtype);

/// One data or unified cache level (from sysfs, CPUID, sysconf or assumed; see CacheSource).
struct CacheLevel {
  int level = 0;              ///< 1, 2, 3
  std::string type;           ///< "Data" or "Unified" (instruction caches are skipped)
  int64_t size_bytes = 0;     ///< capacity of one instance
  int shared_cpus = 1;        ///< logical CPUs sharing one instance
};
/// "48K" -> 49152, "2048K", "480M", "1G", "512" (bytes). Throws ridge::Error naming `what` on junk.
int64_t parse_cache_size(const std::string& text, const std::string& what = "cache size");
/// Number of CPUs in a Linux CPU list such as "0-3,8,10-11". Throws ridge::Error naming `what` on junk.
int count_cpu_list(const std::string& text, const std::string& what = "cpu list");
/// Data/unified caches under a sysfs dir like /sys/devices/system/cpu/cpu0/cache (index*/level, type, size,
/// shared_cpu_list), ordered by level; empty when the directory is missing. Throws ridge::Error naming the file
/// when a present file cannot be parsed.
std::vector<CacheLevel> read_cache_levels(const std::string& sysfs_cache_dir);

/// Where cache sizes came from, most trusted first; detect_caches() tries them in this order.
enum class CacheSource : uint8_t { Sysfs, Cpuid, Sysconf, Assumed };
/// "sysfs", "cpuid", "sysconf", "assumed".
std::string_view cache_source_name(CacheSource s);
/// Looks a cache source up by name; nullopt when unknown.
std::optional<CacheSource> parse_cache_source(std::string_view name);

/// The four registers of one CPUID query.
struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;  ///< as the instruction leaves them
};
/// Runs CPUID (leaf, subleaf); tests pass a table of recorded register values instead of the instruction.
using CpuidFn = std::function<CpuidRegs(uint32_t leaf, uint32_t subleaf)>;
/// This CPU's CPUID instruction (<cpuid.h>); all zeros for a leaf above the supported maximum.
CpuidRegs host_cpuid(uint32_t leaf, uint32_t subleaf);
/// Vendor string from CPUID leaf 0 ("GenuineIntel", "AuthenticAMD").
std::string cpuid_vendor(const CpuidFn& cpuid);
/// The deterministic cache-parameters leaf of a vendor: 0x8000001D on AMD and Hygon, 4 otherwise (Intel).
uint32_t cpuid_cache_leaf(std::string_view vendor);
/// Decodes one subleaf of CPUID leaf 4 or 0x8000001D (same layout: type, level and sharing in EAX, line size,
/// partitions and ways in EBX, sets in ECX); nullopt for the null entry that ends the list.
std::optional<CacheLevel> decode_cpuid_cache(const CpuidRegs& r);
/// Data/unified caches listed by CPUID `leaf` (4 or 0x8000001D), ordered by level; empty when the leaf is above
/// the maximum the CPU reports or its first entry is null (a hypervisor that hides it).
std::vector<CacheLevel> read_cpuid_caches(const CpuidFn& cpuid, uint32_t leaf);
/// A sysconf()-like query: the value of a _SC_ name, <= 0 when unknown; tests pass a table.
using SysconfFn = std::function<long(int name)>;
/// Caches from sysconf(_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2/3/4_CACHE_SIZE): L1 and L2 taken as private, L3 and
/// beyond as shared by `logical_cpus` (sysconf does not report sharing).
std::vector<CacheLevel> read_sysconf_caches(const SysconfFn& query, int logical_cpus);
/// The documented last resort when no source reports caches: L1d 32 KiB and L2 256 KiB, private, and no
/// last-level cache (unknown: DRAM is then measured on a large fixed working set).
std::vector<CacheLevel> assumed_caches();

/// Where detect_cpu() reads facts from; tests replace each part with a fake.
struct CpuSources {
  std::string sysfs_root = "/sys";  ///< caches under devices/system/cpu/cpu0/cache, topology, cpufreq
  std::string cpuinfo_path = "/proc/cpuinfo";  ///< model, vendor, flags, MHz
  CpuidFn cpuid;                    ///< empty: CPUID is not consulted for caches
  SysconfFn sysconf;                ///< empty: sysconf is not consulted for caches
  /// This machine: /sys (or $RIDGE_SYSFS_ROOT when set, e.g. an empty dir to play a VM without cache
  /// entries), /proc/cpuinfo, the CPUID instruction and glibc's sysconf.
  static CpuSources host();
};
/// "/sys", or $RIDGE_SYSFS_ROOT when set and not empty.
std::string default_sysfs_root();

/// Cache sizes and the source they came from.
struct CacheFacts {
  std::vector<CacheLevel> levels;              ///< data/unified caches ordered by level
  CacheSource source = CacheSource::Assumed;   ///< the first source in the chain that reported caches
  std::string detail;                          ///< the source in words, and why earlier sources gave nothing
};
/// The chain: sysfs under `sources.sysfs_root`, then CPUID (leaf by vendor), then sysconf, then
/// assumed_caches(). Throws ridge::Error naming the file when a present sysfs file cannot be parsed.
CacheFacts detect_caches(const CpuSources& sources, int logical_cpus);

/// What ridge knows about this CPU without measuring.
struct CpuFacts {
  std::string model;                  ///< "Intel(R) Xeon(R) Processor" (/proc/cpuinfo model name)
  std::string vendor;                 ///< "GenuineIntel"
  std::string flags_digest;           ///< hash of the cpuinfo flags line (part of the fingerprint)
  int logical_cpus = 1;               ///< CPUs this process may run on (sched_getaffinity)
  int cores = 1;                      ///< physical cores among them (hyper-threads share FMA units)
  std::vector<Isa> isas;              ///< supported ISAs, weakest first
  Isa best_isa = Isa::Scalar;         ///< strongest supported ISA
  int fma_units_per_core = 2;         ///< FMA pipes per core (assumed: cpuid does not say; see notes)
  double nominal_clock_ghz = 0;       ///< cpufreq max or /proc/cpuinfo "cpu MHz"; 0 when unknown
  std::string clock_source;           ///< where nominal_clock_ghz came from
  std::vector<CacheLevel> caches;     ///< ordered by level, from `cache_source`
  CacheSource cache_source = CacheSource::Assumed;  ///< where `caches` came from
  std::string cache_source_detail;    ///< that source in words, and why earlier sources gave nothing
  std::string fingerprint;            ///< model + cpus + caches + flags; a different value invalidates a profile
  /// True when the last cache level is known (any source but Assumed): DRAM working sets are sized from it.
  bool llc_known() const { return cache_source != CacheSource::Assumed && !caches.empty(); }
};
/// Reads CPU facts from `sources` (default: this machine).
CpuFacts detect_cpu(const CpuSources& sources = CpuSources::host());

/// Peak FLOP/s for one precision, ISA and thread count, measured and from CPU facts.
struct PeakResult {
  DType dtype = DType::F32;        ///< F32 or F64
  Isa isa = Isa::Scalar;           ///< kernel ISA
  int threads = 1;                 ///< threads that ran the kernel
  double gflops = 0;               ///< measured, median over samples
  double theoretical_gflops = 0;   ///< cores x FMA units x lanes x 2 x clock (0 when the clock is unknown)
  double spread = 0;               ///< IQR / median of the samples
  int samples = 0;                 ///< timed runs
};

/// One point of the working-set sweep.
struct SweepPoint {
  std::string kernel;             ///< "read" or "triad"
  int threads = 1;                ///< threads, each with its own working set
  int64_t working_set_bytes = 0;  ///< bytes touched per pass by one thread
  double gbs = 0;                 ///< measured GB/s (1e9 B/s), all threads together
  std::string level;              ///< memory level this working set falls in ("L1".."DRAM")
};

/// Bandwidth of one memory level; nullopt where not measured (quick mode, no such level).
struct LevelBandwidth {
  std::string level;                       ///< "L1", "L2", "L3", "DRAM"
  int64_t capacity_bytes = 0;              ///< per instance (0 for DRAM)
  std::optional<double> read_gbs_one;      ///< read kernel, one thread
  std::optional<double> triad_gbs_one;     ///< triad kernel, one thread
  std::optional<double> read_gbs_all;      ///< read kernel, all threads
  std::optional<double> triad_gbs_all;     ///< triad kernel, all threads
  /// The level's roofline bandwidth: triad (STREAM convention), all threads or one thread.
  std::optional<double> gbs(bool all_threads) const { return all_threads ? triad_gbs_all : triad_gbs_one; }
};

/// Everything `ridge machine` measures; cached as JSON.
struct MachineProfile {
  static constexpr int kFormatVersion = 3;  ///< bump when the JSON layout changes (old caches are re-measured)
  CpuFacts cpu;
  int threads = 1;                    ///< thread count of the "all threads" measurements
  double measured_clock_ghz = 0;      ///< from a dependent-add chain (one add per cycle); 0 when not measured
  std::vector<PeakResult> peaks;      ///< per precision x ISA x {1, all} threads
  std::vector<LevelBandwidth> levels; ///< L1, L2, L3 (those present), DRAM
  std::vector<SweepPoint> sweep;      ///< the raw working-set sweep
  bool quick = false;                 ///< measured in quick mode (short, no L3/DRAM); never reused as a full profile
  bool huge_pages = false;            ///< sweep buffers asked for transparent huge pages (MachineOptions::huge_pages)
  double duration_s = 0;              ///< wall time of the measurement
  std::string measured_at;            ///< UTC time, ISO 8601
  std::vector<std::string> notes;     ///< assumptions and what was not measured

  /// Best measured GFLOP/s for `dtype` (F64 -> fp64, anything else -> fp32) on one or all threads; 0 if absent.
  double peak_gflops(DType dtype, bool all_threads) const;
  /// The theoretical counterpart of peak_gflops (same ISA); 0 if unknown.
  double theoretical_gflops(DType dtype, bool all_threads) const;
  /// Roofline bandwidth of a level ("L1".."DRAM"); nullopt when that level was not measured.
  std::optional<double> bandwidth_gbs(std::string_view level, bool all_threads) const;
};

/// Serialises a profile (the cache file format).
nlohmann::json profile_to_json(const MachineProfile& p);
/// Parses a profile; throws ridge::Error naming `what` (e.g. the file) when the JSON is not a profile.
MachineProfile profile_from_json(const nlohmann::json& j, const std::string& what = "machine profile");

/// $XDG_CACHE_HOME/ridge/machine.json, else $HOME/.cache/ridge/machine.json.
std::string default_profile_path();

/// How to measure.
struct MachineOptions {
  bool quick = false;                 ///< seconds -> fraction of a second: L1/L2 sweep only, short samples
  int threads = 0;                    ///< "all threads" count; 0 = every CPU this process may use
  std::function<void(const std::string&)> progress;  ///< progress messages (may be empty)
  std::optional<CpuFacts> cpu;        ///< facts to plan the sweep with (tests inject them); default detect_cpu()
  int64_t memory_budget_bytes = 0;    ///< most bytes the sweep buffers may take; 0 = half of MemAvailable
  /// Ask for transparent huge pages (MADV_HUGEPAGE) for the sweep buffers. Default off: the buffers get the
  /// system's page policy, as likwid-bench's and the executor's (oneDNN's) buffers do; where THP is "madvise"
  /// (Debian's default) huge pages lift DRAM streaming by up to ~40 % on some machines, a rate no layer run
  /// by `ridge measure` sees (docs/machine.md).
  bool huge_pages = false;
};
/// Runs every micro-benchmark on this CPU (the whole run takes <= ~30 s; quick mode well under 2 s).
MachineProfile measure_machine(const MachineOptions& options = {});

/// Reads a cached profile if it exists, parses, matches `current` (fingerprint, format version) and is not a
/// quick profile when `accept_quick` is false; otherwise nullopt and `why` (if given) says why.
std::optional<MachineProfile> load_cached_profile(const std::string& path, const CpuFacts& current,
                                                  bool accept_quick = false, std::string* why = nullptr);
/// Writes a profile atomically (temp file + rename), creating the directory. Throws ridge::Error naming the file.
void save_profile(const MachineProfile& p, const std::string& path);

/// Where a profile came from.
struct ProfileSource {
  bool from_cache = false;  ///< true when read from `path`, false when just measured
  std::string path;         ///< the cache file
  std::string reason;       ///< why it was (re-)measured: "--refresh", "no cache file", "different CPU", ...
};
/// The machine profile for other stages: the cached one for this CPU, else measured now and cached.
/// `refresh` forces a new measurement. In quick mode a cached full profile is used as well, and a quick profile
/// never overwrites a full one. A cache that cannot be written is noted in the profile's notes, never fatal.
MachineProfile load_or_measure_machine(const MachineOptions& options = {}, bool refresh = false,
                                       const std::string& path = default_profile_path(),
                                       ProfileSource* source = nullptr);

/// Attainable GFLOP/s at arithmetic intensity `flops_per_byte` on this machine's roofline:
/// min(peak, AI x bandwidth of `level`). `threads` between 1 and the profile's all-thread count interpolates
/// linearly between the one-thread and all-thread ceilings (0 = all). Falls back to DRAM, then to the
/// peak alone, when the level was not measured.
double attainable_gflops(const MachineProfile& p, double flops_per_byte, DType dtype = DType::F32, int threads = 0,
                         std::string_view level = "DRAM");

}  // namespace ridge::measure
