// LLM operator calibration: Vidur's measured per-operator times of a decoder layer (mlp.csv) read as
// measurements with the work ridge assigns each operator, per-class factors fitted to them (calibrate()),
// evaluated without fitting, held out by tensor-parallel degree or token count; the shipped fits; and the op time
// `serve` and `train` use (calibrated, or the roofline upper bound). Formulas: docs/llm.md.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include "llm_csv.hpp"
#include "ridge/data_dir.hpp"
#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"
#include "text_util.hpp"

namespace ridge {

namespace {

constexpr Count kHalf = 2;  // bytes per fp16 element (Vidur profiles in fp16)

// Vidur's operators and their calibration classes (ridge kernel families, or the op class Gather for the
// embedding lookup so that it does not pull the elementwise factors).
struct VidurOp {
  const char* name;
  const char* op_class;
};
constexpr VidurOp kVidurOps[] = {
    {"emb", "Gather"},           {"input_layernorm", "normalization"}, {"attn_pre_proj", "gemm"},
    {"attn_rope", "rotary"}, {"attn_post_proj", "gemm"},          {"post_attention_layernorm", "normalization"},
    {"mlp_up_proj", "gemm"},     {"mlp_act", "gated-activation"},          {"mlp_down_proj", "gemm"},
    {"add", "elementwise"},
};

// The layer's shape as one CSV row gives it.
struct LayerShape {
  int64_t heads = 0, kv_heads = 0, hidden = 0, mlp = 0, tokens = 0;
  int tp = 1;
  bool gated = true;
  // An input_layernorm column but no post_attention_layernorm: Vidur's GPTBlock without a second norm (phi-2's
  // parallel attention), whose residual is attention output + MLP output + input: two binary adds in one timed
  // region.
  bool parallel_block = false;
};

// The work of one Vidur operator on one GPU (docs/llm.md, "ridge calibrate on Vidur's profiles").
void assign_work(LlmOpMeasurement& m, const LayerShape& s) {
  const int64_t T = s.tokens, h = s.hidden, hd = s.hidden / s.heads, tp = s.tp;
  const int64_t heads = s.heads / tp, kv = std::max<int64_t>(1, s.kv_heads / tp), mlp = s.mlp / tp;
  auto gemm = [&](int64_t k, int64_t n) {
    m.m = T, m.k = k, m.n = n;
    m.flops = Count{2} * T * k * n;
    m.bytes = kHalf * (Count{T} * k + Count{k} * n + Count{T} * n);
  };
  auto elementwise = [&](Count flops, Count read, Count written) {
    m.flops = flops;
    m.bytes = kHalf * (read + written);
  };
  const Count th = Count{T} * h;
  if (m.op == "attn_pre_proj") gemm(h, (heads + 2 * kv) * hd);
  else if (m.op == "attn_post_proj") gemm(heads * hd, h);
  else if (m.op == "mlp_up_proj") gemm(h, (s.gated ? 2 : 1) * mlp);
  else if (m.op == "mlp_down_proj") gemm(mlp, h);
  else if (m.op == "input_layernorm" || m.op == "post_attention_layernorm") elementwise(4 * th, th + h, th);
  else if (m.op == "attn_rope") {  // q and k rotated in place; cos/sin rows of head_dim per token read
    const Count e = Count{T} * (heads + kv) * hd;
    elementwise(3 * e, e + Count{T} * hd, e);
  } else if (m.op == "mlp_act") {  // SiLU(gate) x up
    const Count e = Count{T} * mlp;
    elementwise(5 * e, (s.gated ? 2 : 1) * e, e);
  } else if (m.op == "add" && s.parallel_block) {  // (attn + mlp) + residual: two kernels, a temporary between
    elementwise(2 * th, 4 * th, 2 * th);
    m.kernels = 2;
  } else if (m.op == "add") elementwise(th, 2 * th, th);
  else if (m.op == "emb") {  // the gathered rows, read and written, plus the int64 token ids
    m.flops = 0;
    m.bytes = kHalf * 2 * th + Count{8} * T;
  }
}

}  // namespace

std::vector<LlmOpMeasurement> read_vidur_op_csv(const std::string& path) {
  std::stringstream in(model_detail::read_text_file(path, "operator measurements"));
  std::string line;
  if (!std::getline(in, line)) throw Error(fmt::format("{}: empty file", path));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = model_detail::split_csv_line(line);
  auto column = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw Error(fmt::format("{}: no column '{}' (not a Vidur mlp.csv)", path, name));
    return static_cast<size_t>(it - header.begin());
  };
  const size_t heads = column("n_head"), kv = column("n_kv_head"), hidden = column("n_embd"),
               mlp = column("n_expanded_embd"), gated = column("use_gated_mlp"), tokens = column("num_tokens"),
               tp = column("num_tensor_parallel_workers");
  std::vector<std::pair<const VidurOp*, size_t>> ops;
  for (const VidurOp& op : kVidurOps) {
    auto it = std::find(header.begin(), header.end(), fmt::format("time_stats.{}.median", op.name));
    if (it != header.end()) ops.emplace_back(&op, static_cast<size_t>(it - header.begin()));
  }
  if (ops.empty()) throw Error(fmt::format("{}: no time_stats.OP.median column of a known operator", path));
  auto has = [&](const char* name) { return std::find(header.begin(), header.end(), name) != header.end(); };
  const bool parallel_block =
      has("time_stats.input_layernorm.median") && !has("time_stats.post_attention_layernorm.median");
  const std::string family = identity_from_file_name(path).device;  // "a100_...csv" -> a100
  std::vector<LlmOpMeasurement> out;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> cells = model_detail::split_csv_line(line);
    auto cell = [&](size_t c) -> const std::string& {
      if (c >= cells.size()) throw Error(fmt::format("{}:{}: {}: missing", path, line_no, header[c]));
      return cells[c];
    };
    auto whole = [&](size_t c) {
      const double v = model_detail::csv_number(cell(c), fmt::format("{}:{}: {}", path, line_no, header[c]));
      if (v < 1 || v != static_cast<double>(static_cast<int64_t>(v)))
        throw Error(fmt::format("{}:{}: {}: '{}' is not a positive whole number", path, line_no, header[c], cell(c)));
      return static_cast<int64_t>(v);
    };
    LayerShape s;
    s.heads = whole(heads), s.kv_heads = whole(kv), s.hidden = whole(hidden), s.mlp = whole(mlp);
    s.tokens = whole(tokens), s.tp = static_cast<int>(whole(tp));
    const std::string g = ascii_lower(cell(gated));
    if (g != "true" && g != "false")
      throw Error(fmt::format("{}:{}: use_gated_mlp: '{}' is not True or False", path, line_no, cell(gated)));
    s.gated = g == "true";
    s.parallel_block = parallel_block;
    if (s.hidden % s.heads != 0 || s.heads % s.tp != 0 || s.mlp % s.tp != 0)
      throw Error(fmt::format("{}:{}: {} heads, hidden {} and MLP width {} do not split over {} GPUs", path, line_no,
                              s.heads, s.hidden, s.mlp, s.tp));
    for (const auto& [op, col] : ops) {
      LlmOpMeasurement m;
      m.file = path, m.line = line_no, m.device_family = family, m.op = op->name, m.op_class = op->op_class;
      m.tokens = s.tokens, m.tp = s.tp;
      const std::string where = fmt::format("{}:{}: {}", path, line_no, header[col]);
      m.time_s = model_detail::csv_number(cell(col), where) * 1e-3;  // Vidur records milliseconds
      if (!(m.time_s > 0)) throw Error(where + ": time must be positive");
      assign_work(m, s);
      out.push_back(std::move(m));
    }
  }
  if (out.empty()) throw Error(fmt::format("{}: no measurements", path));
  return out;
}

