// `ridge profile-cmd [--tool ncu|nsys|nvprof] [--metrics flops,dram,time] [--nvtx] -- CMD...`: prints the command
// line that collects what `ridge ingest` needs; --slurm writes an sbatch script over a list of batch sizes.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "ridge/error.hpp"
#include "ridge/ingest.hpp"

namespace ridge::cli {
namespace {

struct ProfileCmdArgs {
  ingest::CollectRequest request;
  std::string metrics = "flops,dram,time";
  bool slurm = false;
  std::string script;  // --slurm output file ("" = stdout)
  ingest::SlurmOptions slurm_opts;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

CLI::App* add_profile_cmd_command(CLI::App& app) {
  auto a = std::make_shared<ProfileCmdArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile-cmd", "Print the ncu/nsys/nvprof command line that collects what `ridge ingest` reads (-- CMD...)");
  cmd->add_option("--tool", a->request.tool, "Profiler: ncu | nsys | nvprof")
      ->check(CLI::IsMember({"ncu", "nsys", "nvprof"}))
      ->capture_default_str();
  cmd->add_option("--metrics", a->metrics, "Comma-separated groups: flops, tensor, tensor-ops (exact tensor-core "
                                           "FLOPs per precision, Ampere and later), dram, cache, time")
      ->capture_default_str();
  cmd->add_flag("--nvtx", a->request.nvtx, "Record NVTX ranges (group kernels by range with `ridge ingest --group nvtx`)");
  cmd->add_option("--output,-o", a->request.output, "Log file stem")->capture_default_str();
  cmd->add_flag("--slurm", a->slurm, "Write an sbatch script running the command once per batch size ({batch} or {bs} in CMD)");
  cmd->add_option("--script", a->script, "With --slurm: write the script to FILE instead of stdout")
      ->type_name("FILE")->needs("--slurm");
  cmd->add_option("--partition", a->slurm_opts.partition, "Slurm partition")->needs("--slurm");
  cmd->add_option("--gres", a->slurm_opts.gres, "Slurm generic resources")->capture_default_str()->needs("--slurm");
  cmd->add_option("--account", a->slurm_opts.account, "Slurm account")->needs("--slurm");
  cmd->add_option("--time", a->slurm_opts.time, "Slurm time limit")->capture_default_str()->needs("--slurm");
  cmd->add_option("--batch-sizes", a->slurm_opts.batch_sizes, "Batch sizes for --slurm (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::PositiveNumber)
      ->needs("--slurm");
  cmd->add_option("command", a->request.command, "The command to profile (after --)");
  cmd->callback([a] {
    a->request.metrics = split_list(a->metrics);
    if (a->request.metrics.empty()) throw UsageError("--metrics: give at least one of flops, tensor, tensor-ops, dram, cache, time");
    if (a->slurm) {
      for (auto& arg : a->request.command)  // {batch}, as in `sweep --gpu-cmd`, is the same placeholder as {bs}
        for (size_t p; (p = arg.find("{batch}")) != std::string::npos;) arg.replace(p, 7, "{bs}");
      std::string text = ingest::slurm_script(a->request, a->slurm_opts);
      if (a->script.empty()) {
        std::cout << text;
        return;
      }
      std::ofstream out(a->script);
      if (!out || !(out << text)) throw Error(fmt::format("{}: cannot write the sbatch script", a->script));
      std::cerr << "wrote " << a->script << "\n";
      return;
    }
    ingest::CollectCommand c = ingest::collect_command(a->request);
    std::cout << c.command << "\n";
    for (const auto& n : c.notes) std::cout << "# " << n << "\n";
    std::cout << "# then: ridge ingest " << c.log_file << "\n";
  });
  return cmd;
}

}  // namespace ridge::cli
