// Chart documents and files: SVG written directly, PNG through rsvg-convert (Debian package librsvg2-bin).
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "report/charts/svg.hpp"
#include "ridge/error.hpp"
#include "ridge/text.hpp"

extern char** environ;

namespace ridge::chart {
namespace {

std::string extension_of(const std::string& path) {
  return ascii_lower(std::filesystem::path(path).extension().string());
}

// Runs rsvg-convert on an SVG file; the PNG is drawn at twice the SVG's size so that it stays sharp in print.
void svg_to_png(const std::string& svg_path, const std::string& png_path) {
  std::vector<std::string> args = {"rsvg-convert", "--zoom=2", "--background-color=white", "--format=png",
                                   "--output=" + png_path, svg_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "rsvg-convert", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc == 0 && waitpid(pid, &status, 0) < 0) rc = errno;
  if (rc == ENOENT || (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127))
    throw Error(fmt::format("{}: PNG output needs rsvg-convert (Debian package librsvg2-bin), which is not installed; "
                            "write .svg instead",
                            png_path));
  if (rc != 0) throw Error(fmt::format("{}: cannot run rsvg-convert ({})", png_path, std::strerror(rc)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(fmt::format("{}: rsvg-convert failed to draw the chart (exit status {})", png_path,
                            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
}

}  // namespace



std::string render_svg(const Chart& chart, bool inline_svg) {
  return detail::svg_document({detail::draw_chart(chart, "c0")}, inline_svg);
}

std::string render_svg_row(const std::vector<Chart>& charts, bool inline_svg) {
  std::vector<detail::Drawn> drawn;
  for (size_t i = 0; i < charts.size(); ++i) drawn.push_back(detail::draw_chart(charts[i], fmt::format("c{}", i)));
  return detail::svg_document(drawn, inline_svg);
}

void write_chart(const Chart& chart, const std::string& path) { write_charts({chart}, path); }

void check_chart_path(const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext != ".svg" && ext != ".png")
    throw UsageError(fmt::format("--plot {}: unknown chart format '{}' (use FILE.svg or FILE.png)", path, ext));
  report::check_writable("--plot", path);
}

void write_charts(const std::vector<Chart>& charts, const std::string& path) {
  check_chart_path(path);
  const std::string ext = extension_of(path);
  const std::string svg = render_svg_row(charts);
  if (ext == ".svg") return report::write_text_file(path, svg);
  std::string tmp_svg = path + ".tmp." + std::to_string(::getpid()) + ".svg";
  report::write_text_file(tmp_svg, svg);
  try {
    svg_to_png(tmp_svg, path);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp_svg, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::remove(tmp_svg, ec);
}

}  // namespace ridge::chart
