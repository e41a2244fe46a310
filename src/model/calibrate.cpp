// Calibration: fit PPP factors (compute, memory reads, memory writes) and a per-kernel overhead per op class by
// non-negative least squares (error symmetric in predicted/measured), check them (before/after, leave-one-model-out), and read/write calibration files.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include <nlopt.h>

#include "ridge/error.hpp"
#include "ridge/predict.hpp"
#include "text_util.hpp"

namespace ridge {
using nlohmann::json;
namespace {

constexpr int kTerms = 4;  // seconds per peak-FLOP, per peak-byte read, per peak-byte written, per kernel
constexpr int kOverhead = kTerms - 1;
using Vec = std::array<double, kTerms>;

// Solves the normal equations restricted to the terms in `mask` (Gaussian elimination with partial pivoting).
// Returns false when the restricted system is singular.
bool solve_subset(const std::array<Vec, kTerms>& ata, const Vec& atb, unsigned mask, Vec& x) {
  std::vector<int> idx;
  for (int i = 0; i < kTerms; ++i)
    if (mask & (1u << i)) idx.push_back(i);
  const size_t n = idx.size();
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1));
  for (size_t r = 0; r < n; ++r) {
    for (size_t c = 0; c < n; ++c) m[r][c] = ata[idx[r]][idx[c]];
    m[r][n] = atb[idx[r]];
  }
  for (size_t col = 0; col < n; ++col) {
    size_t piv = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::abs(m[r][col]) > std::abs(m[piv][col])) piv = r;
    if (std::abs(m[piv][col]) < 1e-12) return false;
    std::swap(m[piv], m[col]);
    for (size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = m[r][col] / m[col][col];
      for (size_t c = col; c <= n; ++c) m[r][c] -= f * m[col][c];
    }
  }
  x = {};
  for (size_t r = 0; r < n; ++r) x[idx[r]] = m[r][n] / m[r][r];
  return true;
}

// Non-negative weighted least squares: minimises sum (w_i (x_i . c - t_i))^2 over c >= 0. Tries every subset
// of terms (the active-set solution of a 4-variable NNLS is one of them) and keeps the best feasible one.
Vec weighted_nnls(const std::vector<Vec>& x, const std::vector<double>& t, const std::vector<double>& w) {
  Vec scale{};  // column RMS of the weighted rows, so that seconds-per-FLOP and per-kernel terms are comparable
  for (size_t n = 0; n < x.size(); ++n)
    for (int i = 0; i < kTerms; ++i) scale[i] += (w[n] * x[n][i]) * (w[n] * x[n][i]);
  for (double& s : scale) s = s > 0 ? std::sqrt(s / x.size()) : 0;
  auto scaled = [&](size_t n, int i) { return scale[i] > 0 ? w[n] * x[n][i] / scale[i] : 0.0; };
  std::array<Vec, kTerms> ata{};
  Vec atb{};
  for (size_t n = 0; n < x.size(); ++n)
    for (int i = 0; i < kTerms; ++i) {
      atb[i] += scaled(n, i) * w[n] * t[n];
      for (int k = 0; k < kTerms; ++k) ata[i][k] += scaled(n, i) * scaled(n, k);
    }
  // When terms are collinear (every elementwise layer of a class moves 8 bytes per FLOP, say), several subsets
  // fit equally well but extrapolate differently. Ties go to the subset whose terms carry the most time at
  // PPP 1: the roofline's own answer to what limits these layers (memory for elementwise ops).
  Vec at_peak{};
  for (size_t n = 0; n < x.size(); ++n)
    for (int i = 0; i < kTerms; ++i) at_peak[i] += w[n] * x[n][i];
  double total_ss = 0;
  for (size_t n = 0; n < x.size(); ++n) total_ss += (w[n] * t[n]) * (w[n] * t[n]);
  Vec best{};
  double best_sse = std::numeric_limits<double>::infinity(), best_weight = -1;
  for (unsigned mask = 1; mask < (1u << kTerms); ++mask) {
    Vec c;
    if (!solve_subset(ata, atb, mask, c)) continue;
    if (std::any_of(c.begin(), c.end(), [](double v) { return v < 0; })) continue;
    double sse = 0, weight = 0;
    for (size_t n = 0; n < x.size(); ++n) {
      double r = -w[n] * t[n];
      for (int i = 0; i < kTerms; ++i) r += scaled(n, i) * c[i];
      sse += r * r;
    }
    for (int i = 0; i < kOverhead; ++i)  // the overhead term has no roofline share
      if (c[i] > 0) weight += at_peak[i];
    const double tie = 1e-6 * best_sse + 1e-12 * total_ss;  // exact fits tie at rounding level
    if (sse < best_sse - tie || (sse <= best_sse + tie && weight > best_weight))
      best_sse = std::min(sse, best_sse), best = c, best_weight = weight;
  }
  for (int i = 0; i < kTerms; ++i) best[i] = scale[i] > 0 ? best[i] / scale[i] : 0;
  return best;
}

