// The train document of `ridge train` (and the Python module): plain values in, a Document out.
#include <fmt/format.h>

#include <map>

#include "ridge/api.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::report {

namespace {

// Where the compute time goes: the ops of one micro-batch summed over the layers (one row per op pattern, in graph
// order), forward, backward and recomputed forward apart, with each row's share of the micro-batch's time.
Table train_op_groups_table(const TrainResult& r, const std::string& label) {
  struct Group {
    std::string pattern, op_class;
    Count count = 0, flops = 0, bytes = 0;
    double forward_s = 0, backward_s = 0, recompute_s = 0;
  };
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  double total_s = 0;
  for (const TrainOp& op : r.ops) {
    auto [it, added] = index.emplace(layer_pattern(op.name), groups.size());
    if (added) groups.push_back({it->first, op.op_class});
    Group& g = groups[it->second];
    ++g.count;
    g.flops += op.flops + op.backward_flops;
    g.bytes += op.bytes;
    g.forward_s += op.forward_s;
    g.backward_s += op.backward_s;
    g.recompute_s += op.recompute_s;
    total_s += op.time_s();
  }
  Table t{"op_groups",
          fmt::format("Where the compute time goes [{}]: per op, summed over the layers, one micro-batch through the "
                      "whole model on one GPU (the pipeline stage runs its share)", label),
          {{"name", "op", Unit::None},
           {"op_class", "class", Unit::None},
           {"count", "x", Unit::Count},
           {"flops", "FLOPs fwd+bwd", Unit::Flop},
           {"bytes", "bytes fwd", Unit::Byte},
           {"forward_s", "forward", Unit::Second},
           {"backward_s", "backward", Unit::Second},
           {"recompute_s", "recompute", Unit::Second},
           {"share_of_compute_percent", "share", Unit::Percent}},
          {},
          {}};
  for (const Group& g : groups) {
    const double time_s = g.forward_s + g.backward_s + g.recompute_s;
    t.add_row({Cell::text(g.pattern), Cell::text(g.op_class), Cell::count(g.count), Cell::count(g.flops, Unit::Flop),
               Cell::count(g.bytes, Unit::Byte), Cell::real(g.forward_s, Unit::Second),
               Cell::real(g.backward_s, Unit::Second), Cell::real(g.recompute_s, Unit::Second),
               total_s > 0 ? Cell::real(100 * time_s / total_s, Unit::Percent) : Cell::empty(Unit::Percent)});
  }
  return t;
}

}  // namespace

