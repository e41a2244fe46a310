// `ridge serve MODEL --device D`: what an LLM costs to serve (prefill, decode, KV cache, tensor parallelism),
// per phase and per op on the device's roofline. Logic: src/model/llm_serve.cpp.
#include <fmt/format.h>

#include "commands.hpp"
#include "llm_model.hpp"
#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::cli {

namespace {

using report::Cell;
using report::Unit;

report::Document serve_document(const ServeResult& r) {
  report::Document doc;
  const ServeOptions& o = r.options;
  doc.title = fmt::format("Serving {} on {} x{}: batch {}, prompt {}, generate {}, weights {}, KV {}", r.model, r.device,
                          o.tp, o.batch, o.prompt, o.generate, o.weights.name, o.kv.name);
  const std::string& kLabel = r.time_label;
  auto t = [&](const char* title) { return fmt::format("{} [{}]", title, kLabel); };
  auto comm = [&](const char* title) {
    return fmt::format("{} [{}]", title, o.tp_allreduce ? "fit on measured NCCL times (allreduce-vidur.json)" : kLabel);
  };
  report::Fields f{"serve", "Serving", {}};
  f.add("prefill_time_s", t("prefill time"), Cell::real(r.prefill_time_s, Unit::Second));
  f.add("ttft_s", t("time to first token"), Cell::real(r.ttft_s, Unit::Second));
  f.add("decode_time_per_token_s", t("time per output token"), Cell::real(r.decode_time_per_token_s, Unit::Second));
  f.add("end_to_end_s", t("end-to-end latency"), Cell::real(r.end_to_end_s, Unit::Second));
  f.add("tokens_per_s", t("tokens/s"), Cell::real(r.tokens_per_s, Unit::None));
  f.add("time_label", "times are", Cell::text(kLabel));
  f.add("weights_bytes", "weights (all GPUs)", Cell::count(r.weights_bytes, Unit::Byte), true);
  f.add("weights_bytes_per_gpu", "weights per GPU", Cell::count(r.weights_bytes_per_gpu, Unit::Byte), true);
  f.add("kv_cache_bytes", "KV cache at prompt+generate (all GPUs)", Cell::count(r.kv_cache_bytes, Unit::Byte), true);
  f.add("kv_cache_bytes_per_gpu", "KV cache per GPU", Cell::count(r.kv_cache_bytes_per_gpu, Unit::Byte), true);
  f.add("memory_per_gpu_bytes", "weights + KV per GPU", Cell::count(r.memory_per_gpu_bytes, Unit::Byte), true);
  f.add("max_batch", "largest batch that fits", Cell::count(r.max_batch), true);
  f.add("prefill_flops", "prefill FLOPs per GPU", Cell::count(r.prefill_flops, Unit::Flop), true);
  f.add("calflops_prefill_flops", "prefill FLOPs per GPU, calflops convention",
        Cell::count(r.calflops_prefill_flops, Unit::Flop), true);
  f.add("decode_flops", "decode FLOPs per GPU (all steps)", Cell::count(r.decode_flops, Unit::Flop), true);
  f.add("total_params", "parameters", Cell::count(r.total_params, Unit::Param), true);
  f.add("active_params", "active parameters per token", Cell::count(r.active_params, Unit::Param), true);
  if (o.tp > 1) {
    f.add("allreduce_time_per_layer_prefill_s", comm("all-reduce per layer, prefill"),
          Cell::real(r.allreduce_time_per_layer_prefill_s, Unit::Second));
    f.add("allreduce_time_per_layer_decode_s", comm("all-reduce per layer, decode step"),
          Cell::real(r.allreduce_time_per_layer_decode_s, Unit::Second));
  }
  doc.blocks.push_back(f);
  report::Table ops{"ops", "Per op (one GPU; decode summed over the generate steps)",
                    {{"phase", "phase", Unit::None},
                     {"name", "op", Unit::None},
                     {"flops", "FLOPs", Unit::Flop},
                     {"weight_bytes", "weights", Unit::Byte},
                     {"activation_bytes", "activations", Unit::Byte},
                     {"kv_read_bytes", "KV read", Unit::Byte},
                     {"kv_written_bytes", "KV written", Unit::Byte},
                     {"bytes", "bytes", Unit::Byte},
                     {"intensity_flop_per_byte", "AI", Unit::FlopPerByte},
                     {"bound", "bound", Unit::None},
                     {"time_s", t("time"), Unit::Second}},
                    {},
                    {}};
  for (const ServeOp& op : r.ops) {
    const Count b = op.bytes();
    ops.add_row({Cell::text(op.phase), Cell::text(op.name), Cell::count(op.flops, Unit::Flop),
                 Cell::count(op.weight_bytes, Unit::Byte), Cell::count(op.activation_bytes, Unit::Byte),
                 Cell::count(op.kv_read_bytes, Unit::Byte), Cell::count(op.kv_written_bytes, Unit::Byte),
                 Cell::count(b, Unit::Byte),
                 b > 0 ? Cell::real(to_double(op.flops) / to_double(b), Unit::FlopPerByte) : Cell::empty(),
                 Cell::text(op.name.rfind("allreduce", 0) == 0 ? "communication" : std::string(bound_name(op.bound))),
                 Cell::real(op.time_s, Unit::Second)});
  }
  doc.blocks.push_back(std::move(ops));
  for (const char* k : {"prefill_time_s", "decode_time_per_token_s", "ttft_s", "tokens_per_s", "end_to_end_s"})
    doc.extra[std::string(k) + "_label"] = kLabel;
  doc.extra["prefill_time_s"] = r.prefill_time_s;
  doc.extra["decode_time_per_token_s"] = r.decode_time_per_token_s;
  doc.extra["ttft_s"] = r.ttft_s;
  doc.extra["tokens_per_s"] = r.tokens_per_s;
  doc.extra["kv_cache_bytes"] = report::to_json(Cell::count(r.kv_cache_bytes, Unit::Byte));
  doc.extra["weights_bytes"] = report::to_json(Cell::count(r.weights_bytes, Unit::Byte));
  doc.extra["max_batch"] = r.max_batch;
  doc.notes.push_back(o.calibration
                          ? fmt::format("times are {}: per-class factors fitted on measured operators (docs/llm.md); the "
                                        "attention core and all-reduces are not in the measurements", kLabel)
                          : fmt::format("every time is a roofline {}: no calibration applies to {} (--calibration)",
                                        kLabel, r.device));
  doc.notes.push_back("layout ops (transpose, slice, concat) are counted as fused into their consumers; decode ops "
                      "are summed over every step at contexts prompt .. prompt + generate - 1 (docs/llm.md)");
  return doc;
}

}  // namespace