// The symmetric error of one prediction, (sqrt(p) - 1/sqrt(p))^2 with p = predicted/measured, written as
// (predicted - measured)^2 / (predicted x measured): over- and under-prediction by the same factor weigh the same.
double symmetric_error(double predicted, double measured) {
  return (predicted - measured) * (predicted - measured) / (predicted * measured);
}

// Minimises the symmetric error sum (sqrt(p) - 1/sqrt(p))^2 of the ratios p = predicted/measured, so over- and
// under-prediction by the same factor weigh the same (plain relative error caps under-prediction at 1 and lets
// a few tiny layers dictate the fit), by iteratively reweighted least squares with weights
// 1/sqrt(measured x predicted); the first round (weights 1/measured) is plain relative error, and exact data is
// recovered exactly. Returns the coefficients and the error they leave.
std::pair<Vec, double> fit_terms(const std::vector<Vec>& x, const std::vector<double>& t) {
  std::vector<double> w(t.size());
  for (size_t n = 0; n < t.size(); ++n) w[n] = 1.0 / t[n];
  auto predicted = [&](size_t n, const Vec& c) {
    double p = 0;
    for (int i = 0; i < kTerms; ++i) p += x[n][i] * c[i];
    return std::max(p, 1e-3 * t[n]);
  };
  Vec c{};
  for (int round = 0; round < 30; ++round) {
    const Vec next = weighted_nnls(x, t, w);
    double change = 0;
    for (int i = 0; i < kTerms; ++i) change = std::max(change, std::abs(next[i] - c[i]) / std::max(std::abs(next[i]), 1e-300));
    c = next;
    if (change < 1e-9) break;
    for (size_t n = 0; n < x.size(); ++n) w[n] = 1.0 / std::sqrt(t[n] * predicted(n, c));
  }
  double loss = 0;
  for (size_t n = 0; n < x.size(); ++n) loss += symmetric_error(predicted(n, c), t[n]);
  return {c, loss};
}

// A term (compute, reads, writes) whose time at PPP 1 is below this share of every measured time cannot be told
// from timing noise: fitting a factor to it explains launch overhead by it (ten A100 RNG kernels moving 128 DRAM
// bytes each in 4 us fitted PPP_mem 4e-5, which then priced a 41 KB elementwise kernel at 640 us instead of 6 us).
constexpr double kUnseenShare = 1e-3;

// Two terms whose columns (relative to the measured times) point the same way to within this cosine cannot be
// told apart by the data: the least-squares split between them follows noise (the eight V100 GEMM kernels of the
// DeepCAM profile move 1.4-1.6 times as long in FLOPs at peak as in bytes at peak, cosine 0.997, and the fit gave
// all their time to the bytes, none to the tensor cores).
constexpr double kCollinearCosine = 0.995;

// Of each pair of collinear terms (kCollinearCosine) the one with less time at PPP 1 is dropped (its factor
// fitted to 0): the roofline decides what limits these samples, as the exact-tie rule of weighted_nnls does.
void drop_collinear_terms(std::vector<Vec>& x, const std::vector<double>& t) {
  std::array<double, kOverhead> norm{}, at_peak{};
  for (size_t n = 0; n < x.size(); ++n)
    for (int i = 0; i < kOverhead; ++i) norm[i] += (x[n][i] / t[n]) * (x[n][i] / t[n]), at_peak[i] += x[n][i] / t[n];
  for (int i = 0; i < kOverhead; ++i)
    for (int k = i + 1; k < kOverhead; ++k) {
      if (norm[i] == 0 || norm[k] == 0) continue;
      double dot = 0;
      for (size_t n = 0; n < x.size(); ++n) dot += (x[n][i] / t[n]) * (x[n][k] / t[n]);
      if (dot / std::sqrt(norm[i] * norm[k]) < kCollinearCosine) continue;
      const int drop = at_peak[i] >= at_peak[k] ? k : i;
      for (Vec& v : x) v[drop] = 0;
      norm[drop] = 0;
    }
}

