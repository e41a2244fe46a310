// Profiler outputs read, summed and grouped, and compared with ridge's estimate (`ridge ingest`).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "ridge/api.hpp"
#include "ridge/error.hpp"
#include "roofs.hpp"
#include "ridge/text.hpp"

namespace ridge::report {
namespace {

constexpr size_t kWarningsShown = 20;
constexpr size_t kDefaultTopKernels = 25;

Cell count_or_empty(const std::optional<Count>& v, Unit u) { return v ? Cell::count(*v, u) : Cell::empty(u); }
Cell real_or_empty(const std::optional<double>& v, Unit u) { return v ? Cell::real(*v, u) : Cell::empty(u); }

std::optional<double> ratio(const std::optional<Count>& a, const std::optional<Count>& b) {
  if (!a || !b || *b == 0) return std::nullopt;
  return to_double(*a) / to_double(*b);
}
std::optional<double> per_second(const std::optional<Count>& a, const std::optional<double>& t) {
  if (!a || !t || *t <= 0) return std::nullopt;
  return to_double(*a) / *t;
}

Fields totals_fields(const ingest::Profile& p, const ingest::Totals& t) {
  const auto flops = t.sum.flops();
  Fields f{"totals", "Totals", {}};
  f.add("kernels", "kernel launches", Cell::count(t.kernels), true);
  f.add("memops", "memcpy/memset operations", Cell::count(t.memops), true);
  f.add("flops", "FLOPs (all precisions)", count_or_empty(flops, Unit::Flop), true);
  f.add("flops_fp64", "FLOPs fp64", count_or_empty(t.sum.flops_fp64, Unit::Flop), true);
  f.add("flops_fp32", "FLOPs fp32", count_or_empty(t.sum.flops_fp32, Unit::Flop), true);
  f.add("flops_fp16", "FLOPs fp16", count_or_empty(t.sum.flops_fp16, Unit::Flop), true);
  f.add("flops_tensor", "FLOPs tensor cores", count_or_empty(t.sum.flops_tensor, Unit::Flop), true);
  // Per source precision when the exact tensor-path counters were read (precisions in the table's order).
  std::vector<std::string> precisions;
  for (const auto& p : ingest::builtin_architectures().tensor_ops.precisions) precisions.push_back(p.precision);
  for (const auto& [prec, v] : t.sum.tensor_by_precision)
    if (std::find(precisions.begin(), precisions.end(), prec) == precisions.end()) precisions.push_back(prec);
  for (const auto& prec : precisions)
    if (auto it = t.sum.tensor_by_precision.find(prec); it != t.sum.tensor_by_precision.end())
      f.add("flops_tensor_" + prec, "FLOPs tensor cores " + prec, Cell::count(it->second, Unit::Flop), true);
  f.add("dram_bytes", "DRAM bytes", count_or_empty(t.sum.dram_bytes, Unit::Byte), true);
  f.add("l2_bytes", "L2 bytes", count_or_empty(t.sum.l2_bytes, Unit::Byte), true);
  f.add("l1_bytes", "L1 bytes", count_or_empty(t.sum.l1_bytes, Unit::Byte), true);
  f.add("time_s", "GPU time (kernels + memops)", real_or_empty(t.sum.time_s, Unit::Second));
  f.add("kernel_time_s", "kernel time", real_or_empty(t.kernel_time_s, Unit::Second));
  // Over the records that have both quantities: FLOPs of one run over another run's time would be no rate.
  f.add("flop_per_byte", "arithmetic intensity (DRAM)",
        real_or_empty(ratio(t.flops_with_dram, t.dram_with_flops), Unit::FlopPerByte));
  f.add("flop_per_s", "achieved FLOP/s", real_or_empty(per_second(t.flops_timed, t.time_with_flops_s), Unit::FlopPerSecond));
  f.add("dram_bytes_per_s", "achieved DRAM bytes/s",
        real_or_empty(per_second(t.dram_timed, t.time_with_dram_s), Unit::BytePerSecond));
  f.add("architecture", "architecture", Cell::text(p.architecture.empty() ? "unknown" : p.architecture));
  f.add("tensor_flops_per_inst", "FLOPs per tensor-pipe instruction",
        t.sum.flops_tensor && p.tensor_flops_per_inst > 0 ? Cell::count(p.tensor_flops_per_inst) : Cell::empty(Unit::Count));
  return f;
}

// Raw counters by exact metric name: a table for people, an object under totals.counters in JSON (metric names
// contain dots, so they cannot be dotted Fields keys).
void add_counters(Document& doc, const ingest::Totals& t) {
  Table c{"counters", "Raw counters (summed, base units)", {}, {}, {}};
  c.columns = {{"metric", "metric", Unit::None}, {"unit", "unit", Unit::None}, {"total", "total", Unit::None, true}};
  nlohmann::json counters = nlohmann::json::object();
  for (const auto& [name, v] : t.counters) {
    Cell cell = v.exact ? Cell::count(*v.exact) : Cell::real(v.real);
    c.add_row({Cell::text(name), Cell::text(v.unit), cell});
    counters[name] = to_json(cell);
  }
  doc.extra["totals"]["counters"] = counters;
  if (!c.rows.empty()) doc.blocks.push_back(std::move(c));
  if (!t.not_summed.empty()) {
    std::string list;
    for (size_t i = 0; i < t.not_summed.size() && i < 6; ++i) list += (i ? ", " : "") + t.not_summed[i];
    doc.notes.push_back(fmt::format("{} rate/ratio/percentage metrics are per kernel only, never summed ({}{})",
                                    t.not_summed.size(), list, t.not_summed.size() > 6 ? ", ..." : ""));
  }
}

Table kernels_table(const ingest::Profile& p, size_t top, bool full) {
  Table t{"kernels", "Kernels", {}, {}, {}};
  t.columns = {{"launch_id", "ID", Unit::None},
               {"name", "kernel", Unit::None},
               {"family", "family", Unit::None},
               {"invocations", "launches", Unit::Count},
               {"time_s", "time", Unit::Second},
               {"flops", "FLOPs", Unit::Flop},
               {"dram_bytes", "DRAM", Unit::Byte},
               {"flop_per_byte", "FLOP/B", Unit::FlopPerByte}};
  if (full) {
    for (Column c : std::vector<Column>{
             {"flops_fp64", "fp64", Unit::Flop}, {"flops_fp32", "fp32", Unit::Flop},
             {"flops_fp16", "fp16", Unit::Flop}, {"flops_tensor", "tensor", Unit::Flop},
             {"l2_bytes", "L2", Unit::Byte}, {"l1_bytes", "L1", Unit::Byte}, {"nvtx", "NVTX", Unit::None},
             {"pid", "pid", Unit::None}, {"process", "process", Unit::None}, {"device", "device", Unit::None},
             {"label", "label", Unit::None}, {"file", "file", Unit::None}, {"line", "line", Unit::None},
             {"run", "run", Unit::None}, {"torch_op", "operator", Unit::None}})
      t.columns.push_back(c);
  }
  std::vector<size_t> order(p.kernels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (top > 0 && top < order.size()) {
    auto weight = [&](size_t i) {
      const auto& d = p.kernels[i].derived;
      return d.time_s ? *d.time_s : to_double(d.flops().value_or(0));
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight(a) > weight(b); });
    order.resize(top);
  }
  for (size_t i : order) {
    const auto& k = p.kernels[i];
    const auto& d = k.derived;
    std::string name = full || k.name.size() <= 70 ? k.name : k.name.substr(0, 67) + "...";
    std::vector<Cell> row = {k.launch_id >= 0 ? Cell::count(k.launch_id, Unit::None) : Cell::empty(),
                             Cell::text(name),
                             Cell::text(std::string(ingest::kernel_family(k.name, k.memop))),
                             Cell::count(k.invocations),
                             real_or_empty(d.time_s, Unit::Second),
                             count_or_empty(d.flops(), Unit::Flop),
                             count_or_empty(d.dram_bytes, Unit::Byte),
                             real_or_empty(ratio(d.flops(), d.dram_bytes), Unit::FlopPerByte)};
    if (full) {
      for (const auto* q : {&d.flops_fp64, &d.flops_fp32, &d.flops_fp16, &d.flops_tensor})
        row.push_back(count_or_empty(*q, Unit::Flop));
      row.push_back(count_or_empty(d.l2_bytes, Unit::Byte));
      row.push_back(count_or_empty(d.l1_bytes, Unit::Byte));
      row.push_back(Cell::text(k.nvtx));
      row.push_back(k.pid >= 0 ? Cell::count(k.pid, Unit::None) : Cell::empty());
      for (const std::string* s : {&k.process, &k.device, &k.label, &k.file}) row.push_back(Cell::text(*s));
      row.push_back(Cell::count(k.line, Unit::None));
      row.push_back(Cell::count(static_cast<Count>(k.run + 1), Unit::None));
      row.push_back(Cell::text(k.op));
    }
    t.add_row(std::move(row));
  }
  return t;
}

Table groups_table(const ingest::Profile& p, ingest::GroupBy by, const std::string& by_name,
                           const ingest::Totals& all) {
  Table t{"groups", "By " + by_name, {}, {}, {}};
  t.columns = {{"group", by_name, Unit::None},     {"launches", "launches", Unit::Count},
               {"time_s", "time", Unit::Second},    {"time_percent", "time %", Unit::Percent},
               {"flops", "FLOPs", Unit::Flop},      {"dram_bytes", "DRAM", Unit::Byte},
               {"flop_per_byte", "FLOP/B", Unit::FlopPerByte}};
  auto groups = ingest::group(p, by);
  std::vector<ingest::Totals> sums;
  for (const auto& g : groups) sums.push_back(ingest::totals(p, g.members));
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto weight = [&](size_t i) {
    return sums[i].sum.time_s ? *sums[i].sum.time_s : to_double(sums[i].sum.flops().value_or(0));
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return weight(x) > weight(y); });
  for (size_t i : order) {
    const auto& g = groups[i];
    const ingest::Totals& s = sums[i];
    std::optional<double> share;
    if (s.sum.time_s && all.sum.time_s && *all.sum.time_s > 0) share = 100 * *s.sum.time_s / *all.sum.time_s;
    t.add_row({Cell::text(g.key), Cell::count(s.kernels + s.memops), real_or_empty(s.sum.time_s, Unit::Second),
               real_or_empty(share, Unit::Percent), count_or_empty(s.sum.flops(), Unit::Flop),
               count_or_empty(s.sum.dram_bytes, Unit::Byte),
               real_or_empty(ratio(s.sum.flops(), s.sum.dram_bytes), Unit::FlopPerByte)});
  }
  return t;
}

// One row per run (a file, or one of several runs in a file) with its label, and least-squares lines of FLOPs,
// DRAM bytes and time against the number in each run's label.
void add_runs(Document& doc, const ingest::Profile& p) {
  const bool labelled = std::any_of(p.runs.begin(), p.runs.end(), [](const auto& r) { return !r.label.empty(); });
  if (p.runs.size() < 2 && !labelled) return;
  Table t{"runs", "Runs", {}, {}, {}};
  t.columns = {{"run", "run", Unit::None},          {"label", "label", Unit::None},
               {"x", "x", Unit::None},              {"file", "file", Unit::None},
               {"line", "line", Unit::None},        {"kernels", "launches", Unit::Count},
               {"flops", "FLOPs", Unit::Flop},      {"dram_bytes", "DRAM", Unit::Byte},
               {"time_s", "time", Unit::Second},    {"boundary", "starts at", Unit::None}};
  std::vector<double> xf, yf, xd, yd, xt, yt;
  for (size_t r = 0; r < p.runs.size(); ++r) {
    const ingest::Run& run = p.runs[r];
    ingest::Totals s = ingest::totals(p, ingest::run_records(p, r));
    auto x = ingest::label_number(run.label);
    t.add_row({Cell::count(static_cast<Count>(r + 1), Unit::None), Cell::text(run.label), real_or_empty(x, Unit::None),
               Cell::text(run.file), Cell::count(run.line, Unit::None), Cell::count(s.kernels),
               count_or_empty(s.sum.flops(), Unit::Flop), count_or_empty(s.sum.dram_bytes, Unit::Byte),
               real_or_empty(s.sum.time_s, Unit::Second), Cell::text(run.boundary.empty() ? "start of file" : run.boundary)});
    if (!x) continue;
    if (auto f = s.sum.flops()) xf.push_back(*x), yf.push_back(to_double(*f));
    if (s.sum.dram_bytes) xd.push_back(*x), yd.push_back(to_double(*s.sum.dram_bytes));
    if (s.sum.time_s) xt.push_back(*x), yt.push_back(*s.sum.time_s);
  }
  doc.blocks.push_back(std::move(t));
  if (!labelled) return;
  Fields fit{"fit", "Least-squares lines against the label's number (y = slope * x + intercept)", {}};
  auto add_fit = [&](const char* key, const char* what, const std::vector<double>& x, const std::vector<double>& y,
                     Unit u) {
    auto l = ingest::fit_line(x, y);
    if (!l) return;
    fit.add(std::string(key) + "_slope", std::string(what) + " per unit of x", Cell::real(l->slope, u));
    double scale = 0;
    for (double v : y) scale = std::max(scale, std::fabs(v));
    fit.add(std::string(key) + "_intercept", std::string(what) + " at x = 0",
            Cell::real(zero_if_noise(l->intercept, scale), u));
    fit.add(std::string(key) + "_r2", std::string(what) + " fit r^2", Cell::real(l->r2, Unit::None));
  };
  add_fit("flops", "FLOPs", xf, yf, Unit::Flop);
  add_fit("dram_bytes", "DRAM bytes", xd, yd, Unit::Byte);
  add_fit("time_s", "time", xt, yt, Unit::Second);
  if (!fit.items.empty()) doc.blocks.push_back(std::move(fit));
  else doc.notes.push_back("no line fitted: labels need numbers (bs=10) on at least two distinct values");
}

// Measured vs ridge's estimate: the costs given (the report's), else the request's model loaded at its batch.
void add_comparison(Document& doc, const ingest::Profile& p, const ingest::Totals& t, const IngestRequest& a,
                    const ModelCost* costs) {
  ModelCost loaded;
  if (!costs) {
    LoadOptions lo;
    lo.batch = a.batch;
    lo.training = a.train;
    loaded = estimate(load_model(a.model, lo));
    costs = &loaded;
  }
  const ModelCost& mc = *costs;
  ingest::Expected e;
  e.description = fmt::format("{}, batch {}, {}, {} step{}", a.model, a.batch, a.train ? "training" : "inference",
                              a.steps, a.steps == 1 ? "" : "s");
  e.flops = (mc.total.flops + (a.train ? mc.total.bwd_flops() : 0)) * a.steps;
  // Training: forward + backward, the backward moving twice the forward's bytes, as `ridge predict` times it.
  e.bytes = mc.total.bytes() * (a.train ? 3 : 1) * a.steps;
  Table c{"compare", "Measured vs ridge estimate (" + e.description + ")", {}, {}, {}};
  c.columns = {{"quantity", "quantity", Unit::None}, {"measured", "measured", Unit::None},
               {"estimated", "estimated", Unit::None}, {"ratio", "measured/estimated", Unit::Ratio}};
  auto ex = ingest::explain(p, t, e);
  c.add_row({Cell::text("flops"), count_or_empty(t.sum.flops(), Unit::Flop), Cell::count(e.flops, Unit::Flop),
             real_or_empty(ex[0].ratio, Unit::Ratio)});
  c.add_row({Cell::text("bytes"), count_or_empty(t.sum.dram_bytes, Unit::Byte), Cell::count(e.bytes, Unit::Byte),
             real_or_empty(ex[1].ratio, Unit::Ratio)});
  doc.blocks.push_back(std::move(c));
  nlohmann::json why = nlohmann::json::object();
  for (const auto& x : ex) {
    why[x.quantity] = x.reasons;
    for (const auto& r : x.reasons) doc.notes.push_back(x.quantity + ": " + r);
  }
  doc.extra["explanations"] = why;
  if (!mc.complete())
    doc.notes.push_back(fmt::format("the estimate leaves out {} op type(s) ridge cannot cost", mc.excluded_ops.size()));
  if (a.train)
    doc.notes.push_back("estimated bytes when training: the forward's compulsory traffic and a backward moving twice "
                        "that, as ridge predict times it");
}

// The GPU a file's records name ("NVIDIA A100-SXM4-40GB (0)"), or "".
std::string recorded_device(const ingest::Profile& p, const std::string& file) {
  for (const auto& k : p.kernels)
    if (k.file == file && ingest::names_a_gpu(k.device)) return k.device;
  return "";
}

// Refuses files of another model, batch or GPU than asked for, and files of different models or GPUs next to each
// other (one-line errors naming both sides); with --force the mismatches become notes.
void check_profile_matches(ingest::Profile& p, const IngestRequest& a) {
  if (a.model.empty() && a.device.empty()) return;
  const std::string model = a.model.empty() ? "" : model_name_of_file(a.model);
  const RunIdentity expected{model, a.device, a.model.empty() ? 0 : a.batch, ""};
  std::vector<RunIdentity> seen;
  std::vector<std::string> forced;
  for (const auto& [file, label] : a.files) {
    RunIdentity id = identity_from_file_name(file);
    if (const std::string dev = recorded_device(p, file); !dev.empty()) id.device = dev;
    auto more = check_run_matches(file, id, expected, a.force);
    forced.insert(forced.end(), more.begin(), more.end());
    for (size_t k = 0; k < seen.size(); ++k) {
      // Labelled runs (--label bs=N) are several batches on purpose: only model and GPU must agree.
      RunIdentity mine = id, other = seen[k];
      if (!label.empty()) mine.batch = other.batch = 0;
      more = check_run_matches(file, mine, other, a.force);
      for (auto& line : more) line += " (as in " + a.files[k].first + ")";
      forced.insert(forced.end(), more.begin(), more.end());
    }
    seen.push_back(id);
  }
  p.notes.insert(p.notes.end(), forced.begin(), forced.end());
}

// The precision a kernel's FLOPs were counted in, for its series and its roof: tensor, fp16, fp64 or fp32.
std::string flop_precision(const ingest::Derived& d) {
  if (d.flops_tensor.value_or(0) > 0) return "tensor";
  if (d.flops_fp16.value_or(0) > 0 && d.flops_fp16 >= d.flops_fp32.value_or(0)) return "fp16";
  if (d.flops_fp64.value_or(0) > 0 && d.flops_fp64 >= d.flops_fp32.value_or(0)) return "fp64";
  return "fp32";
}

// The roof a kernel of that precision can reach: tensor kernels the best tensor-core rate (fp16/bf16/tf32).
double precision_peak(const Device& d, const std::string& prec) {
  auto peak = [&](Precision p) { return d.peak(p).value_or(0); };
  if (prec == "tensor") return std::max({peak(Precision::FP16), peak(Precision::BF16), peak(Precision::TF32)});
  if (prec == "fp16") return peak(Precision::FP16);
  if (prec == "fp64") return peak(Precision::FP64);
  return peak(Precision::FP32);
}

// The memory levels a GPU roofline draws: DRAM, then the caches of the hierarchical roofline (NERSC), each with
// its JSON key, the device file's level name and its label.
struct MemoryLevel {
  const char* level;  ///< key in the device file's bandwidth_bytes_per_s
  const char* label;  ///< ceiling label and the profile's intensity series
};
constexpr MemoryLevel kMemoryLevels[] = {{"dram", "DRAM"}, {"l2", "L2"}, {"l1", "L1"}};

// The hierarchical chart's note on its cache ceilings: where they come from, or which the device file lacks.
std::string cache_ceiling_note(const Device& d) {
  std::string have, lack;
  for (auto it = std::rbegin(kMemoryLevels); it != std::rend(kMemoryLevels); ++it) {  // "L1 and L2"
    const MemoryLevel& m = *it;
    if (std::string_view(m.level) == "dram") continue;
    std::string& list = d.level_bandwidth(m.level) ? have : lack;
    list += (list.empty() ? "" : " and ") + std::string(m.label);
  }
  if (lack.empty())
    return fmt::format("{} ceilings from {}'s device file (sources: `ridge devices --format json`)", have, d.id);
  return fmt::format("{} ceiling{}: not in {}'s device file (no published measurement found); {} drawn", lack,
                     lack.find(" and ") == std::string::npos ? "" : "s", d.id,
                     have.empty() ? "only DRAM bandwidth is" : have + " and DRAM are");
}

// With --device: the roof sanity flags, and with --model the profiled time next to the predicted time per family.
void add_device_comparison(Document& doc, const ingest::Profile& p, const IngestRequest& a) {
  const Device d = find_device(load_devices(a.device_dirs), a.device);
  const PrecisionMode mode = require_precision_mode(a.precision);
  doc.blocks.push_back(device_ceilings(d));
  std::vector<std::string> flags;
  kernel_roofline_charts(p, d, mode.compute, &flags);
  for (const auto& f : flags) doc.notes.push_back(f);
  if (a.model.empty()) return;
  LoadOptions lo;
  lo.batch = a.batch;
  lo.training = a.train;
  lo.dtype = mode.activation_dtype;
  const ModelWork work = load_model_work(a.model, lo);
  std::vector<std::string> forced;
  PredictSettings ps;
  ps.precision = mode.compute;
  ps.force = a.force;
  ps.training = a.train;
  ps.bytes_per_param = mode.weight_bytes;
  ps.batch = a.batch;
  ps.calibration = a.calibration == "builtin" ? "" : a.calibration;
  const PredictOptions opt = predict_options(d, ps, &forced);
  const Prediction pred = predict(work.layers, opt);
  for (const auto& f : calibration_flags(opt.calibration)) doc.notes.push_back("flag " + f + " (the prediction's calibration)");
  Document cmp = profile_vs_prediction(p, work.layers, pred, a.steps, a.train);
  auto& title = std::get<Table>(cmp.blocks.front()).title;
  title += fmt::format(" ({} on {}, {}, {})", work.name, d.id, a.precision,
                       time_kind_label(pred.kind));
  for (auto& b : cmp.blocks) doc.blocks.push_back(std::move(b));
  for (auto& n : cmp.notes) doc.notes.push_back(std::move(n));
  for (auto& f : forced) doc.notes.push_back(std::move(f));
}

}  // namespace

