// `ridge ingest FILE...`: reads ncu / nsys / nvprof / torch.profiler outputs, sums them right (exact counts,
// base units), groups kernels, fits labelled runs, and compares with ridge's estimate for a model.
#include <memory>

#include "commands.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "ridge/error.hpp"

namespace ridge::cli {
namespace {

struct IngestArgs {
  report::IngestRequest req;
  std::vector<std::string> files, labels;
  CLI::Option* label_option = nullptr;
  OutputOptions out;
  std::string plot, chart;
};

// Files in command-line order, each with the --label given before it.
std::vector<std::pair<std::string, std::string>> labelled_files(CLI::App* cmd, const IngestArgs& a) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t fi = 0, li = 0;
  std::string label;
  for (CLI::Option* o : cmd->parse_order()) {
    if (o == a.label_option && li < a.labels.size()) label = a.labels[li++];
    else if (o != a.label_option && o->get_name() == "FILES" && fi < a.files.size()) out.emplace_back(a.files[fi++], label);
  }
  for (; fi < a.files.size(); ++fi) out.emplace_back(a.files[fi], label);
  return out;
}

}  // namespace

CLI::App* add_ingest_command(CLI::App& app) {
  auto a = std::make_shared<IngestArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ingest", "Read ncu / nsys / nvprof / torch.profiler outputs: exact FLOPs, bytes and time per kernel and in total");
  cmd->add_option("FILES", a->files, "Profiler output files (format detected by content)")->required();
  a->label_option = cmd->add_option("--label", a->labels, "Label for the files that follow, e.g. --label bs=10 a.log")
                        ->allow_extra_args(false)
                        ->type_name("LABEL");
  cmd->add_option("--input-format", a->req.input_format, "Force the input format instead of detecting it")->type_name("NAME");
  cmd->add_option("--join", a->req.join,
                  "How files combine: auto|id (launch by launch: NERSC one-metric-per-run layout), none (one run "
                  "per file), sequence (consecutive slices of one capture, e.g. ncu --launch-skip: one run)")
      ->check(CLI::IsMember({"auto", "id", "none", "sequence"}))
      ->capture_default_str();
  cmd->add_option("--group", a->req.group, "Group kernels by family|nvtx|process|name|label|file|run|op (op: the "
                                       "torch operator that launched them)")
      ->check(CLI::IsMember({"family", "nvtx", "process", "name", "label", "file", "run", "op"}))
      ->capture_default_str();
  cmd->add_option("--arch", a->req.arch, "GPU architecture for the tensor-core factor: a name in "
                                      "data/gpu/architectures.json (volta, ampere, hopper, ...)");
  cmd->add_option("--tensor-factor", a->req.tensor_factor, "FLOPs per tensor-pipe instruction (overrides --arch)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--top", a->req.top, "Kernels listed (default: 25 longest in table output, all otherwise; 0 = all)");
  cmd->add_option("--run", a->req.run, "Only run N (1-based) when the files hold several profiling runs")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--model", a->req.model, "Compare with ridge's estimate for MODEL (zoo name or .onnx)");
  cmd->add_option("--batch,-b", a->req.batch, "Batch size of the profiled run (with --model)")
      ->check(CLI::PositiveNumber)
      ->needs("--model");
  cmd->add_flag("--train", a->req.train, "The capture holds training steps (forward + backward)");
  cmd->add_option("--steps", a->req.steps, "Iterations in the capture (with --model)")
      ->check(CLI::PositiveNumber)
      ->needs("--model");
  cmd->add_option("--device,-d", a->req.device, "Predict with this device next to the profiled time (with --model) and "
                                                "draw kernels under its roofs (--chart)")->type_name("D");
  cmd->add_option("--calibration", a->req.calibration,
                  "With --model and --device: the prediction's calibration (builtin: the shipped one for the device "
                  "and precision; none: the roofline bound; or a calibration file)")
      ->type_name("FILE|builtin|none")
      ->needs("--device");
  cmd->add_option("--devices-dir,--devices", a->req.device_dirs, "Also load device files from DIR")->type_name("DIR");
  cmd->add_option("--precision,-p", a->req.precision, "Precision mode of the profiled run (its peak is the headline roof)")
      ->capture_default_str();
  cmd->add_flag("--force", a->req.force, "Use a profile whose files name another model, batch or GPU (the output says so)");
  cmd->add_option("--chart", a->chart, "Draw the kernel roofline (and the hierarchical L1/L2/DRAM one when the profile "
                                       "has those bytes) on --device to FILE.svg or FILE.png")->type_name("FILE");
  a->out.add_to(cmd);
  cmd->add_option("--plot", a->plot, "Also draw each kernel's share of FLOPs, DRAM bytes and time to FILE.svg or "
                                     "FILE.png")->type_name("FILE");
  cmd->callback([cmd, a] {
    if (!a->plot.empty()) chart::check_chart_path(a->plot);
    if (!a->chart.empty()) chart::check_chart_path(a->chart);
    if (!a->chart.empty() && a->req.device.empty()) throw UsageError("--chart: give the device whose roofs to draw (--device D)");
    a->req.files = labelled_files(cmd, *a);
    const ingest::Profile p = report::ingest_profile(a->req);
    const bool table_stdout = a->out.format == "table" || a->out.format == "md";
    report::Document full = report::ingest_report(p, a->req, true);  // files always get every kernel and column
    plot_layer_shares(full, "share per kernel", {{"flops", "FLOPs"}, {"dram_bytes", "DRAM bytes"}, {"time_s", "time"}},
                      a->plot, "kernels", "name");
    if (table_stdout) a->out.emit(report::ingest_report(p, a->req, false), std::move(full));
    else a->out.emit(std::move(full));
    if (!a->chart.empty()) chart::write_charts(report::ingest_charts(p, a->req), a->chart);
  });
  return cmd;
}

}  // namespace ridge::cli