// Fits like fit_terms, but a term no sample shows (kUnseenShare) is priced at PPP 1 (coefficient 1, the roofline's
// own rate, as nothing measured says otherwise) and the others are fitted to the times less that; of collinear
// terms only the one the roofline says binds is fitted (drop_collinear_terms).
std::pair<Vec, double> fit_seen_terms(std::vector<Vec> x, const std::vector<double>& t) {
  std::vector<double> rest = t;
  std::array<bool, kOverhead> unseen{};
  for (int i = 0; i < kOverhead; ++i) {
    bool seen = false;
    for (size_t n = 0; n < x.size(); ++n) seen = seen || x[n][i] >= kUnseenShare * t[n];
    unseen[i] = !seen && std::any_of(x.begin(), x.end(), [&](const Vec& v) { return v[i] > 0; });
    if (unseen[i])
      for (size_t n = 0; n < x.size(); ++n) rest[n] -= x[n][i], x[n][i] = 0;
  }
  drop_collinear_terms(x, rest);
  auto fitted = fit_terms(x, rest);
  for (int i = 0; i < kOverhead; ++i)
    if (unseen[i]) fitted.first[i] = 1.0;
  return fitted;
}

// Fits time ~ a flops/peak + b bytes_read/bw + c bytes_written/bw + d with a, b, c, d >= 0. Reads and writes
// get separate factors only where the samples split their bytes and the split explains the times clearly
// better (1% less error) than one factor for all bytes; otherwise ppp_write stays unset (= ppp_mem), which
// is also the answer when reads and writes move in lockstep (elementwise ops) and cannot be told apart.
// Whether a class's PPP is a fraction of the vector pipe's peak: every sample counted its FLOPs per pipe and the
// vector pipes did more of them than the tensor cores (peak_equivalent_flops then timed them at pipes.fp32).
bool ran_on_vector_pipe(const std::vector<const Sample*>& samples, const PipePeaks& pipes) {
  if (!(pipes.fp32 > 0)) return false;
  Count vector = 0, tensor = 0;
  for (const Sample* s : samples) {
    if (!s->pipe_flops) return false;
    vector += s->pipe_flops->fp32 + s->pipe_flops->fp16;
    tensor += s->pipe_flops->tensor;
  }
  return vector > tensor;
}

Efficiency fit(const std::vector<const Sample*>& samples, double peak, double bw, const PipePeaks& pipes) {
  std::vector<Vec> merged, split;
  std::vector<double> t;
  bool any_split = false;
  for (const Sample* s : samples) {
    const Count written = s->bytes_written.value_or(0);
    any_split = any_split || written > 0;
    const double launches = s->kernels;
    const double compute = to_double(peak_equivalent_flops(*s, peak, pipes)) / peak;
    merged.push_back({compute, to_double(s->bytes) / bw, 0.0, launches});
    split.push_back({compute, to_double(s->bytes - written) / bw, to_double(written) / bw, launches});
    t.push_back(s->time_s);
  }
  auto [c, loss] = fit_seen_terms(merged, t);
  bool use_split = false;
  if (any_split) {
    auto [cs, loss_split] = fit_seen_terms(split, t);
    if (loss_split < 0.99 * loss) c = cs, use_split = true;
  }
  const double inf = std::numeric_limits<double>::infinity();
  Efficiency e;
  e.ppp = c[0] > 0 ? 1.0 / c[0] : inf;
  e.ppp_mem = c[1] > 0 ? 1.0 / c[1] : inf;
  if (use_split) e.ppp_write = c[2] > 0 ? 1.0 / c[2] : inf;
  e.overhead_s = c[kOverhead];
  e.samples = static_cast<int>(samples.size());
  e.vector_pipe = ran_on_vector_pipe(samples, pipes);
  return e;
}

double relative_error(double predicted, double measured) { return std::abs(predicted - measured) / measured; }

}  // namespace

