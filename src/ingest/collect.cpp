// The command lines that collect what ridge reads (ncu / nsys / nvprof), from one table of metric groups, and
// the sbatch script that runs them over a list of batch sizes.
#include <fmt/format.h>

#include <algorithm>

#include "internal.hpp"
#include "ridge/error.hpp"

namespace ridge::ingest {
namespace {

struct MetricGroup {
  std::string_view tool, group;
  std::vector<std::string_view> metrics;
};

// The group whose counters are data: the exact tensor-path counters of data/gpu/architectures.json ("tensor_ops"),
// the same list derive() reads.
constexpr std::string_view kTensorOps = "tensor-ops";

// Counters behind each group, per tool; the formulas in formulas.cpp turn them into FLOPs, bytes and time.
const std::vector<MetricGroup> kGroups = {
    {"ncu", "flops",
     {"sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
      "sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
      "sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
      "sm__sass_thread_inst_executed_op_hadd_pred_on.sum", "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
      "sm__sass_thread_inst_executed_op_hfma_pred_on.sum"}},
    {"ncu", "tensor", {"sm__inst_executed_pipe_tensor.sum"}},
    {"ncu", kTensorOps, {}},  // from builtin_architectures().tensor_ops
    {"ncu", "dram", {"dram__bytes_read.sum", "dram__bytes_write.sum"}},
    {"ncu", "cache", {"lts__t_bytes.sum", "l1tex__t_bytes.sum"}},
    {"ncu", "time", {"gpu__time_duration.sum"}},
    {"nvprof", "flops", {"flop_count_dp", "flop_count_sp", "flop_count_hp"}},
    {"nvprof", "tensor", {}},
    {"nvprof", kTensorOps, {}},
    {"nvprof", "dram", {"dram_read_transactions", "dram_write_transactions"}},
    {"nvprof", "cache", {"l2_read_transactions", "l2_write_transactions"}},
    {"nvprof", "time", {}},
    {"nsys", "time", {}},
};

void append(std::string& out, std::string_view sep, std::string_view item) {
  if (!out.empty()) out.append(sep);
  out.append(item);
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@%{}$") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out.append("'\\''");
    else out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::string joined_command(const std::vector<std::string>& cmd) {
  std::string out;
  for (const auto& a : cmd) append(out, " ", shell_quote(a));
  return out;
}

}  // namespace

std::vector<std::string> collect_metrics(const std::string& tool, const std::string& group) {
  bool tool_known = false;
  for (const auto& g : kGroups) {
    if (g.tool != tool) continue;
    tool_known = true;
    if (g.group == group && tool == "ncu" && group == kTensorOps) return builtin_architectures().tensor_ops.collect();
    if (g.group == group) return {g.metrics.begin(), g.metrics.end()};
  }
  if (!tool_known) throw UsageError(fmt::format("--tool: unknown tool '{}' (choose ncu, nsys or nvprof)", tool));
  std::string groups;
  for (const auto& g : kGroups)
    if (g.tool == tool) append(groups, ", ", g.group);
  throw UsageError(fmt::format("--metrics: '{}' is not collected by {} (choose from: {})", group, tool, groups));
}

CollectCommand collect_command(const CollectRequest& r) {
  if (r.command.empty()) throw UsageError("profile-cmd: give the command to profile after --, e.g. -- python train.py");
  CollectCommand c;
  std::vector<std::string> metrics;
  bool want_time = false;
  for (const auto& g : r.metrics) {
    const bool tool_has_group = std::any_of(kGroups.begin(), kGroups.end(),
                                            [&](const MetricGroup& x) { return x.tool == r.tool && x.group == g; });
    if (!tool_has_group) {
      collect_metrics("ncu", g);  // throws for a group no tool knows
      collect_metrics(r.tool, "time");  // throws for an unknown tool
      c.notes.push_back(fmt::format("{} cannot collect '{}' (use --tool ncu)", r.tool, g));
      continue;
    }
    auto m = collect_metrics(r.tool, g);
    want_time |= g == "time";
    if (m.empty() && g != "time") c.notes.push_back(fmt::format("{} has no counter for '{}'", r.tool, g));
    for (auto& x : m)
      if (std::find(metrics.begin(), metrics.end(), x) == metrics.end()) metrics.push_back(x);
  }
  const std::string app = joined_command(r.command);
  std::string list;
  for (const auto& m : metrics) append(list, ",", m);
  if (r.tool == "ncu") {
    c.log_file = r.output + ".csv";
    c.command = fmt::format("ncu --target-processes all{} --metrics {} --csv --print-units base --log-file {} {}",
                            r.nvtx ? " --nvtx" : "", list, shell_quote(c.log_file), app);
    c.notes.push_back("ncu serialises kernels, flushes caches and locks clocks to base (--clock-control base, the "
                      "default): counts are exact, times are under profiling conditions; add --clock-control none for "
                      "boost clocks, or take runtime from an nsys trace");
    c.notes.push_back("--print-units base keeps bytes and nanoseconds unscaled; every kernel launch is profiled (add "
                      "--launch-skip / --launch-count to sample one training step)");
    const bool tensor_ops = std::find(r.metrics.begin(), r.metrics.end(), kTensorOps) != r.metrics.end();
    if (!tensor_ops)
      c.notes.push_back("on Ampere and later, --metrics flops,tensor-ops,dram,time gives exact tensor-core FLOPs per "
                        "source precision (sm__ops_path_tensor_src_*); the tensor group's sm__inst_executed_pipe_tensor.sum "
                        "has no single FLOPs factor on Hopper (wgmma instructions of many shapes, HFMA2.MMA moves)");
    else
      c.notes.push_back("tensor-ops: sm__ops_path_tensor_src_* count tensor-core FLOPs exactly per source precision on "
                        "Ampere and later; where `ncu --query-metrics` does not list them (Volta, Turing), ncu refuses "
                        "them: use the tensor group there");
  } else if (r.tool == "nsys") {
    c.log_file = r.output + "_cuda_gpu_trace.csv";
    c.command = fmt::format(
        "nsys profile --trace cuda{} --force-overwrite true -o {} {} && nsys stats --report cuda_gpu_trace --format csv "
        "--force-export true --output {} {}.nsys-rep",
        r.nvtx ? ",nvtx" : "", shell_quote(r.output), app, shell_quote(r.output), shell_quote(r.output));
    c.notes.push_back("nsys records kernel and memcpy durations at normal clocks (no counters: FLOPs and bytes need "
                      "ncu); nsys before 2023 calls the report 'gputrace' (file suffix _gputrace.csv)");
  } else {
    c.log_file = r.output + ".csv";
    if (metrics.empty())
      c.command = fmt::format("nvprof --csv --print-gpu-trace --log-file {} {}", shell_quote(c.log_file), app);
    else
      c.command = fmt::format("nvprof --csv --metrics {} --log-file {} {}", list, shell_quote(c.log_file), app);
    if (want_time && !metrics.empty())
      c.notes.push_back("nvprof replays kernels to collect metrics; run once more with --print-gpu-trace for times");
    c.notes.push_back("nvprof does not support Ampere or later GPUs (use ncu there)");
  }
  if (r.nvtx && r.tool == "nvprof") c.notes.push_back("nvprof shows NVTX ranges only in its GUI; ridge cannot group them");
  return c;
}

std::string slurm_script(const CollectRequest& r, const SlurmOptions& s) {
  bool has_placeholder = false;
  for (const auto& a : r.command) has_placeholder |= a.find("{bs}") != std::string::npos;
  if (!has_placeholder)
    throw UsageError("--slurm: put {bs} in the command where the batch size goes, e.g. -- python train.py -b {bs}");
  if (s.batch_sizes.empty()) throw UsageError("--batch-sizes: give at least one batch size");
  CollectRequest per_run = r;
  per_run.output = r.output + "-bs${bs}";
  for (auto& a : per_run.command) {
    std::string replaced;
    for (size_t p = 0; p < a.size();) {
      if (a.compare(p, 4, "{bs}") == 0) {
        replaced += "${bs}";
        p += 4;
      } else {
        replaced += a[p++];
      }
    }
    a = std::move(replaced);
  }
  CollectCommand c = collect_command(per_run);
  std::string out = "#!/bin/bash\n";
  out += fmt::format("#SBATCH --job-name={}\n", s.job_name);
  if (!s.partition.empty()) out += fmt::format("#SBATCH --partition={}\n", s.partition);
  if (!s.account.empty()) out += fmt::format("#SBATCH --account={}\n", s.account);
  if (!s.gres.empty()) out += fmt::format("#SBATCH --gres={}\n", s.gres);
  out += fmt::format("#SBATCH --time={}\n", s.time);
  out += fmt::format("#SBATCH --output={}-%j.out\n", s.job_name);
  out += "# Written by `ridge profile-cmd --slurm`: one profiler log per batch size.\n";
  for (const auto& n : c.notes) out.append("# ").append(n).append("\n");
  out += "set -u\n";
  std::string sizes;
  for (auto b : s.batch_sizes) append(sizes, " ", std::to_string(b));
  out += fmt::format("for bs in {}; do\n", sizes);
  out += fmt::format("  echo \"batch size ${{bs}}\"\n  {} || echo \"run with batch size ${{bs}} failed\" >&2\n", c.command);
  out += "done\n";
  std::string ingest = "ridge ingest";
  for (auto b : s.batch_sizes) {
    std::string log = c.log_file;
    size_t p = log.find("${bs}");
    if (p != std::string::npos) log.replace(p, 5, std::to_string(b));
    ingest += fmt::format(" --label bs={} {}", b, log);
  }
  out.append("# Then read the logs:\n# ").append(ingest).append("\n");
  return out;
}

}  // namespace ridge::ingest