Fields device_ceilings(const Device& d) {
  Fields f{"ceilings", fmt::format("Ceilings of {} (memory levels of the hierarchical roofline)", d.id), {}};
  for (const MemoryLevel& m : kMemoryLevels) {
    const std::string key = std::string(m.level) + "_bandwidth";
    f.add(key + "_bytes_per_s", std::string(m.label) + " bandwidth",
          real_or_empty(d.level_bandwidth(m.level), Unit::BytePerSecond));
    const std::string source = d.level_bandwidth(m.level) ? d.source_of("bandwidth_bytes_per_s." + std::string(m.level)) : "";
    f.add(key + "_source", std::string(m.label) + " source", Cell::text(source.empty() ? "not in the device file" : source));
  }
  return f;
}

ingest::Profile ingest_profile(const IngestRequest& a) {
  // The command line's limits, for every front end.
  const auto mode = ingest::parse_join_mode(a.join);
  if (!mode) throw UsageError(fmt::format("--join {}: use auto, id, none or sequence", a.join));
  if (!ingest::parse_group_by(a.group))
    throw UsageError(fmt::format("--group {}: use family, nvtx, process, name, label, file, run or op", a.group));
  require_precision_mode(a.precision);  // checked with or without --device
  if (a.train && a.model.empty())
    throw UsageError("--train compares a training capture with the model's estimate: it needs --model");
  if (a.tensor_factor && *a.tensor_factor < 1)
    throw UsageError(fmt::format("--tensor-factor {}: must be a positive number of FLOPs per instruction", *a.tensor_factor));
  ingest::ReadOptions base;
  if (!a.input_format.empty()) {
    base.format = ingest::parse_format(a.input_format);
    if (!base.format) {
      std::string names;
      for (auto f : ingest::all_formats()) names += (names.empty() ? "" : ", ") + std::string(ingest::format_name(f));
      throw UsageError(fmt::format("--input-format: unknown format '{}' (choose one of: {})", a.input_format, names));
    }
  }
  std::vector<ingest::Profile> parts;
  for (const auto& [file, label] : a.files) {
    ingest::ReadOptions o = base;
    o.label = label;
    parts.push_back(ingest::read_file(file, o));
  }
  ingest::Profile p = ingest::combine(std::move(parts), *mode);
  if (p.kernels.empty()) {
    std::string why;
    for (size_t i = 0; i < p.warnings.size() && i < 3; ++i) why += (why.empty() ? "" : "; ") + p.warnings[i].text();
    throw Error(fmt::format("nothing could be read: {}", why.empty() ? "no kernel records" : why));
  }
  if (a.run) p = ingest::select_run(std::move(p), *a.run);
  check_profile_matches(p, a);
  if (!a.model.empty() && p.runs.size() > 1)
    throw UsageError(fmt::format("--model compares one capture with one estimate, but the input holds {} runs: "
                                 "choose one with --run N (1..{})", p.runs.size(), p.runs.size()));
  ingest::DeriveOptions d;
  d.architecture = a.arch;
  d.tensor_factor = a.tensor_factor;
  ingest::derive(p, d);
  return p;
}

