// The serve document of `ridge serve` (and the Python module), and the resolution of serve and train requests:
// plain values in, a Document out.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "ridge/api.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::report {

std::string layer_pattern(std::string_view name) {
  // The first dotted component that is a number: "model.layers.12.mlp.up_proj" -> "model.layers.*.mlp.up_proj".
  size_t begin = 0;
  while (begin < name.size()) {
    size_t end = name.find('.', begin);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view part = name.substr(begin, end - begin);
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos)
      return std::string(name.substr(0, begin)) + "*" + std::string(name.substr(end));
    begin = end + 1;
  }
  return std::string(name);
}

namespace {

template <class Op>
std::string fallback_classes_note_of(const std::optional<Calibration>& cal, const std::vector<Op>& ops,
                                     const std::string& label) {
  if (!cal) return "";
  std::vector<std::string> listed;
  for (const Op& op : ops) {
    if (op.op_class.empty() || cal->find(op.op_class)) continue;
    const std::string item = fmt::format("{} ({})", layer_pattern(op.name), op.op_class);
    if (std::find(listed.begin(), listed.end(), item) == listed.end()) listed.push_back(item);
  }
  if (listed.empty()) return "";
  return fmt::format("no fitted factors for these ops' classes in {}: timed with its fallback factors, not checked "
                     "against any measurement: {}", label, fmt::join(listed, ", "));
}

}  // namespace

std::string fallback_classes_note(const std::optional<Calibration>& cal, const std::vector<ServeOp>& ops,
                                  const std::string& label) {
  return fallback_classes_note_of(cal, ops, label);
}
std::string fallback_classes_note(const std::optional<Calibration>& cal, const std::vector<TrainOp>& ops,
                                  const std::string& label) {
  return fallback_classes_note_of(cal, ops, label);
}

namespace {

// The ops of each phase summed over the layers (one row per op pattern, in first-seen order), with each row's
// share of its phase's op time.
Table op_groups_table(const ServeResult& r, const std::string& time_title) {
  struct Group {
    std::string phase, pattern;
    Count count = 0, flops = 0, bytes = 0;
    double time_s = 0;
  };
  std::vector<Group> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::map<std::string, double> phase_time_s;
  for (const ServeOp& op : r.ops) {
    const auto key = std::make_pair(op.phase, layer_pattern(op.name));
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back({key.first, key.second});
    Group& g = groups[it->second];
    ++g.count;
    g.flops += op.flops;
    g.bytes += op.bytes();
    g.time_s += op.time_s;
    phase_time_s[op.phase] += op.time_s;
  }
  Table t{"op_groups", "Per op, summed over the layers (one GPU; --all-ops lists every layer's)",
          {{"phase", "phase", Unit::None},
           {"name", "op", Unit::None},
           {"count", "x", Unit::Count},
           {"flops", "FLOPs", Unit::Flop},
           {"bytes", "bytes", Unit::Byte},
           {"time_s", time_title, Unit::Second},
           {"share_of_phase_percent", "share of phase", Unit::Percent}},
          {},
          {}};
  for (const Group& g : groups) {
    const double phase = phase_time_s[g.phase];
    t.add_row({Cell::text(g.phase), Cell::text(g.pattern), Cell::count(g.count), Cell::count(g.flops, Unit::Flop),
               Cell::count(g.bytes, Unit::Byte), Cell::real(g.time_s, Unit::Second),
               phase > 0 ? Cell::real(100 * g.time_s / phase, Unit::Percent) : Cell::empty(Unit::Percent)});
  }
  return t;
}

}  // namespace

