// ridge sweep: FLOPs, memory (and measured time) against batch size for one or more models, with a
// least-squares line per quantity; locally or as a Slurm job array. `sweep-task` is the hidden per-point
// worker that Slurm tasks run.
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "model_options.hpp"
#include "ridge/api.hpp"
#include "ridge/cost.hpp"
#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/load.hpp"
#include "slurm.hpp"
#include "sweep.hpp"
#include "ridge/precision_mode.hpp"

namespace fs = std::filesystem;

namespace ridge::cli {

namespace {

nlohmann::json optional_count_json(const std::optional<Count>& v) {
  return v ? report::to_json(report::Cell::count(*v)) : nlohmann::json();
}

std::string self_path() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ridge") : p.string();
}

/// Lists points without a result (with Slurm state and log) as notes; returns how many.
size_t note_missing(report::Document& d, const std::string& dir, const SweepPlan& plan, const Collected& c) {
  for (const auto& w : c.warnings) d.notes.push_back(w);
  if (c.missing.empty()) return 0;
  for (const TaskStatus& t : task_states(dir, c.missing)) {
    auto [model, batch] = plan.point(t.index);
    d.notes.push_back(fmt::format("point {} ({} at batch {}): no result — {}{}", t.index, model, batch, t.state,
                                  t.log.empty() ? "" : ", log " + t.log));
  }
  return c.missing.size();
}

void emit_collected(const OutputOptions& out, const std::string& plot, const std::string& dir, const SweepPlan& plan) {
  Collected c = collect_results(dir, plan);
  report::Document d = report::sweep_report(sweep_report_request(plan), sweep_points(c.results));
  size_t missing = note_missing(d, dir, plan, c);
  out.emit(std::move(d));
  if (!plot.empty() && !c.results.empty()) chart::write_charts(report::sweep_charts(sweep_points(c.results)), plot);
  if (missing > 0)
    throw Error(fmt::format("{} of {} points have no result (listed above); rerun them with `ridge sweep "
                            "--resubmit-failed {}`",
                            missing, plan.size(), dir));
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "sweep", "FLOPs, memory (and measured time) against batch size, locally or as a Slurm job array");
  struct Opts {
    std::vector<std::string> models;
    std::string batches = "1:501:50", on = "local", out_dir, collect_dir, resubmit_dir, plot;
    SweepPlan plan;
    bool wait = false, dry_run = false;
    OutputOptions out;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("MODEL", o->models, fmt::format("{} (several allowed)", kModelsHelp));
  cmd->add_option("--batch,-b", o->batches, "Batch sizes: START:STOP[:STEP] (STOP inclusive) or a list 1,8,64")
      ->capture_default_str();
  o->plan.model.add_to(cmd, /*with_batch=*/false);
  cmd->add_option("--optimizer", o->plan.optimizer, "Optimizer for training memory: sgd|momentum|adam")
      ->capture_default_str();
  cmd->add_flag("--measure", o->plan.measure, "Also measure each point (`ridge measure` on CPU partitions)");
  auto* measure = cmd->get_option("--measure");
  cmd->add_option("--threads,-t", o->plan.threads, "Threads for --measure (default: ridge measure's)")->needs(measure);
  cmd->add_option("--device,-d", o->plan.device, "Also predict time and samples/s per point on this device, and the "
                                             "largest batch that fits its memory (see `ridge devices`)");
  cmd->add_option("--precision,-p", o->plan.precision, "Precision (memory and --device predictions): fp32|tf32|bf16|fp16|amp-bf16|amp-fp16|fp64")
      ->capture_default_str();
  cmd->add_flag("--train", o->plan.train, "Predict a training step (forward, backward, update) instead of inference");
  cmd->add_option("--on", o->on, "Where points run: local|slurm")->capture_default_str()->check(
      CLI::IsMember({"local", "slurm"}));
  cmd->add_option("--out", o->out_dir, "Folder for the manifest, one result file per point, logs (required for "
                                       "--on slurm)")->type_name("DIR");
  auto* g = "Slurm";
  cmd->add_option("--partition", o->plan.slurm.partition, "Slurm partition")->group(g);
  cmd->add_option("--account", o->plan.slurm.account, "Slurm account")->group(g);
  cmd->add_option("--gres", o->plan.slurm.gres, "Generic resources, e.g. gpu:1 (GPU partitions: tasks profile "
                                                "--gpu-cmd)")->group(g);
  cmd->add_option("--gpu-cmd", o->plan.slurm.gpu_command, "With --gres: the program to profile per point, "
                                                          "{batch} (or {bs}) is replaced by the batch size")->group(g);
  cmd->add_option("--time", o->plan.slurm.time, "Time limit per task")->capture_default_str()->group(g);
  cmd->add_option("--max-parallel", o->plan.slurm.max_parallel, "At most K tasks at once (0 = no limit)")
      ->group(g);
  cmd->add_flag("--wait", o->wait, "Show progress until the job array finishes, then print the merged results")
      ->group(g);
  cmd->add_flag("--dry-run", o->dry_run, "Print the sbatch script and submit nothing")->group(g);
  cmd->add_option("--collect", o->collect_dir, "Merge the result files of a sweep folder (local or Slurm) "
                                               "and list missing points")->type_name("DIR");
  cmd->add_option("--resubmit-failed", o->resubmit_dir, "Resubmit only the points of a Slurm sweep folder "
                                                        "that have no result")->type_name("DIR");
  o->out.add_to(cmd);
  cmd->add_option("--plot", o->plot, "Also draw FLOPs and memory (and measured time) against batch size to "
                                     "FILE.svg or FILE.png")->type_name("FILE");
  cmd->callback([o] {
    if (!o->plot.empty()) chart::check_chart_path(o->plot);
    if (!o->collect_dir.empty()) {
      emit_collected(o->out, o->plot, o->collect_dir, read_sweep_dir(o->collect_dir));
      return;
    }
    if (!o->resubmit_dir.empty()) {
      SweepPlan plan = read_sweep_dir(o->resubmit_dir);
      Collected c = collect_results(o->resubmit_dir, plan);
      if (c.missing.empty()) {
        std::cerr << "sweep: every point of " << o->resubmit_dir << " has a result; nothing to resubmit\n";
      } else {
        std::string job = submit_array(plan, o->resubmit_dir, c.missing);
        std::cerr << fmt::format("sweep: resubmitted {} point(s) as job {}\n", c.missing.size(), job);
        if (o->wait) wait_for_job(job, o->resubmit_dir, plan);
      }
      if (o->wait || c.missing.empty()) emit_collected(o->out, o->plot, o->resubmit_dir, plan);
      return;
    }
    if (o->models.empty()) throw UsageError("sweep: give at least one MODEL (or --collect DIR / --resubmit-failed DIR)");
    SweepPlan plan = o->plan;
    plan.models = o->models;
    plan.batches = parse_batch_list(o->batches, "--batch");
    plan.ridge_binary = self_path();
    require_precision_mode(plan.precision);
    if (!parse_optimizer(plan.optimizer)) throw UsageError("--optimizer: '" + plan.optimizer + "' is not sgd, momentum or adam");
    if (!plan.slurm.gres.empty() && plan.slurm.gpu_command.empty())
      throw UsageError("--gres: GPU tasks need --gpu-cmd \"PROGRAM ... {batch}\" (the program to profile)");
    plan.model.load_options(plan.batches.front());  // validates the flags before anything runs
    if (!plan.device.empty()) find_device(load_devices(), plan.device);
    for (const auto& m : plan.models) {
      // A file of fixed shapes has one batch: sweeping others would repeat its counts under other numbers.
      const Graph g = load_model(m, plan.model.load_options(1));
      if (g.fixed_batch && plan.batches != std::vector<int64_t>{*g.fixed_batch})
        throw Error(fmt::format("{}: the file fixes its batch at {} (no input has a symbolic batch axis): sweep "
                                "--batch {} only, or export it with a dynamic batch axis", m, *g.fixed_batch,
                                *g.fixed_batch));
      if (plan.batches.front() != 1) load_model(m, plan.model.load_options(plan.batches.front()));  // loads there too
    }
    if (o->on == "slurm") {
      if (o->out_dir.empty()) throw UsageError("--on slurm needs --out DIR for the result files");
      std::vector<size_t> all(plan.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
      if (o->dry_run) {
        std::cout << sbatch_script(plan, o->out_dir, all);
        return;
      }
      prepare_sweep_dir(o->out_dir, plan);
      std::string job = submit_array(plan, o->out_dir, all);
      std::cerr << fmt::format("sweep: submitted job {} ({} tasks); results go to {}/results; merge with `ridge sweep "
                               "--collect {}`\n",
                               job, all.size(), o->out_dir, o->out_dir);
      if (o->wait) {
        wait_for_job(job, o->out_dir, plan);
        emit_collected(o->out, o->plot, o->out_dir, plan);
      }
      return;
    }
    if (o->dry_run) throw UsageError("--dry-run applies to --on slurm");
    if (!o->out_dir.empty()) prepare_sweep_dir(o->out_dir, plan);
    std::vector<nlohmann::json> results;
    // Measured points take seconds each: every one is shown. Estimated ones take milliseconds: silent for 2 s,
    // then one line a second; the meter counts every point, so its count and estimate of the time left are right.
    ProgressMeter meter("sweep", plan.size(), steady_seconds, plan.measure ? 0.0 : 2.0, plan.measure ? 0.0 : 1.0);
    for (size_t i = 0; i < plan.size(); ++i) {
      auto [m, b] = plan.point(i);
      meter.next(fmt::format("{} at batch {}", m, b));
      results.push_back(run_point(plan, i));
      if (!o->out_dir.empty()) {
        report::write_text_file((fs::path(o->out_dir) / "results" / result_file_name(m, b)).string(),
                         results.back().dump(2) + "\n");
      }
    }
    meter.finish();
    o->out.emit(report::sweep_report(sweep_report_request(plan), sweep_points(results)));
    if (!o->plot.empty()) chart::write_charts(report::sweep_charts(sweep_points(results)), o->plot);
  });
  return cmd;
}

CLI::App* add_sweep_task_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep-task", "Run one point of a sweep folder (what Slurm tasks execute)");
  cmd->group("");  // hidden from --help: an implementation detail of `sweep --on slurm`
  struct Opts {
    std::string dir, profile;
    size_t index = 0;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--dir", o->dir, "Sweep folder")->required();
  cmd->add_option("--index", o->index, "Point index")->required();
  cmd->add_option("--profile", o->profile, "GPU profiler log of this point to ingest");
  cmd->callback([o] {
    SweepPlan plan = read_sweep_dir(o->dir);
    if (o->index >= plan.size())
      throw Error(fmt::format("sweep-task: index {} is out of range (the sweep has {} points)", o->index, plan.size()));
    // Testing hook: fail one chosen point on purpose (used by the Slurm integration test).
    if (const char* f = std::getenv("RIDGE_SWEEP_FAIL_TASK"); f && std::to_string(o->index) == f)
      throw Error(fmt::format("sweep-task: point {} fails on purpose (RIDGE_SWEEP_FAIL_TASK={})", o->index, f));
    SweepPlan p = plan;
    if (!o->profile.empty()) p.measure = false;  // GPU points: the profile is the measurement
    nlohmann::json r = run_point(p, o->index);
    if (!o->profile.empty()) {
      ingest::Totals t;
      report::IngestRequest profile;
      profile.files = {{o->profile, ""}};
      try {
        t = ingest::totals(report::ingest_profile(profile));
      } catch (const Error&) {
        throw Error(fmt::format("sweep-task: `ridge ingest {}` failed", o->profile));
      }
      r["measure"] = {{"tool", "GPU profile via ridge ingest"},
                      {"log", o->profile},
                      {"total_time_s", t.sum.time_s.value_or(0.0)},
                      {"flops", optional_count_json(t.sum.flops())},
                      {"dram_bytes", optional_count_json(t.sum.dram_bytes)}};
    }
    auto [model, batch] = plan.point(o->index);
    const std::string path = (fs::path(o->dir) / "results" / result_file_name(model, batch)).string();
    report::write_text_file(path, r.dump(2) + "\n");
    std::cout << "sweep-task: wrote " << path << "\n";
  });
  return cmd;
}

}  // namespace ridge::cli