Count peak_equivalent_flops(const Sample& s, double peak, const PipePeaks& pipes) {
  if (!s.pipe_flops) return s.flops;
  const PipeFlops& f = *s.pipe_flops;
  const std::pair<Count, double> parts[] = {{f.tensor, pipes.tensor}, {f.fp32 + f.fp16, pipes.fp32}, {f.fp64, pipes.fp64}};
  double scaled = 0;
  for (const auto& [flops, pipe_peak] : parts) {
    if (flops == 0) continue;
    if (!(pipe_peak > 0)) return s.flops;  // a pipe without a known peak: time every FLOP at `peak`
    scaled += to_double(flops) * (peak / pipe_peak);
  }
  if (!(scaled < 1e36)) return s.flops;  // beyond any kernel (and a Count): keep the counted FLOPs
  return static_cast<Count>(std::round(scaled));
}

Calibration calibrate(const std::vector<Sample>& samples, double peak_flop_per_s, double bandwidth_bytes_per_s,
                      int min_samples, const PipePeaks& pipes) {
  if (samples.empty()) throw Error("calibrate: no usable measurements (layers need time_s > 0 and flops)");
  RIDGE_ASSERT(peak_flop_per_s > 0 && bandwidth_bytes_per_s > 0, "calibration needs positive peak and bandwidth");
  std::vector<const Sample*> all;
  std::map<std::string, std::vector<const Sample*>> by_class;
  for (const Sample& s : samples) {
    all.push_back(&s);
    by_class[s.op_class].push_back(&s);
  }
  Calibration c;
  for (const Sample& s : samples)
    if (s.flops > 0 && s.time_s > 0)
      c.best_measured_flop_per_s = std::max(c.best_measured_flop_per_s.value_or(0), to_double(s.flops) / s.time_s);
  if (c.best_measured_flop_per_s) c.best_measured_of_peak = *c.best_measured_flop_per_s / peak_flop_per_s;
  c.fallback = fit(all, peak_flop_per_s, bandwidth_bytes_per_s, pipes);
  for (const auto& [cls, members] : by_class)
    if (static_cast<int>(members.size()) >= min_samples)
      c.by_class[cls] = fit(members, peak_flop_per_s, bandwidth_bytes_per_s, pipes);
  return c;
}

namespace {

// The symmetric error of factors `e` on `samples` (calibrate()'s loss) under `combine`.
double symmetric_loss(const std::vector<Sample>& samples, const Efficiency& e, Combine combine, double peak, double bw) {
  PredictOptions hw;
  hw.peak_flop_per_s = peak;
  hw.bandwidth_bytes_per_s = bw;
  Efficiency f = e;
  f.combine = combine;
  double loss = 0;
  for (const Sample& s : samples) {
    if (!(s.time_s > 0)) continue;
    const double predicted = phase_time(s.flops, s.bytes, s.bytes_written.value_or(0), s.kernels, f, hw).time_s;
    if (!(predicted > 0)) return std::numeric_limits<double>::infinity();
    loss += symmetric_error(predicted, s.time_s);
  }
  return loss;
}

// The max model's factors from fit_max_model's parameters: log(1/ppp), log(1/ppp_mem) and sqrt(overhead in us),
// so that the factors stay positive and the overhead non-negative.
Efficiency max_model_factors(const double* x) {
  Efficiency e;
  e.ppp = std::exp(-x[0]);
  e.ppp_mem = std::exp(-x[1]);
  e.overhead_s = x[2] * x[2] * 1e-6;
  e.combine = Combine::Max;
  return e;
}

}  // namespace

