// Handing a sweep to Slurm: one job array, one task per (model, batch) point. ridge never schedules work
// itself; it writes a readable sbatch script, submits it, watches the queue and reports task states.
#pragma once
#include <string>
#include <vector>

#include "sweep.hpp"

namespace ridge::cli {

/// The sbatch script for `indices` of `plan`, writing into `dir`. Commented and usable by hand.
std::string sbatch_script(const SweepPlan& plan, const std::string& dir, const std::vector<size_t>& indices);

/// Submits the script for `indices`; records the job in DIR/jobs.json and returns the job id.
/// Throws ridge::Error when Slurm is not installed, not answering, or sbatch refuses the job (its message).
std::string submit_array(const SweepPlan& plan, const std::string& dir, const std::vector<size_t>& indices);

/// Polls the queue until no task of `job_id` is pending or running; progress (results so far) on stderr.
void wait_for_job(const std::string& job_id, const std::string& dir, const SweepPlan& plan, int poll_seconds = 2);

/// State of a point without a valid result: "FAILED (exit 1)", "PENDING", "RUNNING", "CANCELLED", "MISSING".
struct TaskStatus {
  size_t index = 0;
  std::string state;
  std::string log;  ///< path of the task's log, when one was written
};
/// States of the given points from the task state files and the Slurm controller (when it answers).
std::vector<TaskStatus> task_states(const std::string& dir, const std::vector<size_t>& indices);

}  // namespace ridge::cli
