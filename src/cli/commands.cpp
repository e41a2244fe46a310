#include "commands.hpp"

#include "ridge/chart.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>

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
CLI::App* add_compare_command(CLI::App& app);
CLI::App* add_serve_command(CLI::App& app);
CLI::App* add_train_command(CLI::App& app);
CLI::App* add_completion_command(CLI::App& app);
CLI::App* add_man_command(CLI::App& app);

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
      {"compare", &add_compare_command},
      {"serve", &add_serve_command},
      {"train", &add_train_command},
      {"completion", &add_completion_command},
      {"man", &add_man_command},
  };
  return kCommands;
}

namespace {
bool is_dir_target(const std::string& path) {
  return !path.empty() && (path.back() == '/' || std::filesystem::is_directory(path));
}
}  // namespace

std::function<void(const std::string&)> writable_file(std::string flag) {
  return [flag](const std::string& path) { report::check_writable(flag, path); };
}

void OutputOptions::add_to(CLI::App* c) {
  cmd = c;
  std::string names;
  for (const auto& f : report::formats()) names += (names.empty() ? "" : "|") + std::string(f.name);
  const char* g = "Output";
  c->add_option("--format,-f", format, "Output format on stdout: " + names)
      ->capture_default_str()
      ->group(g)
      ->check([](const std::string& s) {
        for (const auto& f : report::formats())
          if (f.name == s) return std::string();
        return std::string("unknown format '") + s + "'";
      });
  c->add_option("--json", json_file, "Also write JSON to FILE")->type_name("FILE")->group(g)->each(writable_file("--json"));
  c->add_option("--csv", csv_file, "Also write the main table as CSV to FILE, or every table to DIR/ (one file each)")
      ->type_name("FILE|DIR/")
      ->group(g)
      ->each([](const std::string& s) {
        if (!is_dir_target(s)) report::check_writable("--csv", s);
      });
  c->add_option("--csv-totals", csv_totals_file, "Also write the totals (key,value,unit) as CSV to FILE")
      ->type_name("FILE")
      ->group(g)
      ->each(writable_file("--csv-totals"));
  c->add_option("--md", md_file, "Also write markdown to FILE")->type_name("FILE")->group(g)->each(writable_file("--md"));
  c->add_flag("--wide", wide, "Show every column even when the table is wider than the terminal ($COLUMNS)")
      ->group(g);
}

namespace {

int terminal_size(bool want_width) {
  if (const char* env = std::getenv(want_width ? "COLUMNS" : "LINES"); env && *env) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v > 0 && v < 100000) return static_cast<int>(v);
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
    return want_width ? ws.ws_col : ws.ws_row;
  return 0;
}

}  // namespace

int OutputOptions::width() const {
  if (wide || format != "table") return 0;
  return terminal_size(true);
}

int OutputOptions::height() const {
  const int h = terminal_size(false);
  return h > 0 ? h : 40;
}

void OutputOptions::complete(report::Document& d) const {
  if (!cmd) return;
  if (d.command.empty()) d.command = cmd->get_name();
  nlohmann::json in = option_values(*cmd);
  in.merge_patch(d.inputs);
  d.inputs = std::move(in);
}

void OutputOptions::write_files(const report::Document& files) const {
  if (!json_file.empty()) report::write_file(files, "json", json_file);
  if (is_dir_target(csv_file)) {
    std::filesystem::path dir(csv_file);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(fmt::format("--csv {}: cannot create the folder ({})", csv_file, ec.message()));
    for (const auto& [name, text] : report::csv_files(files)) report::write_text_file((dir / (name + ".csv")).string(), text);
  } else if (!csv_file.empty()) {
    const report::Table* t = report::main_table(files);
    report::write_text_file(csv_file, t ? report::csv_table(*t) : report::csv_totals(files));
  }
  if (!csv_totals_file.empty()) report::write_text_file(csv_totals_file, report::csv_totals(files));
  if (!md_file.empty()) report::write_file(files, "md", md_file);
}

void OutputOptions::write_screen(const report::Document& screen) const {
  if (!screen.alert.empty() && format != "table" && format != "md") std::cerr << "ridge: " << screen.alert << "\n";
  if (format == "table") report::write_text(screen, std::cout, report::TextOptions{width()});
  else report::write(screen, format, std::cout);
  std::cout.flush();
  if (format == "csv" && screen.blocks.size() > 1) {
    const report::Table* t = report::main_table(screen);
    std::cerr << fmt::format("ridge: csv on stdout is the {} table only; --csv DIR/ writes every table\n",
                             t ? t->key : std::string("totals"));
  }
}

void OutputOptions::check_wide() const {
  if (wide && format != "table")
    throw UsageError("--wide: only the table format is fitted to the terminal (drop --wide or use --format table)");
}