MaxFit fit_max_model(const std::vector<Sample>& samples, double peak, double bw, const Efficiency& start) {
  RIDGE_ASSERT(peak > 0 && bw > 0, "the max-model fit needs a peak and a bandwidth");
  // Parameters as max_model_factors reads them; a term the sum fit priced at zero (infinite factor) starts at PPP 1.
  auto inverse = [](double factor) { return std::isfinite(factor) && factor > 0 ? std::log(1 / factor) : 0.0; };
  struct Objective {
    const std::vector<Sample>* samples;
    double peak, bw;
  } objective{&samples, peak, bw};
  auto loss = [](unsigned, const double* x, double*, void* data) {
    const auto* o = static_cast<const Objective*>(data);
    return symmetric_loss(*o->samples, max_model_factors(x), Combine::Max, o->peak, o->bw);
  };
  std::vector<double> x = {inverse(start.ppp), inverse(start.ppp_mem), std::sqrt(start.overhead_s.value_or(0) * 1e6)};
  // NLopt's Nelder-Mead simplex (derivative-free: the max makes the error non-smooth), restarted from its own
  // answer until it stops improving.
  const std::unique_ptr<nlopt_opt_s, decltype(&nlopt_destroy)> opt(nlopt_create(NLOPT_LN_NELDERMEAD, 3),
                                                                   &nlopt_destroy);
  RIDGE_ASSERT(opt != nullptr, "NLopt could not create a Nelder-Mead optimiser");
  nlopt_set_min_objective(opt.get(), loss, &objective);
  nlopt_set_ftol_rel(opt.get(), 1e-10);
  nlopt_set_maxeval(opt.get(), 4000);
  const double step[3] = {0.2, 0.2, 0.2};
  nlopt_set_initial_step(opt.get(), step);
  double best = loss(3, x.data(), nullptr, &objective);
  for (int restart = 0; restart < 3; ++restart) {
    std::vector<double> trial = x;
    double value = 0;
    if (nlopt_optimize(opt.get(), trial.data(), &value) < 0 || !(value < best)) break;
    x = trial, best = value;
  }
  MaxFit r;
  r.factors = max_model_factors(x.data());
  r.factors.samples = static_cast<int>(samples.size());
  r.loss = best;
  r.sum_model_loss = symmetric_loss(samples, start, Combine::Sum, peak, bw);
  return r;
}

double predict_sample(const Sample& s, const Calibration& cal, const PredictOptions& hw) {
  const Count flops = peak_equivalent_flops(s, hw.peak_flop_per_s, hw.pipe_peaks);
  Efficiency e = cal.for_class(s.op_class);
  if (s.pipe_flops) e.vector_pipe = false;  // its FLOPs are already timed at the peak of their pipes
  return phase_time(flops, s.bytes, s.bytes_written.value_or(0), s.kernels, e, hw).time_s;
}

ErrorStats error_stats(std::vector<double> errors) {
  ErrorStats st;
  st.count = errors.size();
  if (errors.empty()) return st;
  std::sort(errors.begin(), errors.end());
  auto quantile = [&](double q) {
    const double pos = q * (errors.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, errors.size() - 1);
    return errors[lo] + (pos - lo) * (errors[hi] - errors[lo]);
  };
  st.median = quantile(0.5);
  st.p90 = quantile(0.9);
  return st;
}

CalibrationCheck check_calibration(const std::vector<Sample>& samples, const PredictOptions& hw,
                                   const Calibration& baseline, int min_samples) {
  CalibrationCheck check;
  PredictOptions fitted_hw = hw;
  fitted_hw.combine = Combine::Sum;  // calibrate() fits the sum model
  auto errors = [&](const Calibration& cal, const PredictOptions& opt, const std::string& only_model) {
    std::vector<double> e;
    for (const Sample& s : samples)
      if (only_model.empty() || s.model == only_model) e.push_back(relative_error(predict_sample(s, cal, opt), s.time_s));
    return e;
  };
  check.before = error_stats(errors(baseline, hw, ""));
  check.after = error_stats(
      errors(calibrate(samples, hw.peak_flop_per_s, hw.bandwidth_bytes_per_s, min_samples, hw.pipe_peaks), fitted_hw, ""));
  std::set<std::string> models;
  for (const Sample& s : samples) models.insert(s.model);
  if (models.size() < 2) return check;
  for (const std::string& m : models) {
    std::vector<Sample> train;
    for (const Sample& s : samples)
      if (s.model != m) train.push_back(s);
    const Calibration cal = calibrate(train, hw.peak_flop_per_s, hw.bandwidth_bytes_per_s, min_samples, hw.pipe_peaks);
    double predicted = 0, measured = 0;
    for (const Sample& s : samples)
      if (s.model == m) predicted += predict_sample(s, cal, fitted_hw), measured += s.time_s;
    check.leave_one_model_out.push_back({m, error_stats(errors(cal, fitted_hw, m)), relative_error(predicted, measured)});
  }
  return check;
}

