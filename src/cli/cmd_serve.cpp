// `ridge serve MODEL --device D`: what an LLM costs to serve (prefill, decode, KV cache, tensor parallelism),
// per phase and per op on the device's roofline. Logic: src/model/llm_serve.cpp.
#include <fmt/format.h>

#include "commands.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "llm_model.hpp"
#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::cli {

CLI::App* add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "What an LLM costs to serve: prefill, decode, KV cache, TTFT, tokens/s");
  struct Opts {
    LlmModelArgs m;
    int64_t batch = 1, prompt = 512, generate = 128;
    int tp = 1, dp = 1;
    std::string weights = "fp16", kv = "fp16", compute = "fp16", attention = "eager", moe = "eager", mla = "hf", precision;
    std::string plot;
    bool all_ops = false;
    OutputOptions out;
  };
  auto o = std::make_shared<Opts>();
  o->m.add_to(cmd);
  cmd->add_option("--batch,-b", o->batch, "Concurrent sequences")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--prompt", o->prompt, "Prompt tokens (prefill)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--generate", o->generate, "Generated tokens (decode steps)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--tp", o->tp, "Tensor-parallel GPUs")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--dp", o->dp, "Data-parallel attention GPUs of a mixture-of-experts model: each attends for its "
                                 "share of the --batch sequences with every head and holds 1/dp of the experts "
                                 "(expert parallelism, all-to-alls per MoE layer), as SGLang's --enable-dp-attention "
                                 "and vLLM's --data-parallel-size with --enable-expert-parallel; not with --tp")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--weights", o->weights, "Weight format: int4|int8|fp8|fp16|bf16|fp32")->capture_default_str();
  cmd->add_option("--kv", o->kv, "KV cache format: fp8|fp16|bf16|fp32")->capture_default_str();
  cmd->add_option("--compute", o->compute, "Activation precision and peak: fp16|bf16|fp32")->capture_default_str();
  cmd->add_option("--precision,-p", o->precision,
                  "Instead of --compute: fp32|tf32|bf16|fp16|amp-bf16|amp-fp16 as in predict and train: the compute "
                  "precision, weights at its weight type (amp-*: fp32) and the KV cache at its activation type, unless "
                  "--weights or --kv say otherwise");
  cmd->add_option("--moe", o->moe, kMoeHelp)->capture_default_str();
  cmd->add_option("--mla", o->mla, kMlaHelp)->capture_default_str();
  cmd->add_option("--attention", o->attention, kAttentionHelp)
      ->capture_default_str();
  cmd->add_option("--plot", o->plot, "Also draw memory per GPU, latency vs batch and prompt, and the prefill/decode "
                                     "ops on the roofline to FILE.svg or FILE.png")->type_name("FILE");
  cmd->add_flag("--all-ops", o->all_ops, "In table and md output, list every op of every layer (table \"ops\") "
                "instead of each op summed over the layers (\"op_groups\"); JSON and CSV always hold both");
  o->out.add_to(cmd);
  cmd->callback([o] {
    if (!o->plot.empty()) chart::check_chart_path(o->plot);
    ServeOptions so = with_attention(ServeOptions{}, attention_flag(o->attention));
    so.grouped_experts = moe_flag(o->moe);
    so.latent_kv = mla_flag(o->mla);
    so.batch = o->batch;
    so.prompt = o->prompt;
    so.generate = o->generate;
    so.tp = o->tp;
    so.dp = o->dp;
    so.weights = number_format_flag("--weights", o->weights);
    so.kv = number_format_flag("--kv", o->kv);
    if (so.kv.group > 0) throw UsageError("--kv " + o->kv + ": use fp8, fp16, bf16 or fp32 for the KV cache");
    auto p = parse_llm_compute(o->compute);
    if (!p) throw UsageError("--compute " + o->compute + ": use fp16, bf16 or fp32");
    so.compute = *p;
    if (o->out.cmd->get_option("--precision")->count() > 0)
      so = with_serving_precision(so, o->precision, o->out.cmd->get_option("--weights")->count() > 0,
                                  o->out.cmd->get_option("--kv")->count() > 0,
                                  o->out.cmd->get_option("--compute")->count() > 0);
    announce_large_llm(o->m.model, "serve");
    report::ServeRequest req{o->m.model, o->m.device_name, o->m.device_dirs, o->m.calibration, so};
    report::Document doc = report::serve_report(req);
    // Table and md on stdout get one of the two op tables (an 80-layer model has thousands of per-layer rows);
    // files and JSON/CSV get both.
    if (o->out.format == "table" || o->out.format == "md") {
      const std::string drop = o->all_ops ? "op_groups" : "ops";
      report::Document screen = doc;
      std::erase_if(screen.blocks, [&](const report::Block& b) {
        const auto* t = std::get_if<report::Table>(&b);
        return t && t->key == drop;
      });
      o->out.emit(std::move(screen), std::move(doc));
    } else {
      o->out.emit(std::move(doc));
    }
    if (!o->plot.empty()) chart::write_charts(report::serve_charts(req, stderr_progress(kQuietProgressS)), o->plot);
  });
  return cmd;
}

}  // namespace ridge::cli