void OutputOptions::emit(report::Document doc) const {
  check_wide();
  complete(doc);
  write_files(doc);
  write_screen(doc);
}

void OutputOptions::emit(report::Document screen, report::Document files) const {
  check_wide();
  complete(files);
  write_files(files);
  complete(screen);
  write_screen(screen);
}

nlohmann::json option_values(const CLI::App& cmd) {
  static const std::set<std::string> kSkip = {"help", "version", "format", "json", "csv", "csv_totals", "md",
                                              "wide", "plot"};
  auto convert = [](const std::string& text, const std::string& type_and_checks) -> nlohmann::json {
    const std::string type = type_and_checks.substr(0, type_and_checks.find(':'));  // "INT:POSITIVE" -> "INT"
    if (type == "INT" || type == "UINT" || type == "FLOAT" || type == "NUMBER" || type == "N") {
      char* end = nullptr;
      const long long i = std::strtoll(text.c_str(), &end, 10);
      if (!text.empty() && *end == '\0') return i;
      const double d = std::strtod(text.c_str(), &end);
      if (!text.empty() && *end == '\0') return d;
    }
    return text;
  };
  nlohmann::json out = nlohmann::json::object();
  for (const CLI::Option* opt : cmd.get_options()) {
    std::string key = !opt->get_lnames().empty()   ? opt->get_lnames()[0]
                      : !opt->get_snames().empty() ? opt->get_snames()[0]
                                                   : opt->get_name(true);
    std::transform(key.begin(), key.end(), key.begin(), [](char ch) { return ch == '-' ? '_' : std::tolower(ch); });
    if (key.empty() || kSkip.count(key)) continue;
    if (opt->get_expected_max() == 0) {  // a flag
      out[key] = opt->count() > 0;
      continue;
    }
    const std::string type = opt->get_type_name();
    const bool many = opt->get_items_expected_max() > 1;
    if (opt->count() > 0) {
      nlohmann::json vals = nlohmann::json::array();
      for (const auto& r : opt->results()) vals.push_back(convert(r, type));
      out[key] = many ? vals : vals.back();
    } else if (many) {
      out[key] = nlohmann::json::array();
    } else if (!opt->get_default_str().empty()) {
      out[key] = convert(opt->get_default_str(), type);
    }
  }
  return out;
}

std::string usage_message(const std::string& m) {
  // "Value X not in range A to B": CLI::Range prints its bounds with std::to_string (300 digits for DBL_MAX).
  static const std::regex kRange(R"(Value (\S*) not in range (\S+) to (\S+))");
  std::smatch mt;
  if (!std::regex_search(m, mt, kRange)) return m;
  const double lo = std::strtod(mt[2].str().c_str(), nullptr), hi = std::strtod(mt[3].str().c_str(), nullptr);
  const std::string v = mt[1].str().empty() ? "''" : mt[1].str();
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  std::string words;
  if (*end != '\0' || v.empty()) words = v + " is not a number";
  else if (hi >= 1e300 && x < 0) words = v + " is negative";  // NonNegativeNumber, or PositiveNumber
  else if (hi >= 1e300) words = v + " is not a positive number";  // 0 fails only PositiveNumber
  else if (x >= lo && x <= hi) words = v + " is not a whole number";  // in range: it failed as an integer
  else {
    auto bound = [](double b) {  // 64.0000 -> 64, 0.000001 stays
      std::string t = report::plain(b, 6);
      if (t.find('.') != std::string::npos) {
        while (t.back() == '0') t.pop_back();
        if (t.back() == '.') t.pop_back();
      }
      return t;
    };
    words = fmt::format("{} is not between {} and {}", v, bound(lo), bound(hi));
  }
  return mt.prefix().str() + words + mt.suffix().str();
}

std::string conversion_message(const CLI::App& cmd, const std::string& m) {
  static const std::regex kConvert(R"(Could not convert: (\S+) = (.*))");
  std::smatch mt;
  if (!std::regex_search(m, mt, kConvert)) return usage_message(m);
  const std::string name = mt[1].str(), value = mt[2].str();
  const CLI::Option* opt = cmd.get_option_no_throw(name);
  if (opt && opt->get_expected_max() == 0)
    return fmt::format("{} is a flag: give it alone or as {}=true|false, not '{}'", name, name, value);
  const std::string type = opt ? opt->get_type_name() : "";
  const std::string what = type.rfind("UINT", 0) == 0  ? "a whole number of 0 or more"
                           : type.rfind("INT", 0) == 0 ? "a whole number"
                           : type.rfind("FLOAT", 0) == 0 ? "a number"
                                                         : "a value this option takes";
  return fmt::format("{}: '{}' is not {}", name, value, what);
}

std::vector<std::string> meant_names(const std::string& typed, const std::vector<std::string>& known, size_t n) {
  return closest_names(typed, known, n, typed.size() <= 3 ? 1 : 2);
}