std::pair<std::vector<LlmOpMeasurement>, std::vector<LlmOpMeasurement>> LlmHoldOut::split(
    const std::vector<LlmOpMeasurement>& all) const {
  std::function<bool(const LlmOpMeasurement&)> held;
  auto number_after = [&](size_t at) {
    try {
      size_t used = 0;
      const long long v = std::stoll(rule.substr(at), &used);
      if (used == rule.size() - at && v >= 0) return static_cast<int64_t>(v);
    } catch (const std::exception&) {
    }
    throw UsageError(fmt::format("--hold-out {}: expected a whole number after '{}'", rule, rule.substr(0, at)));
  };
  if (rule.empty()) {
    held = [](const LlmOpMeasurement&) { return false; };
  } else if (rule.rfind("tp=", 0) == 0) {
    const int64_t tp = number_after(3);
    held = [tp](const LlmOpMeasurement& m) { return m.tp == tp; };
  } else if (rule.rfind("tokens>", 0) == 0) {
    const int64_t t = number_after(7);
    held = [t](const LlmOpMeasurement& m) { return m.tokens > t; };
  } else if (rule == "odd-tokens") {
    std::set<int64_t> distinct;
    for (const auto& m : all) distinct.insert(m.tokens);
    std::set<int64_t> odd;
    size_t i = 0;
    for (int64_t t : distinct)
      if (i++ % 2 == 1) odd.insert(t);
    held = [odd](const LlmOpMeasurement& m) { return odd.count(m.tokens) > 0; };
  } else {
    throw UsageError(fmt::format("--hold-out {}: unknown rule (use tp=N, tokens>N or odd-tokens)", rule));
  }
  std::pair<std::vector<LlmOpMeasurement>, std::vector<LlmOpMeasurement>> out;
  for (const auto& m : all) (held(m) ? out.second : out.first).push_back(m);
  if (out.first.empty()) throw Error(fmt::format("--hold-out {}: holds out every measurement; nothing left to fit", rule));
  if (!rule.empty() && out.second.empty()) throw Error(fmt::format("--hold-out {}: holds out no measurement", rule));
  return out;
}