Document ingest_report(const ingest::Profile& p, const IngestRequest& a, bool full, const ModelCost* costs) {
  Document doc;
  std::string formats;
  for (auto f : p.formats) formats += (formats.empty() ? "" : ", ") + std::string(ingest::format_name(f));
  doc.title = fmt::format("ingest: {} file{} ({})", p.files.size(), p.files.size() == 1 ? "" : "s", formats);
  ingest::Totals t = ingest::totals(p);
  doc.blocks.push_back(totals_fields(p, t));
  auto by = ingest::parse_group_by(a.group);
  doc.blocks.push_back(groups_table(p, *by, a.group, t));
  add_runs(doc, p);
  if (!a.model.empty()) {
    add_comparison(doc, p, t, a, costs);
    // What the capture is of, for `ridge calibrate` (its leave-one-model-out groups by model) and `--measured`.
    doc.extra["model"] = model_name_of_file(a.model);
    doc.extra["batch"] = a.batch;
    doc.extra["train"] = a.train;
  }
  if (!a.device.empty()) add_device_comparison(doc, p, a);
  add_counters(doc, t);
  const size_t top = a.top ? *a.top : (full ? 0 : kDefaultTopKernels);
  doc.blocks.push_back(kernels_table(p, top, full));
  if (top > 0 && top < p.kernels.size())
    doc.notes.push_back(fmt::format("kernels: the {} {} of {} records shown (--top 0 for all)", top,
                                    t.sum.time_s ? "longest" : "with the most FLOPs", p.kernels.size()));
  if (!t.sum.flops()) doc.notes.push_back("FLOPs: not collected in these files (no FP instruction or flop_count metric)");
  if (!t.sum.dram_bytes) doc.notes.push_back("DRAM bytes: not collected in these files");
  if (!t.sum.time_s) doc.notes.push_back("time: not collected in these files");
  if (t.sum.flops() && t.kernel_time_s && !t.flops_timed)
    doc.notes.push_back("achieved FLOP/s: no kernel record has both FLOPs and a time (they come from different runs "
                        "or metrics; --run N keeps one run)");
  if (t.missing_flops > 0) doc.notes.push_back(fmt::format("FLOPs missing for {} kernel records (totals exclude them)", t.missing_flops));
  if (t.missing_dram > 0) doc.notes.push_back(fmt::format("DRAM bytes missing for {} kernel records", t.missing_dram));
  if (t.missing_time > 0) doc.notes.push_back(fmt::format("time missing for {} records", t.missing_time));
  for (const auto& n : p.notes) doc.notes.push_back(n);
  for (size_t i = 0; i < p.warnings.size() && i < kWarningsShown; ++i) doc.notes.push_back("warning: " + p.warnings[i].text());
  if (p.warnings.size() > kWarningsShown)
    doc.notes.push_back(fmt::format("warning: {} more warnings not shown", p.warnings.size() - kWarningsShown));
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : p.warnings) warnings.push_back({{"file", w.file}, {"line", w.line}, {"message", w.message}});
  doc.extra["warnings"] = warnings;
  return doc;
}


