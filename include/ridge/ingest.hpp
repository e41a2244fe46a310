// Ingest stage: read what users bring from GPU clusters (Nsight Compute, Nsight Systems, nvprof and
// torch.profiler outputs) into one plain value, then do the arithmetic right: FLOPs per precision, bytes per
// memory level and time per kernel from the raw counters (formulas are data, see src/ingest/formulas.cpp),
// grouping by kernel family / NVTX range / process / run, and a comparison with an estimate.
// Formats and their quirks: docs/ingest.md and ../shared/reference/profiler-formats.md.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/count.hpp"

namespace ridge::ingest {

/// One format family of profiler output; a file may hold several (e.g. nsys stats and ncu text).
enum class Format : uint8_t {
  NcuText,        ///< ncu plain text: legacy, new layout and --print-summary per-kernel
  NcuCsv,         ///< ncu --csv, details page (one row per metric) or --page raw (one row per kernel)
  NvprofMetrics,  ///< nvprof --metrics, text or CSV (aggregated per kernel signature)
  NvprofSummary,  ///< nvprof GPU summary (Time(%) table), text or CSV with a units row
  NvprofTrace,    ///< nvprof --print-gpu-trace --csv (units row)
  NsysTrace,      ///< nsys gputrace / cuda_gpu_trace, CSV or text table
  NsysStats,      ///< nsys stats reports (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum), text or CSV
  TorchTable,     ///< torch.profiler key_averages().table() text
  TorchTrace,     ///< torch.profiler export_chrome_trace() JSON (kineto traceEvents, or the legacy top-level list)
};
/// Stable lower-case name of a format ("ncu-text", "nsys-stats", ...).
std::string_view format_name(Format f);
/// Every format, in sniffing order.
const std::vector<Format>& all_formats();
/// Parses a format name as printed by format_name; nullopt if unknown.
std::optional<Format> parse_format(std::string_view name);

/// A problem found while reading: which file and line (0 when it concerns the whole file) and why.
struct Warning {
  std::string file;
  int line = 0;
  std::string message;
  /// "file:line: message" (or "file: message").
  std::string text() const;
};

/// A counter value in base units (byte, nsecond, cycle, inst, sector, cycle/second, byte/second, %, ...).
/// `exact` holds the integer when the printed value times the unit factor is a whole number.
struct Value {
  double real = 0;
  std::optional<Count> exact;
  std::string unit;  ///< base unit; a unit ridge does not know is kept as printed
};

/// What ridge derives from one kernel's counters; nullopt = not collected (never a silent zero).
struct Derived {
  std::optional<Count> flops_fp64, flops_fp32, flops_fp16, flops_tensor;
  /// Tensor-core FLOPs per source precision ("bf16", "fp16", "tf32", "fp8", "int8", "fp64", ...) when they come from
  /// the exact tensor-path counters (sm__ops_path_tensor_src_*); empty when flops_tensor is a factor x instructions.
  /// Their sum is flops_tensor.
  std::map<std::string, Count, std::less<>> tensor_by_precision;
  std::optional<Count> dram_bytes, l2_bytes, l1_bytes;
  std::optional<double> time_s;
  /// Sum of the FLOP quantities that are present, or nullopt when none is.
  std::optional<Count> flops() const;
};

/// Whether a profile's device text names a GPU ("NVIDIA A100-SXM4-40GB (0)") rather than only its CUDA index ("0", as
/// ncu's CSV prints it): only a name can be checked against another profile's GPU or a --device.
bool names_a_gpu(std::string_view device);

/// One kernel launch (or one aggregated kernel signature / memory operation) as read from a file.
struct KernelRecord {
  std::string name;          ///< demangled name as printed (may be truncated with "..." or "…" by the tool)
  std::string process;       ///< process name (empty if the format does not say)
  int64_t pid = -1;
  std::string device;        ///< device name or index as printed (names_a_gpu tells which)
  std::string nvtx;          ///< NVTX range(s) the launch ran in, '/'-joined
  int64_t launch_id = -1;    ///< ncu "ID" (launch index in the session) or nsys/nvprof correlation id
  std::string file;          ///< file it came from
  int line = 0;              ///< line of the kernel header / first row
  std::string label;         ///< run label (--label bs=10), empty when none
  size_t run = 0;            ///< index into Profile::runs
  std::string op;            ///< framework operator that launched it (torch trace: outermost cpu_op), else empty
  bool memop = false;        ///< memcpy / memset rather than a kernel
  Count invocations = 1;     ///< launches this record stands for (aggregated formats: calls/instances)
  std::map<std::string, Value, std::less<>> counters;  ///< raw metric -> total over invocations, base units
  Derived derived;           ///< filled by derive()
};

/// One profiling session: a whole file, or one of several sessions written one after another into a file
/// (two `==PROF==` sessions, a repeated CSV header, launch IDs restarting at 0).
struct Run {
  std::string file;      ///< file it was read from
  int line = 0;          ///< line where it starts (0: the start of the file)
  std::string label;     ///< --label of the file
  std::string boundary;  ///< why a new run starts at `line` ("" for the first run of a file)
};

/// Everything read from one or more files.
struct Profile {
  std::vector<KernelRecord> kernels;
  std::vector<Run> runs;                ///< every record's `run` indexes this; at least one per file read
  std::vector<Warning> warnings;
  std::vector<std::string> notes;       ///< how numbers were obtained (formulas used, factors, joins)
  std::vector<Format> formats;          ///< formats found, in order of first appearance
  std::vector<std::string> files;       ///< files read
  std::string architecture;             ///< "volta", "ampere", ... (from --arch, device names or kernel names)
  int64_t tensor_flops_per_inst = 0;    ///< factor used for tensor-pipe instructions (0 = none applied: no record
                                        ///< took its tensor FLOPs from instructions)
};

/// Options for reading.
struct ReadOptions {
  std::optional<Format> format;  ///< force a format instead of sniffing
  std::string label;             ///< run label given to every record
};

/// Formats whose signatures appear in `text` (section 1 of profiler-formats.md), in sniffing order.
std::vector<Format> sniff(std::string_view text);
/// Parses text already in memory. `name` is used in warnings. Never throws for bad content: problems become
/// warnings (a profile with no kernels and a warning when nothing could be read).
Profile parse_text(std::string_view text, const std::string& name, const ReadOptions& opts = {});
/// Reads and parses one file. Throws ridge::Error naming the file when it cannot be opened.
Profile read_file(const std::string& path, const ReadOptions& opts = {});

/// Indices of the records of one run (0-based index into Profile::runs).
std::vector<size_t> run_records(const Profile& p, size_t run);
/// The profile restricted to one run (1-based, as `--run N` counts). Throws ridge::UsageError naming the number of
/// runs when `run` is out of range.
Profile select_run(Profile p, size_t run);

/// How several files combine.
enum class JoinMode : uint8_t {
  Auto,    ///< join on (ID, kernel name) when the files are one-metric-per-run captures of the same launches
  Id,      ///< always try the join; warn and concatenate when the launches do not line up
  Concat,  ///< keep every file's records
  Sequence,  ///< the files are consecutive slices of one capture (ncu --launch-skip/--launch-count): one run
};
/// The join mode a name ("auto", "id", "none", "sequence") stands for, or nullopt.
std::optional<JoinMode> parse_join_mode(std::string_view s);
/// Combines profiles of several files: joins the NERSC layout (one metric per run, launches identical),
/// otherwise concatenates. Records a note saying which happened.
Profile combine(std::vector<Profile> parts, JoinMode mode = JoinMode::Auto);

/// One GPU architecture's counting facts (data/gpu/architectures.json).
struct Architecture {
  std::string name;                                 ///< "volta", "ampere", ...
  std::map<std::string, int64_t> tensor_flops_per_inst;  ///< precision -> FLOPs per warp-level tensor-pipe instruction
  std::string source;                               ///< where the figures come from
};
/// Counters that count tensor-core math exactly, one source precision each (ncu's sm__ops_path_tensor_src_*).
struct TensorOpsPrecision {
  std::string precision;                               ///< "bf16", "fp16", "tf32", "fp8", "int8", "int1", "fp64"
  /// Sets of metrics, in order: the first set whose metrics are all present is summed (a parent counter, else its
  /// children), so a parent is never added to its own children.
  std::vector<std::vector<std::string>> alternatives;
};
/// The exact tensor-path counters (data/gpu/architectures.json "tensor_ops"): when a kernel has any of them they
/// give its tensor FLOPs, per precision, instead of factor x tensor-pipe instructions.
struct TensorOps {
  std::vector<TensorOpsPrecision> precisions;
  int64_t flops_per_op = 1;          ///< FLOPs per counted op (an FMA counts 2 ops)
  std::string source;                ///< what the counters are and how the FLOPs-per-op was checked
  std::string not_math_metric;       ///< tensor-pipe instructions that are no matrix math (HFMA2.MMA)
  std::string not_math_note;         ///< why those instructions carry no tensor FLOPs
  /// The metrics `ridge profile-cmd --metrics tensor-ops` collects: the first set of every precision.
  std::vector<std::string> collect() const;
};
/// A name fragment that tells the architecture ("A100" in a device name, "sm80_" in a kernel name).
struct ArchitectureHint {
  std::string pattern;
  std::string architecture;
};
/// Every architecture ridge knows, and how to recognise one from device and kernel names (in order).
struct ArchitectureTable {
  std::vector<Architecture> architectures;
  std::vector<ArchitectureHint> device_names;     ///< tried first, against KernelRecord::device
  std::vector<ArchitectureHint> kernel_prefixes;  ///< then against kernel names
  std::string counted_precision = "fp16";         ///< whose factor tensor-pipe instructions are counted with
  TensorOps tensor_ops;                           ///< exact tensor-path counters (empty when the file has none)
  std::string file;                               ///< where it was read from
  /// The architecture called `name`, or nullptr.
  const Architecture* find(std::string_view name) const;
  /// FLOPs per tensor-pipe instruction of `arch` at counted_precision (0: none, or unknown architecture).
  int64_t tensor_factor(std::string_view arch) const;
};
/// Parses an architecture table (format "ridge-gpu-architectures"). Throws ridge::Error with one line naming
/// `origin` and the field when it is malformed.
ArchitectureTable parse_architectures(std::string_view text, const std::string& origin);
/// Reads an architecture table file; throws ridge::Error naming the file when it cannot be read or is malformed.
ArchitectureTable load_architectures(const std::string& path);
/// The shipped table (builtin_data_dir("gpu")/architectures.json), read once.
const ArchitectureTable& builtin_architectures();

/// Options for deriving quantities.
struct DeriveOptions {
  std::string architecture;           ///< override: volta, turing, ampere, ada, hopper
  std::optional<int64_t> tensor_factor;  ///< override: FLOPs per tensor-pipe instruction
  const ArchitectureTable* architectures = nullptr;  ///< nullptr: builtin_architectures()
};
/// Fills KernelRecord::derived for every record from the formula table; notes which formulas were used and
/// which terms were missing; detects the architecture for the tensor factor.
void derive(Profile& p, const DeriveOptions& opts = {});

/// Sums over a set of records. Quantities absent from every record stay nullopt; `missing_*` count records
/// that lack a quantity other records have.
struct Totals {
  Count kernels = 0;     ///< kernel launches (invocations), memops excluded
  Count memops = 0;      ///< memcpy/memset operations
  Derived sum;           ///< time_s sums kernels and memops
  std::optional<double> kernel_time_s;  ///< kernels only
  int missing_time = 0, missing_flops = 0, missing_dram = 0;
  /// Rates and intensity pair quantities of the same records (a run's FLOPs over another run's time is no rate):
  /// FLOPs and kernel time of the kernels that have both, DRAM bytes and time of those that have both, FLOPs and
  /// DRAM bytes of those that have both.
  std::optional<Count> flops_timed, dram_timed, flops_with_dram, dram_with_flops;
  std::optional<double> time_with_flops_s, time_with_dram_s;
  std::map<std::string, Value, std::less<>> counters;  ///< additive raw metrics summed by exact name
  std::vector<std::string> not_summed;                 ///< metrics left out of `counters` (rates, ratios, %)
};
/// Totals over the given records (all of them when `only` is empty).
Totals totals(const Profile& p, const std::vector<size_t>& only = {});

/// Kernel families (GEMM, conv variants, elementwise, ...), from name patterns kept in one table.
std::string_view kernel_family(std::string_view name, bool memop);
/// True for names of kernels that run on tensor cores (HMMA/xmma/s884/s16816/tensorop ...).
bool is_tensor_core_kernel(std::string_view name);

/// Records grouped by a key.
struct Group {
  std::string key;
  std::vector<size_t> members;  ///< indices into Profile::kernels
};
/// What to group by.
enum class GroupBy : uint8_t { Family, Nvtx, Process, Name, Label, File, Run, Op };
std::optional<GroupBy> parse_group_by(std::string_view s);
/// Groups, ordered by first appearance.
std::vector<Group> group(const Profile& p, GroupBy by);

/// y = slope * x + intercept by least squares.
struct LineFit {
  double slope = 0, intercept = 0;
  double r2 = 0;
  int points = 0;
};
/// Least-squares fit; nullopt with fewer than two distinct x values.
std::optional<LineFit> fit_line(const std::vector<double>& x, const std::vector<double>& y);
/// The numeric part of a run label ("bs=51" -> 51, "51" -> 51); nullopt when there is none.
std::optional<double> label_number(std::string_view label);

// ---- compare & explain -----------------------------------------------------------------------------------

/// ridge's estimate for the captured work (filled by the CLI from ridge::estimate).
struct Expected {
  std::string description;     ///< "resnet18, batch 10, training, 1 step"
  Count flops = 0;             ///< forward (+ backward when training) x steps
  Count bytes = 0;             ///< compulsory traffic x steps
};
/// A measured/estimated ratio with reasons, each naming the kernels that support it.
struct Explanation {
  std::string quantity;                ///< "flops" or "bytes"
  std::optional<double> ratio;         ///< measured / estimated
  std::vector<std::string> reasons;    ///< one sentence each, with kernel names
};
/// Compares totals with an estimate and explains large gaps (tensor cores invisible to FFMA counters,
/// several iterations, autotuning trials, Winograd/FFT arithmetic, memory-bound kernels).
std::vector<Explanation> explain(const Profile& p, const Totals& t, const Expected& e);

// ---- collect ---------------------------------------------------------------------------------------------

/// What `ridge profile-cmd` should produce.
struct CollectRequest {
  std::string tool = "ncu";                        ///< ncu | nsys | nvprof
  std::vector<std::string> metrics = {"flops", "dram", "time"};  ///< flops, tensor, tensor-ops, dram, cache, time
  bool nvtx = false;
  std::vector<std::string> command;                ///< the user's command (may contain {bs})
  std::string output = "ridge-profile";            ///< log file stem
};
/// The exact command line (shell-quoted) collecting what ridge needs, plus notes (clock control, units).
/// Throws ridge::UsageError for an unknown tool or metric group.
struct CollectCommand {
  std::string command;
  std::string log_file;
  std::vector<std::string> notes;
};
CollectCommand collect_command(const CollectRequest& r);
/// Counters behind a metric group for a tool ("flops" -> sm__sass_thread_inst_executed_op_*), from one table
/// ("tensor-ops" from the architecture table's tensor_ops, data/gpu/architectures.json).
std::vector<std::string> collect_metrics(const std::string& tool, const std::string& group);

/// Slurm options for `profile-cmd --slurm`.
struct SlurmOptions {
  std::string partition, gres = "gpu:1", account, time = "01:00:00", job_name = "ridge-profile";
  std::vector<int64_t> batch_sizes = {1, 2, 4, 8};
};
/// An sbatch script that runs the collect command once per batch size ({bs} in the command is replaced),
/// one log per run, ending with the `ridge ingest --label bs=...` line that reads them.
std::string slurm_script(const CollectRequest& r, const SlurmOptions& s);

}  // namespace ridge::ingest