namespace {

// The measurements as calibration samples. Only GEMMs are fitted on their FLOPs: the other kernels are
// memory-bound, their FLOPs a counting convention that would otherwise stand in for bytes (collinear) and mis-time
// other elementwise ops.
std::vector<Sample> operator_samples(const std::vector<LlmOpMeasurement>& ms) {
  std::vector<Sample> samples;
  for (const auto& m : ms)
    samples.push_back({fmt::format("{}@tp{}", m.file, m.tp), m.op, m.op_class, m.op_class == "gemm" ? m.flops : 0,
                       m.bytes, m.time_s, std::nullopt, m.kernels, std::nullopt});
  return samples;
}

}  // namespace

Calibration fit_llm_calibration(const std::vector<LlmOpMeasurement>& ms, const Device& d, Precision p) {
  Calibration c = fit_operator_classes(ms, d, p);
  // GEMM kernels overlap their loads with their math: where the max model fits the GEMMs better than the sum,
  // the gemm class takes it (one sum-model PPP must also absorb the memory term of mid-sized GEMMs, which makes
  // the large, compute-bound ones too fast; docs/llm.md "Calibration on measured operators").
  if (auto gemm = c.by_class.find("gemm"); gemm != c.by_class.end() && gemm->second.samples > 0) {
    std::vector<Sample> gemms;
    for (Sample& s : operator_samples(ms))
      if (s.op_class == "gemm") gemms.push_back(std::move(s));
    const MaxFit max = fit_max_model(gemms, d.require_peak(p), d.dram_bandwidth(), gemm->second);
    if (max.loss < max.sum_model_loss) gemm->second = max.factors;
  }
  return c;
}

Calibration fit_operator_classes(const std::vector<LlmOpMeasurement>& ms, const Device& d, Precision p) {
  Calibration c = calibrate(operator_samples(ms), d.require_peak(p), d.dram_bandwidth());
  // Softmax and reductions are memory-bound kernels the profiles do not time: the elementwise factors.
  if (auto it = c.by_class.find("elementwise"); it != c.by_class.end())
    for (const char* cls : {"softmax", "reduction"}) c.by_class.emplace(cls, it->second);
  c.device = d.id;
  c.precision = std::string(precision_info(p).name);
  c.device_family = device_family(d.id);
  return c;
}

double llm_op_time(Count flops, Count bytes, const std::string& op_class, int kernels, double peak, double bw,
                   const Calibration* cal, Bound* bound, Count cache_bytes) {
  if (!cal) {
    const RooflinePoint r = roofline_point(flops, bytes, peak, bw);
    if (bound) *bound = r.bound;
    return r.time_lower_bound_s;
  }
  PredictOptions hw;
  hw.peak_flop_per_s = peak;
  hw.bandwidth_bytes_per_s = bw;
  hw.combine = cal->combine;
  const PhaseTime t = phase_time(flops, bytes, 0, kernels, cal->for_class(op_class), hw);
  if (bound) *bound = t.bound;
  const double dram_floor_s = cache_bytes > 0 && bytes > cache_bytes ? to_double(bytes - cache_bytes) / bw : 0.0;
  if (dram_floor_s > t.time_s) {
    if (bound) *bound = Bound::Memory;
    return dram_floor_s;
  }
  return t.time_s;
}

