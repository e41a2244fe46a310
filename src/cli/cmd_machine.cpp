// ridge machine: the empirical roofline of this CPU (peak GFLOP/s, bandwidth per memory level), cached.
#include <fmt/format.h>

#include "commands.hpp"
#include "ridge/api.hpp"
#include "ridge/machine.hpp"

namespace ridge::cli {

CLI::App* add_machine_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "machine", "Empirical roofline of this CPU: peak GFLOP/s and bandwidth per memory level (cached)");
  struct Options {
    OutputOptions out;
    bool refresh = false, quick = false, sweep = false, huge_pages = false;
    int threads = 0;
    std::string cache;
  };
  auto o = std::make_shared<Options>();
  o->out.add_to(cmd);
  cmd->add_flag("--refresh", o->refresh, "Measure again even when a cached profile exists");
  cmd->add_flag("--quick", o->quick, "Short run (under 2 s): L1/L2 only, short samples; for tests and smoke checks");
  cmd->add_flag("--sweep", o->sweep, "Also list every point of the working-set sweep");
  cmd->add_flag("--huge-pages", o->huge_pages,
                "Ask for transparent huge pages for the bandwidth buffers (default: the system's page policy, as "
                "likwid-bench and ridge's own layers get; huge pages can raise DRAM rates by tens of percent)");
  cmd->add_option("--threads,-t", o->threads, "Threads of the all-thread runs (default: every allowed CPU)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cache", o->cache, "Profile file (default $XDG_CACHE_HOME/ridge/machine.json)")
      ->type_name("FILE");
  cmd->callback([o] {
    measure::MachineOptions mo;
    mo.quick = o->quick;
    mo.threads = o->threads;
    mo.huge_pages = o->huge_pages;
    mo.progress = [first_step = -1.0](const std::string& m) mutable { progress(step_eta(m, steady_seconds(), first_step)); };
    measure::ProfileSource src;
    const std::string path = o->cache.empty() ? measure::default_profile_path() : o->cache;
    const measure::MachineProfile p = measure::load_or_measure_machine(mo, o->refresh, path, &src);
    if (!src.from_cache) progress(fmt::format("machine: done in {:.1f} s", p.duration_s));
    o->out.emit(report::machine_report(p, src, o->sweep));
  });
  return cmd;
}

}  // namespace ridge::cli
