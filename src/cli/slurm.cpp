#include "slurm.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "commands.hpp"
#include "ridge/error.hpp"
#include "ridge/text.hpp"

namespace fs = std::filesystem;

namespace ridge::cli {

namespace {

bool on_path(const std::string& tool) {
  std::string out;
  return run_shell("command -v " + tool, out) == 0;
}

std::string first_line(const std::string& s) { return std::string(trim(std::string_view(s).substr(0, s.find('\n')))); }

nlohmann::json read_jobs(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "jobs.json");
  if (!in) return nlohmann::json::array();
  auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_array() ? j : nlohmann::json::array();
}

}  // namespace

std::string sbatch_script(const SweepPlan& plan, const std::string& dir, const std::vector<size_t>& indices) {
  const std::string abs_dir = fs::absolute(dir).string();
  const bool gpu = !plan.slurm.gres.empty();
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# ridge sweep as a Slurm job array: one task per (model, batch) point.\n"
    << "# Models: " << fmt::format("{}", fmt::join(plan.models, " ")) << "\n"
    << "# Batch sizes: " << fmt::format("{}", fmt::join(plan.batches, " ")) << "\n"
    << "# Each task writes one result file into " << abs_dir << "/results (atomically: temp file + rename),\n"
    << "# its exit code into state/, and its log into logs/. Merge with: ridge sweep --collect " << abs_dir << "\n"
    << "#SBATCH --job-name=ridge-sweep\n";
  // Compact runs of consecutive indices: 0-5,7,9-10.
  std::vector<std::string> idx;
  for (size_t k = 0; k < indices.size();) {
    size_t e = k;
    while (e + 1 < indices.size() && indices[e + 1] == indices[e] + 1) ++e;
    idx.push_back(e == k ? std::to_string(indices[k]) : fmt::format("{}-{}", indices[k], indices[e]));
    k = e + 1;
  }
  s << "#SBATCH --array=" << fmt::format("{}", fmt::join(idx, ","));
  if (plan.slurm.max_parallel > 0) s << "%" << plan.slurm.max_parallel;
  s << "\n#SBATCH --output=" << abs_dir << "/logs/%A_%a.out\n";
  s << "#SBATCH --time=" << plan.slurm.time << "\n";
  if (!plan.slurm.partition.empty()) s << "#SBATCH --partition=" << plan.slurm.partition << "\n";
  if (!plan.slurm.account.empty()) s << "#SBATCH --account=" << plan.slurm.account << "\n";
  if (gpu) s << "#SBATCH --gres=" << plan.slurm.gres << "\n";
  s << "#SBATCH --cpus-per-task=1\n\n"
    << "set -u\n"
    << "RIDGE=" << shell_quote(plan.ridge_binary) << "\n"
    << "DIR=" << shell_quote(abs_dir) << "\n"
    << "IDX=${SLURM_ARRAY_TASK_ID:?run this script with sbatch, or set SLURM_ARRAY_TASK_ID=N to run point N}\n";
  if (gpu) {
    // GPU partitions: profile the user's program with the command `ridge profile-cmd` prints, one log per
    // point, then record the point with that log ingested.
    s << "BATCHES=(" << fmt::format("{}", fmt::join(plan.batches, " ")) << ")\n"
      << "BATCH=${BATCHES[$(( IDX % ${#BATCHES[@]} ))]}\n"
      << "LOG=\"$DIR/logs/profile_${IDX}.log\"\n"
      << "CMD=" << shell_quote(plan.slurm.gpu_command) << "\n"
      << "CMD=${CMD//\\{batch\\}/$BATCH}\n"
      << "CMD=${CMD//\\{bs\\}/$BATCH}\n"
      << "# The profiler command line (metrics for FLOPs, DRAM bytes and time in base units):\n"
      << "PROFILE=$(\"$RIDGE\" profile-cmd --tool ncu -- bash -c \"$CMD\") || exit 1\n"
      << "bash -c \"$PROFILE\" > \"$LOG\" 2>&1\n"
      << "\"$RIDGE\" sweep-task --dir \"$DIR\" --index \"$IDX\" --profile \"$LOG\"\n";
  } else {
    s << "# CPU partitions: estimate" << (plan.measure ? " and measure (ridge measure)" : "") << " this point.\n"
      << "\"$RIDGE\" sweep-task --dir \"$DIR\" --index \"$IDX\"\n";
  }
  s << "rc=$?\n"
    << "echo \"$rc\" > \"$DIR/state/task_${IDX}.rc.tmp.$$\" && mv \"$DIR/state/task_${IDX}.rc.tmp.$$\" "
       "\"$DIR/state/task_${IDX}.rc\"\n"
    << "exit $rc\n";
  return s.str();
}