std::string llm_time_label(const std::optional<Calibration>& cal) {
  if (!cal) return "upper bound (uncalibrated)";
  return fmt::format("calibrated ({})", cal->file.empty() ? cal->device : std::filesystem::path(cal->file).filename().string());
}

std::string llm_time_kind_key(const std::optional<Calibration>& cal) {
  return std::string(time_kind_key(cal ? TimeKind::Calibrated : TimeKind::UpperBound));
}

LlmEvaluation evaluate_llm_calibration(const std::vector<LlmOpMeasurement>& ms, const Calibration& cal, const Device& d,
                                       Precision p) {
  const double peak = d.require_peak(p), bw = d.dram_bandwidth();
  LlmEvaluation e;
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_op, by_class;
  for (const auto& m : ms) {
    LlmOpError r;
    r.m = &m;
    if (cal.gemm_shapes.empty()) {
      r.predicted_s = llm_op_time(m.flops, m.bytes, m.op_class, m.kernels, peak, bw, &cal);
    } else {  // a CNN calibration: GEMMs at their shape's PPP
      LayerWork w;
      w.op_class = m.op_class, w.flops = m.flops, w.bytes = m.bytes, w.gemm_m = m.m, w.gemm_n = m.n, w.gemm_k = m.k;
      PredictOptions hw;
      hw.peak_flop_per_s = peak, hw.bandwidth_bytes_per_s = bw, hw.combine = cal.combine;
      r.predicted_s = phase_time(m.flops, m.bytes, 0, m.kernels, cal.for_layer(w), hw).time_s;
    }
    r.error = (r.predicted_s - m.time_s) / m.time_s;
    all.push_back(std::abs(r.error));
    by_op[m.op].push_back(std::abs(r.error));
    by_class[m.op_class].push_back(std::abs(r.error));
    e.ops.push_back(r);
  }
  e.all = error_stats(all);
  for (auto& [k, v] : by_op) e.by_op[k] = error_stats(v);
  for (auto& [k, v] : by_class) e.by_class[k] = error_stats(v);
  return e;
}

std::optional<Calibration> llm_calibration(const Device& d, Precision p, const std::string& which) {
  if (which == "none") return std::nullopt;
  if (which == "builtin" || which.empty()) {
    std::optional<Calibration> builtin = builtin_llm_calibration(d.id, p);
    if (builtin) cap_at_achieved_flops(*builtin, d, p);
    return builtin;
  }
  Calibration cal = read_calibration(which);
  // fp16 and bf16 share the tensor-core peak on the calibrated devices: check the family only.
  const auto fitted = parse_precision(cal.precision);
  const bool half = (p == Precision::FP16 || p == Precision::BF16) && fitted &&
                    (*fitted == Precision::FP16 || *fitted == Precision::BF16);
  // serve and train take no --force: the refusal names the way that works instead.
  check_calibration_applies(cal, d.id, half ? *fitted : p, false,
                            "serve and train apply an LLM calibration of the device's own family and precision; fit "
                            "one with `ridge calibrate`",
                            "llm");
  cap_at_achieved_flops(cal, d, p);
  return cal;
}

std::optional<Calibration> builtin_llm_calibration(const std::string& device_id, Precision p) {
  auto half = [](const std::string& s) { return s == "fp16" || s == "bf16"; };
  const std::string family = device_family(device_id), precision(precision_info(p).name);
  return find_calibration(builtin_data_dir("calibrations") + "/llm", [&](const Calibration& c) {
    return c.device_family == family && (c.precision == precision || (half(c.precision) && half(precision)));
  });
}

std::optional<AllReduceFit> builtin_tp_allreduce_fit(const std::string& device_id, int workers) {
  const std::string file = builtin_data_dir("calibrations") + "/allreduce-vidur.json";
  std::error_code ec;
  if (workers < 2 || !std::filesystem::exists(file, ec)) return std::nullopt;
  for (const AllReduceFit& f : read_allreduce_fits(file))
    if (f.workers == workers && f.devices_per_node == workers && device_family(f.device) == device_family(device_id))
      return f;
  return std::nullopt;
}

