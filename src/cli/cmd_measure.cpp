// ridge measure: run a model on this CPU with oneDNN (random weights), time every layer, and put each layer
// next to its estimate and the machine's roofline.
#include <fmt/format.h>

#include <algorithm>

#include "commands.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "model_options.hpp"
#include "ridge/error.hpp"
#include "ridge/machine.hpp"
#include "ridge/measure.hpp"

namespace ridge::cli {

CLI::App* add_measure_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("measure", "Run a model on this CPU with oneDNN and time every layer");
  struct Opts {
    std::string model, machine;
    ModelOptions m;
    OutputOptions out;
    std::string plot;
    int threads = 0, repeat = 50;
    bool train = false, end_to_end = false;
    uint64_t seed = 42;
    double max_seconds = 20;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("MODEL", o->model, kModelHelp)->required();
  o->m.add_to(cmd);
  cmd->add_option("--threads,-t", o->threads, "oneDNN threads (0 = runtime default: all CPUs)")->check(CLI::Range(0, 4096));
  cmd->add_option("--repeat,-r", o->repeat, "Cap on timed repeats (repeats stop earlier once the noise is low)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--max-seconds", o->max_seconds, "Stop repeating after this many seconds")->capture_default_str();
  cmd->add_flag("--train", o->train, "Measure a training step: forward, backward and SGD update");
  cmd->add_flag("--end-to-end", o->end_to_end,
                "Also measure the whole graph as one fused program (post-ops, folded BatchNorm, shared buffers)");
  cmd->add_option("--seed", o->seed, "Seed of the random weights and inputs")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--machine", o->machine, "Machine profile for the roofline columns (default: the cached one; none)")
      ->type_name("FILE|none");
  o->out.add_to(cmd);
  cmd->add_option("--plot", o->plot, "Also draw each layer's share of measured time next to its share of FLOPs "
                                     "to FILE.svg or FILE.png")->type_name("FILE");
  cmd->callback([o] {
    if (!o->plot.empty()) chart::check_chart_path(o->plot);
    LoadOptions lo = o->m.load_options();
    lo.training = o->train;
    Graph g = load_model(o->model, lo);
    o->m.check(incompleteness(g, estimate(g)), o->model);
    report::MeasureRequest req;
    req.options.exec.threads = o->threads;
    req.options.exec.seed = o->seed;
    req.options.exec.train = o->train;
    req.options.max_repeats = o->repeat;
    req.options.min_repeats = std::min(o->repeat, req.options.min_repeats);
    req.options.max_seconds = o->max_seconds;
    req.options.end_to_end = o->end_to_end;
    req.machine_profile = o->machine;
    if (is_onnx_file(o->model)) req.model_file = o->model;  // its payloads: weights, Constants, Clip bounds
    const ModelMeasurement m = report::measure_model(g, req, [&] {
      progress(fmt::format("measuring {} at batch {} (up to {} repeats; repeats stop after {}) ...", g.name,
                           g.fixed_batch.value_or(o->m.batch), o->repeat, format_duration(o->max_seconds)));
    });
    const report::Document doc = report::measure_report(g, m);
    o->out.emit(doc);
    plot_layer_shares(doc, doc.title + ": share per layer", {{"time_s", "measured time"}, {"flops", "FLOPs"}},
                      o->plot);
  });
  return cmd;
}

}  // namespace ridge::cli