Document train_report(const TrainResult& r, const LlmConfig& c, const std::optional<std::string>& fits_with) {
  const TrainOptions& o = r.options;
  Document doc;
  doc.title = fmt::format("Training {} on {} x {}: tp {}{}{} pp {} dp {}, ZeRO {}, seq {}, global batch {}, micro-batch {}",
                          r.model, o.gpus, r.device, o.tp, o.sequence_parallel ? " (+sp)" : "",
                          o.cp > 1 ? fmt::format(" cp {}", o.cp) : "", o.pp, o.dp, o.zero, o.seq, o.global_batch,
                          o.micro_batch);
  const std::string& kLabel = r.time_label;
  auto t = [&](const char* title) { return fmt::format("{} [{}]", title, kLabel); };
  // Communication is timed on the data sheet's links (or the measured intra-node all-reduce fit for TP).
  auto comm = [&](const char* title, bool fitted) {
    return fmt::format("{} [{}]", title, fitted ? "fit on measured NCCL times (allreduce-vidur.json)"
                                         : o.calibration ? "interconnect data sheet" : kLabel);
  };
  Fields f{"train", "Training iteration", {}};
  f.add("iteration_time_s", t("iteration time"), Cell::real(r.iteration_time_s, Unit::Second));
  f.add("compute_time_s", t("compute incl. bubble"), Cell::real(r.compute_time_s, Unit::Second));
  f.add("bubble_percent", o.interleave > 1 ? "pipeline bubble ((p-1)/v)/(m+(p-1)/v)" : "pipeline bubble (p-1)/(m+p-1)", Cell::real(100 * r.bubble_fraction, Unit::Percent));
  f.add("tp_comm_s", comm("tensor-parallel all-reduces", o.tp_allreduce.has_value()), Cell::real(r.tp_comm_s, Unit::Second));
  f.add("pp_comm_s", comm("pipeline send/recv", false), Cell::real(r.pp_comm_s, Unit::Second));
  if (o.ep > 1) f.add("ep_comm_s", comm("MoE all-to-alls", false), Cell::real(r.ep_comm_s, Unit::Second));
  if (o.cp > 1)
    f.add("cp_comm_s", comm("context-parallel K/V ring not hidden", false), Cell::real(r.cp_comm_s, Unit::Second));
  f.add("dp_comm_exposed_s", comm("data-parallel all-reduce not hidden", false), Cell::real(r.dp_comm_exposed_s, Unit::Second));
  f.add("mfu_percent", t("MFU"), Cell::real(100 * r.mfu, Unit::Percent));
  f.add("hfu_percent", t("HFU"), Cell::real(100 * r.hfu, Unit::Percent));
  f.add("tokens_per_s", t("tokens/s"), Cell::real(r.tokens_per_s));
  if (o.token_budget > 0)
    f.add("days_for_budget", t("days for the token budget"), Cell::real(r.days_for_budget));
  f.add("time_label", "times are", Cell::text(kLabel));
  f.add("micro_batches", "micro-batches per iteration (m)", Cell::count(r.micro_batches), true);
  f.add("layers_per_stage", "layers of the largest pipeline stage", Cell::count(r.layers_per_stage), true);
  f.add("model_flops", "model FLOPs per iteration", Cell::count(r.model_flops, Unit::Flop), true);
  f.add("hardware_flops", "hardware FLOPs per iteration", Cell::count(r.hardware_flops, Unit::Flop), true);
  if (!c.hybrid()) {  // formulas of GPT layers: they do not describe a hybrid's Mamba or DeltaNet layers
    f.add("megatron_formula_flops", "Megatron-LM formula (full recompute)",
          Cell::count(megatron_iteration_flops(o.global_batch, o.seq, c.num_layers, c.hidden_size, c.vocab_size),
                      Unit::Flop),
          true);
    f.add("palm_model_flops", "PaLM 6N + 12LHQT per iteration (N: active parameters)",
          Cell::count(palm_flops_per_token(llm_params(c).active_per_token, c.num_layers, c.num_heads, c.head_dim,
                                           o.seq) *
                          (Count{o.global_batch} * o.seq),
                      Unit::Flop),
          true);
  }
  doc.blocks.push_back(f);
  Fields m{"memory_per_gpu_bytes", "Memory per GPU (largest pipeline stage)", {}};
  const TrainStateBytes kept = train_state_bytes(o);
  m.add("weights", "weights (" + kept.weights_type + ")", Cell::count(r.memory.weights, Unit::Byte), true);
  m.add("gradients", "gradients (" + kept.gradients_type + ")", Cell::count(r.memory.gradients, Unit::Byte), true);
  m.add("optimizer", kept.optimizer_label, Cell::count(r.memory.optimizer, Unit::Byte), true);
  m.add("activations", "activations (in-flight micro-batches)", Cell::count(r.memory.activations, Unit::Byte), true);
  m.add("total", "total", Cell::count(r.memory.total(), Unit::Byte), true);
  m.add("device", "device memory", Cell::count(r.device_memory_bytes, Unit::Byte), true);
  m.add("fits", "fits", Cell::flag(r.fits));
  doc.blocks.push_back(m);
  doc.blocks.push_back(train_op_groups_table(r, kLabel));
  // As predict's JSON: whether the times are fitted, in a stable machine form beside the labels.
  doc.extra["calibrated"] = o.calibration.has_value();
  doc.extra["time_kind"] = llm_time_kind_key(o.calibration);
  doc.extra["iteration_time_s"] = r.iteration_time_s;
  doc.extra["mfu"] = r.mfu;
  doc.extra["hfu"] = r.hfu;
  doc.extra["tokens_per_s"] = r.tokens_per_s;
  doc.extra["fits"] = r.fits;
  for (const char* k : {"iteration_time_s", "mfu", "hfu", "tokens_per_s"}) doc.extra[std::string(k) + "_label"] = kLabel;
  doc.notes.push_back(o.calibration
                          ? fmt::format("times (and MFU/HFU/tokens/s) are {}: per-class factors fitted on measured "
                                        "forward operators, applied to backward too (docs/llm.md)", kLabel)
                          : fmt::format("every time (and MFU/HFU/tokens/s) is a roofline {}: {}", kLabel,
                                        uncalibrated_reason(o, r.device)));
  if (const std::string n = ceiling_note(o); !n.empty()) doc.notes.push_back(n);
  if (const std::string a = r.attention_layers > 0 ? attention_kernel_note(o, r.device) : ""; !a.empty())
    doc.notes.push_back(a);
  if (const std::string m = moe_experts_note(c.moe(), o.grouped_experts); !m.empty()) doc.notes.push_back(m);
  if (const std::string s = sparse_attention_note(c.index_topk, o.fused_attention, o.tp, false); !s.empty())
    doc.notes.push_back(s);
  if (const std::string f = fallback_classes_note(timing_calibration(o), r.ops, r.time_label); !f.empty())
    doc.notes.push_back(f);
  if (c.num_layers % o.pp != 0)
    doc.notes.push_back(fmt::format("uneven pipeline stages: {} layers over --pp {} (at most {} per stage); the "
                                    "slowest stage sets the time and the fullest the memory per GPU", c.num_layers,
                                    o.pp, r.layers_per_stage));
  if (!r.fits) {
    // First line of every output, as INCOMPLETE is: a time for a layout that cannot run must not be read alone.
    doc.alert = fmt::format("DOES NOT FIT: {} per GPU with this layout, {} has {}; {} (the times below assume it "
                            "ran)", format_bytes(to_double(r.memory.total())), r.device,
                            format_bytes(to_double(r.device_memory_bytes)),
                            fits_with ? "fits with " + *fits_with
                                      : std::string("no ZeRO stage or recomputation makes it fit"));
    doc.notes.push_back("does not fit in one GPU's memory with this layout");
    doc.extra["fits_with"] = fits_with ? nlohmann::json(*fits_with) : nlohmann::json(nullptr);
    doc.notes.push_back(fits_with ? fmt::format("fits with {} (the cheapest memory saver that suffices)", *fits_with)
                                  : "no ZeRO stage or recomputation makes it fit: more GPUs, --tp or --pp needed");
  }
  return doc;
}

Document train_report(const TrainRequest& req) {
  const auto s = resolve_llm_request(req);
  const TrainResult r = analyze_training(s.config, s.device, s.options);
  return train_report(r, s.config, r.fits ? std::nullopt : memory_savers_that_fit(s.config, s.device, s.options));
}

std::vector<chart::Chart> train_charts(const TrainRequest& req) {
  const auto s = resolve_llm_request(req);
  return {train_memory_chart(s.config, s.device, s.options), train_time_chart(analyze_training(s.config, s.device, s.options))};
}

}  // namespace ridge::report
