// ridge report: argument parsing and writing the file; the page is report::html_report (src/report/api/html_report.cpp):
// one self-contained HTML page that answers first (time per iteration, bound, slowest layers, time by op group,
// memory), then rooflines, batch sweeps and the layer table. `--serve` reports an LLM's serving instead.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "llm_model.hpp"
#include "model_options.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "ridge/error.hpp"

namespace ridge::cli {
namespace {

struct ReportOptions {
  std::string model, output, precision = "fp32", optimizer = "sgd";
  ModelOptions m;
  std::vector<std::string> devices, profiles, device_dirs;
  std::string sweep = "1,2,4,8,16,32,64";
  bool measure = false, train = false;
  bool end_to_end = false;  ///< with measure: also the fused end-to-end program
  bool force = false;  ///< use profiles whose file names say another model or batch
  int depth = 1;       ///< module depth of the layer table's groups
  int top = 5;         ///< slowest layers on the headline
  // serving (--serve): an LLM's prefill and decode
  bool serve = false;
  int64_t prompt = 512, generate = 128;
  int tp = 1, dp = 1;
  std::string weights = "fp16", kv = "fp16", attention = "eager", moe = "eager", mla = "hf";
  OutputOptions out;
};


report::ReportRequest request_of(const ReportOptions& o) {
  report::ReportRequest r;
  r.model = o.model;
  r.strict = o.m.strict;
  r.load = o.m.load_options();
  if (o.m.dtype_given()) r.dtype = r.load.dtype;
  // An unset --precision is the command's default: fp32, or fp16 for --serve.
  r.precision = o.out.cmd->get_option("--precision")->count() > 0 ? o.precision : "";
  r.train = o.train;
  r.optimizer = o.optimizer;
  r.devices = o.devices;
  r.device_dirs = o.device_dirs;
  r.measure = o.measure;
  r.end_to_end = o.end_to_end;
  r.profiles = o.profiles;
  r.force = o.force;
  r.sweep = parse_batch_list(o.sweep, "--sweep");
  r.depth = o.depth;
  r.top = static_cast<size_t>(o.top);
  r.serve = o.serve;
  r.serve_options.batch = o.m.batch;
  r.serve_options.prompt = o.prompt;
  r.serve_options.generate = o.generate;
  r.serve_options.tp = o.tp;
  r.serve_options.dp = o.dp;
  if (o.serve) {
    if (o.devices.empty()) throw UsageError("--serve needs -d DEVICE");
    r.serve_options.weights = number_format_flag("--weights", o.weights);
    r.serve_options.kv = number_format_flag("--kv", o.kv);
    r.serve_weights_given = o.out.cmd->get_option("--weights")->count() > 0;
    r.serve_kv_given = o.out.cmd->get_option("--kv")->count() > 0;
    r.serve_options = with_attention(r.serve_options, attention_flag(o.attention));
    r.serve_options.grouped_experts = moe_flag(o.moe);
    r.serve_options.latent_kv = mla_flag(o.mla);
  }
  r.progress = stderr_progress();
  return r;
}

void run_report(const ReportOptions& o) {
  if (o.depth < 0) throw UsageError("--depth: expected 0 (every layer) or more");
  report::HtmlReport r = report::html_report(request_of(o));
  chart::write_html(r.page, o.output);
  int n_charts = 0;
  for (const auto& s : r.page.sections) n_charts += static_cast<int>(s.charts.size());
  std::cerr << fmt::format("report written to {} ({} charts, {} sections)\n", o.output, n_charts, r.page.sections.size());
  o.out.emit(std::move(r.doc));
}

}  // namespace

CLI::App* add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "One self-contained HTML report: the answer first (time, bound, top layers, "
                                           "memory), then rooflines, sweeps and the layer table");
  auto o = std::make_shared<ReportOptions>();
  cmd->add_option("MODEL", o->model, fmt::format("{}; an LLM (zoo name or config.json) with --serve", kModelHelp))->required();
  o->m.add_to(cmd);
  cmd->add_option("--precision,-p", o->precision,
                  precision_mode_names() + " (amp-*: PyTorch autocast, fp32 weights); --serve: as `ridge serve --precision` (default: "
                  "fp16 compute, weights and KV)")
      ->capture_default_str();
  cmd->add_flag("--train", o->train, "Training iteration: forward, backward and weight update");
  cmd->add_option("--optimizer", o->optimizer, "Optimizer for training memory: sgd|momentum|adam")->capture_default_str();
  cmd->add_option("--device,-d", o->devices, "Device(s) for the prediction and one roofline each (see `ridge devices`); repeatable");
  cmd->add_option("--devices-dir,--devices", o->device_dirs, "Extra folder(s) of device JSON files");
  cmd->add_flag("--measure", o->measure, "Also time every layer on this CPU (fp32, oneDNN) and show it next to the estimates");
  cmd->add_flag("--end-to-end", o->end_to_end,
                "With --measure: also time the whole graph as one fused program, next to the per-layer sum");
  cmd->add_option("--profile", o->profiles, "GPU profiler output(s) to show next to the estimates; repeatable")->type_name("FILE");
  cmd->add_flag("--force", o->force, "Use profiles whose file names name another model, batch or GPU (the report says so)");
  cmd->add_option("--sweep", o->sweep, "Batch sizes of the sweep charts: 1,2,4 or start:stop:step")->capture_default_str();
  cmd->add_option("--depth", o->depth, "Module depth of the layer table's collapsible groups (0: one group per layer)")
      ->capture_default_str();
  cmd->add_option("--top", o->top, "Slowest layers shown on the headline")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_flag("--serve", o->serve, "LLM serving report (prefill, decode, KV cache): MODEL is an LLM zoo name or config.json");
  cmd->add_option("--prompt", o->prompt, "--serve: prompt tokens")->capture_default_str();
  cmd->add_option("--generate", o->generate, "--serve: generated tokens")->capture_default_str();
  cmd->add_option("--tp", o->tp, "--serve: tensor-parallel GPUs")->capture_default_str();
  cmd->add_option("--dp", o->dp, "--serve: data-parallel attention GPUs of a mixture-of-experts model (expert-parallel "
                                 "MoE layers; as serve's --dp)")->capture_default_str();
  cmd->add_option("--weights", o->weights, "--serve: weight format int4|int8|fp8|fp16|bf16|fp32")->capture_default_str();
  cmd->add_option("--kv", o->kv, "--serve: KV cache format fp8|fp16|bf16|fp32")->capture_default_str();
  cmd->add_option("--attention", o->attention, std::string("--serve: ") + kAttentionHelp)->capture_default_str();
  cmd->add_option("--moe", o->moe, std::string("--serve: ") + kMoeHelp)->capture_default_str();
  cmd->add_option("--mla", o->mla, std::string("--serve: ") + kMlaHelp)->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Where to write the HTML report")
      ->type_name("FILE.html")
      ->required()
      ->each(writable_file("--output"));
  o->out.add_to(cmd);
  cmd->callback([o] {
    if (!o->serve)
      for (const char* flag : {"--prompt", "--generate", "--tp", "--dp", "--weights", "--kv", "--attention", "--moe", "--mla"})
        if (o->out.cmd->get_option(flag)->count() > 0) throw UsageError(std::string(flag) + " needs --serve");
    // The serving report builds its graphs from the LLM's config: the model report's options do not apply.
    if (o->serve)
      for (const char* flag : {"--profile", "--train", "--optimizer", "--measure", "--end-to-end", "--sweep", "--seq-len",
                               "--input", "--input-size", "--dtype", "--strict", "--force", "--depth"})
        if (const CLI::Option* opt = o->out.cmd->get_option_no_throw(flag); opt && opt->count() > 0)
          throw UsageError(std::string(flag) + " does not apply to --serve (its graphs come from the LLM's config)");
    run_report(*o);
  });
  return cmd;
}

}  // namespace ridge::cli