std::string submit_array(const SweepPlan& plan, const std::string& dir, const std::vector<size_t>& indices) {
  if (!on_path("sbatch"))
    throw Error("Slurm is not installed here (no sbatch on PATH); drop --on slurm to run the sweep locally");
  const std::string script = sbatch_script(plan, dir, indices);
  const std::string path =
      (fs::path(dir) / fmt::format("sweep_{}.sbatch", read_jobs(dir).size())).string();
  report::write_text_file(path, script);
  // Clear stale state of points being (re)submitted so that their status reflects this job.
  for (size_t i : indices) {
    std::error_code ec;
    fs::remove(fs::path(dir) / "state" / fmt::format("task_{}.rc", i), ec);
  }
  std::string out;
  int rc = run_shell("sbatch --parsable " + shell_quote(path), out);
  std::string job = first_line(out);
  if (rc != 0 || job.empty() || job.find_first_not_of("0123456789;") != std::string::npos)
    throw Error(fmt::format("sbatch refused the job ({}): {}", path, first_line(out).empty() ? "no output" : first_line(out)));
  job = job.substr(0, job.find(';'));  // "id;cluster" on federated setups
  nlohmann::json jobs = read_jobs(dir);
  jobs.push_back({{"job_id", job}, {"indices", indices}, {"script", path}});
  report::write_text_file((fs::path(dir) / "jobs.json").string(), jobs.dump(2) + "\n");
  return job;
}

void wait_for_job(const std::string& job_id, const std::string& dir, const SweepPlan& plan, int poll_seconds) {
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  while (true) {
    std::string out;
    int rc = run_shell("squeue -h -j " + job_id + " -o %T", out);
    if (rc != 0) {
      // A job that left the queue makes some squeue versions fail; three failures in a row mean no answer.
      if (out.find("Invalid job id") != std::string::npos) break;
      if (++failures >= 3)
        throw Error(fmt::format("Slurm is not answering (squeue: {}); results so far are in {}", first_line(out), dir));
    } else {
      failures = 0;
      int pending = 0, running = 0;
      std::istringstream lines(out);
      for (std::string l; std::getline(lines, l);) {
        if (l.find("PENDING") != std::string::npos) ++pending;
        else if (!trim(l).empty()) ++running;
      }
      Collected c = collect_results(dir, plan);
      const auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);
      progress(fmt::format("sweep job {}: {} of {} results, {} running, {} pending ({} s)", job_id, c.results.size(),
                           plan.size(), running, pending, secs.count()));
      if (pending + running == 0) break;
    }
    std::this_thread::sleep_for(std::chrono::seconds(poll_seconds));
  }
  std::fputs("\n", stderr);
}

std::vector<TaskStatus> task_states(const std::string& dir, const std::vector<size_t>& indices) {
  // Latest job per point, and what the controller still knows about its tasks.
  std::map<size_t, std::string> job_of;
  for (const auto& j : read_jobs(dir))
    for (const auto& i : j.value("indices", std::vector<size_t>{})) job_of[i] = j.value("job_id", "");
  std::map<std::string, std::map<size_t, std::string>> controller;  // job -> task -> state
  for (const auto& [i, job] : job_of) {
    if (job.empty() || controller.count(job) || !on_path("scontrol")) continue;
    std::string out;
    auto& states = controller[job];
    if (run_shell("scontrol show job -o " + job, out) != 0) continue;
    std::istringstream lines(out);
    for (std::string l; std::getline(lines, l);) {
      auto field = [&](const std::string& key) {
        auto p = l.find(" " + key + "=");
        if (p == std::string::npos) return std::string();
        p += key.size() + 2;
        return l.substr(p, l.find(' ', p) - p);
      };
      std::string task = field("ArrayTaskId"), state = field("JobState");
      if (!task.empty() && task.find_first_not_of("0123456789") == std::string::npos) states[std::stoul(task)] = state;
    }
  }
  std::vector<TaskStatus> out;
  for (size_t i : indices) {
    TaskStatus t;
    t.index = i;
    const std::string job = job_of.count(i) ? job_of[i] : "";
    const fs::path log = fs::path(dir) / "logs" / fmt::format("{}_{}.out", job, i);
    std::error_code ec;
    if (!job.empty() && fs::exists(log, ec)) t.log = log.string();
    std::ifstream rc_file(fs::path(dir) / "state" / fmt::format("task_{}.rc", i));
    std::string rc;
    if (rc_file >> rc) {
      t.state = rc == "0" ? "COMPLETED (but no valid result file)" : "FAILED (exit " + rc + ")";
    } else if (!job.empty() && controller[job].count(i)) {
      t.state = controller[job][i];
    } else {
      t.state = job.empty() ? "MISSING (never submitted)" : "MISSING (cancelled or lost; no state recorded)";
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace ridge::cli