Document serve_report(const ServeResult& r) {
  Document doc;
  const ServeOptions& o = r.options;
  doc.title = fmt::format("Serving {} on {} x{}{}: batch {}, prompt {}, generate {}, weights {}, KV {}, compute {}",
                          r.model, r.device, o.tp * o.dp, o.dp > 1 ? " (data-parallel attention, expert-parallel MoE)" : "",
                          o.batch, o.prompt, o.generate, o.weights.name, o.kv.name, precision_info(o.compute).name);
  const std::string& kLabel = r.time_label;
  auto t = [&](const char* title) { return fmt::format("{} [{}]", title, kLabel); };
  auto comm = [&](const std::string& title) {
    return fmt::format("{} [{}]", title, o.tp_allreduce ? "fit on measured NCCL times (allreduce-vidur.json)" : kLabel);
  };
  auto comm_sheet = [](const std::string& title) { return title + " [interconnect data sheet]"; };
  Fields f{"serve", "Serving", {}};
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
  if (r.latent_kv_cache_bytes > 0) {
    f.add("latent_kv_cache_bytes", "KV cache as a latent (vLLM, SGLang; all GPUs)",
          Cell::count(r.latent_kv_cache_bytes, Unit::Byte), true);
    f.add("decompressed_kv_cache_bytes", "KV cache as HF's keys and values (all GPUs)",
          Cell::count(r.decompressed_kv_cache_bytes, Unit::Byte), true);
  }
  if (r.state_cache_bytes > 0) {
    f.add("state_cache_bytes", "recurrent state cache (all GPUs)", Cell::count(r.state_cache_bytes, Unit::Byte), true);
    f.add("state_cache_bytes_per_gpu", "recurrent state cache per GPU", Cell::count(r.state_cache_bytes_per_gpu, Unit::Byte),
          true);
  }
  f.add("memory_per_gpu_bytes", r.state_cache_bytes > 0 ? "weights + KV + state per GPU" : "weights + KV per GPU",
        Cell::count(r.memory_per_gpu_bytes, Unit::Byte), true);
  f.add("max_batch", "largest batch that fits", Cell::count(r.max_batch), true);
  f.add("prefill_flops", "prefill FLOPs per GPU", Cell::count(r.prefill_flops, Unit::Flop), true);
  f.add("calflops_prefill_flops", "prefill FLOPs per GPU, calflops convention",
        Cell::count(r.calflops_prefill_flops, Unit::Flop), true);
  f.add("decode_flops", "decode FLOPs per GPU (all steps)", Cell::count(r.decode_flops, Unit::Flop), true);
  f.add("total_params", "parameters", Cell::count(r.total_params, Unit::Param), true);
  f.add("active_params", "active parameters per token", Cell::count(r.active_params, Unit::Param), true);
  if (o.tp > 1) {
    const int per = r.allreduces_per_layer;
    f.add("allreduce_time_per_layer_prefill_s", comm(fmt::format("all-reduces per layer ({}), prefill", per)),
          Cell::real(r.allreduce_time_per_layer_prefill_s, Unit::Second));
    f.add("allreduce_time_per_layer_decode_s", comm(fmt::format("all-reduces per layer ({}), decode step", per)),
          Cell::real(r.allreduce_time_per_layer_decode_s, Unit::Second));
  }
  if (o.dp > 1) {
    f.add("alltoall_time_per_layer_prefill_s", comm_sheet("all-to-alls per MoE layer (dispatch, combine), prefill"),
          Cell::real(r.alltoall_time_per_layer_prefill_s, Unit::Second));
    f.add("alltoall_time_per_layer_decode_s", comm_sheet("all-to-alls per MoE layer (dispatch, combine), decode step"),
          Cell::real(r.alltoall_time_per_layer_decode_s, Unit::Second));
  }
  doc.blocks.push_back(f);
  doc.blocks.push_back(op_groups_table(r, t("time")));
  Table ops{"ops", "Per op (one GPU; decode summed over the generate steps)",
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
                 Cell::text(op.name.rfind("allreduce", 0) == 0 || op.name.rfind("all-to-all", 0) == 0
                                ? "communication"
                                : std::string(bound_name(op.bound))),
                 Cell::real(op.time_s, Unit::Second)});
  }
  doc.blocks.push_back(std::move(ops));
  for (const char* k : {"prefill_time_s", "decode_time_per_token_s", "ttft_s", "tokens_per_s", "end_to_end_s"})
    doc.extra[std::string(k) + "_label"] = kLabel;
  // As predict's JSON: whether the times are fitted, in a stable machine form beside the labels.
  doc.extra["calibrated"] = o.calibration.has_value();
  doc.extra["time_kind"] = llm_time_kind_key(o.calibration);
  doc.extra["prefill_time_s"] = r.prefill_time_s;
  doc.extra["decode_time_per_token_s"] = r.decode_time_per_token_s;
  doc.extra["ttft_s"] = r.ttft_s;
  doc.extra["end_to_end_s"] = r.end_to_end_s;
  doc.extra["tokens_per_s"] = r.tokens_per_s;
  doc.extra["kv_cache_bytes"] = to_json(Cell::count(r.kv_cache_bytes, Unit::Byte));
  if (r.state_cache_bytes > 0) doc.extra["state_cache_bytes"] = to_json(Cell::count(r.state_cache_bytes, Unit::Byte));
  doc.extra["weights_bytes"] = to_json(Cell::count(r.weights_bytes, Unit::Byte));
  doc.extra["max_batch"] = r.max_batch;
  doc.notes.push_back(o.calibration
                          ? fmt::format("times are {}: per-class factors fitted on measured operators (docs/llm.md); the "
                                        "attention core and all-reduces are not in the measurements", kLabel)
                          : fmt::format("every time is a roofline {}: {}", kLabel, uncalibrated_reason(o, r.device)));
  if (const std::string n = ceiling_note(o); !n.empty()) doc.notes.push_back(n);
  if (const std::string a = r.attention_layers > 0 ? attention_kernel_note(o, r.device) : ""; !a.empty())
    doc.notes.push_back(a);
  if (const std::string f = fallback_classes_note(timing_calibration(o), r.ops, kLabel); !f.empty())
    doc.notes.push_back(f);
  if (const std::string m = moe_experts_note(r.active_params < r.total_params, o.grouped_experts); !m.empty())
    doc.notes.push_back(m);
  if (r.latent_kv_cache_bytes > 0) {
    const double gib = 1024.0 * 1024.0 * 1024.0, hf = to_double(r.decompressed_kv_cache_bytes) / gib,
                 latent = to_double(r.latent_kv_cache_bytes) / gib;
    doc.notes.push_back(
        o.latent_kv
            ? fmt::format("multi-head latent attention (--mla latent): the cache holds the latent ({:.2f} GiB; HF's "
                          "keys and values would be {:.2f} GiB) and one-token steps attend in it with kv_b_proj absorbed, "
                          "as vLLM and SGLang do; prompts decompress it", latent, hf)
            : fmt::format("multi-head latent attention (--mla hf): the cache and the decode ops are HF's (every head's "
                          "key and value, {:.2f} GiB); vLLM and SGLang cache the latent ({:.2f} GiB, {:.0f}x smaller) "
                          "and attend in it: --mla latent", hf, latent, hf / latent));
  }
  for (const std::string& n : {data_parallel_note(r), sparse_attention_note(r.index_topk, o.fused_attention, o.tp, true)})
    if (!n.empty()) doc.notes.push_back(n);
  doc.notes.push_back("layout ops (transpose, slice, concat) are counted as fused into their consumers; decode ops "
                      "are summed over every step at contexts prompt .. prompt + generate - 2: the prefill yields the first "
                      "token (docs/llm.md)");
  return doc;
}