std::optional<bool> parse_mla(std::string_view name) {
  if (name == "hf") return false;
  if (name == "latent") return true;
  return std::nullopt;
}

std::optional<bool> parse_moe(std::string_view name) {
  if (name == "eager") return false;
  if (name == "grouped") return true;
  return std::nullopt;
}

std::optional<Precision> parse_llm_compute(std::string_view name) {
  if (name == "fp16") return Precision::FP16;
  if (name == "bf16") return Precision::BF16;
  if (name == "fp32") return Precision::FP32;
  return std::nullopt;
}

std::optional<AttentionChoice> parse_attention(std::string_view name) {
  if (name == "eager") return AttentionChoice{false, ""};
  if (name == "fused") return AttentionChoice{true, ""};
  if (name == "flash2") return AttentionChoice{true, "flash-attention-2"};
  if (name == "flash1") return AttentionChoice{true, "flash-attention-1"};
  return std::nullopt;
}

std::optional<AttentionKernelEfficiency> builtin_attention_efficiency(const std::string& kernel,
                                                                      const std::string& device_id) {
  if (kernel.empty()) return std::nullopt;
  const std::string path = builtin_data_dir("calibrations") + "/kernels/attention.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const nlohmann::json j = model_detail::parse_json(model_detail::read_text_file(path, "attention kernel file"), path);
  if (!j.is_object() || j.value("format", "") != "ridge-attention-kernels" || !j.contains("kernels") ||
      !j["kernels"].is_array())
    throw Error(path + ": not a ridge-attention-kernels file (format, kernels[])");
  const std::string family = device_family(device_id);
  for (const auto& k : j["kernels"]) {
    if (!k.is_object() || !k.contains("ppp") || !k["ppp"].is_number() || k.value("kernel", "").empty() ||
        k.value("device_family", "").empty() || k.value("source", "").empty())
      throw Error(path + ": every kernel needs kernel, device_family, ppp and source");
    AttentionKernelEfficiency e{k.value("kernel", ""), k.value("device_family", ""), k["ppp"].get<double>(),
                                k.value("source", "")};
    if (!(e.ppp > 0 && e.ppp <= 1)) throw Error(fmt::format("{}: {} on {}: ppp must be in (0, 1]", path, e.kernel, e.device_family));
    if (e.kernel == kernel && e.device_family == family) return e;
  }
  return std::nullopt;
}

Calibration with_attention_kernel(Calibration cal, const AttentionKernelEfficiency& k) {
  Efficiency e = cal.for_class("gemm");
  e.ppp = k.ppp;
  cal.by_class["attention"] = e;
  return cal;
}

std::string moe_experts_note(bool moe, bool grouped_experts) {
  if (!moe) return "";
  if (grouped_experts)
    return "MoE experts (--moe grouped): each op of a layer's routed experts is one grouped kernel with one launch, "
           "the routing weight in the down projection's epilogue and the top-k sum one kernel, as vLLM's fused_moe "
           "and Megatron-LM's --moe-grouped-gemm run them";
  return "MoE experts (--moe eager): HF's loop, one kernel and one launch overhead per routed expert and op (they "
         "can dominate with many small experts); --moe grouped times them as one grouped kernel per op (vLLM, Megatron-LM)";
}

std::string attention_kernel_note(const std::string& kernel, const std::optional<AttentionKernelEfficiency>& efficiency,
                                  bool calibrated, const std::string& device_id) {
  if (kernel.empty()) return "";
  if (efficiency)
    return fmt::format("attention core: {} at {:.1f} % of the tensor peak on {} ({})", kernel, 100 * efficiency->ppp,
                       efficiency->device_family, efficiency->source);
  if (!calibrated)
    return fmt::format("attention core: {} timed at the peak like every op (uncalibrated upper bound); its published "
                       "utilization applies only with a calibration", kernel);
  return fmt::format("attention core: no published {} utilization for {} (data/calibrations/kernels/attention.json): "
                     "timed at the GEMM factors, an ideal fused kernel", kernel, device_id);
}

LlmCalibrationChoice llm_calibration_for(const Device& d, Precision p, int tp, const std::string& which) {
  LlmCalibrationChoice c{llm_calibration(d, p, which), std::nullopt};
  if (c.calibration) c.tp_allreduce = builtin_tp_allreduce_fit(d.id, tp);
  return c;
}

}  // namespace ridge