std::string meant_hint(const std::string& typed, const std::vector<std::string>& known, const std::string& prefix,
                       size_t n) {
  std::vector<std::string> near = meant_names(typed, known, n);
  for (std::string& name : near) name = prefix + name;
  return near.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(near, ", "));
}

std::string unexpected_arguments_message(const CLI::App& cmd, const std::vector<std::string>& extras) {
  const auto option = std::find_if(extras.begin(), extras.end(), [](const std::string& a) {
    return a.size() > 1 && a[0] == '-' && !std::isdigit(static_cast<unsigned char>(a[1])) && a[1] != '.';
  });
  if (option == extras.end()) {
    std::vector<std::string> quoted;
    for (const std::string& a : extras) quoted.push_back("'" + a + "'");
    return fmt::format("unexpected argument{} {}", extras.size() == 1 ? "" : "s", fmt::join(quoted, ", "));
  }
  const std::string typed = option->substr(0, option->find('='));  // --gen=128 -> --gen
  std::string hint;
  const std::string bare = typed.substr(std::min(typed.size(), typed.find_first_not_of('-')));  // "---": ""
  if (bare.size() >= 3) {  // one or two letters are close to too many names to suggest one
    std::vector<std::string> names;
    for (const CLI::Option* o : cmd.get_options())
      for (const std::string& n : o->get_lnames()) names.push_back(n);
    hint = meant_hint(bare, names, "--");
  }
  return fmt::format("unknown option {}{}", typed, hint);
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

std::optional<double> eta_seconds(double elapsed_s, size_t done, size_t total) {
  if (done == 0 || elapsed_s < 0 || done > total) return std::nullopt;
  return elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
}

std::string format_duration(double s) {
  s = std::max(0.0, std::round(s));
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.0f} min {:.0f} s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f} h {:.0f} min", std::floor(s / 3600), std::floor(std::fmod(s, 3600) / 60));
}

std::string progress_line(std::string_view what, size_t done, size_t total, double elapsed_s,
                          std::string_view detail) {
  std::string line = fmt::format("{}: {}/{}", what, std::min(done + 1, total), total);
  if (!detail.empty()) line += fmt::format(" ({})", detail);
  if (done > 0) line += fmt::format(", {} elapsed", format_duration(elapsed_s));
  if (auto eta = eta_seconds(elapsed_s, done, total)) line += fmt::format(", about {} left", format_duration(*eta));
  return line;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string step_eta(const std::string& message, double now_s, double& first_step_s) {
  static const std::regex kStep(R"(\((\d+)/(\d+)\)$)");
  std::smatch m;
  if (!std::regex_search(message, m, kStep)) return message;
  const size_t i = std::stoul(m[1].str()), n = std::stoul(m[2].str());
  if (i <= 1 || first_step_s < 0) {
    first_step_s = now_s;
    return message;
  }
  auto eta = eta_seconds(now_s - first_step_s, i - 1, n);
  return eta ? message + fmt::format(", about {} left", format_duration(*eta)) : message;
}

ProgressMeter::ProgressMeter(std::string what, size_t total, std::function<double()> clock, double quiet_s,
                             double every_s)
    : what_(std::move(what)), total_(total), clock_(std::move(clock)), start_(clock_()), quiet_s_(quiet_s),
      every_s_(every_s) {}

std::string ProgressMeter::next(std::string_view detail) {
  const double elapsed = clock_() - start_;
  std::string line = progress_line(what_, done_, total_, elapsed, detail);
  ++done_;
  if (elapsed < quiet_s_ || (printed_ && elapsed - last_print_s_ < every_s_)) return "";
  progress(line);
  printed_ = true;
  last_print_s_ = elapsed;
  return line;
}

std::string ProgressMeter::finish() {
  if (!printed_ && clock_() - start_ < quiet_s_) return "";
  std::string line = fmt::format("{}: {}/{} done in {}", what_, total_, total_, format_duration(clock_() - start_));
  progress(line);
  if (isatty(STDERR_FILENO)) std::cerr << "\n";
  return line;
}

std::function<void(const std::string&, size_t, size_t, const std::string&)> stderr_progress(double quiet_s) {
  auto meter = std::make_shared<std::unique_ptr<ProgressMeter>>();
  return [meter, quiet_s](const std::string& what, size_t done, size_t total, const std::string& detail) {
    if (total == 0) return progress(what);
    if (done == total) {  // the step's end
      if (*meter) (*meter)->finish();
      meter->reset();
      return;
    }
    if (done == 0) *meter = std::make_unique<ProgressMeter>(what, total, steady_seconds, quiet_s);
    if (*meter) (*meter)->next(detail);
  };
}

}  // namespace ridge::cli
