// `ridge train MODEL --device D --gpus N`: FLOPs, time, MFU/HFU, communication and per-GPU memory of one
// training iteration under a Megatron-style layout. Argument parsing only: report::train_report(TrainRequest).
#include <fmt/format.h>

#include "commands.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "llm_model.hpp"
#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::cli {

CLI::App* add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "What an LLM costs to train: FLOPs, MFU/HFU, time, memory per GPU");
  struct Opts {
    LlmModelArgs m;
    TrainOptions t;
    std::string recompute = "none", compute = "bf16", attention = "eager", moe = "eager", zero = "0", precision;
    std::string plot;
    OutputOptions out;
  };
  auto o = std::make_shared<Opts>();
  o->m.add_to(cmd);
  cmd->add_option("--gpus", o->t.gpus, "GPUs in all")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--tp", o->t.tp, "Tensor-parallel size")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--pp", o->t.pp, "Pipeline-parallel stages")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--cp", o->t.cp, "Context-parallel size: each GPU holds seq / cp tokens, ring attention over the "
                                   "rest (Megatron-LM --context-parallel-size)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--dp", o->t.dp, "Data-parallel size (default gpus / (tp cp pp))")->check(CLI::PositiveNumber);
  cmd->add_option("--zero", o->zero, "ZeRO stage 0-3, or fsdp (PyTorch FSDP full shard = stage 3)")->capture_default_str();
  cmd->add_option("--interleave", o->t.interleave, "Virtual pipeline stages per GPU (interleaved 1F1B schedule)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ep", o->t.ep, "Expert-parallel GPUs (MoE models; divides dp and the experts)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--sp", o->t.sequence_parallel,
                "Megatron sequence parallelism: activations outside the TP region split over tp (Korthikanti et al.)");
  cmd->add_option("--recompute", o->recompute, "Activation recomputation: none|selective|full")->capture_default_str();
  cmd->add_option("--seq", o->t.seq, "Sequence length")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--global-batch", o->t.global_batch, "Sequences per iteration (default dp x micro-batch)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--micro-batch", o->t.micro_batch, "Sequences per micro-batch")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--compute", o->compute,
                  "Precision of the peak: bf16|fp16|fp32, with Megatron/DeepSpeed mixed precision (weights and gradients "
                  "at it, fp32 master + 2 Adam moments)")->capture_default_str();
  cmd->add_option("--precision,-p", o->precision,
                  "Instead of --compute: " + precision_mode_names() + " as in predict and summary (amp-*: PyTorch "
                  "autocast, fp32 weights, gradients and Adam states; bf16/fp16: everything at the half type)");
  cmd->add_option("--tokens", o->t.token_budget, "Token budget: also print the days it takes (e.g. 2e12)");
  cmd->add_option("--moe", o->moe, kMoeHelp)->capture_default_str();
  cmd->add_option("--attention", o->attention, kAttentionHelp)
      ->capture_default_str();
  cmd->add_option("--plot", o->plot, "Also draw memory per GPU (weights, gradients, optimizer states, activations) "
                                     "under ZeRO stages 0-3, and the compute time per op class, to FILE.svg or FILE.png")->type_name("FILE");
  o->out.add_to(cmd);
  cmd->callback([o] {
    if (!o->plot.empty()) chart::check_chart_path(o->plot);
    o->t = with_attention(o->t, attention_flag(o->attention));
    o->t.grouped_experts = moe_flag(o->moe);
    const auto zero = parse_zero_stage(o->zero);
    if (!zero) throw UsageError("--zero " + o->zero + ": use 0, 1, 2, 3 or fsdp");
    o->t.zero = *zero;
    auto rc = parse_recompute(o->recompute);
    if (!rc) throw UsageError("--recompute " + o->recompute + ": use none, selective or full");
    o->t.recompute = *rc;
    auto p = parse_llm_compute(o->compute);
    if (!p) throw UsageError("--compute " + o->compute + ": use bf16, fp16 or fp32");
    o->t.compute = *p;
    if (o->out.cmd->get_option("--precision")->count() > 0)
      o->t = with_training_precision(o->t, o->precision, o->out.cmd->get_option("--compute")->count() > 0);
    if (o->out.cmd->get_option("--tokens")->count() > 0 && !(o->t.token_budget > 0))
      throw Error(fmt::format("--tokens {}: must be a positive, finite number of tokens", o->t.token_budget));
    announce_large_llm(o->m.model, "train");
    const report::TrainRequest req{o->m.model, o->m.device_name, o->m.device_dirs, o->m.calibration, o->t};
    o->out.emit(report::train_report(req));
    if (!o->plot.empty()) chart::write_charts(report::train_charts(req), o->plot);
  });
  return cmd;
}

}  // namespace ridge::cli
