// PALEO-style time prediction: per layer, compute and memory terms scaled by PPP factors, combined by sum
// (PALEO) or max (roofline overlap), plus per-kernel overhead; backward and the weight update for training.
#include <algorithm>
#include <cmath>

#include "ridge/error.hpp"
#include "ridge/predict.hpp"

namespace ridge {

std::string_view combine_name(Combine c) { return c == Combine::Sum ? "sum" : "max"; }

std::optional<Combine> parse_combine(std::string_view name) {
  if (name == "sum" || name == "paleo") return Combine::Sum;
  if (name == "max" || name == "roofline") return Combine::Max;
  return std::nullopt;
}

std::string_view time_kind_label(TimeKind k) {
  switch (k) {
    case TimeKind::Calibrated: return "calibrated";
    case TimeKind::HandSet: return "estimate (hand-set factors, uncalibrated)";
    case TimeKind::UpperBound: return "upper bound (uncalibrated)";
  }
  RIDGE_ASSERT(false, "unknown time kind");
  return {};
}

std::string_view time_kind_key(TimeKind k) {
  switch (k) {
    case TimeKind::Calibrated: return "calibrated";
    case TimeKind::HandSet: return "hand_set";
    case TimeKind::UpperBound: return "upper_bound";
  }
  RIDGE_ASSERT(false, "unknown time kind");
  return {};
}

TimeKind time_kind(const PredictOptions& opt) {
  const Calibration& c = opt.calibration;
  if (c.fitted()) return TimeKind::Calibrated;
  const Efficiency& f = c.fallback;
  const bool peak_rates = f.ppp == 1.0 && f.ppp_mem == 1.0 && f.ppp_write.value_or(1.0) == 1.0 &&
                          f.overhead_s.value_or(0.0) == 0.0 && f.combine.value_or(Combine::Max) == Combine::Max &&
                          c.by_class.empty() && c.gemm_shapes.empty();
  return peak_rates && opt.combine == Combine::Max && opt.kernel_launch_s == 0.0 ? TimeKind::UpperBound
                                                                                  : TimeKind::HandSet;
}

const Efficiency* Calibration::find(const std::string& op_class) const {
  if (auto it = by_class.find(op_class); it != by_class.end()) return &it->second;
  const std::string_view family = kernel_family_of_op_class(op_class);
  if (auto it = by_class.find(std::string(family)); !family.empty() && it != by_class.end()) return &it->second;
  return nullptr;
}

const Efficiency& Calibration::for_class(const std::string& op_class) const {
  const Efficiency* e = find(op_class);
  return e ? *e : fallback;
}

bool Calibration::fitted() const {
  if (fallback.samples > 0) return true;
  for (const auto& [cls, e] : by_class)
    if (e.samples > 0) return true;
  return false;
}

std::vector<Efficiency*> Calibration::all_factors() {
  std::vector<Efficiency*> all{&fallback};
  for (auto& [cls, e] : by_class) all.push_back(&e);
  return all;
}

namespace {

// x / (factor x rate), where an infinite factor (a term fitted to zero) gives 0.
double scaled_time(double amount, double factor, double rate) {
  if (amount <= 0 || std::isinf(factor)) return 0.0;
  RIDGE_ASSERT(factor > 0 && rate > 0, "efficiency factors and hardware rates must be positive");
  return amount / (factor * rate);
}

// What bounds a phase: its largest term (none when it takes no time).
Bound bound_of(const PhaseTime& t) {
  if (t.time_s <= 0) return Bound::None;
  if (t.overhead_s > std::max(t.compute_s, t.memory_s)) return Bound::Overhead;
  return t.compute_s >= t.memory_s ? Bound::Compute : Bound::Memory;
}

// Two kernels run one after the other: their terms add.
PhaseTime add_phases(const PhaseTime& a, const PhaseTime& b) {
  PhaseTime t{a.compute_s + b.compute_s, a.memory_s + b.memory_s, a.overhead_s + b.overhead_s, a.time_s + b.time_s,
              Bound::None, a.bytes + b.bytes};
  t.bound = bound_of(t);
  return t;
}

// A phase that moves more than the L2 holds takes at least its spill over DRAM bandwidth (PredictOptions::cache_bytes),
// as llm_op_time floors LLM ops: below it, the phase is timed at the floor and memory-bound.
void dram_floor(PhaseTime& t, const PredictOptions& opt) {
  if (t.bytes <= opt.cache_bytes) return;
  const double floor_s = to_double(t.bytes - opt.cache_bytes) / opt.bandwidth_bytes_per_s;
  if (t.time_s >= floor_s) return;
  t.memory_s = std::max(t.memory_s, floor_s);
  t.time_s = floor_s;
  t.bound = Bound::Memory;
}

}  // namespace

PhaseTime phase_time(Count flops, Count bytes, Count bytes_written, int kernels, const Efficiency& eff,
                     const PredictOptions& opt) {
  RIDGE_ASSERT(bytes_written >= 0 && bytes_written <= bytes, "written bytes are part of the bytes moved");
  PhaseTime t;
  const double flop_rate = eff.vector_pipe && opt.pipe_peaks.fp32 > 0 ? opt.pipe_peaks.fp32 : opt.peak_flop_per_s;
  t.compute_s = scaled_time(to_double(flops), eff.ppp, flop_rate);
  t.bytes = bytes;
  t.memory_s = scaled_time(to_double(bytes - bytes_written), eff.ppp_mem, opt.bandwidth_bytes_per_s) +
               scaled_time(to_double(bytes_written), eff.ppp_write.value_or(eff.ppp_mem), opt.bandwidth_bytes_per_s);
  t.overhead_s = kernels * eff.overhead_s.value_or(opt.kernel_launch_s);
  const Combine combine = eff.combine.value_or(opt.combine);
  const double work = combine == Combine::Sum ? t.compute_s + t.memory_s : std::max(t.compute_s, t.memory_s);
  t.time_s = work + t.overhead_s;
  t.bound = bound_of(t);
  return t;
}

Prediction predict(const std::vector<LayerWork>& layers, const PredictOptions& opt) {
  Prediction p;
  p.kind = time_kind(opt);
  const bool bound = p.kind == TimeKind::UpperBound;
  Count params = 0;
  for (const LayerWork& w : layers) {
    LayerPrediction lp;
    lp.name = w.name;
    lp.op_class = w.op_class;
    lp.costed = w.costed;
    lp.reason = w.reason;
    if (!w.costed) {
      ++p.uncosted_layers;
      p.layers.push_back(std::move(lp));
      continue;
    }
    const Efficiency eff = opt.calibration.for_layer(w, &lp.calibration);
    lp.forward = phase_time(w.flops, w.bytes, w.bytes_written, w.kernels, eff, opt);
    if (opt.training) {
      // Backward runs where a gradient flows: one kernel per gradient computed (input, weight; at least one),
      // reading the output gradient and the saved input and writing the gradients: about twice the forward
      // traffic, of which the gradients written are about the forward reads (an approximation, see docs/model.md).
      const Count bwd_flops = w.bwd_input_flops + w.bwd_weight_flops;
      const int gradients = (w.bwd_input_flops > 0 ? 1 : 0) + (w.bwd_weight_flops > 0 ? 1 : 0);
      if (bound) {
        // The bound charges what every backward must move at least: a layer that computes gradients reads the
        // output gradient (the forward output's size) and writes the input gradients (its inputs' size), which
        // is no less than the forward traffic; a pass-through (Add, views: no backward FLOPs) may move nothing.
        if (bwd_flops > 0) lp.backward = phase_time(bwd_flops, w.bytes, w.bytes - w.bytes_written, 0, eff, opt);
      } else if ((w.needs_backward || bwd_flops > 0) && (w.flops > 0 || w.bytes > 0)) {
        const int kernels = w.kernels > 0 ? std::max(1, gradients) : 0;  // hand-given work has no launches
        const auto gemms = gradients == 2 ? opt.calibration.backward_gemms(w) : std::nullopt;
        if (gemms) {  // two GEMMs at their own shapes, each with half the traffic
          const Count written = w.bytes - w.bytes_written, half = written / 2;
          lp.backward = add_phases(
              phase_time(w.bwd_input_flops, w.bytes, half, kernels / 2, gemms->input_gradient, opt),
              phase_time(w.bwd_weight_flops, w.bytes, written - half, kernels - kernels / 2, gemms->weight_gradient, opt));
        } else {
          lp.backward = phase_time(bwd_flops, 2 * w.bytes, w.bytes - w.bytes_written, kernels, eff, opt);
        }
      }
      params += w.params;
    }
    if (opt.cache_bytes > 0) {
      dram_floor(lp.forward, opt);
      dram_floor(lp.backward, opt);
    }
    lp.time_s = lp.forward.time_s + lp.backward.time_s;
    lp.bound = lp.backward.time_s > lp.forward.time_s ? lp.backward.bound : lp.forward.bound;
    p.forward_s += lp.forward.time_s;
    p.backward_s += lp.backward.time_s;
    p.layers.push_back(std::move(lp));
  }
  if (opt.training && params > 0) {
    // The optimizer step in one fused kernel (optimizer_step: SGD reads parameter and gradient, writes the parameter).
    const OptimizerStep step = optimizer_step(opt.optimizer);
    const Count tensor = params * opt.bytes_per_param;
    p.update_s = phase_time(step.flops_per_param * params, (step.tensors_read + step.tensors_written) * tensor,
                            step.tensors_written * tensor, 1, opt.calibration.for_class("Update"), opt)
                     .time_s;
  }
  p.total_time_s = p.forward_s + p.backward_s + p.update_s;
  p.calibrated = p.kind == TimeKind::Calibrated;
  p.samples_per_s = p.total_time_s > 0 ? static_cast<double>(opt.batch) / p.total_time_s : 0.0;
  return p;
}

}  // namespace ridge