// ---- files -------------------------------------------------------------------------------------------------
namespace {

// The "combine" of `j` ("sum" or "max"), nullopt when absent; anything else is refused as `label`: expected ...
std::optional<Combine> combine_in(const json& j, const std::string& label) {
  if (!j.contains("combine")) return std::nullopt;
  const auto combine = j["combine"].is_string() ? parse_combine(j["combine"].get<std::string>()) : std::nullopt;
  if (!combine) throw Error(label + ": expected \"sum\" or \"max\"");
  return combine;
}

json efficiency_to_json(const Efficiency& e) {
  auto factor = [](double v) { return std::isinf(v) ? json(nullptr) : json(v); };
  json j = {{"ppp", factor(e.ppp)}, {"ppp_mem", factor(e.ppp_mem)}, {"samples", e.samples}};
  if (e.ppp_write) j["ppp_write"] = factor(*e.ppp_write);
  if (e.overhead_s) j["overhead_s"] = *e.overhead_s;
  if (e.vector_pipe) j["flops_pipe"] = "vector";
  if (e.combine) j["combine"] = std::string(combine_name(*e.combine));
  return j;
}

Efficiency efficiency_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object with ppp, ppp_mem");
  Efficiency e;
  auto factor = [&](const char* key) {
    if (!j.contains(key)) throw Error(fmt::format("{}.{}: missing", where, key));
    if (j[key].is_null()) return std::numeric_limits<double>::infinity();
    if (!j[key].is_number() || !(j[key].get<double>() > 0) || !std::isfinite(j[key].get<double>()))
      throw Error(fmt::format("{}.{}: must be a positive number or null", where, key));
    return j[key].get<double>();
  };
  e.ppp = factor("ppp");
  e.ppp_mem = factor("ppp_mem");
  if (j.contains("ppp_write")) e.ppp_write = factor("ppp_write");
  if (j.contains("overhead_s")) {
    if (!j["overhead_s"].is_number() || j["overhead_s"].get<double>() < 0 || !std::isfinite(j["overhead_s"].get<double>()))
      throw Error(where + ".overhead_s: must be a non-negative number of seconds");
    e.overhead_s = j["overhead_s"].get<double>();
  }
  if (j.contains("samples") && j["samples"].is_number_integer()) e.samples = j["samples"].get<int>();
  if (j.contains("flops_pipe")) {
    const json& pipe = j["flops_pipe"];
    if (!pipe.is_string() || (pipe != "vector" && pipe != "peak"))
      throw Error(where + ".flops_pipe: must be \"vector\" (PPP of the vector pipe's peak) or \"peak\" (the precision's)");
    e.vector_pipe = pipe == "vector";
  }
  e.combine = combine_in(j, where + ".combine");
  return e;
}

}  // namespace

json calibration_to_json(const Calibration& c) {
  json classes = json::object();
  for (const auto& [cls, e] : c.by_class) classes[cls] = efficiency_to_json(e);
  json j = {{"format", "ridge-calibration"}, {"version", 1},        {"device", c.device},
          {"precision", c.precision},      {"combine", std::string(combine_name(c.combine))},
          {"fallback", efficiency_to_json(c.fallback)}, {"classes", classes},
          {"device_family", c.device_family.empty() ? device_family(c.device) : c.device_family},
          {"leave_one_out_error", c.leave_one_out_error ? json(*c.leave_one_out_error) : json(nullptr)}};
  if (!c.scope.empty()) j["scope"] = c.scope;
  if (c.best_measured_flop_per_s) j["best_measured_flop_per_s"] = *c.best_measured_flop_per_s;
  if (c.best_measured_of_peak) j["best_measured_of_peak"] = *c.best_measured_of_peak;
  if (!c.gemm_shapes.empty()) {
    const GemmShapeTable& t = c.gemm_shapes;
    json rows = json::array();
    for (size_t i = 0; i < t.log2_mn.size(); ++i)
      rows.push_back(std::vector<double>(t.ppp.begin() + i * t.log2_k.size(), t.ppp.begin() + (i + 1) * t.log2_k.size()));
    j["gemm_shapes"] = {{"log2_mn", t.log2_mn}, {"log2_k", t.log2_k}, {"ppp", rows}, {"samples", t.samples},
                        {"memory_bound_k", t.memory_bound_k}, {"memory_class", t.memory_class},
                        {"combine", std::string(combine_name(t.combine))}};
  }
  return j;
}