Document profile_vs_prediction(const ingest::Profile& p, const std::vector<LayerWork>& work, const Prediction& pred,
                               int64_t steps, bool train) {
  struct Side {
    Count launches = 0;
    std::optional<double> profiled_s;
    std::optional<Count> flops_counted, bytes_counted;
    double predicted_s = 0;
    Count flops_estimated = 0, bytes_estimated = 0;
    bool predicted = false;
  };
  std::vector<std::string> order;
  std::map<std::string, Side> rows;
  auto row = [&](const std::string& key) -> Side& {
    if (!rows.count(key)) order.push_back(key);
    return rows[key];
  };
  auto add_opt = [](auto& total, const auto& v) {
    if (v) total = total.value_or(0) + *v;
  };
  for (const auto& k : p.kernels) {
    Side& r = row(calibration_class_of_kernel_family(ingest::kernel_family(k.name, k.memop)));
    r.launches += k.invocations;
    add_opt(r.profiled_s, k.derived.time_s);
    add_opt(r.flops_counted, k.derived.flops());
    add_opt(r.bytes_counted, k.derived.dram_bytes);
  }
  const double s = static_cast<double>(steps);
  for (size_t i = 0; i < pred.layers.size() && i < work.size(); ++i) {
    const LayerWork& w = work[i];
    if (!w.costed) continue;
    const std::string_view family = kernel_family_of_op_class(w.op_class);
    Side& r = row(family.empty() ? "op class " + w.op_class + " (no kernel family)" : std::string(family));
    r.predicted = true;
    r.predicted_s += pred.layers[i].time_s * s;
    r.flops_estimated += (w.flops + (train ? w.bwd_input_flops + w.bwd_weight_flops : 0)) * steps;
    // The bytes the prediction charges: the forward's and, in training, the backward's (about twice the forward).
    r.bytes_estimated += (pred.layers[i].forward.bytes + pred.layers[i].backward.bytes) * steps;
  }
  if (pred.update_s > 0) {  // optimizer kernels (multi_tensor_apply, ...) are elementwise
    Side& r = row("elementwise");
    r.predicted = true;
    r.predicted_s += pred.update_s * s;
  }
  Document doc;
  Table t{"families", "Profiled vs predicted per kernel family", {}, {}, {}};
  t.columns = {{"family", "family", Unit::None},
               {"launches", "launches", Unit::Count},
               {"profiled_time_s", "profiled", Unit::Second},
               {"predicted_time_s", "predicted", Unit::Second},
               {"time_ratio", "profiled/predicted", Unit::Ratio},
               {"flops_counted", "FLOPs counted", Unit::Flop},
               {"flops_estimated", "FLOPs estimated", Unit::Flop},
               {"flops_ratio", "counted/estimated", Unit::Ratio},
               {"dram_bytes_counted", "DRAM counted", Unit::Byte},
               {"bytes_estimated", "bytes estimated", Unit::Byte},
               {"bytes_ratio", "counted/estimated", Unit::Ratio}};
  auto time_ratio = [](const std::optional<double>& a, double b) {
    return a && b > 0 ? Cell::real(*a / b, Unit::Ratio) : Cell::empty(Unit::Ratio);
  };
  auto add = [&](const std::string& key, const Side& r) {
    t.add_row({Cell::text(key), Cell::count(r.launches), real_or_empty(r.profiled_s, Unit::Second),
               r.predicted ? Cell::real(r.predicted_s, Unit::Second) : Cell::empty(Unit::Second),
               time_ratio(r.profiled_s, r.predicted_s), count_or_empty(r.flops_counted, Unit::Flop),
               r.predicted ? Cell::count(r.flops_estimated, Unit::Flop) : Cell::empty(Unit::Flop),
               real_or_empty(ratio(r.flops_counted, r.predicted ? std::optional<Count>(r.flops_estimated) : std::nullopt), Unit::Ratio),
               count_or_empty(r.bytes_counted, Unit::Byte),
               r.predicted ? Cell::count(r.bytes_estimated, Unit::Byte) : Cell::empty(Unit::Byte),
               real_or_empty(ratio(r.bytes_counted, r.predicted ? std::optional<Count>(r.bytes_estimated) : std::nullopt), Unit::Ratio)});
  };
  Side total;
  for (const std::string& key : order) {
    const Side& r = rows[key];
    add(key, r);
    total.launches += r.launches;
    add_opt(total.profiled_s, r.profiled_s);
    add_opt(total.flops_counted, r.flops_counted);
    add_opt(total.bytes_counted, r.bytes_counted);
    total.predicted = total.predicted || r.predicted;
    total.predicted_s += r.predicted_s;
    total.flops_estimated += r.flops_estimated;
    total.bytes_estimated += r.bytes_estimated;
  }
  add("total", total);
  doc.blocks.push_back(std::move(t));
  for (const std::string& key : order) {
    if (!rows[key].predicted) doc.notes.push_back("family " + key + ": no layer of the model maps to it (predicted empty)");
    else if (rows[key].launches == 0) doc.notes.push_back("family " + key + ": predicted, but no profiled kernel is of it");
  }
  doc.notes.push_back(train ? "estimated bytes per family: the bytes the prediction charges each layer, forward and "
                              "backward (the backward about twice the forward's traffic)"
                            : "estimated bytes per family: the bytes the prediction charges each layer's forward pass");
  if (steps > 1) doc.notes.push_back(fmt::format("predicted times and estimates are per step x {} steps", steps));

  // Per layer: kernels whose NVTX range (any '/' part) or launching operator is a layer's name.
  std::map<std::string, size_t> layer_of;
  for (size_t i = 0; i < work.size(); ++i) layer_of.emplace(ascii_lower(work[i].name), i);
  std::map<size_t, Side> by_layer;
  for (const auto& k : p.kernels) {
    std::vector<std::string> names = {k.op};
    for (size_t b = 0, e; b <= k.nvtx.size(); b = e + 1) {
      e = k.nvtx.find('/', b);
      if (e == std::string::npos) e = k.nvtx.size();
      names.push_back(k.nvtx.substr(b, e - b));
    }
    for (const std::string& n : names) {
      auto it = n.empty() ? layer_of.end() : layer_of.find(ascii_lower(n));
      if (it == layer_of.end()) continue;
      Side& r = by_layer[it->second];
      r.launches += k.invocations;
      add_opt(r.profiled_s, k.derived.time_s);
      break;
    }
  }
  if (by_layer.empty()) {
    doc.notes.push_back("per layer: no kernel's NVTX range or operator names a layer of the model (name NVTX ranges "
                        "after the layers, e.g. with forward hooks, to get per-layer rows)");
    return doc;
  }
  Table l{"layers_profiled", "Profiled vs predicted per layer (kernels matched by NVTX range or operator name)", {}, {}, {}};
  l.columns = {{"layer", "layer", Unit::None},        {"op", "op", Unit::None},
               {"launches", "launches", Unit::Count}, {"profiled_time_s", "profiled", Unit::Second},
               {"predicted_time_s", "predicted", Unit::Second}, {"time_ratio", "profiled/predicted", Unit::Ratio}};
  for (const auto& [i, r] : by_layer) {
    const double predicted = i < pred.layers.size() ? pred.layers[i].time_s * s : 0;
    l.add_row({Cell::text(work[i].name), Cell::text(work[i].op_class), Cell::count(r.launches),
               real_or_empty(r.profiled_s, Unit::Second), Cell::real(predicted, Unit::Second),
               time_ratio(r.profiled_s, predicted)});
  }
  doc.blocks.push_back(std::move(l));
  return doc;
}

