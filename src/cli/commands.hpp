// The subcommand table and the options every command shares.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/report.hpp"

namespace ridge::cli {

/// One subcommand: adds itself (options + callback) to the app and returns the subcommand.
struct Command {
  const char* name;
  CLI::App* (*add)(CLI::App& app);
};

/// Every subcommand, in the order `ridge --help` lists them. Adding a command: one file cmd_NAME.cpp
/// defining add_NAME_command, one declaration and one row in commands.cpp.
const std::vector<Command>& commands();

/// For CLI11's each() on an option naming an output file: report::check_writable under `flag` (a ridge::Error,
/// exit 1, when its folder does not exist or is not writable), so a long run does not end in "cannot write".
std::function<void(const std::string&)> writable_file(std::string flag);

/// Output options shared by every command: --format for stdout, --json/--csv/--csv-totals/--md FILE to write
/// further formats at the same time, and --wide.
struct OutputOptions {
  std::string format = "table";
  std::string json_file, csv_file, csv_totals_file, md_file;
  bool wide = false;
  const CLI::App* cmd = nullptr;  ///< set by add_to(): its parsed options become the document's `inputs`

  void add_to(CLI::App* cmd);
  /// Width the stdout table must fit: 0 (no limit) with --wide, a format other than table, or no terminal;
  /// else $COLUMNS, else the terminal's width.
  int width() const;
  /// Rows a terminal shows ($LINES, else the terminal's height, else 40).
  int height() const;
  /// Writes every requested file first, then the document to stdout in --format (so a closed stdout never costs
  /// a file). Fills the document's `command` and `inputs` (the command's parsed options) when unset. Takes the
  /// document by value: pass a temporary or std::move it (a model's per-layer tables can hold 100,000 rows).
  void emit(report::Document doc) const;
  /// As emit(doc), with a different document on stdout (e.g. a rolled-up table on a terminal).
  void emit(report::Document screen, report::Document files) const;

 private:
  void check_wide() const;
  void complete(report::Document& d) const;
  void write_files(const report::Document& files) const;
  void write_screen(const report::Document& screen) const;
};

/// The command's parsed options as JSON (model, batch, dtype, device, ...): flags as booleans, numbers as
/// numbers, repeatable options as arrays; output options (--format, --json, --plot, ...) left out.
nlohmann::json option_values(const CLI::App& cmd);

/// CLI11's messages in words: "--batch: Value 0 not in range 2.2e-308 to 1.8e308" -> "--batch: 0 is not a
/// positive number".
std::string usage_message(const std::string& cli11_message);

/// CLI11's "The following arguments were not expected" in words, for the arguments `extras` that `cmd` did not take:
/// "unknown option --gen (did you mean --generate?)" for the first one that looks like an option (its value, if
/// any, is among the extras too), else "unexpected argument '3'" (or "arguments '3', '4'").
std::string unexpected_arguments_message(const CLI::App& cmd, const std::vector<std::string>& extras);
/// CLI11's "Could not convert: --batch = abc" in words, with what the option of `cmd` takes: "--batch: 'abc' is not
/// a whole number"; for a flag, "--strict is a flag: give it alone or as --strict=true|false, not 'maybe'".
std::string conversion_message(const CLI::App& cmd, const std::string& cli11_message);

/// Up to `n` of `known` (option or command names) that `typed` was probably meant as: at most one edit away for a
/// name of up to three letters, two for a longer one, or starting with what was typed.
std::vector<std::string> meant_names(const std::string& typed, const std::vector<std::string>& known, size_t n = 3);
/// " (did you mean --a, --b?)": meant_names(typed, known, n) each written after `prefix` ("--" for options); ""
/// when none is close.
std::string meant_hint(const std::string& typed, const std::vector<std::string>& known, const std::string& prefix,
                       size_t n = 3);

/// Draws the shares chart of the document's table `table_key` (rows named by column `name_key`; columns
/// `metrics`: key, title) to `path` (.svg or .png). Does nothing when `path` is empty.
void plot_layer_shares(const report::Document& doc, const std::string& title,
                       const std::vector<std::pair<std::string, std::string>>& metrics, const std::string& path,
                       const std::string& table_key = "layers", const std::string& name_key = "name");

/// Progress on stderr for long-running work: one rewritten line on a terminal, one line each otherwise.
void progress(const std::string& message);

/// Time left of `total` items when `done` took `elapsed_s` at a steady pace; nullopt before the first one ends.
std::optional<double> eta_seconds(double elapsed_s, size_t done, size_t total);
/// A duration for people: "45 s", "3 min 20 s", "2 h 5 min".
std::string format_duration(double seconds);
/// "sweep: 3/10 (resnet50 at batch 8), 12 s elapsed, about 28 s left".
std::string progress_line(std::string_view what, size_t done, size_t total, double elapsed_s,
                          std::string_view detail);

/// Seconds on a monotonic clock.
double steady_seconds();
/// Adds the time left to a progress message that ends in "(i/n)" (step i of n starting now), timing from step 1
/// (`first_step_s` holds when it started; < 0 before): "machine: bandwidth ... (5/16), about 3 s left".
std::string step_eta(const std::string& message, double now_s, double& first_step_s);

/// Counts items of long work and reports each on stderr with the time left; the clock (seconds) is injectable.
/// Work that may be quick passes `quiet_s`: nothing is printed until that many seconds have gone by.
class ProgressMeter {
 public:
  /// Silent for the first `quiet_s` seconds; then at most one line per `every_s` seconds (0: one per item), so a
  /// thousand quick items do not print a thousand lines.
  ProgressMeter(std::string what, size_t total, std::function<double()> clock = steady_seconds, double quiet_s = 0,
                double every_s = 0);
  /// Called before item `done` (0-based) starts; returns the line it printed ("" while quiet or throttled).
  std::string next(std::string_view detail);
  /// Reports the end ("sweep: 10/10 done in 40 s"); "" when nothing was printed before.
  std::string finish();

 private:
  std::string what_;
  size_t total_, done_ = 0;
  std::function<double()> clock_;
  double start_, quiet_s_, every_s_;
  double last_print_s_ = 0;
  bool printed_ = false;
};

/// How long quick-or-slow work (a chart's analyses) runs before it shows progress.
inline constexpr double kQuietProgressS = 1.0;

/// A report::ReportProgress that shows each step on stderr (one ProgressMeter per counted step, finished when told
/// done == total), silent for the first `quiet_s` seconds of each.
std::function<void(const std::string&, size_t, size_t, const std::string&)> stderr_progress(double quiet_s = 0);

}  // namespace ridge::cli