LlmConfig require_llm_model(const ModelSource& model) {
  if (model.hf_config.empty() && model.onnx_bytes.empty() && !find_llm_config(model.name))
    if (const ZooEntry* z = find_zoo_entry(model.name)) {  // a graph of the zoo: not built from a config
      if (!z->hf_config.empty()) {  // ... with a Hugging Face twin (gpt2): serve and train read its config
        ModelSource twin = model;
        twin.hf_config = z->hf_config;
        return require_llm_config(twin);
      }
      std::vector<std::string> twins;
      for (const ZooEntry& e : zoo_entries())
        if (!e.hf_config.empty()) twins.push_back(e.name);
      throw Error(fmt::format("{}: a {} zoo model, not one of the LLM zoo entries that serve and train read (family "
                              "llm in `ridge list`, and {}), nor a config.json", model.name, z->family,
                              fmt::join(twins, ", ")));
    }
  return require_llm_config(model);
}

template <class Options>
LlmSetup<Options> resolve_llm_request(const LlmRequest<Options>& req) {
  LlmSetup<Options> s{require_llm_model(req.model), find_device(load_devices(req.device_dirs), req.device), {}};
  s.options = with_llm_calibration(s.device, req.options, req.calibration);
  return s;
}
template LlmSetup<ServeOptions> resolve_llm_request(const LlmRequest<ServeOptions>&);
template LlmSetup<TrainOptions> resolve_llm_request(const LlmRequest<TrainOptions>&);

Document serve_report(const ServeRequest& req) {
  const auto s = resolve_llm_request(req);
  return serve_report(analyze_serving(s.config, s.device, s.options));
}

}  // namespace ridge::report