namespace ridge {

PredictOptions predict_options(const Device& d, const PredictSettings& s, std::vector<std::string>* forced) {
  PredictOptions o;
  o.peak_flop_per_s = d.require_peak(s.precision);
  o.bandwidth_bytes_per_s = d.bandwidth(s.level);
  const bool vector_precision = s.precision == Precision::FP32 || s.precision == Precision::FP64;
  o.pipe_peaks.tensor = vector_precision ? d.peak(Precision::FP16).value_or(0) : o.peak_flop_per_s;
  o.pipe_peaks.fp32 = d.peak(Precision::FP32).value_or(0);
  o.pipe_peaks.fp64 = d.peak(Precision::FP64).value_or(0);
  o.training = s.training;
  o.bytes_per_param = s.bytes_per_param;
  o.optimizer = s.optimizer;
  o.batch = s.batch;
  if (s.calibration == "none") {
  } else if (!s.calibration.empty()) {
    o.calibration = read_calibration(s.calibration);
    const auto lines =
        check_calibration_applies(o.calibration, d.id, s.precision, s.force, "use --force to apply it anyway", "cnn");
    if (forced) forced->insert(forced->end(), lines.begin(), lines.end());
  } else if (!s.ppp && !s.ppp_mem) {
    if (auto builtin = builtin_calibration(d.id, s.precision)) o.calibration = *builtin;
  }
  cap_at_achieved_flops(o.calibration, d, s.precision);
  if (s.ppp) o.calibration.fallback.ppp = *s.ppp;
  if (s.ppp_mem) o.calibration.fallback.ppp_mem = *s.ppp_mem, o.calibration.fallback.ppp_write.reset();
  // Fitted factors come with the model they were fitted in (its combine, the device's launch overhead); without
  // them, what is not set by hand is the roofline bound's: max(compute, memory), no launch overhead.
  const bool fitted = o.calibration.fitted();
  o.combine = s.combine.value_or(fitted ? o.calibration.combine : Combine::Max);
  o.kernel_launch_s = s.kernel_launch_s.value_or(fitted ? d.kernel_launch_s : 0.0);
  // A GPU's L2 is its last cache level (a CPU's L2 is not: its L3 would still serve the spill).
  if (fitted && s.level == "dram" && d.kind == "gpu") o.cache_bytes = d.l2_bytes;
  // What the user sets wins over what a calibration fitted per class (else --combine and --launch-overhead would
  // be printed and silently not used).
  Calibration& c = o.calibration;
  for (Efficiency* e : c.all_factors()) {
    if (s.combine) e->combine.reset();
    if (s.kernel_launch_s) e->overhead_s.reset();
  }
  if (s.combine) c.gemm_shapes.combine = *s.combine;
  return o;
}

}  // namespace ridge
