#include "commands.hpp"

#include "ridge/chart.hpp"

#include <unistd.h>

#include <iostream>

namespace ridge::cli {

CLI::App* add_list_command(CLI::App& app);
CLI::App* add_summary_command(CLI::App& app);
CLI::App* add_flops_command(CLI::App& app);
CLI::App* add_sweep_command(CLI::App& app);
CLI::App* add_sweep_task_command(CLI::App& app);
CLI::App* add_measure_command(CLI::App& app);
CLI::App* add_run_command(CLI::App& app);
CLI::App* add_machine_command(CLI::App& app);
CLI::App* add_devices_command(CLI::App& app);
CLI::App* add_roofline_command(CLI::App& app);
CLI::App* add_predict_command(CLI::App& app);
CLI::App* add_calibrate_command(CLI::App& app);
CLI::App* add_ingest_command(CLI::App& app);
CLI::App* add_profile_cmd_command(CLI::App& app);
CLI::App* add_report_command(CLI::App& app);
CLI::App* add_serve_command(CLI::App& app);
CLI::App* add_train_command(CLI::App& app);

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"list", &add_list_command},
      {"summary", &add_summary_command},
      {"flops", &add_flops_command},
      {"sweep", &add_sweep_command},
      {"sweep-task", &add_sweep_task_command},
      {"measure", &add_measure_command},
      {"run", &add_run_command},
      {"machine", &add_machine_command},
      {"devices", &add_devices_command},
      {"roofline", &add_roofline_command},
      {"predict", &add_predict_command},
      {"calibrate", &add_calibrate_command},
      {"ingest", &add_ingest_command},
      {"profile-cmd", &add_profile_cmd_command},
      {"report", &add_report_command},
      {"serve", &add_serve_command},
      {"train", &add_train_command},
  };
  return kCommands;
}

void OutputOptions::add_to(CLI::App* cmd) {
  std::string names;
  for (const auto& f : report::formats()) names += (names.empty() ? "" : "|") + std::string(f.name);
  cmd->add_option("--format,-f", format, "Output format on stdout: " + names)
      ->capture_default_str()
      ->check([](const std::string& s) {
        for (const auto& f : report::formats())
          if (f.name == s) return std::string();
        return std::string("unknown format '") + s + "'";
      });
  cmd->add_option("--json", json_file, "Also write JSON to FILE")->type_name("FILE");
  cmd->add_option("--csv", csv_file, "Also write CSV to FILE")->type_name("FILE");
  cmd->add_option("--md", md_file, "Also write markdown to FILE")->type_name("FILE");
}

void OutputOptions::emit(const report::Document& doc) const {
  report::write(doc, format, std::cout);
  std::cout.flush();
  if (!json_file.empty()) report::write_file(doc, "json", json_file);
  if (!csv_file.empty()) report::write_file(doc, "csv", csv_file);
  if (!md_file.empty()) report::write_file(doc, "md", md_file);
}

void plot_layer_shares(const report::Document& doc, const std::string& title,
                       const std::vector<std::pair<std::string, std::string>>& metrics, const std::string& path,
                       const std::string& table_key, const std::string& name_key) {
  if (path.empty()) return;
  for (const auto& b : doc.blocks)
    if (auto* t = std::get_if<report::Table>(&b); t && t->key == table_key) {
      chart::write_chart(chart::layer_share_chart(title, chart::layer_shares_from_table(*t, name_key, metrics)), path);
      return;
    }
}

void progress(const std::string& message) {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty) std::cerr << "\r\033[K" << message << std::flush;
  else std::cerr << message << "\n";
}

}  // namespace ridge::cli
