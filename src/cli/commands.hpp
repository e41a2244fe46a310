// The subcommand table and the options every command shares.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
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

/// Output options shared by every command: --format for stdout, and --json/--csv/--md FILE to write
/// further formats at the same time.
struct OutputOptions {
  std::string format = "table";
  std::string json_file, csv_file, md_file;

  void add_to(CLI::App* cmd);
  /// Writes the document to stdout in --format and to every requested file.
  void emit(const report::Document& doc) const;
};

/// Draws the shares chart of the document's table `table_key` (rows named by column `name_key`; columns
/// `metrics`: key, title) to `path` (.svg or .png). Does nothing when `path` is empty.
void plot_layer_shares(const report::Document& doc, const std::string& title,
                       const std::vector<std::pair<std::string, std::string>>& metrics, const std::string& path,
                       const std::string& table_key = "layers", const std::string& name_key = "name");

/// Progress on stderr for long-running work; silent when stderr is not a terminal unless forced.
void progress(const std::string& message);

}  // namespace ridge::cli