std::vector<chart::Chart> kernel_roofline_charts(const ingest::Profile& p, const Device& d, Precision headline,
                                                 std::vector<std::string>* flags) {
  constexpr size_t kMaxNamedPoints = 40;
  auto groups = ingest::group(p, ingest::GroupBy::Name);
  const bool by_family = groups.size() > kMaxNamedPoints;
  if (by_family) groups = ingest::group(p, ingest::GroupBy::Family);
  std::vector<chart::RoofPoint> kernel_points, levels;
  int skipped = 0, above = 0;
  bool hierarchical = false;
  std::vector<std::string> above_names;
  for (const auto& g : groups) {
    const ingest::Totals t = ingest::totals(p, g.members);
    const auto flops = t.sum.flops();
    if (t.kernels == 0) continue;  // memcpy/memset: no FLOPs
    if (!flops || *flops <= 0 || !t.kernel_time_s || *t.kernel_time_s <= 0 || !t.sum.dram_bytes || *t.sum.dram_bytes <= 0) {
      ++skipped;
      continue;
    }
    const double rate = to_double(*flops) / *t.kernel_time_s;
    const std::string prec = flop_precision(t.sum);
    const auto roof = roof_flags(*flops, *t.sum.dram_bytes, *t.kernel_time_s, precision_peak(d, prec), d.dram_bandwidth());
    std::string label = g.key.size() > 40 ? g.key.substr(0, 37) + "..." : g.key;
    if (!roof.empty()) {
      label += " [above-roof]";
      ++above;
      if (above_names.size() < 3) above_names.push_back(g.key);
    }
    const double dram_ai = to_double(*flops) / to_double(*t.sum.dram_bytes);
    kernel_points.push_back({prec, label, dram_ai, rate, "", -1, true});
    for (const auto& [level, bytes] : {std::pair{"L1", t.sum.l1_bytes}, {"L2", t.sum.l2_bytes}, {"DRAM", t.sum.dram_bytes}})
      if (bytes && *bytes > 0) {
        hierarchical = hierarchical || std::string(level) != "DRAM";
        levels.push_back({level, label, to_double(*flops) / to_double(*bytes), rate, "", -1, true});
      }
  }
  const std::string what = by_family ? "kernel families" : "kernels";
  std::vector<chart::Chart> charts;
  charts.push_back(chart::roofline_chart(fmt::format("Kernel roofline on {} ({}, DRAM intensity)", d.id, what),
                                         {roof_device(d, headline, false)}, kernel_points));
  if (hierarchical) {
    charts.push_back(chart::roofline_chart(
        fmt::format("Hierarchical roofline on {} ({}: L1, L2 and DRAM intensity at the same FLOP/s)", d.id, what),
        {roof_device(d, headline, true)}, levels));
    charts.back().notes.push_back(cache_ceiling_note(d));
  }
  std::vector<std::string> lines;
  if (skipped > 0)
    lines.push_back(fmt::format("{} {} without FLOPs, DRAM bytes or time are not drawn", skipped, what));
  if (above > 0) {
    std::string names;
    for (const auto& n : above_names) names += (names.empty() ? "" : ", ") + n;
    lines.push_back(fmt::format("above-roof: {} of the {} run faster than {}'s roof for their precision ({}{}): their "
                                "counts, the device or the peak are off", above, what, d.id, names, above > 3 ? ", ..." : ""));
  }
  for (auto& c : charts) c.notes.insert(c.notes.end(), lines.begin(), lines.end());
  if (flags) flags->insert(flags->end(), lines.begin(), lines.end());
  return charts;
}

std::vector<chart::Chart> ingest_charts(const ingest::Profile& p, const IngestRequest& a) {
  if (a.device.empty()) return {};
  const Device d = find_device(load_devices(a.device_dirs), a.device);
  return kernel_roofline_charts(p, d, require_precision_mode(a.precision).compute);
}

}  // namespace ridge::report