namespace {

// The GEMM-shape table of a calibration file ("gemm_shapes"), checked for a full grid.
GemmShapeTable gemm_shapes_from_json(const json& j, const std::string& origin) {
  const std::string where = origin + ": gemm_shapes";
  GemmShapeTable t;
  try {
    t.log2_mn = j.at("log2_mn").get<std::vector<double>>();
    t.log2_k = j.at("log2_k").get<std::vector<double>>();
    for (const auto& row : j.at("ppp")) {
      const auto r = row.get<std::vector<double>>();
      if (r.size() != t.log2_k.size()) throw Error(where + ".ppp: each row needs one value per log2_k node");
      t.ppp.insert(t.ppp.end(), r.begin(), r.end());
    }
    if (j.contains("samples")) t.samples = j["samples"].get<std::vector<int>>();
    t.memory_bound_k = j.value("memory_bound_k", t.memory_bound_k);
    t.memory_class = j.value("memory_class", t.memory_class);
    const auto combine = parse_combine(j.value("combine", std::string(combine_name(t.combine))));
    if (!combine) throw Error(where + ".combine: expected \"sum\" or \"max\"");
    t.combine = *combine;
  } catch (const json::exception& e) {
    throw Error(where + ": " + model_detail::first_line(e.what()));
  }
  if (t.log2_mn.empty() || t.log2_k.empty() || t.ppp.size() != t.log2_mn.size() * t.log2_k.size())
    throw Error(where + ": expected log2_mn, log2_k and one ppp row per log2_mn node");
  if (!std::is_sorted(t.log2_mn.begin(), t.log2_mn.end()) || !std::is_sorted(t.log2_k.begin(), t.log2_k.end()) ||
      std::adjacent_find(t.log2_mn.begin(), t.log2_mn.end()) != t.log2_mn.end() ||
      std::adjacent_find(t.log2_k.begin(), t.log2_k.end()) != t.log2_k.end())
    throw Error(where + ": log2_mn and log2_k must be strictly ascending");
  for (double v : t.ppp)
    if (!(v > 0) || !std::isfinite(v)) throw Error(where + ".ppp: every value must be a positive number");
  return t;
}

}  // namespace

Calibration calibration_from_json(const json& j, const std::string& origin) {
  if (!j.is_object() || !j.contains("format") || j["format"] != "ridge-calibration")
    throw Error(origin + ": not a ridge calibration file (\"format\": \"ridge-calibration\" missing)");
  Calibration c;
  if (j.contains("device") && j["device"].is_string()) c.device = j["device"].get<std::string>();
  if (j.contains("precision") && j["precision"].is_string()) c.precision = j["precision"].get<std::string>();
  if (auto combine = combine_in(j, origin + ": combine")) c.combine = *combine;
  if (j.contains("device_family") && j["device_family"].is_string()) c.device_family = j["device_family"].get<std::string>();
  if (j.contains("scope")) {
    if (!j["scope"].is_string() || (j["scope"] != "cnn" && j["scope"] != "llm"))
      throw Error(origin + ": scope: expected \"cnn\" or \"llm\"");
    c.scope = j["scope"].get<std::string>();
  }
  if (j.contains("leave_one_out_error") && j["leave_one_out_error"].is_number())
    c.leave_one_out_error = j["leave_one_out_error"].get<double>();
  for (const auto& [key, field, unit] : {std::tuple{"best_measured_flop_per_s", &c.best_measured_flop_per_s, "FLOP/s"},
                                         std::tuple{"best_measured_of_peak", &c.best_measured_of_peak, "a fraction"}}) {
    if (!j.contains(key)) continue;
    const json& v = j[key];
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      throw Error(fmt::format("{}: {}: expected a positive number ({})", origin, key, unit));
    *field = v.get<double>();
  }
  if (!j.contains("fallback")) throw Error(origin + ": fallback: missing");
  c.fallback = efficiency_from_json(j["fallback"], origin + ": fallback");
  if (j.contains("classes")) {
    if (!j["classes"].is_object()) throw Error(origin + ": classes: expected an object");
    for (const auto& [cls, e] : j["classes"].items()) c.by_class[cls] = efficiency_from_json(e, origin + ": classes." + cls);
  }
  if (j.contains("gemm_shapes")) c.gemm_shapes = gemm_shapes_from_json(j["gemm_shapes"], origin);
  return c;
}

Calibration read_calibration(const std::string& path) {
  const std::string text = model_detail::read_text_file(path, "calibration file");
  const json j = model_detail::parse_json(text, path);
  Calibration c = calibration_from_json(j, path);
  c.file = path;
  return c;
}

}  // namespace ridge