CLI::App* add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "What an LLM costs to serve: prefill, decode, KV cache, TTFT, tokens/s");
  struct Opts {
    LlmModelArgs m;
    int64_t batch = 1, prompt = 512, generate = 128;
    int tp = 1;
    std::string weights = "fp16", kv = "fp16", compute = "fp16", attention = "eager";
    OutputOptions out;
  };
  auto o = std::make_shared<Opts>();
  o->m.add_to(cmd);
  cmd->add_option("--batch,-b", o->batch, "Concurrent sequences")->capture_default_str();
  cmd->add_option("--prompt", o->prompt, "Prompt tokens (prefill)")->capture_default_str();
  cmd->add_option("--generate", o->generate, "Generated tokens (decode steps)")->capture_default_str();
  cmd->add_option("--tp", o->tp, "Tensor-parallel GPUs")->capture_default_str();
  cmd->add_option("--weights", o->weights, "Weight format: int4|int8|fp8|fp16|bf16|fp32")->capture_default_str();
  cmd->add_option("--kv", o->kv, "KV cache format: fp8|fp16|bf16|fp32")->capture_default_str();
  cmd->add_option("--compute", o->compute, "Activation precision and peak: fp16|bf16|fp32")->capture_default_str();
  cmd->add_option("--attention", o->attention, "eager (HF, scores in memory) | fused (FlashAttention-style)")
      ->capture_default_str();
  o->out.add_to(cmd);
  cmd->callback([o] {
    ServeOptions so;
    so.fused_attention = attention_flag(o->attention);
    so.batch = o->batch;
    so.prompt = o->prompt;
    so.generate = o->generate;
    so.tp = o->tp;
    so.weights = number_format_flag("--weights", o->weights);
    so.kv = number_format_flag("--kv", o->kv);
    if (so.kv.group > 0) throw UsageError("--kv " + o->kv + ": use fp8, fp16, bf16 or fp32 for the KV cache");
    auto p = parse_precision(o->compute);
    if (!p) throw UsageError("--compute " + o->compute + ": unknown precision");
    so.compute = *p;
    const Device d = o->m.find_device();
    so.calibration = o->m.find_calibration(d, so.compute);
    if (so.calibration) so.tp_allreduce = builtin_tp_allreduce_fit(d.id, so.tp);
    o->out.emit(serve_document(analyze_serving(o->m.config(), d, so)));
  });
  return cmd;
}

}  // namespace ridge::cli
